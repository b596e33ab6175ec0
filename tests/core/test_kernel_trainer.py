"""The kernel's training loop on an engine that is not a paper's: a toy least-squares problem
written only against `theorylab.core` (what a second paper does). Checks recording, the run
folder, resume, the divergence stop and the schema, with no import of a paper."""

import numpy as np
import pandas as pd
import pytest

from theorylab.core.engine import Engine
from theorylab.core.trainer import DivergenceError, record_schedule, train

SCHEMA = {"step": "int64", "loss": "float64", "w_norm": "float64"}


class LeastSquares(Engine):
    """L(w) = ‖Xw − y‖² / (2n); GD with step `lr`."""

    name = "toy-least-squares"

    def __init__(self, lr: float, n: int = 20, p: int = 3, seed: int = 0) -> None:
        rng = np.random.default_rng(seed)
        self.X, self.y, self.lr = rng.standard_normal((n, p)), rng.standard_normal(n), lr

    def initial_params(self):
        return {"w": np.zeros(self.X.shape[1])}

    def evaluate(self, params, step, *, need_grad, record):
        r = self.X @ params["w"] - self.y
        grads = {"w": self.X.T @ r / len(r)} if need_grad else None
        return type("Ev", (), {"loss": 0.5 * float(r @ r) / len(r), "grads": grads})()

    def apply(self, params, grads):
        return {"w": params["w"] - self.lr * grads["w"]}

    def record(self, params, step, ev):
        return {"loss": ev.loss, "w_norm": float(np.linalg.norm(params["w"]))}

    def params_to_arrays(self, params):
        return {"w": np.asarray(params["w"], dtype=np.float64)}

    def params_from_arrays(self, arrays):
        return {"w": arrays["w"].copy()}


def _run(engine, steps, mode="log", **kw):
    return train(engine, steps=steps, schedule=record_schedule(steps, 10, mode), schema=SCHEMA,
                 config_text=f"[toy]\nlr = {engine.lr}\n", **kw)


def test_gd_reaches_the_least_squares_solution_and_writes_the_folder(tmp_path):
    eng = LeastSquares(lr=0.5)
    res = _run(eng, 400, out=tmp_path)
    w_ls = np.linalg.lstsq(eng.X, eng.y, rcond=None)[0]
    np.testing.assert_allclose(res.params["w"], w_ls, atol=1e-10)  # GD converges linearly
    table = pd.read_csv(tmp_path / "trajectory.csv")
    assert list(table.columns) == list(SCHEMA) and table.step.iloc[-1] == 400
    assert (np.diff(table.loss) <= 1e-15).all()  # lr below 2/λ_max: the loss never rises
    assert (tmp_path / "config.toml").read_text() == "[toy]\nlr = 0.5\n"
    with np.load(tmp_path / "final_state.npz") as z:
        np.testing.assert_array_equal(z["w"], res.params["w"])


def test_resume_continues_bit_for_bit_and_checks_the_config(tmp_path):
    full = _run(LeastSquares(lr=0.3), 60, mode="all")
    _run(LeastSquares(lr=0.3), 20, mode="all", out=tmp_path)
    seen = []
    res = _run(LeastSquares(lr=0.3), 60, mode="all", out=tmp_path, resume=True,
               same_run=seen.append)
    assert seen == [tmp_path / "config.toml"]  # the paper's check is called on the saved config
    np.testing.assert_array_equal(res.params["w"], full.params["w"])
    pd.testing.assert_frame_equal(res.trajectory, full.trajectory)

    def refuse(path):
        raise ValueError("resume: another run")

    with pytest.raises(ValueError, match="another run"):
        _run(LeastSquares(lr=0.3), 60, out=tmp_path, resume=True, same_run=refuse)


def test_divergence_stops_with_the_rows_so_far(tmp_path):
    with pytest.raises(DivergenceError) as info:
        _run(LeastSquares(lr=1e6), 5000, out=tmp_path)
    err = info.value
    kept = pd.read_csv(tmp_path / "trajectory.csv")
    assert len(kept) == len(err.result.trajectory) >= 1 and kept.step.max() <= err.step
    assert err.result.engine.name == "toy-least-squares"


def test_record_schedule_modes():
    s = record_schedule(20000, 50, "log")
    assert s[0] == 0 and s[-1] == 20000 and np.all(np.diff(s) > 0) and len(s) <= 50
    assert list(record_schedule(5, 50, "log")) == [0, 1, 2, 3, 4, 5]
    lin = record_schedule(100, 11, "linear")
    assert list(lin) == list(range(0, 101, 10))
    with pytest.raises(ValueError, match="^record:"):
        record_schedule(10, 5, "cubic")


def test_appended_rows_are_the_rows_the_table_writer_writes(tmp_path):
    """Rows appended one by one (while a run records) are byte for byte the CSV that the atomic
    whole-table write gives, and read back equal; a torn last line is dropped on reading."""
    from theorylab.core.trainer import RunFolder

    schema = {"step": "int64", "x": "float64", "ok": "bool", "name": "string"}
    rows = [{"step": 0, "x": 0.1, "ok": True, "name": "a-b"},
            {"step": 1, "x": float("nan"), "ok": False, "name": "c,d"},
            {"step": 5, "x": -1.2345678901234567e-300, "ok": True, "name": 'q"'}]
    appended, whole = RunFolder(tmp_path / "a", schema), RunFolder(tmp_path / "w", schema)
    appended.write_rows([])
    for r in rows:
        appended.append_row(r)
    whole.write_rows(rows)
    assert appended.trajectory.read_bytes() == whole.trajectory.read_bytes()
    back = appended.read_rows()
    assert [r["step"] for r in back] == [0, 1, 5] and np.isnan(back[1]["x"])
    assert back[2]["x"] == rows[2]["x"] and back[1]["name"] == "c,d" and back[2]["ok"]
    text = appended.trajectory.read_text()
    appended.trajectory.write_text(text[:-7])  # a killed append: the last line cut
    assert [r["step"] for r in appended.read_rows()] == [0, 1]
