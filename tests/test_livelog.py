"""``theorylab run/sweep --tensorboard DIR``: the live log of the recorded rows, read back with
TensorBoard's own reader (``EventAccumulator``) and compared with ``trajectory.csv`` (and a
sweep's stored trajectories) exactly: the values are float64 tensors, so equality is the
right test, with no tolerance. The output gate's cases for the flag (a user's folder, the
committed folders, a full disk, ...) are ``tests/test_output_gate.py``'s, which finds every
output flag itself."""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd
import pytest

from theorylab.commands import main
from theorylab.core.livelog import EVENT_FILE_PREFIX

H24 = ('[experiment]\npaper = "huang2024"\n[data]\nP = 8\nC1 = 4\nC = 2\nz_law = "values"\n'
       'z_values = [0.5, 1.5]\n[model]\nmask_keys = true\nloss_norm = "P"\n[train]\n'
       'engine = "population-exact"\nlr = 8.0\nsteps = {steps}\nseed = 0\n')
SPEC = ('[base_config.experiment]\npaper = "huang2024"\n[base_config.data]\nP = 16\nC = 2\n'
        '[base_config.train]\nsteps = 12\n[sweep]\naxes = {"data.C1" = [4, 8]}\n'
        'seeds = [0, 1]\nkeep = "trajectory"\n')


def _needs_tensorboard():
    pytest.importorskip("tensorboard", reason="the live log needs the optional extra "
                        "theorylab[tensorboard] (pip install tensorboard)")


def _logged(folder) -> dict[str, list[tuple[int, float]]]:
    """tag → [(step, value)] of the event files in ``folder``, read by TensorBoard's reader."""
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator
    from tensorboard.util import tensor_util

    acc = EventAccumulator(str(folder), size_guidance={"tensors": 0})
    acc.Reload()
    out = {}
    for tag in acc.Tags()["tensors"]:
        out[tag] = [(e.step, tensor_util.make_ndarray(e.tensor_proto).item())
                    for e in acc.Tensors(tag)]
    return out


def _expected(table: pd.DataFrame) -> dict[str, list[tuple[int, float]]]:
    """tag → [(step, value)] that the live log of ``table`` must hold: each number column's
    defined values, booleans as 0/1."""
    out = {}
    for name in table.columns:
        col = table[name]
        if name == "step" or not (pd.api.types.is_numeric_dtype(col)
                                  or pd.api.types.is_bool_dtype(col)):
            continue
        values = [(int(s), float(v)) for s, v in zip(table.step, col) if not pd.isna(v)]
        if values:
            out[name] = values
    return out


def test_a_runs_live_log_is_its_trajectory_exactly(tmp_path):
    _needs_tensorboard()
    cfg = tmp_path / "h.toml"
    cfg.write_text(H24.format(steps=40))
    out, tb = tmp_path / "run", tmp_path / "tb"
    assert main(["run", str(cfg), "--out", str(out), "--tensorboard", str(tb),
                 "--no-progress"]) == 0
    table = pd.read_csv(out / "trajectory.csv")
    want, got = _expected(table), _logged(tb)
    assert len(table) > 5 and len(want) > 5  # a trajectory with rows and number columns
    assert got == want
    # floats in full: a float32 store (TensorBoard's default scalars) would fail here
    assert any(v != float(np.float32(v)) for pts in got.values() for _, v in pts)

    # a longer resume into the same folder: the log again mirrors the whole trajectory, in
    # one event file (the earlier one removed: no step logged twice)
    cfg.write_text(H24.format(steps=80))
    assert main(["run", str(cfg), "--out", str(out), "--tensorboard", str(tb), "--resume",
                 "--no-progress"]) == 0
    table = pd.read_csv(out / "trajectory.csv")
    assert table.step.max() == 80 and _logged(tb) == _expected(table)
    assert len([p for p in tb.iterdir() if p.name.startswith(EVENT_FILE_PREFIX)]) == 1


def test_a_flows_live_log_is_its_trajectory_exactly(tmp_path):
    """The gradient flow records through its own loop (theorylab.core.flow)."""
    _needs_tensorboard()
    cfg = tmp_path / "h.toml"
    cfg.write_text(H24.format(steps=40))
    out, tb = tmp_path / "flow", tmp_path / "tb"
    assert main(["run", str(cfg), "--out", str(out), "--flow", "--tensorboard", str(tb),
                 "--no-progress"]) == 0
    table = pd.read_csv(out / "trajectory.csv")
    assert len(table) > 5 and _logged(tb) == _expected(table)


def test_a_sweeps_live_log_has_one_folder_per_point(tmp_path):
    _needs_tensorboard()
    from theorylab.core.sweep import load_spec
    from theorylab.core.sweep.runner import live_log_folder
    from theorylab.papers import PAPERS

    spec = tmp_path / "s.toml"
    spec.write_text(SPEC)
    store, tb = tmp_path / "store", tmp_path / "tb"
    assert main(["sweep", str(spec), "--out", str(store), "--workers", "0",
                 "--tensorboard", str(tb), "--no-progress"]) == 0
    table = pd.read_parquet(store / "results.parquet")
    points = load_spec(spec).points()
    assert sorted(p.name for p in tb.iterdir() if p.is_dir()) == sorted(
        live_log_folder(tb, p).name for p in points)
    schema = list(PAPERS["huang2024"].trajectory_schema)  # the store adds labels and readings
    for p in points:
        rows = table[table.run_id == p.run_id].sort_values("step")[schema]
        want = _expected(rows.reset_index(drop=True))
        assert len(rows) > 3 and len(want) > 5
        assert _logged(live_log_folder(tb, p)) == want, p.labels


def test_a_sweep_of_batched_points_refuses_a_live_log(tmp_path, capsys):
    _needs_tensorboard()
    spec = tmp_path / "b.toml"
    spec.write_text('[base_config.data]\nD = 4\nC = 2\nd = 20\n[base_config.train]\nsteps = 5\n'
                    'engine = "empirical"\nn_train = 50\nn_test = 50\n[sweep]\n'
                    'axes = {"train.lr_v" = [0.1, 0.2]}\npoint = "batched"\n')
    code = main(["sweep", str(spec), "--out", str(tmp_path / "s"), "--workers", "0",
                 "--tensorboard", str(tmp_path / "tb"), "--no-progress"])
    err = capsys.readouterr().err.strip().splitlines()
    assert code == 2 and len(err) == 1 and err[0].startswith("error: tensorboard: "), err
    assert not (tmp_path / "tb").exists() and not (tmp_path / "s").exists()


def test_without_tensorboard_installed_it_is_one_line_naming_the_extra(tmp_path, capsys,
                                                                       monkeypatch):
    """The package is made unimportable (a None entry in ``sys.modules`` fails the import),
    so this runs where tensorboard is installed too."""
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)
    cfg = tmp_path / "h.toml"
    cfg.write_text(H24.format(steps=5))
    for argv in (["run", str(cfg), "--out", str(tmp_path / "run")],
                 ["sweep", str(_spec(tmp_path)), "--out", str(tmp_path / "store"),
                  "--workers", "0"]):
        assert main([*argv, "--tensorboard", str(tmp_path / "tb"), "--no-progress"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and "theorylab[tensorboard]" in err[0], err
        assert err[0].startswith("error: tensorboard: "), err
    assert sorted(p.name for p in tmp_path.iterdir()) == ["h.toml", "s.toml"]  # nothing run


def test_the_log_has_its_own_folder_beside_or_inside_the_run(tmp_path, capsys):
    _needs_tensorboard()
    cfg = tmp_path / "h.toml"
    cfg.write_text(H24.format(steps=5))
    run = tmp_path / "run"
    for argv in (["run", str(cfg), "--out", str(run)],
                 ["sweep", str(_spec(tmp_path)), "--out", str(run), "--workers", "0"]):
        assert main([*argv, "--tensorboard", str(run), "--no-progress"]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: tensorboard: "), err
        assert not run.exists()
    assert main(["run", str(cfg), "--out", str(run), "--tensorboard", str(run / "tb"),
                 "--no-progress"]) == 0  # beside trajectory.csv
    assert _logged(run / "tb") == _expected(pd.read_csv(run / "trajectory.csv"))


def _spec(folder):
    path = folder / "s.toml"
    path.write_text(SPEC)
    return path
