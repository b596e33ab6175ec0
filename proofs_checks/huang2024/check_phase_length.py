"""Huang et al. (2025), reconstructed model (docs/papers/huang2024.md §4.5, DERIVED): the
length of Phase I and the correction form of the phase-length exponents
(``predictions.asymptotics.phase_one_length``).

In Phase I a local query's global correlation falls at the leading-order rate
dΦ/dt = −η_q w a_1² g(Φ), g(Φ) = E_z[z³ e^{2zΦ}], until the crossing a_1² g(Φ_c) = e^c μ_3 a_j
(``crossing_law``), so t_I = ∫_{Φ_c}^0 dΦ/(η_q w a_1² g(Φ)). Write y = 2L|Φ| for a law with
support [L, U].

1. 1/g grows exponentially in |Φ|, so the integral is led by its end: with
   (U − L) g = e^{−y} L⁴ K(y)/y (check_crossing.py) and h(y) = y/K(y),
   ∫^{y_c} h e^{y} dy = e^{y_c}(h − h' + h'' − …)(y_c), and
   t_I = (1/(2L))·(1/(η_q w a_1² g(Φ_c)))·(1 − 1/y_c − 3/y_c² + O(y_c⁻³))
       = e^{−c} d/(2L η_q w μ_3 a_j)·(1 − 1/y_c − 3/y_c² + O(y_c⁻³)),
   d = 1 − a_1 the softmax's denominator at the crossing (a_1 ∝ P^{κ_s − 1}).
   For z ≡ 1, e^{−2Φ} = 1 + 2η_q w a_1² t exactly: t_I = e^{−c}/(2η_q w μ_3 a_j)(1 − O(P^{−Δ})).
2. No power of ln P multiplies (P/C)/η_q: with y_c = Δ ln P + O(ln ln P), the local exponent of
   t_I against x = (P/C)/η_q is 1 + (1/y_c²)·dy_c/d ln x + … = 1 + O(1/ln² P) (a factor
   (ln P)^k would give k/ln P, the form a + b/ln x; it is rejected here: the 1/y term's
   coefficient is −1, not a power of y).
3. Phase II starts from the state at t_I, whose P-dependence is this series in 1/y_c (and
   powers of P: a_1, 1/C, the global attention), so t_II and T* share the form a + b/ln² x.
"""

import math

import numpy as np
import sympy as sp

from theorylab.huang2024.predictions.asymptotics import crossing_law, phase_one_length

y = sp.symbols("y", positive=True)
K = 1 + 3 / y + 6 / y ** 2 + 6 / y ** 3
h = y / K


def _antiderivative(n=6):
    """e^y (h − h' + h'' − …) to n terms: its derivative is h e^y up to ±h^{(n)} e^y."""
    return sp.exp(y) * sum((-1) ** k * sp.diff(h, y, k) for k in range(n))


def test_endpoint_antiderivative():
    F = _antiderivative(6)
    rest = sp.simplify(sp.diff(F, y) - h * sp.exp(y))
    # what is left is the sixth derivative of h: O(y⁻⁶) relative to h
    u = sp.symbols("u", positive=True)
    lead = sp.limit(sp.simplify(rest / (h * sp.exp(y))).subs(y, 1 / u) / u ** 6, u, 0)
    assert lead.is_finite


def test_phase_one_length_series():
    F = _antiderivative(6)
    ratio = sp.simplify(F / (h * sp.exp(y)))  # t_I·2L·(rate at the crossing)
    u = sp.symbols("u", positive=True)
    ser = sp.series(ratio.subs(y, 1 / u), u, 0, 3).removeO()
    assert sp.simplify(ser.coeff(u, 0) - 1) == 0
    assert sp.simplify(ser.coeff(u, 1) + 1) == 0  # 1 − 1/y: a series in 1/y, no power of y
    assert sp.simplify(ser.coeff(u, 2) + 3) == 0  # − 3/y²
    # the local exponent against ln P: d ln(1 − 1/y + c₂/y²)/dy · dy/dλ is O(y⁻²)
    c2 = ser.coeff(u, 2)
    lnF = sp.log(1 - 1 / y + c2 / y ** 2)
    slope = sp.series(sp.diff(lnF, y).subs(y, 1 / u), u, 0, 3).removeO()
    assert slope.coeff(u, 0) == 0 and slope.coeff(u, 1) == 0
    assert slope.coeff(u, 2) == 1


def test_module_law_against_the_endpoint_form():
    # the module's Phase I length (exact quadrature over Φ and z) against the endpoint form
    # e^{−c}d/(2L μ_3 a_j)·(1 − 1/y − 3/y²) far above the ladder; d = 1 − a_1 is the softmax's
    # denominator at the crossing (a_1 = (1 − γ)C1/P ∝ P^{κ_s − 1}: a slow power of P)
    L, U, gamma, c = 0.5, 1.5, 0.5, 0.5
    mu3 = (U ** 4 - L ** 4) / (4 * (U - L))
    for P in (1e12, 1e20):
        C = P ** 0.25
        C1 = math.sqrt(P ** 1.65 * C)
        phi, _ = crossing_law(P, C1, C, L, U, gamma, c)
        t = phase_one_length(P, C1, C, L, U, gamma, c)
        aj, a1 = (1 - gamma) * (C - 1) / P, (1 - gamma) * C1 / P
        yc = 2 * L * abs(phi)
        lead = math.exp(-c) * (1 - a1) / (2 * L * mu3 * aj) * (1 - 1 / yc - 3 / yc ** 2)
        assert abs(t / lead - 1) < 10 / yc ** 3


def test_point_law_is_exact_power():
    # z ≡ 1: t_I·a_j/d is constant up to O(P^{−Δ}) and the (1 − S) factors
    vals = []
    for P in (1e8, 1e12, 1e16):
        C = P ** 0.25
        C1 = math.sqrt(P ** 1.65 * C)
        aj, a1 = 0.5 * (C - 1) / P, 0.5 * C1 / P
        vals.append(phase_one_length(P, C1, C, 1.0, 1.0, 0.5, 0.5) * aj / (1 - a1))
    assert np.ptp(np.log(vals)) < 0.01
