"""The kernel's gradient flow on an engine that is not a paper's: least squares, whose flow has
a closed form (w(t) = w* + e^{−Ht}(w⁰ − w*), H = XᵀX/n). Checks the flow against it, the
recording on the GD clock, the run folder and resume, the faults, and the order in η of the
GD-to-flow gap, with a wrong clock as the control that the order check can fail."""

import numpy as np
import pandas as pd
import pytest
from scipy import linalg, stats

from theorylab.core.engine import Engine
from theorylab.core.flow import dynamics, flow
from theorylab.core.trainer import DivergenceError, record_schedule, train

SCHEMA = {"step": "int64", "loss": "float64", "w0": "float64"}


class LeastSquares(Engine):
    """L(w) = ‖Xw − y‖² / (2n); GD with step `lr` (the flow's clock)."""

    name = "toy-least-squares"

    def __init__(self, lr: float, n: int = 20, p: int = 3, seed: int = 0, blow_up: float = 0.0):
        rng = np.random.default_rng(seed)
        self.X, self.y, self.lr = rng.standard_normal((n, p)), rng.standard_normal(n), lr
        self.time_step = lr
        self.blow_up = blow_up  # a loss that is infinite once |w| > blow_up (> 0)

    def initial_params(self):
        return {"w": np.zeros(self.X.shape[1])}

    def evaluate(self, params, step, *, need_grad, record):
        r = self.X @ params["w"] - self.y
        loss = 0.5 * float(r @ r) / len(r)
        if self.blow_up and np.linalg.norm(params["w"]) > self.blow_up:
            loss = np.inf
        grads = {"w": self.X.T @ r / len(r)} if need_grad else None
        return type("Ev", (), {"loss": loss, "grads": grads})()

    def apply(self, params, grads):
        return {"w": params["w"] - self.lr * grads["w"]}

    def record(self, params, step, ev):
        return {"loss": ev.loss, "w0": float(params["w"][0])}

    def params_to_arrays(self, params):
        return {"w": np.asarray(params["w"], dtype=np.float64)}

    def params_from_arrays(self, arrays):
        return {"w": np.array(arrays["w"], dtype=np.float64)}


def exact_flow(eng: LeastSquares, t: float) -> np.ndarray:
    H = eng.X.T @ eng.X / len(eng.y)
    w_star = np.linalg.solve(H, eng.X.T @ eng.y / len(eng.y))
    return w_star - linalg.expm(-H * t) @ w_star


def _flow(eng, steps, n=12, **kw):
    return flow(eng, steps=steps, schedule=record_schedule(steps, n, "linear"), schema=SCHEMA,
                config_text="[toy]\n", **kw)


def test_the_flow_is_the_closed_form_at_every_record_on_the_gd_clock():
    eng = LeastSquares(lr=0.05)
    res = _flow(eng, 200)
    steps = res.trajectory.step.to_numpy()
    assert steps[0] == 0 and steps[-1] == 200 and len(steps) == 12
    for s, w0 in zip(steps, res.trajectory.w0):
        # rtol 1e-9 per step of the solver: the global error stays far below 1e-7
        assert w0 == pytest.approx(exact_flow(eng, 0.05 * s)[0], abs=1e-7)
    np.testing.assert_allclose(res.params["w"], exact_flow(eng, 10.0), atol=1e-7)
    assert res.evaluations > 0 and res.solver_steps > 0


def test_dynamics_picks_the_loop_of_the_train_section():
    class Train:
        mode, flow_method, flow_rtol, flow_atol = "flow", "RK45", 1e-8, 1e-11

    assert dynamics(type("T", (), {"mode": "gd"})()) is train
    loop = dynamics(Train())
    assert loop.func is flow and loop.keywords == {"method": "RK45", "rtol": 1e-8,
                                                   "atol": 1e-11}


def _gap(lr: float, horizon: float, speed: float = 1.0) -> float:
    """max |GD − flow| of w over the records up to `horizon`; with `speed` != 1 the flow's
    field is `speed` times −∇L (a flow that is not GD's limit: the control)."""
    steps = int(round(horizon / lr))
    gd = train(LeastSquares(lr), steps=steps, schedule=record_schedule(steps, 11, "linear"),
               schema=SCHEMA).trajectory
    eng = LeastSquares(lr)
    eng.lr = lr * speed  # the GD step the field is read from; the clock stays lr
    fl = _flow(eng, steps, n=11).trajectory
    return float(np.max(np.abs(gd.w0.to_numpy() - fl.w0.to_numpy())))


def test_the_gd_to_flow_gap_is_of_order_eta_and_a_wrong_flow_is_caught():
    etas = [0.2, 0.1, 0.05, 0.025]
    slope = stats.linregress(np.log(etas), np.log([_gap(e, 4.0) for e in etas])).slope
    # Euler's global error C·η + O(η²): measured slope 1.00 here; 0.05 is far from the wrong
    # orders (0 for a flow that is not GD's limit, 2 for a second-order method)
    assert abs(slope - 1.0) < 0.05, slope
    wrong = stats.linregress(np.log(etas), np.log([_gap(e, 4.0, speed=1.2) for e in etas]))
    # no convergence to the wrong flow (measured slope −0.5): the order check rejects it
    assert abs(wrong.slope - 1.0) > 0.5, wrong.slope


def test_the_flow_run_folder_resumes_to_the_same_records(tmp_path):
    eng = LeastSquares(lr=0.05)
    whole = _flow(eng, 200).trajectory
    _flow(LeastSquares(lr=0.05), 100, out=tmp_path)
    res = _flow(LeastSquares(lr=0.05), 200, out=tmp_path, resume=True)
    table = pd.read_csv(tmp_path / "trajectory.csv")
    assert list(table.columns) == list(SCHEMA)
    # the resumed part starts its solver afresh at the checkpoint: the same flow to rtol
    np.testing.assert_allclose(table.w0.to_numpy(), res.trajectory.w0.to_numpy())
    common = whole[whole.step.isin(table.step)]
    np.testing.assert_allclose(table[table.step.isin(common.step)].w0.to_numpy(),
                               common.w0.to_numpy(), atol=1e-7)
    assert (tmp_path / "final_state.npz").is_file()


def test_flow_faults_are_one_line_errors():
    with pytest.raises(ValueError, match="train.flow_method: must be one of"):
        _flow(LeastSquares(lr=0.1), 10, method="Euler")
    eng = LeastSquares(lr=0.1)
    eng.time_step = None
    with pytest.raises(ValueError, match="train.mode: gradient flow needs a positive step"):
        _flow(eng, 10)


def test_a_flow_that_diverges_stops_with_the_rows_so_far(tmp_path):
    with pytest.raises(DivergenceError) as err:
        _flow(LeastSquares(lr=0.05, blow_up=0.3), 400, out=tmp_path)
    rows = pd.read_csv(tmp_path / "trajectory.csv")
    assert len(rows) >= 1 and len(err.value.result.trajectory) == len(rows)
    assert (tmp_path / "checkpoint.npz").is_file()
