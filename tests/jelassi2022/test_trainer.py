"""The GD loop and the CLI: files, schema, resume, divergence, recording schedule."""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from theorylab import TrainConfig, load_config, run_experiment
from theorylab.commands.run import main
from theorylab.jelassi2022.trainer import TRAJECTORY_SCHEMA, DivergenceError, record_steps

from ._helpers import fig4_config, small_config


def test_record_schedule():
    s = record_steps(TrainConfig(steps=20000, n_records=50))
    assert s[0] == 0 and s[-1] == 20000 and np.all(np.diff(s) > 0) and len(s) <= 50
    assert list(record_steps(TrainConfig(steps=5, record="all"))) == [0, 1, 2, 3, 4, 5]


def test_cli_writes_run_folder(tmp_path):
    out = tmp_path / "run"
    assert main(["examples/fig4_population.toml", "--out", str(out), "--steps", "50"]) == 0
    traj = pd.read_csv(out / "trajectory.csv")
    assert list(traj.columns) == list(TRAJECTORY_SCHEMA)
    assert traj["step"].iloc[-1] == 50 and (traj["engine"] == "population-exchangeable").all()
    cfg = load_config(out / "config.toml")
    assert cfg.model.temperature == 1.0 and cfg.data.sigma == pytest.approx(0.1)
    with np.load(out / "final_state.npz") as z:
        assert z["A"].shape == (10, 10) and z["v"].shape == (100,) and z["wstar"].shape == (100,)


def test_cli_bad_config_is_one_line(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[data]\nD = 10\nC = 3\n")
    r = subprocess.run([sys.executable, "-m", "theorylab", "run", str(bad), "--out",
                        str(tmp_path / "o")], capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.strip() == "error: data.C: must divide D=10 (got C=3)"


@pytest.mark.parametrize("method", ["exchangeable", "brute"])
def test_resume_gives_the_same_trajectory(tmp_path, method):
    def cfg(**kw):
        return small_config(D=8, C=2, method=method, record="all", lr_v=0.5, alpha0=0.5, **kw)

    full = run_experiment(cfg(steps=40))
    out = tmp_path / "r"
    run_experiment(cfg(steps=15), out=out)
    res = run_experiment(cfg(steps=40), out=out, resume=True)
    pd.testing.assert_frame_equal(res.trajectory, full.trajectory)
    with pytest.raises(ValueError, match="^resume:"):
        run_experiment(cfg(steps=40, seed=3), out=out, resume=True)


def test_divergence_stops_and_keeps_rows(tmp_path):
    cfg = fig4_config(engine="empirical", n_train=200, n_test=100, steps=400, lr_v=50.0,
                      record="all", alpha0=1.0)
    with pytest.raises(DivergenceError) as info:
        run_experiment(cfg, out=tmp_path)
    err = info.value
    assert "step" in str(err) and err.quantity
    kept = pd.read_csv(tmp_path / "trajectory.csv")
    assert len(kept) == len(err.result.trajectory) >= 1
    assert kept["step"].max() <= err.step  # every recorded row precedes the fault
    assert np.isfinite(kept["train_loss"]).all()


def test_initial_state_overrides_the_configured_start():
    base = small_config(D=8, C=2, engine="empirical", n_train=200, n_test=100, steps=5, lr_A=0.0,
                        record="all", init_v="gaussian", v0_scale=0.1)
    A0 = np.random.default_rng(0).standard_normal((8, 8))
    res = run_experiment(base, initial={"A": A0})
    np.testing.assert_array_equal(res.A, A0)  # lr_A = 0: the given A stays frozen
    with pytest.raises(ValueError, match="^initial:"):
        run_experiment(base, initial={"A": np.zeros((3, 3))})
    with pytest.raises(ValueError, match="^initial:"):
        run_experiment(base, initial={"B": A0})
