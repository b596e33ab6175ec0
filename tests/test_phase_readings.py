"""One phase-reading call in both papers: ``theorylab.<paper>.phases.phase_readings(source,
cfg=None)`` and ``theorylab.analysis.phase_readings`` take the same arguments (a run folder, a
trajectory table with its config, a run's result, a sweep store) and return the same tidy
table (``theorylab.core.readings``): one row per run and reading with the step it is taken at,
the recording's resolution there, a censored flag and the reason a missing reading is
missing; ``theorylab phases`` prints it."""

from __future__ import annotations

import inspect
import math

import numpy as np
import pandas as pd
import pytest

from theorylab import analysis
from theorylab.commands import main
from theorylab.core.readings import READING_COLUMNS, reading_rows
from theorylab.huang2024 import config_from_dict as h24_config
from theorylab.huang2024 import phases as h24
from theorylab.huang2024 import run_experiment as h24_run
from theorylab.huang2024.setups import mae_config
from theorylab.jelassi2022 import phases as j22
from theorylab.jelassi2022 import run_experiment as j22_run
from theorylab.jelassi2022.setups import reference_config


def _one(table: pd.DataFrame) -> pd.DataFrame:
    assert table.run.nunique() == 1
    return table.set_index("reading")


def test_one_call_one_table_in_both_papers():
    """Same signature, same columns; the values are those of the paper's per-run reading."""
    def params(f):
        return list(inspect.signature(f).parameters.values())

    assert params(j22.phase_readings) == params(h24.phase_readings) == params(
        lambda source, cfg=None: None) == params(analysis.phase_readings)[:2]
    cfg = reference_config(steps=300, n_records=30).resolved()
    res = j22_run(cfg, progress=False)
    a, b = j22.phase_readings(res), analysis.phase_readings(res.trajectory, cfg)
    assert list(a.columns) == ["run", *READING_COLUMNS]
    pd.testing.assert_frame_equal(a, b)
    raw = j22.read_phases(res.trajectory, cfg, target_error=j22.pa_target(cfg))
    np.testing.assert_array_equal(_one(a).value.loc[list(raw)].to_numpy(),
                                  np.array(list(raw.values()), dtype=float))
    hcfg = mae_config(16, 4, 2, engine="population-reduced", steps=10)
    h = h24.phase_readings(h24_run(hcfg, progress=False))
    assert list(h.columns) == list(a.columns) and h.censored.dtype == bool


def test_resolution_is_the_gap_to_the_record_before():
    """On the default log grid a time is known to the spacing of the records around it (the
    first paper's t_I: 1343 on the grid, 1301 exact to the step, within the 66 steps the table
    gives); with every step recorded the resolution is 1."""
    cfg = reference_config(steps=2000, n_records=120).resolved()
    grid = _one(j22.phase_readings(j22_run(cfg, progress=False)))
    exact = _one(j22.phase_readings(j22.exact_path(cfg, 2000), cfg))
    t, res = grid.loc["t_I", ["value", "resolution"]]
    assert exact.loc["t_I", "resolution"] == 1 and res > 1
    assert t - res < exact.loc["t_I", "value"] <= t  # the crossing is between the records


def test_a_reading_at_the_last_step_is_censored_and_one_not_reached_is_missing():
    """T* at the run's last recorded step is flagged censored; a reading the run did not
    reach is NaN, censored, with the step it was not reached by."""
    cfg = h24_config({"data": {"P": 8, "C1": 4, "C": 2, "z_law": "values",
                               "z_values": [0.5, 1.5]}, "model": {"loss_norm": "P"},
                      "train": {"engine": "population-exact", "lr": 8.0, "steps": 60,
                                "record": "all"}})
    tr = h24_run(cfg, progress=False).trajectory
    T = int(_one(h24.phase_readings(tr, cfg)).loc["T_star", "value"])
    cut = _one(h24.phase_readings(tr[tr.step <= T], cfg))
    assert cut.loc["T_star", "step"] == T and cut.loc["T_star", "censored"]
    assert cut.loc["phi_own_T", "censored"] and not cut.loc["t_I", "censored"]
    short = _one(h24.phase_readings(tr[tr.step < T], cfg))
    assert math.isnan(short.loc["T_star", "value"]) and short.loc["T_star", "censored"]
    assert short.loc["T_star", "reason"] == f"not reached by step {T - 1}, the run's last " \
                                            "recorded step"


def test_a_phase_that_did_not_happen_is_missing_with_its_reason():
    """Δ < 0: no Phase I, so no t_I (the per-run reading gives the first step) and no value
    at it; its length is 0; without the config t_II is missing for want of C and γ."""
    cfg = mae_config(64, 16, 8, engine="population-reduced", steps=30)
    assert cfg.delta < 0
    tr = h24_run(cfg, progress=False).trajectory
    assert h24.read_phases(tr, cfg)["t_I"] == 1  # the raw first crossing
    r = _one(h24.phase_readings(tr, cfg))
    for name in ("t_I", "phi_glob_end_I", "attn_glob_end_I"):
        assert math.isnan(r.loc[name, "value"]) and r.loc[name, "reason"].startswith(
            "no Phase I in this run") and not r.loc[name, "censored"]
    assert r.loc["len_I", "value"] == 0 and r.loc["len_I", "reason"] == ""
    bare = _one(h24.phase_readings(tr))
    assert math.isnan(bare.loc["t_II", "value"]) and "needs the run's config" in \
        bare.loc["t_II", "reason"]
    j = _one(j22.phase_readings(j22_run(reference_config(steps=50), progress=False)
                                .trajectory))
    assert "needs the run's config" in j.loc["t_III", "reason"] or \
        j.loc["t_III", "reason"].startswith("not reached")


def test_reading_rows_by_hand():
    """The kernel's rows on a hand-made run: records at 0, 1, 3, 7; a time at 3 (resolution
    2), a value taken at it, a time at the last record (censored), a constant."""
    rows = reading_rows({"t_a": 3.0, "x_a": 0.5, "t_b": 7.0, "t_c": math.nan, "k": 2.0},
                        [0, 1, 3, 7], times={"t_a": "t_a", "x_a": "t_a", "t_b": "t_b",
                                             "t_c": "t_c"})
    got = {r["reading"]: (r["step"], r["resolution"], r["censored"]) for r in rows}
    assert got["t_a"] == (3.0, 2.0, False) and got["x_a"] == (3.0, 2.0, False)
    assert got["t_b"] == (7.0, 4.0, True) and got["t_c"][2] is True
    assert math.isnan(got["k"][0]) and got["k"][2] is False


def test_the_command_prints_resolution_censoring_and_reasons(tmp_path, capsys):
    cfg = tmp_path / "h.toml"
    cfg.write_text('[experiment]\npaper = "huang2024"\n[data]\nP = 64\nC1 = 16\nC = 8\n'
                   '[train]\nengine = "population-reduced"\nz_nodes = 6\nlr = 128.0\nsteps = 30\n'
                   'n_records = 10\n')
    assert main(["run", str(cfg), "--out", str(tmp_path / "r"), "--no-progress"]) == 0
    capsys.readouterr()
    assert main(["phases", str(tmp_path / "r")]) == 0
    lines = {line.split()[0]: line for line in capsys.readouterr().out.splitlines()}
    assert "missing  (no Phase I in this run" in lines["t_I"]
    assert "censored  (not reached by step 30" in lines["T_star"]
    # t_II at the last record of a log grid (records at 20 and 30): its resolution, censored
    assert lines["t_II"].split() == ["t_II", "30", "(step", "30,", "resolution", "10)",
                                     "censored"]
    with pytest.raises(ValueError, match=r"^run: .* is a run of huang2024 .*jelassi2022"):
        j22.phase_readings(tmp_path / "r")


def test_the_command_prints_a_sweep_one_row_per_run(tmp_path, capsys):
    """A batched sweep (runs told apart by their point and seed, no axis labels) and a sweep
    with an axis: one row per run with its values, the same as the table's."""
    from theorylab.core.sweep import run_sweep_spec

    base = {"data": {"D": 4, "C": 2, "d": 8, "partition": "random"},
            "train": {"engine": "empirical", "n_train": 50, "n_test": 50, "steps": 30,
                      "n_records": 5}}
    for name, sweep in (("batched", {"axes": {"train.lr_v": [0.05, 0.5]}, "seeds": [0, 1],
                                     "point": "batched"}),
                        ("axis", {"axes": {"train.lr_v": [0.05, 0.5]}})):
        run_sweep_spec({"base_config": base, "sweep": sweep}, tmp_path / name, workers=0,
                       progress=False, say=lambda text: None)
        table = j22.phase_readings(tmp_path / name)
        assert main(["phases", str(tmp_path / name)]) == 0
        rows = capsys.readouterr().out.splitlines()
        t_I = table[table.reading == "t_I"]
        assert len(rows) == 1 + len(t_I) + 1 and rows[0].split()[0] == "run"
        col = rows[0].split().index("t_I")
        shown = [float(r.split()[col]) for r in rows[1:-1]]
        np.testing.assert_array_equal(shown, t_I.value.to_numpy())
        assert np.isfinite(shown).any()


def test_an_unfinished_sweep_is_read_and_exported_with_its_finished_points(tmp_path, capsys,
                                                                           monkeypatch):
    """A sweep stopped before all its points ran: phases reads the finished points and says
    how many are left out; an export marks the dataset partial."""
    import xarray as xr

    from theorylab.core.sweep import run_sweep_spec

    base = {"data": {"D": 4, "C": 2, "d": 8, "q": 0.3}, "train": {"steps": 20, "n_records": 5}}
    store = tmp_path / "s"
    run_sweep_spec({"base_config": base, "sweep": {"axes": {"train.lr_v": [0.05, 0.1, 0.5]}}},
                   store, workers=0, progress=False, say=lambda text: None)
    next((store / "points").glob("*.parquet")).unlink()  # as a stopped sweep leaves it
    capsys.readouterr()
    import theorylab.core.sweep as sweep_pkg
    import theorylab.core.sweep.store as sweep_store

    reads = []
    load = sweep_store.load_sweep

    def counted(path):
        reads.append(path)
        return load(path)

    for module in (sweep_pkg, sweep_store):  # both names the readers import it by
        monkeypatch.setattr(module, "load_sweep", counted)
    assert main(["phases", str(store)]) == 0
    assert len(reads) == 1  # the store is read once (its readings and its progress)
    captured = capsys.readouterr()
    assert "note: 2 of 3 points" in captured.err and "left out" in captured.err
    assert len(captured.out.strip().splitlines()) == 1 + 2 + 1  # header, 2 runs, counts
    nc = tmp_path / "s.nc"
    assert main(["export", str(store), "--out", str(nc)]) == 0
    with xr.open_dataset(nc) as ds:
        assert ds.attrs["partial"] == "yes: 2 of 3 points finished (the others are left out)"
        assert ds.sizes["run"] == 2
