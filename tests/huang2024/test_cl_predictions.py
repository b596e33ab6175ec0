"""The derived plateau of CL's global attention (theorylab/huang2024/cl_predictions.py): its
properties, and the engine's Monte Carlo gradient along the reduced direction against it (the
root of the engine's population gradient lies within 0.25 of the derived φ*, the number the
thm4.4 tolerance PRED_TOL rests on)."""

from __future__ import annotations

import math

import numpy as np
import pytest

from theorylab.core.claims import t_interval
from theorylab.huang2024.cl_predictions import cl_omega, cl_plateau, cl_reduced_grad
from theorylab.huang2024.engines import Params, make_engine
from theorylab.huang2024.setups import pair_config


def test_plateau_is_a_root_below_one_and_falls_with_the_global_share():
    pl = [cl_plateau(pair_config(P, C1, C, 1, 15)) for P, C1, C in
          ((32, 12, 2), (64, 22, 3), (128, 38, 3))]
    for p in pl:
        assert p.init_grad < 0  # from Q⁰ = 0 the global correlation grows
        assert p.rho < p.clean_glob < 1 - 0.3  # above its start C1/P, far below 1
        z, w = np.polynomial.legendre.leggauss(64)
        g = cl_reduced_grad(p.phi, 1 + z / 2, w / 2, omega=p.omega, tau=0.1, K=4,
                            negatives=15.0)
        assert abs(g) < 1e-10  # brentq to 1e-13 in φ; the slope is O(1)
    # C1/P falls along the ladder (0.375, 0.344, 0.297), and so does the plateau
    assert pl[0].clean_glob > pl[1].clean_glob > pl[2].clean_glob
    # more negatives raise it a little (the n → ∞ limit above n = 15)
    inf = cl_plateau(pair_config(64, 22, 3, 1, 15), math.inf)
    assert pl[1].clean_glob < inf.clean_glob < pl[1].clean_glob + 0.02


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
