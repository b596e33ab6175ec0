"""The questions asked of runs and sweeps (``theorylab.analysis``) and their commands
(``theorylab phases``, ``theorylab export``, ``theorylab run --dry-run`` / ``--flow``,
``theorylab sweep --dry-run``), on both papers: phase readings of run folders, tables and
sweeps (their columns in the sweep table), a run still being written, netCDF export of one
run, runs side by side and a sweep, and the estimates printed before work."""

import math

import numpy as np
import pandas as pd
import pytest

from theorylab.analysis import (
    estimate,
    export,
    open_run,
    phase_readings,
    power_law,
    scan,
    to_dataset,
)
from theorylab.commands import main
from theorylab.huang2024 import config_from_dict as h24_config
from theorylab.jelassi2022.setups import reference_config

H24_RUN = {"data": {"P": 8, "C1": 4, "C": 2, "z_law": "values", "z_values": [0.5, 1.5]},
           "model": {"mask_keys": True, "loss_norm": "P"},
           "train": {"engine": "population-exact", "lr": 8.0, "steps": 60}}


def _toml(path, tables, paper):
    from theorylab.core.config import tables_to_toml

    path.write_text(tables_to_toml({"experiment": {"paper": paper}, **tables}))
    return str(path)


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """A jelassi2022 GD run and its flow (the Figure 4 setting, to step 1600), a huang2024
    run; written by ``theorylab run``."""
    root = tmp_path_factory.mktemp("runs")
    j22 = _toml(root / "j22.toml", reference_config(steps=1600, n_records=60).to_dict(),
                "jelassi2022")
    h24 = _toml(root / "h24.toml", H24_RUN, "huang2024")
    assert main(["run", j22, "--out", str(root / "gd")]) == 0
    assert main(["run", j22, "--out", str(root / "flow"), "--flow"]) == 0
    assert main(["run", h24, "--out", str(root / "h24")]) == 0
    return root


def _one(table: pd.DataFrame) -> pd.Series:
    """One run's phase readings, reading → value."""
    assert table.run.nunique() == 1
    return table.set_index("reading").value


def test_phase_readings_of_run_folders_of_both_papers(runs, capsys):
    gd = _one(phase_readings(runs / "gd"))
    fl = _one(phase_readings(runs / "flow" / "trajectory.csv"))
    for name in ("t_I", "t_PA"):  # the flow's reading is GD's to O(η)
        assert math.isfinite(gd[name]) and abs(gd[name] - fl[name]) <= 0.02 * fl[name]
    assert open_run(runs / "flow").config.train.mode == "flow"
    h24 = _one(phase_readings(runs / "h24"))
    assert h24.Delta == pytest.approx(h24_config(H24_RUN).delta)
    assert {"t_I", "phase_I", "phi_glob_end_I", "t_II", "T_star", "phi_own_T"} <= set(h24.index)
    assert main(["phases", str(runs / "h24")]) == 0
    out = capsys.readouterr().out
    assert "phi_glob_end_I" in out and "Delta" in out


def test_phase_readings_of_a_table_and_of_a_run_still_being_written(runs, tmp_path):
    run = open_run(runs / "gd")
    whole = _one(phase_readings(run.trajectory, run.config))
    assert whole.t_PA == _one(phase_readings(runs / "gd")).t_PA
    live = tmp_path / "live"
    live.mkdir()
    (live / "config.toml").write_text(run.config_text)
    text = (runs / "gd" / "trajectory.csv").read_text().splitlines(keepends=True)
    (live / "trajectory.csv").write_text("".join(text[:20]) + text[20][:7])  # a torn append
    partial = open_run(live)
    assert len(partial.trajectory) == 19
    assert _one(phase_readings(live)).steps_run == partial.trajectory.step.iloc[-1]


def test_a_sweep_table_carries_the_phase_readings(tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text("[base_config.data]\nD = 6\nC = 2\nd = 5\npartition = \"random\"\n"
                    "[base_config.train]\nsteps = 200\nn_records = 20\nlr_v = 0.5\n"
                    "[sweep]\naxes = {\"data.q\" = [0.3, 0.6]}\nkeep = \"final\"\n")
    assert main(["sweep", str(spec), "--out", str(tmp_path / "s"), "--workers", "0",
                 "--dry-run"]) == 0
    assert "estimate: 2 points to compute" in capsys.readouterr().out
    assert main(["sweep", str(spec), "--out", str(tmp_path / "s"), "--workers", "0"]) == 0
    table = pd.read_parquet(tmp_path / "s" / "results.parquet")
    assert {"t_I", "t_II", "t_PA", "t_III"} <= set(table.columns) and len(table) == 2
    readings = phase_readings(tmp_path / "s")
    t_I = readings[readings.reading == "t_I"]
    assert list(t_I["data.q"]) == [0.3, 0.6] and list(t_I.run) == list(table.run_id)
    np.testing.assert_array_equal(t_I.value, table.t_I)
    ds = to_dataset(tmp_path / "s")
    assert ds.sizes["run"] == 2 and "data.q" in ds.coords and "t_PA" in ds.coords


def test_a_batched_sweep_has_the_readings_of_each_run(tmp_path):
    from theorylab.core.sweep import run_sweep_spec

    spec = {"base_config": {"data": {"D": 4, "C": 2, "d": 8, "partition": "random"},
                            "train": {"engine": "empirical", "n_train": 50, "n_test": 50,
                                      "steps": 30, "n_records": 5}},
            "sweep": {"axes": {"train.lr_v": [0.05, 0.5]}, "seeds": [0, 1],
                      "point": "batched"}}
    table = run_sweep_spec(spec, tmp_path / "b", workers=0, progress=False,
                           say=lambda text: None)
    assert len(table) == 4 and table.t_I.notna().any()
    # each run its own reading: the faster learning rate leaves the plateau no later
    by_lr = table.groupby("lr_v").t_I.max()
    assert not by_lr[0.5] > by_lr[0.05]


def test_export_one_run_and_gd_beside_flow(runs, tmp_path):
    import xarray as xr

    path = export(runs / "gd", out=tmp_path / "gd.nc")
    ds = xr.open_dataset(path, engine="scipy")
    assert set(ds.dims) == {"step"} and "alpha" in ds and "time" in ds.coords
    np.testing.assert_allclose(ds.time.values, 0.1 * ds.step.values)
    assert "[train]" in ds.attrs["config"] and ds.attrs["paper"] == "jelassi2022"
    assert ds.attrs["dynamics"] == "gd" and np.isfinite(ds.attrs["t_PA"])
    assert main(["export", str(runs / "gd"), str(runs / "flow"), "--out",
                 str(tmp_path / "both.nc")]) == 0
    both = xr.open_dataset(tmp_path / "both.nc", engine="scipy")
    assert both.sizes["run"] == 2 and sorted(both["dynamics"].values) == ["flow", "gd"]
    gap = abs(both.alpha.sel(run="gd") - both.alpha.sel(run="flow")).max()
    assert 0 < float(gap) < 0.1  # the same dynamics, GD an O(η) step behind
    both.close()
    ds.close()


def test_export_replaces_only_its_own_file(runs, tmp_path, capsys):
    mine = tmp_path / "mine.nc"
    mine.write_text("a user's file")
    assert main(["export", str(runs / "gd"), "--out", str(mine)]) == 2
    assert mine.read_text() == "a user's file"  # never overwritten unasked
    assert "refusing to overwrite" in capsys.readouterr().err
    ours = tmp_path / "ours.nc"
    assert main(["export", str(runs / "gd"), "--out", str(ours)]) == 0
    assert main(["export", str(runs / "flow"), "--out", str(ours)]) == 0  # its own: replaced
    assert main(["export", str(runs / "gd"), "--out", str(mine), "--force"]) == 0
    assert mine.read_bytes().startswith(b"CDF")


def test_export_and_phases_refuse_bad_input_in_one_line(runs, tmp_path, capsys):
    assert main(["export", str(runs / "gd"), "--out", str(tmp_path / "x.csv")]) == 2
    assert main(["phases", str(tmp_path / "nothing")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[0].startswith("error: out: must be a .nc file")
    assert err[1].startswith("error: source: no such file or folder")


def test_dry_run_prints_the_estimate_of_both_papers_and_runs_nothing(tmp_path, capsys):
    j22 = _toml(tmp_path / "j22.toml", reference_config(steps=78_000).to_dict(), "jelassi2022")
    h24 = _toml(tmp_path / "h24.toml", H24_RUN, "huang2024")
    for cfg in (j22, h24):
        assert main(["run", cfg, "--dry-run"]) == 0
    out = capsys.readouterr().out
    assert "78000 steps" in out and "60 steps" in out and out.count("of memory") == 2
    assert not list(tmp_path.glob("*/trajectory.csv"))
    est = estimate(reference_config(steps=1000))
    assert est.steps == 1000 and est.step_s > 0 and est.memory > 0


def test_scan_and_power_law(tmp_path):
    cfg = h24_config({**H24_RUN, "train": {**H24_RUN["train"], "steps": 30}}).resolved()
    table = scan(cfg, {"train.lr": [4.0, 8.0, 16.0]}, store=tmp_path / "scan")
    assert list(table["train.lr"]) == [4.0, 8.0, 16.0]
    assert table.dphi_own_1.notna().all()
    fit = power_law(table, "train.lr", "dphi_own_1")
    # the first increment of Φ_own is η times the gradient at Q⁰ = 0: exactly linear in η
    assert fit["slope"] == pytest.approx(1.0, abs=1e-9) and fit["sign"] == 1.0
    with pytest.raises(ValueError, match="fewer than 3"):
        power_law(table.iloc[:2], "train.lr", "dphi_own_1")


def test_run_prints_the_estimate_before_a_long_run(tmp_path, capsys, monkeypatch):
    import theorylab.commands.run as run

    cfg = _toml(tmp_path / "h24.toml", H24_RUN, "huang2024")
    monkeypatch.setattr(run, "LONG_RUN_S", 0.0)  # every run counts as long
    assert main(["run", cfg, "--out", str(tmp_path / "r")]) == 0
    err = capsys.readouterr().err
    assert err.startswith("estimate: population-exact") and "60 steps" in err
    monkeypatch.setattr(run, "LONG_RUN_S", 1e9)
    assert main(["run", cfg, "--out", str(tmp_path / "r")]) == 0
    assert "estimate" not in capsys.readouterr().err
