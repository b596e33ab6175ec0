"""Huang et al. (2025), reconstructed model: the optimum L* of the MAE loss (docs/papers/
huang2024.md §2.5, DERIVED; ``engines.population_lstar``) and the Laplace identity of the
``population-laplace`` engine (module ``theorylab.huang2024.engines._laplace``).

L*. Pointwise, when every other patch of p's own area is masked, ½‖F_p − x_p‖² − ½z_j² is a
sum of squares (sympy), and 0 is reached otherwise; along Φ[p, own] = 3t, Υ[p, p] = t the exact
population loss tends to ``population_lstar`` = E[norm Σ_{areas A ⊂ ℳ} |A| ½ z²], which equals
the enumeration of those pointwise infima.

Laplace. 1/Z = ∫₀^∞ e^{−tZ} dt and 1/Z² = ∫₀^∞ t e^{−tZ} dt; the loss of a masked query is
½z_j² − z_j² N_j/Z + ½Σ_m z_m² N_m²/Z²; an atom's part Z_a = c e^w + n (e^u − e^w), n ~
Bin(c, 1 − γ), has E e^{−tZ_a} = e^{−tce^w} (γ + (1 − γ) e^{−td})^c (d = e^u − e^w), and under
the tilt e^{−tZ_a} n is Bin(c, q) with q = (1 − γ)e^{−td}/(γ + (1 − γ)e^{−td}); the trapezoid rule
in y = ln t with the engine's range and default step integrates 1/Z and 1/Z² to ~1e-14.
"""

import itertools
import math

import numpy as np
import sympy as sp

from theorylab.huang2024 import config_from_dict, make_engine
from theorylab.huang2024.engines import Params, population_lstar
from theorylab.huang2024.engines._laplace import _TAIL


def test_pointwise_bound_is_a_sum_of_squares():
    z = sp.symbols("z0:3", positive=True)
    s = sp.symbols("s0:3", nonnegative=True)
    j = 1
    resid = [z[m] * s[m] - (z[j] if m == j else 0) for m in range(3)]
    loss = sum(r ** 2 for r in resid) / 2
    # every other patch of the own area masked: no attention on an unmasked own-area key
    gap = sp.expand(loss.subs(s[j], 0) - z[j] ** 2 / 2)
    assert sp.simplify(gap - sum(z[m] ** 2 * s[m] ** 2 for m in range(3) if m != j) / 2) == 0
    # with own-area keys available, s_j = 1 reaches 0
    assert sp.simplify(loss.subs({s[j]: 1, s[0]: 0, s[2]: 0})) == 0


def _tiny(mask_keys=True):
    return config_from_dict({
        "data": {"P": 6, "C1": 4, "C": 2, "z_law": "values", "z_values": [0.5, 1.5],
                 "z_probs": [0.4, 0.6]},
        "model": {"gamma": 0.3, "mask_keys": mask_keys, "loss_norm": "P"},
        "train": {"engine": "population-exact"}}).resolved()


def test_lstar_is_the_limit_and_the_enumerated_infimum():
    cfg = _tiny()
    eng = make_engine(cfg)
    s = eng.structure
    P, g = s.P, cfg.model.gamma
    lab = s.labels[0]
    ez2 = 0.4 * 0.25 + 0.6 * 2.25
    # enumeration of the pointwise infima: query p masked, its own area's other keys masked
    want = 0.0
    for bits in itertools.product((0, 1), repeat=P):  # 1 = masked
        pr = math.prod(g if b else 1 - g for b in bits)
        for p in range(P):
            own = [q for q in range(P) if lab[q] == lab[p]]
            if bits[p] and all(bits[q] for q in own):
                want += pr * 0.5 * ez2 / P
    lstar = population_lstar(cfg, s)
    assert abs(lstar - want) < 1e-15  # a sum of a few dozen float64 terms
    # a wrong formula (γ^{C−1}: forgetting that the query itself is masked) is far off
    wrong = sum(c * g ** (c - 1) for c in np.bincount(lab)) * 0.5 * ez2 / P
    assert abs(wrong - want) > 1e-3
    # the population loss along Φ[p, own] = 3t, Υ[p, p] = t decreases to L*
    losses = []
    for t in (5.0, 10.0, 40.0):
        Phi = np.zeros((P, s.F))
        Phi[np.arange(P), lab] = 3 * t
        Ups = np.diag(np.full(P, t))
        losses.append(eng.evaluate(Params(Phi, Ups), 0, need_grad=False, record=False).loss)
    assert losses[0] > losses[1] > losses[2]
    assert abs(losses[2] - lstar) < 1e-12  # the remaining terms are O(e^{-t/2}) = 2e-9·e^{-t/2}


def test_laplace_identities():
    t, Z = sp.symbols("t Z", positive=True)
    assert sp.simplify(sp.integrate(sp.exp(-t * Z), (t, 0, sp.oo)) - 1 / Z) == 0
    assert sp.simplify(sp.integrate(t * sp.exp(-t * Z), (t, 0, sp.oo)) - 1 / Z ** 2) == 0
    # the loss of a masked query through N_m and Z
    z = sp.symbols("z0:3", positive=True)
    Nm = sp.symbols("N0:3", nonnegative=True)
    j = 0
    loss = sum((z[m] * Nm[m] / Z - (z[j] if m == j else 0)) ** 2 for m in range(3)) / 2
    form = z[j] ** 2 / 2 - z[j] ** 2 * Nm[j] / Z + sum(z[m] ** 2 * Nm[m] ** 2
                                                       for m in range(3)) / (2 * Z ** 2)
    assert sp.simplify(loss - form) == 0


def test_binomial_generating_function_and_tilt():
    t, g, u, w = sp.symbols("t gamma u w", positive=True)
    c = 3
    d = sp.exp(u) - sp.exp(w)
    pmf = [sp.binomial(c, n) * (1 - g) ** n * g ** (c - n) for n in range(c + 1)]
    weight = [sp.exp(-t * (c * sp.exp(w) + n * d)) for n in range(c + 1)]
    E0 = sum(p * x for p, x in zip(pmf, weight))
    assert sp.simplify(E0 - sp.exp(-t * c * sp.exp(w)) * (g + (1 - g) * sp.exp(-t * d)) ** c) == 0
    q = (1 - g) * sp.exp(-t * d) / (g + (1 - g) * sp.exp(-t * d))
    E1 = sum(n * p * x for n, (p, x) in enumerate(zip(pmf, weight))) / E0
    E2 = sum(n * n * p * x for n, (p, x) in enumerate(zip(pmf, weight))) / E0
    assert sp.simplify(E1 - c * q) == 0
    assert sp.simplify(E2 - (c * q * (1 - q) + (c * q) ** 2)) == 0
    assert sp.simplify(E2 - c * q) != 0  # a wrong second moment is caught


def _trapezoid(Zv, h, P=64, U=1.5):
    """∫ e^{−tZ} dt and ∫ t e^{−tZ} dt by the trapezoid rule in y = ln t on the engine's range
    (shifted units: the largest single-key term is 1, the smallest e^{lo} with lo = ln min Z)."""
    lo = math.log(min(Zv))
    y_lo = math.log(_TAIL / ((P + 1) * max(1.0, U ** 2)))
    y_hi = math.log(-math.log(_TAIL) + 4.0) - lo + 1.0
    y = np.arange(y_lo, y_hi + h, h)
    tt = np.exp(y)[:, None]
    f = h * tt * np.exp(-tt * np.asarray(Zv)[None, :])
    return f.sum(axis=0), (f * tt).sum(axis=0)


def test_trapezoid_in_log_t_with_the_engines_range():
    Zv = np.array([1.0, 1.7, 12.0, 65.0])  # Z ≥ 1 (the max-shifted term) up to P + 1
    # the discretisation error falls like exp(−c/h) (the integrand is analytic in a strip
    # around the real y-axis): measured 1.4e-14 at the default step 0.2 (rounding of ~300
    # terms), 2.4e-12 at 0.3 (the claims' step), 5e-7 at 0.5, 4e-3 at 1.0
    for h, bound in ((0.2, 5e-14), (0.3, 1e-11)):
        i1, i2 = _trapezoid(Zv, h)
        assert np.abs(i1 * Zv - 1).max() < bound
        assert np.abs(i2 * Zv ** 2 - 1).max() < bound
    i1, i2 = _trapezoid(Zv, 1.0)  # a coarse step is caught
    assert np.abs(i2 * Zv ** 2 - 1).max() > 1e-5
