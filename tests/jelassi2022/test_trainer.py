"""The GD loop and the CLI: files, schema, resume, divergence, recording schedule; gradient
flow beside gradient descent (``train.mode = "flow"``): its GD-to-flow gap of order η, its
phase readings, and the refusal of a flow without a deterministic gradient."""

import math
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from theorylab import TrainConfig, load_config, run_experiment
from theorylab.analysis import flow_gap, gd_and_flow
from theorylab.commands.run import main
from theorylab.jelassi2022 import PAPER, config_from_dict
from theorylab.jelassi2022.setups import reference_config
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


#: |slope − 1| of ln gap against ln η that the order check accepts. Euler's global error is
#: C·η + O(η²): on this ladder the local slopes measured 0.995–1.0; 0.05 rejects any other
#: order (0: a flow that is not GD's limit, 2: a second-order scheme) while leaving the
#: O(η) correction of the slope room.
SLOPE_TOLERANCE = 0.05


def test_gd_to_flow_gap_shrinks_at_order_eta():
    # exact population GD (exchangeable engine), Figure 4 setting, to t = 100 (the end of
    # the plateau: α has grown tenfold at t ≈ 130)
    table, fit = flow_gap(reference_config(steps=1), [5, 10, 20, 40], horizon=100.0,
                          columns=["alpha", "gamma", "rho"])
    assert table.gap.is_monotonic_decreasing
    assert abs(fit["slope"] - 1.0) < SLOPE_TOLERANCE, (fit, table)


def test_flow_and_gd_share_columns_steps_and_phase_readings():
    cfg = reference_config(steps=1600, record="log", n_records=60)
    both = gd_and_flow(cfg)
    gd, fl = both[both.dynamics == "gd"], both[both.dynamics == "flow"]
    assert list(gd.step) == list(fl.step) and list(gd.time) == list(fl.time)
    assert (fl.engine == "population-exchangeable").all()
    readings = [PAPER.phase_readings(t.drop(columns=["dynamics", "time"]), cfg) for t in (gd, fl)]
    for name in ("t_I", "t_PA"):  # both reached, a few steps apart (GD lags by O(η))
        assert math.isfinite(readings[0][name]) and math.isfinite(readings[1][name])
        assert abs(readings[0][name] - readings[1][name]) <= 0.02 * readings[1][name]


def test_flow_needs_a_deterministic_gradient():
    with pytest.raises(ValueError, match="train.mode: 'flow' needs a deterministic gradient"):
        config_from_dict({"data": {"D": 4, "C": 2}, "train": {"method": "montecarlo",
                                                              "mode": "flow"}})
    cfg = config_from_dict({"data": {"D": 4, "C": 2, "d": 10},
                            "train": {"init_v": "gaussian", "mode": "flow", "steps": 2}})
    with pytest.raises(ValueError, match="method 'auto' chose Monte Carlo"):
        run_experiment(cfg)
    with pytest.raises(ValueError, match="train.mode: must be one of"):
        config_from_dict({"data": {"D": 4, "C": 2}, "train": {"mode": "ode"}})
    with pytest.raises(ValueError, match="train.flow_rtol"):
        config_from_dict({"data": {"D": 4, "C": 2}, "train": {"flow_rtol": 0.5}})
