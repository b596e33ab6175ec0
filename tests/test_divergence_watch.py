"""A diverging run keeps its rows and exits 3, whatever diverges: the parameters, the watched
values, a recorded observable (an infinite value, or a NaN in a column that held numbers), or an
evaluation whose numbers overflow (the Laplace engine's grid)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from theorylab.commands import main
from theorylab.core.trainer import DivergenceError, _check_row

H24 = ('[experiment]\npaper = "huang2024"\n[data]\nP = 16\nC1 = 8\nC = 2\n'
       '[train]\nsteps = {steps}\n{extra}')


def _cfg(tmp_path, steps=20, extra=""):
    path = tmp_path / f"c{steps}{abs(hash(extra)) % 1000}.toml"
    path.write_text(H24.format(steps=steps, extra=extra))
    return path


def _err(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def test_a_resume_from_an_extreme_checkpoint_stops_at_the_first_non_finite_row(tmp_path,
                                                                                  capsys):
    out = tmp_path / "r"
    assert main(["run", str(_cfg(tmp_path)), "--out", str(out), "--no-progress"]) == 0
    before = (out / "trajectory.csv").read_bytes()
    ckpt = dict(np.load(out / "checkpoint.npz"))
    ckpt["Phi"] = np.full_like(ckpt["Phi"], 1e308)  # finite, so the resume takes it
    np.savez(out / "checkpoint.npz", **ckpt)
    capsys.readouterr()
    assert main(["run", str(_cfg(tmp_path)), "--out", str(out), "--resume", "--steps", "40",
                 "--no-progress"]) == 3
    line = _err(capsys)
    assert line.startswith("error: run diverged at step 21: the recorded ") and (
        f"21 recorded rows kept in {out}") in line, line
    assert (out / "trajectory.csv").read_bytes() == before  # the finite rows, whole


def test_an_evaluation_that_overflows_is_a_divergence(tmp_path, capsys):
    cfg = _cfg(tmp_path, steps=5, extra='engine = "population-laplace"\nz_nodes = 8\n'
                                        'lr = 1e300\n')
    out = tmp_path / "r"
    assert main(["run", str(cfg), "--out", str(out), "--no-progress"]) == 3
    line = _err(capsys)
    assert line.startswith("error: run diverged at step 1: the evaluation (the Laplace grid "
                           "would need "), line
    assert len(pd.read_csv(out / "trajectory.csv")) == 1  # the step-0 row, kept


@pytest.mark.parametrize("row, finite, diverges", [
    ({"loss": 1.0, "loss_se": float("nan")}, set(), False),  # a column never computed
    ({"loss": 1.0, "loss_se": float("nan")}, {"loss"}, False),
    ({"loss": float("nan")}, {"loss"}, True),  # it held numbers before
    ({"loss": float("inf")}, set(), True),  # infinite: always
    ({"loss": 1.0, "ok": True, "engine": "x"}, set(), False),
])
def test_which_recorded_values_are_a_divergence(row, finite, diverges):
    if diverges:
        with pytest.raises(DivergenceError, match="the recorded loss is not finite"):
            _check_row(3, row, set(finite))
    else:
        seen = set(finite)
        _check_row(3, row, seen)
        assert "loss" in seen


@pytest.mark.parametrize("method", ["LSODA", "RK45"])
def test_the_flow_keeps_the_structure_of_the_exchangeable_engine(tmp_path, method):
    """The flow integrates γ, ρ, α themselves: LSODA (its implicit steps) on the full
    matrix A kept its partition symmetry only to its tolerance (1.5e-8), and the next row's
    read of A refused it. Its rows agree with DOP853's to 1e-6 (both at rtol 1e-9: a solver
    error of ~1e-8 per unit time over t = 20·η, with room for the Jacobian estimate)."""
    rows = {}
    for m in ("DOP853", method):
        cfg = tmp_path / f"{m}.toml"
        cfg.write_text('[data]\nD = 16\nC = 2\nd = 20\npartition = "random"\n[train]\n'
                       f'steps = 20\nflow_method = "{m}"\n')
        assert main(["run", str(cfg), "--out", str(tmp_path / m), "--flow",
                     "--no-progress"]) == 0
        rows[m] = pd.read_csv(tmp_path / m / "trajectory.csv")
    a, b = rows["DOP853"], rows[method]
    assert list(a.step) == list(b.step)
    for col in ("alpha", "gamma", "rho", "loss"):
        np.testing.assert_allclose(b[col], a[col], rtol=1e-6, atol=1e-12)
