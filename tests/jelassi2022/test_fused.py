"""The fused one-pass training pass (theorylab.jelassi2022.engines.fused).

The fused kernel must give what the plain pass (evaluate_projections on U = X·v, then Xᵀ ∂L/∂U)
gives, sum for sum, on shapes that exercise every loop remainder (D not a multiple of 4, odd d),
for odd, even and mixed polynomial σ, at exact ties and when the run diverges; the engine's
trajectories must agree whichever pass runs, and the choice rule must measure once per shape
class and reject bad values by name.
"""

from __future__ import annotations

import numpy as np
import pytest
import torch

pytest.importorskip("numba")

from theorylab.core.backend import NumpyBackend  # noqa: E402
from theorylab.jelassi2022.activation import Activation  # noqa: E402
from theorylab.jelassi2022.bench.cases import empirical_config, make_empirical_engine  # noqa: E402
from theorylab.jelassi2022.engines import fused as fz  # noqa: E402
from theorylab.jelassi2022.model import (  # noqa: E402
    PositionalAttentionModel,
    attention,
    evaluate_projections,
)

# The kernel sums U_nj = ⟨X_nj, v⟩ in four vectorised partial sums and ∂L/∂v over samples in
# sample order, where BLAS/numpy block differently: each result differs by a few ulps times the
# condition of its sum (|terms| / |sum|, ~10–100 for these random data), i.e. ≤ 1e-14 relative;
# 1e-12 leaves two orders of headroom and still catches any wrong term (≥ 1e-3 relative).
RTOL = 1e-12


@pytest.fixture(autouse=True)
def _fresh_choice():
    fz.pass_choices().clear()
    yield
    fz.pass_choices().clear()


def _plain(X, y, v, S, model, tie_tol, w):
    xp = NumpyBackend()
    U = np.einsum("njk,k->nj", X, v)
    ev = evaluate_projections(U, y, w, S, model, xp, need_grad=True, tie_tol=tie_tol)
    dv = np.einsum("nj,njk->k", ev.dU, X)
    return (float(ev.loss), float(ev.loss_sq), float(ev.error), float(ev.ties)), dv, ev.dS


def _case(N=257, D=6, d=13, scale=0.3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((N, D, d))
    y = rng.choice([-1.0, 1.0], size=N)
    v = scale * rng.standard_normal(d)
    S = attention(rng.standard_normal((D, D)), 1.0)
    return X, y, v, S


def _close(a, b, what):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    scale = max(float(np.abs(b).max()), 1e-300)
    assert np.abs(a - b).max() <= RTOL * scale, (what, np.abs(a - b).max() / scale)


@pytest.mark.parametrize("coeffs", [(0.0, 0.0, 0.0, 1.0), (0.0, 0.03, 0.0, 0.0, 0.0, 1.0),
                                    (0.1, 1.0, 0.5), (0.0, 1.0)])
@pytest.mark.parametrize("shape", [(257, 6, 13), (64, 9, 4), (33, 4, 1), (50, 16, 64)])
def test_fused_pass_equals_plain_pass(coeffs, shape):
    N, D, d = shape
    X, y, v, S = _case(N, D, d)
    model = PositionalAttentionModel(Activation(coeffs), 1.0, float(D))
    sums, dv, dS = fz.fused_grad_pass(X, y, v, S, model, 1e-12, 1.0 / N)
    sums0, dv0, dS0 = _plain(X, y, v, S, model, 1e-12, 1.0 / N)
    _close(sums[:2], sums0[:2], "loss, loss²")
    # error and ties are counts × 1/N, summed in another order: the same counts, and sums equal
    # to N rounding steps of 1 ulp (N·2.2e-16 ≤ 6e-14 here)
    assert [round(s * N) for s in sums[2:]] == [round(s * N) for s in sums0[2:]]
    assert sums[2:] == pytest.approx(sums0[2:], rel=0, abs=N * 2.3e-16)
    _close(dv, dv0, "dv")
    _close(dS, dS0, "dS")


def test_exact_ties_are_counted_like_the_plain_pass():
    X, y, _, S = _case()
    v = np.zeros(X.shape[2])  # U = 0: F = D·σ(0) = 0 for an odd σ, every sample a tie
    model = PositionalAttentionModel(Activation((0.0, 0.0, 0.0, 1.0)), 1.0, 6.0)
    sums, dv, dS = fz.fused_grad_pass(X, y, v, S, model, 1e-12, 1.0 / X.shape[0])
    sums0, dv0, dS0 = _plain(X, y, v, S, model, 1e-12, 1.0 / X.shape[0])
    assert sums[2] == pytest.approx(1.0) and sums[3] == pytest.approx(1.0)
    assert sums == pytest.approx(sums0, rel=1e-15)
    assert np.all(dv == 0) and np.all(dS == 0) and np.all(dv0 == 0)


def test_divergence_shows_as_non_finite_like_the_plain_pass():
    X, y, v, S = _case()
    model = PositionalAttentionModel(Activation((0.0, 0.0, 0.0, 1.0)), 1.0, 6.0)
    sums, dv, dS = fz.fused_grad_pass(X, y, 1e120 * v, S, model, 1e-12, 1.0 / X.shape[0])
    with np.errstate(all="ignore"):
        sums0, dv0, _ = _plain(X, y, 1e120 * v, S, model, 1e-12, 1.0 / X.shape[0])
    # fast-math is limited to reassociation and FMA: inf and nan keep their IEEE meaning
    assert not np.isfinite(sums[0]) and not np.isfinite(sums0[0])
    assert not np.all(np.isfinite(dv)) and not np.all(np.isfinite(dv0))


def _trajectory(pass_impl, backend, steps=5):
    cfg = empirical_config(8, 24, 400, backend=backend, offdiag0=0.1, alpha0=0.3)
    eng = make_empirical_engine(cfg)
    eng.pass_impl = pass_impl
    p = eng.initial_params()
    out = []
    for _ in range(steps):
        ev = eng.evaluate(p, 0, need_grad=True, record=True)
        p = eng.apply(p, ev.grads)
        out.append(np.concatenate([eng.xp.to_numpy(p["A"]).ravel(), eng.xp.to_numpy(p["v"]),
                                   [ev.train_loss, ev.loss, ev.error]]))
    return np.array(out)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_engine_trajectories_agree_for_every_pass(backend):
    ref = _trajectory("two-pass", backend)
    for impl in ("fused", "auto"):
        # per-step rounding differences (RTOL above) carried through 5 GD steps of a contracting
        # map stay at that level
        np.testing.assert_allclose(_trajectory(impl, backend), ref, rtol=RTOL, atol=RTOL)


def test_auto_measures_once_per_shape_class_and_runs_the_choice():
    cfg = empirical_config(8, 24, 300, backend="numpy", offdiag0=0.1)
    eng = make_empirical_engine(cfg)
    p = eng.initial_params()
    eng.evaluate(p, 0, need_grad=True, record=False)
    choice = fz.pass_choices()
    key = (8, 24, "float64", 256, torch.get_num_threads())
    assert list(choice.cache) == [key]
    assert choice.cache[key] in ("fused", "two-pass")
    assert set(choice.timings[key]) == {"fused", "two-pass"}
    eng.evaluate(p, 0, need_grad=True, record=False)
    assert len(choice.cache) == 1  # measured once
    n = torch.get_num_threads()
    try:  # another thread count is another class: the kernel is single-threaded
        torch.set_num_threads(n + 1)
        eng.evaluate(p, 0, need_grad=True, record=False)
        assert len(choice.cache) == 2
    finally:
        torch.set_num_threads(n)


def test_float32_and_streamed_data_take_the_two_pass_path():
    eng = make_empirical_engine(empirical_config(8, 24, 100, backend="torch", dtype="float32"))
    assert not fz.fused_eligible(eng.xp, eng.X, eng.streamed)
    eng64 = make_empirical_engine(empirical_config(8, 24, 100, backend="numpy"))
    assert fz.fused_eligible(eng64.xp, eng64.X, False)
    assert not fz.fused_eligible(eng64.xp, eng64.X, True)
    assert not fz.fused_eligible(eng64.xp, eng64.X[:, :, :5], False)  # not C-contiguous
    eng.pass_impl = "fused"  # pinned, but not eligible: the plain pass runs
    ev = eng.evaluate(eng.initial_params(), 0, need_grad=True, record=False)
    assert np.isfinite(ev.train_loss)
    assert fz.pass_choices().cache == {}


def test_pass_env_and_bad_values(monkeypatch):
    monkeypatch.setenv(fz.PASS_ENV, "fused")
    assert make_empirical_engine(empirical_config(8, 24, 50, backend="numpy")).pass_impl == "fused"
    monkeypatch.setenv(fz.PASS_ENV, "one-pass")
    with pytest.raises(ValueError, match="THEORYLAB_EMPIRICAL_PASS: must be one of"):
        make_empirical_engine(empirical_config(8, 24, 50, backend="numpy"))
    monkeypatch.delenv(fz.PASS_ENV)
    eng = make_empirical_engine(empirical_config(8, 24, 50, backend="numpy"))
    assert eng.pass_impl == "auto"
    eng.pass_impl = "fast"
    with pytest.raises(ValueError, match="pass_impl: must be one of"):
        eng.evaluate(eng.initial_params(), 0, need_grad=True, record=False)
