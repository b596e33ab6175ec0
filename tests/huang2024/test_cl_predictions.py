"""The derived plateau of CL's global attention (``predictions.cl_plateau``): its properties,
the exact expectation over the negatives against a Monte Carlo of the same sum and against a
finer quadrature, the Jensen formula beside it, "no plateau" above τ_c at several
temperatures, τ_c itself, and the engine's Monte Carlo
gradient along the reduced direction against it (the root of the engine's population gradient
lies within 0.25 of the derived φ*, the number the thm4.4-plateau tolerance PRED_TOL rests
on)."""

from __future__ import annotations

import importlib
import math

import numpy as np
import pytest

from theorylab.core.claims import t_interval
from theorylab.huang2024.engines import Params, make_engine
from theorylab.huang2024.predictions.cl_plateau import (
    _z_law,
    cl_critical_temperature,
    cl_omega,
    cl_plateau,
    cl_reduced_grad,
    cl_reduced_loss,
)
from theorylab.huang2024.setups import pair_config

# the module (the package re-exports its function cl_plateau under the same name)
cp = importlib.import_module("theorylab.huang2024.predictions.cl_plateau")


def test_plateau_is_a_root_below_one_and_falls_with_the_global_share():
    pl = [cl_plateau(pair_config(P, C1, C, 1, 15)) for P, C1, C in
          ((32, 12, 2), (64, 22, 3), (128, 38, 3))]
    for p in pl:
        assert p.exists and p.tau == 0.1
        assert p.init_grad < 0  # from Q⁰ = 0 the global correlation grows
        assert p.rho < p.clean_glob < 1 - 0.3  # above its start C1/P, far below 1
        z, w = np.polynomial.legendre.leggauss(64)
        g = cl_reduced_grad(p.phi, 1 + z / 2, w / 2, omega=p.omega, tau=0.1, K=4,
                            negatives=15.0)
        assert abs(g) < 1e-10  # brentq to 1e-13 in φ; the slope is O(1)
    # C1/P falls along the ladder (0.375, 0.344, 0.297), and so does the plateau
    assert pl[0].clean_glob > pl[1].clean_glob > pl[2].clean_glob
    # more negatives lower it towards the n → ∞ limit (the Jensen formula, an upper bound of
    # the loss, has it rising towards the same limit from below)
    cfg = pair_config(64, 22, 3, 1, 15)
    ladder = [cl_plateau(cfg, n).clean_glob for n in (15, 63, 255, math.inf)]
    assert all(a > b for a, b in zip(ladder, ladder[1:])), ladder
    assert ladder[0] - ladder[-1] < 0.03
    jensen = cl_plateau(cfg, 15, expectation="jensen").clean_glob
    assert jensen < ladder[-1] < ladder[0]


def test_exact_expectation_against_a_monte_carlo_of_the_negatives():
    """E log(a + Σ X_i) over the 15 negatives: the quadrature against 50 000 draws of the
    negatives (clusters and z'; the anchor's z on the same nodes), within 4 standard errors;
    and its φ-derivative against the Monte Carlo's central difference with common random
    numbers (the same draws at φ ± h, so the noise of the difference is that of the
    derivative, not of the loss). The Jensen loss lies outside both intervals."""
    cfg = pair_config(64, 22, 3, 1, 15)
    z, w = _z_law(cfg)
    om = cl_omega(22 / 64, 0.5)
    rng = np.random.default_rng(7)
    R, n, h = 50_000, 15, 1e-3
    same = rng.random((R, n)) < 0.25
    zi = rng.uniform(0.5, 1.5, (R, n))

    def draws(phi, tau):
        g = z / (1 + om * np.exp(-z * phi))
        gi = zi / (1 + om * np.exp(-zi * phi))
        per = np.stack([np.log(np.exp(gk * gk / tau) + np.where(
            same, np.exp(gk * gi / tau), 1.0).sum(axis=1)) - gk * gk / tau for gk in g])
        return w @ per  # (R,): the anchor's z integrated on the nodes

    for phi, tau in ((1.5, 0.1), (2.4, 0.2)):
        kw = {"omega": om, "tau": tau, "K": 4, "negatives": 15.0}
        d = draws(phi, tau)
        se = d.std() / math.sqrt(R)
        ex = cl_reduced_loss(phi, z, w, **kw)
        assert abs(d.mean() - ex) < 4 * se, (d.mean(), ex, se)
        je = cl_reduced_loss(phi, z, w, **kw, expectation="jensen")
        assert je - ex > 20 * se
        fd = (draws(phi + h, tau) - draws(phi - h, tau)) / (2 * h)
        gx = cl_reduced_grad(phi, z, w, **kw)
        assert abs(fd.mean() - gx) < 4 * fd.std() / math.sqrt(R) + 1e-5, (fd.mean(), gx)
        gj = cl_reduced_grad(phi, z, w, **kw, expectation="jensen")
        assert abs(gj - gx) > 20 * fd.std() / math.sqrt(R)


def test_quadrature_step_is_converged():
    """Halving the trapezoid step in ln t (T_STEP) moves dL_n/dφ by < 1e−12 relative (measured
    < 1e−13 on φ ≤ 20, τ ∈ [0.1, 0.5]; rounding of ≈ 300-term float64 sums)."""
    cfg = pair_config(128, 35, 3, 1, 15)
    z, w = _z_law(cfg)
    kw = {"omega": cl_omega(35 / 128, 0.5), "K": 4, "negatives": 15.0}
    for phi, tau in ((0.0, 0.1), (1.4, 0.1), (2.5, 0.2), (6.0, 0.25)):
        g = cl_reduced_grad(phi, z, w, tau=tau, **kw)
        with pytest.MonkeyPatch.context() as mp:
            mp.setattr(cp, "T_STEP", cp.T_STEP / 2)
            g2 = cl_reduced_grad(phi, z, w, tau=tau, **kw)
        assert abs(g2 - g) <= 1e-12 * abs(g), (phi, tau, g, g2)


def test_omega_counts_masked_and_local_keys():
    # P = 128, C1 = 32, γ = ½: 64 masked + 48 unmasked local keys against 16 global ones
    assert cl_omega(0.25, 0.5) == pytest.approx(112 / 16, rel=1e-15)


def test_plateau_refuses_a_model_it_was_not_derived_for():
    cfg = pair_config(32, 12, 2, 1, 15)
    with pytest.raises(ValueError, match="model.mask"):
        cl_plateau(cfg.replace(model={"mask_keys": False}))


def _engine_grad(eng, phi, batches):
    """The engine's gradient of the CL loss along the reduced direction (every global FP
    correlation = φ, the rest 0), one Monte Carlo batch per step."""
    s = eng.structure
    P, F = eng.initial_params().Phi.shape
    Phi = np.zeros((P, F))
    Phi[:, s.offset] = phi
    prm = Params(Phi, np.zeros((P, P)))
    return np.array([eng.evaluate(prm, k, need_grad=True, record=False).grads["Phi"][
        :, s.offset].sum() for k in range(batches)])


def test_engine_gradient_changes_sign_around_the_derived_plateau():
    """P = 64, C1 = 22, C = 3 (the ladder's middle rung), batch 16, 15 negatives: the engine's
    Monte Carlo gradient is negative (interval below 0) 0.25 below φ* and positive 0.25 above
    it; at Q⁰ = 0 it equals the derived initial gradient within its interval and the
    neglected order (count fluctuations, relative 1/((1 − γ)C1) ≈ 0.09)."""
    cfg = pair_config(64, 22, 3, 1, 15)
    eng = make_engine(cfg)
    pl = cl_plateau(cfg)
    below = t_interval(_engine_grad(eng, pl.phi - 0.25, 20))
    above = t_interval(_engine_grad(eng, pl.phi + 0.25, 20))
    assert below[2] < 0 < above[1], (below, above)
    m, lo, hi = t_interval(_engine_grad(eng, 0.0, 12))
    slack = 0.1 * abs(pl.init_grad)
    assert lo - slack <= pl.init_grad <= hi + slack, (m, lo, hi, pl.init_grad)


@pytest.mark.parametrize("tau", [0.3, 0.5, 1.0, 2.0])
def test_no_plateau_above_the_critical_temperature(tau):
    """Above τ_c the reduced gradient is negative on the whole scan: no plateau, attention → 1
    (it used to return the scan's end as a root once the gradient underflowed)."""
    cfg = pair_config(64, 22, 3, 1, 15)
    pl = cl_plateau(cfg, tau=tau)
    assert not pl.exists and pl.phi == math.inf and pl.clean_glob == 1.0


def test_critical_temperature_between_the_plateau_and_its_absence():
    """τ_c with the exact expectation lies near 0.22 (an independent Monte Carlo of the same
    CL loss puts it at 0.205–0.215 on the ladder), the Jensen formula's ≈ 0.04 higher."""
    cfg = pair_config(64, 22, 3, 1, 15)
    r = cl_critical_temperature(cfg, lo=0.1, hi=0.4, grid=5)
    jensen = cl_critical_temperature(cfg, lo=0.1, hi=0.4, grid=5,
                                     expectation="jensen")["tau_c"]
    assert 0.2 < r["tau_c"] < 0.23 < 0.24 < jensen < 0.27
    below = cl_plateau(cfg, tau=r["tau_c"] * 0.99)
    above = cl_plateau(cfg, tau=r["tau_c"] * 1.01)
    assert below.exists and not above.exists
    # at the edge the plateau's basin closes at a high, finite attention
    assert 0.8 < below.clean_glob < 1.0
    for t in (0.1, 0.15, 0.2):
        assert cl_plateau(cfg, tau=t).exists
