"""The measured reads of X (theorylab.jelassi2022.engines._reads on the kernel's
theorylab.core.primitives) and flush-to-zero in the steps.

Every implementation choice (einsum, blas, torch, auto) must give the plain einsum's results up
to rounding, and the engines' trajectories must agree to the same order; flushing subnormals in
the Monte Carlo and exchangeable steps must not change their results beyond 1e-15 relative.
"""

from __future__ import annotations

import numpy as np
import pytest

from theorylab.core import backend as bk
from theorylab.core import primitives as pr
from theorylab.jelassi2022.bench.cases import (
    STATE,
    empirical_config,
    make_empirical_engine,
    population_engine,
)
from theorylab.jelassi2022.engines import _reads
from theorylab.jelassi2022.observables import symmetric_A

CHOICES = ("einsum", "blas", "torch", "auto")
# BLAS and torch block and reassociate the d- and n·D-term sums differently from einsum: each
# product then differs by a few ulps times the condition of the sum (|terms| / |sum|), which
# for random data is ~1e-15 relative; 1e-13 leaves two orders of magnitude of headroom
PRODUCT_RTOL = 1e-13


@pytest.fixture(autouse=True)
def _fresh_choice():
    pr.primitive_choices().clear()
    yield
    pr.primitive_choices().clear()


def _data(n=300, D=8, d=24, dtype=np.float64):
    rng = np.random.default_rng(5)
    return (rng.standard_normal((n, D, d)).astype(dtype), rng.standard_normal(d).astype(dtype),
            rng.standard_normal((n, D)).astype(dtype))


@pytest.mark.parametrize("name", ["numpy", "torch"])
@pytest.mark.parametrize("primitive", CHOICES)
def test_every_choice_reads_x_like_einsum(name, primitive):
    X, v, dU = _data()
    xp = bk.get_backend(name)
    U = xp.to_numpy(_reads.project(xp, xp.asarray(X), xp.asarray(v), primitive))
    g = xp.to_numpy(_reads.pullback(xp, xp.asarray(dU), xp.asarray(X), primitive))
    U0, g0 = np.einsum("njk,k->nj", X, v), np.einsum("nj,njk->k", dU, X)
    assert U.shape == U0.shape and g.shape == g0.shape
    np.testing.assert_allclose(U, U0, rtol=PRODUCT_RTOL, atol=PRODUCT_RTOL * np.abs(U0).max())
    np.testing.assert_allclose(g, g0, rtol=PRODUCT_RTOL, atol=PRODUCT_RTOL * np.abs(g0).max())


def test_read_only_data_falls_back_to_blas():
    X, v, dU = _data()
    X.setflags(write=False)  # torch.from_numpy refuses read-only memory
    for primitive in CHOICES:
        U = _reads.project(bk.get_backend("numpy"), X, v, primitive)
        np.testing.assert_allclose(U, np.einsum("njk,k->nj", X, v),
                                   rtol=PRODUCT_RTOL, atol=1e-12)  # as above


def test_auto_measures_once_per_shape_class():
    X, v, dU = _data()
    xp = bk.get_backend("numpy")
    _reads.project(xp, X, v)
    _reads.project(xp, X[:290], v)  # same class: 290 and 300 rows round down to 256
    choice = pr.primitive_choices()
    keys = [k for k in choice.cache if k[0] == "project"]
    assert keys == [("project", 8, 24, "float64", 256)]
    assert choice.cache[keys[0]] in ("einsum", "blas", "torch")
    assert set(choice.timings[keys[0]]) == {"einsum", "blas", "torch"}
    _reads.project(xp, X[:100], v)
    assert len([k for k in choice.cache if k[0] == "project"]) == 2


def test_primitive_env_and_bad_values(monkeypatch):
    cfg = empirical_config(8, 24, 50)
    monkeypatch.setenv(pr.PRIMITIVE_ENV, "blas")
    assert make_empirical_engine(cfg).primitive == "blas"
    monkeypatch.setenv(pr.PRIMITIVE_ENV, "fast")
    with pytest.raises(ValueError, match="THEORYLAB_PRIMITIVE: must be one of"):
        make_empirical_engine(cfg)
    monkeypatch.delenv(pr.PRIMITIVE_ENV)
    assert make_empirical_engine(cfg).primitive == "auto"
    with pytest.raises(ValueError, match="primitive: must be one of"):
        pr.check_primitive("gemv")


def _trajectory(primitive, steps=6):
    cfg = empirical_config(8, 24, 400, backend="torch", offdiag0=0.1, alpha0=0.3)
    eng = make_empirical_engine(cfg)
    eng.primitive = primitive
    eng.chunk = 128  # several chunks, a last partial one: several shape classes
    p = eng.initial_params()
    out = []
    for _ in range(steps):
        ev = eng.evaluate(p, 0, need_grad=True, record=False)
        p = eng.apply(p, ev.grads)
        out.append(np.concatenate([eng.xp.to_numpy(p["A"]).ravel(), eng.xp.to_numpy(p["v"])]))
    return np.array(out)


def test_empirical_trajectories_agree_for_every_choice():
    ref = _trajectory("einsum")
    for primitive in ("blas", "torch", "auto"):
        # rounding differences of the reads (see PRODUCT_RTOL) carried through 6 GD steps of a
        # contracting map: they stay at the 1e-15 level; 1e-13 as for one product
        np.testing.assert_allclose(_trajectory(primitive), ref, rtol=1e-13, atol=1e-13)


def test_flush_denormals_is_scoped():
    x = np.full(8, 1e-310)  # subnormal
    with bk.flush_denormals():
        assert (x * 1.0)[0] == 0.0  # read as zero inside (DAZ)
    assert (x * 1.0)[0] == 1e-310  # the default mode again outside


def _mc_params(eng, aligned):
    A = symmetric_A(eng.D, eng.partition, eng.diag, STATE["gamma"], STATE["rho"])
    v = 40.0 * eng.wstar  # large margins: σ(−m) and σ'(H) underflow to subnormals
    if not aligned:
        e = np.random.default_rng(1).standard_normal(v.shape)
        e -= (e @ eng.wstar) * eng.wstar
        v = v + 0.5 * e / np.linalg.norm(e)
    return {"A": eng.xp.asarray(A), "v": v}


def _close(a, b, rtol):
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    assert np.all(np.abs(a - b) <= rtol * np.maximum(np.abs(b), 1e-300)), (a, b)


@pytest.mark.parametrize("name", ["numpy", "torch"])
@pytest.mark.parametrize("aligned", [True, False])
def test_montecarlo_flush_changes_nothing(name, aligned):
    eng = population_engine(16, 4, "montecarlo", backend=name, mc_samples=4000)
    p = _mc_params(eng, aligned)
    res = {}
    for flush in (False, True):
        eng.flush_denormals = flush
        ev = eng.evaluate(p, 0, need_grad=True, record=False)
        res[flush] = (ev.loss, ev.error, eng.xp.to_numpy(ev.grads["A"]), ev.grads["v"])
    # flushing drops terms below 2.2e-308 from sums of order ≥ 1e-200 here: 1e-15 relative is
    # the bound and is met with room (the results are in fact equal to the bit)
    for a, b in zip(res[True], res[False]):
        _close(a, b, 1e-15)


@pytest.mark.parametrize("name", ["numpy", "torch"])
def test_exchangeable_flush_changes_nothing(name):
    eng = population_engine(24, 4, "exchangeable", backend=name)
    p = {"gamma": 0.3, "rho": -0.05, "alpha": 30.0}  # large margins (subnormal w·σ(−m))
    res = {}
    for flush in (False, True):
        eng.flush_denormals = flush
        ev = eng.evaluate(p, 0, need_grad=True, record=False)
        res[flush] = [ev.loss, ev.error, *(ev.grads[k] for k in ("alpha", "gamma", "rho"))]
    _close(res[True], res[False], 1e-15)  # as for Monte Carlo
