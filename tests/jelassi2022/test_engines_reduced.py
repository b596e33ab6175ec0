"""The reduced population engine (α, β, γ, ρ): the exchangeable engine at β = 0, its gradients
against finite differences, the compiled kernel against the numpy path, its truncation error
O(β⁴) against Gauss–Hermite quadrature of the full noise, and its starts against the engines'."""

import itertools
import math

import numpy as np
import pytest

from theorylab.jelassi2022.config import DataConfig, ExperimentConfig, ModelConfig, TrainConfig
from theorylab.jelassi2022.data import make_wstar
from theorylab.jelassi2022.engines import make_engine
from theorylab.jelassi2022.engines._reduced import ReducedEngine, reduced_start
from theorylab.jelassi2022.predictions import _exchangeable
from theorylab.jelassi2022.setups import reference_config, with_readings


def _p(**kw):
    base = {"alpha": 0.7, "beta": 3.0, "gamma": 0.4, "rho": -0.3}
    base.update(kw)
    return {k: np.array([v], dtype=float) for k, v in base.items()}


def test_beta_zero_is_the_exchangeable_engine():
    cfg = reference_config().resolved()
    ex = _exchangeable(cfg)
    eng = ReducedEngine(cfg, [0.5], [0.0])
    for a, g, r in ((0.5, 0.3, -0.2), (1.7, 0.0, 0.0), (1.3, 2.0, -1.5)):
        ev = ex.evaluate({"alpha": a, "gamma": g, "rho": r}, 0, need_grad=True, record=False)
        loss, err, ties, grads = eng.evaluate(_p(alpha=a, beta=0.0, gamma=g, rho=r))
        assert abs(loss[0] - ev.loss) < 1e-14  # the same finite sums, other order
        assert abs(err[0] - (ev.error - 0.5 * ev.tie_mass)) < 1e-14
        for k in ("alpha", "gamma", "rho"):
            assert abs(grads[k][0] - ev.grads[k]) < 1e-13 * (1 + abs(ev.grads[k]))
        assert grads["beta"][0] == 0.0


def test_gradients_against_finite_differences_and_numpy_path():
    """Central differences (step 1e−6: truncation O(h²) ~ 1e−12, rounding ~1e−10 relative)."""
    cfg = reference_config().resolved()
    eng = ReducedEngine(cfg, [0.7], [3.0])
    p = _p()
    _, _, _, g = eng.evaluate(p)
    for k in p:
        h = 1e-6
        up = {kk: v + (h if kk == k else 0.0) for kk, v in p.items()}
        dn = {kk: v - (h if kk == k else 0.0) for kk, v in p.items()}
        fd = (eng.evaluate(up, False)[0][0] - eng.evaluate(dn, False)[0][0]) / (2 * h)
        assert abs(g[k][0] - fd) < 1e-7 * (1 + abs(fd)), k
    q = {"alpha": np.array([0.7, 1.4, 0.02]), "beta": np.array([3.0, 0.1, 5.0]),
         "gamma": np.array([0.4, 1.0, 0.0]), "rho": np.array([-0.3, -1.0, 0.0])}
    eng3 = ReducedEngine(cfg, q["alpha"], q["beta"])
    a, b = eng3.evaluate(q), eng3.evaluate_numpy(q)
    for x, y in zip(a[:3], b[:3]):
        assert np.max(np.abs(x - y)) < 1e-14
    for k in q:
        assert np.max(np.abs(a[3][k] - b[3][k]) / (1 + np.abs(b[3][k]))) < 1e-13


def _tiny_cfg():
    return ExperimentConfig(
        data=DataConfig(D=4, C=2, partition=[[0, 1], [2, 3]], d=4, q=0.5),
        model=ModelConfig(activation="cubic", temperature=1.0, value_scale=1.0, diag=0.8),
        train=TrainConfig(method="montecarlo", init_v="gaussian")).resolved()


def _full_noise_loss(cfg, alpha, beta, gamma, rho, n=10):
    """E over (y, c) exactly and over the four noise projections by Gauss–Hermite (n⁴ nodes,
    exact for polynomials of degree 2n − 1 in each variable)."""
    D, sig = 4, cfg.data.sigma_value
    x, w = np.polynomial.hermite_e.hermegauss(n)
    w = w / w.sum()
    G = np.array(list(itertools.product(x, repeat=D)))  # (n⁴, 4)
    W = np.prod(np.array(list(itertools.product(w, repeat=D))), axis=1)
    A = np.array([[cfg.diag, gamma, rho, rho], [gamma, cfg.diag, rho, rho],
                  [rho, rho, cfg.diag, gamma], [rho, rho, gamma, cfg.diag]])
    S = np.exp(A)
    S /= S.sum(1, keepdims=True)
    tot = 0.0
    for y in (1, -1):
        for ell in (0, 1):
            others = [2, 3] if ell == 0 else [0, 1]
            for d in itertools.product((-1, 0, 1), repeat=2):
                pr = 0.5 * 0.5 * np.prod([0.25 if v else 0.5 for v in d])
                c = np.zeros(D)
                c[[0, 1] if ell == 0 else [2, 3]] = y
                c[others] = d
                U = alpha * c[None, :] + sig * beta * G  # ⟨v, X_j⟩ for every node
                F = ((U @ S.T) ** 3).sum(1)
                tot += pr * float(W @ np.logaddexp(0.0, -y * F))
    return tot


def test_truncation_error_is_fourth_order_in_the_noise():
    cfg = _tiny_cfg()
    a, g, r = 0.9, 0.3, -0.2
    eng = ReducedEngine(cfg, [a], [0.0])
    errs = []
    for beta in (0.1, 0.2):  # σβ = 0.05, 0.1
        exact = _full_noise_loss(cfg, a, beta, g, r)
        red = eng.evaluate(_p(alpha=a, beta=beta, gamma=g, rho=r), False)[0][0]
        zero = eng.evaluate(_p(alpha=a, beta=0.0, gamma=g, rho=r), False)[0][0]
        errs.append(abs(exact - red))
        assert abs(exact - red) < 0.05 * abs(exact - zero)  # the β² term is most of it
    assert 14 < errs[1] / errs[0] < 18  # O(β⁴): ×16 when β doubles (measured 15.8)


def test_starts_are_the_engines_starts():
    cfg = with_readings(reference_config(), "1", "random").resolved()
    a0, b0 = reduced_start(cfg, [3])
    eng = make_engine(cfg.replace(train={"seed": 3}), cfg.data.make_partition(),
                      make_wstar(cfg.data))
    v = eng.initial_v()
    w = make_wstar(cfg.data)
    assert abs(a0[0] - v @ w) < 1e-15
    assert abs(b0[0] - np.linalg.norm(v - (v @ w) * w)) < 1e-15
    assert math.isclose(math.hypot(a0[0], b0[0]), 0.01, rel_tol=0.3)  # ‖v⁰‖ ≈ 0.01


def test_run_stops_runs_one_by_one():
    cfg = with_readings(reference_config(lr_v=1.0), "1", "random").resolved()
    a0, b0 = reduced_start(cfg, [0, 1, 2])
    path = ReducedEngine(cfg, a0, b0).run(6000, stop=lambda n, a, b, g, r: a >= 0.1)
    last = path.groupby("run").step.max()
    assert (path.groupby("run").alpha.last() >= 0.1).all() and last.nunique() == 3
    assert not path.isna().any().any()
    with pytest.raises(ValueError, match="alpha0"):
        ReducedEngine(cfg, [0.1, 0.2], [0.1])


def test_noise_curvature_of_the_sandwich_formula_is_the_engines():
    """The curvature the sandwich formula r² ≈ c(d − 1)/N divides by, (κσ)²·E[L₂]
    (``noise_moments``), is the engine's second derivative of the loss in β at β = 0:
    2(L(β) − L(0))/β² at β = 1e−3 (the loss is even in β, so the next term is O(β²) ~ 1e−6
    relative); and the variance V of one sample's gradient along a noise direction is positive."""
    cfg = reference_config().resolved()
    eng = ReducedEngine(cfg, [0.5], [0.0])
    for a, g, r in ((1.7, 0.4, -0.3), (2.3, 3.0, -1.0)):
        st = {k: np.array([v]) for k, v in (("alpha", a), ("gamma", g), ("rho", r))}
        nm = eng.noise_moments(st)
        b = 1e-3
        l0 = eng.evaluate(_p(alpha=a, beta=0.0, gamma=g, rho=r))[0][0]
        lb = eng.evaluate(_p(alpha=a, beta=b, gamma=g, rho=r))[0][0]
        curv = (cfg.value_scale * eng.sigma) ** 2 * nm["L2"][0]
        assert abs(2 * (lb - l0) / b ** 2 - curv) < 1e-5 * abs(curv)
        assert nm["V"][0] > 0
