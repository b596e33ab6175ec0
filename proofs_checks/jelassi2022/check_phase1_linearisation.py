"""The linearised phase-I solution used by theorylab.jelassi2022.predictions (DERIVED).

Steps checked, each symbolically:

1. the small-α expansion of the population gradient: with F = α³ f (cubic σ) and
   ℓ(m) = log(1 + e^{−m}), ∂_α ℓ(yF) = −(y/2)·∂_α F + O(α⁵), so the α-step is
   (3/2) η_v κ³ M₃ α² with M₃ = E[y Σ_i N_i³];
2. the closed form M₃ = u³C + 3u²sC(C + (D − C)q) + 3us²K + s³DK, K = C³ + 3C(D − C)q,
   against an exact enumeration of the data law with u, s, q symbolic (and a perturbed K that
   the enumeration rejects), and against predictions.m3_closed_form;
3. the flow α' = hα^{p−1}: α(t) = α⁰(1 − t/t_I)^{−1/(p−2)} with t_I = (α⁰)^{2−p}/((p − 2)h)
   solves it (p symbolic), and a t_I without the factor p − 2 does not;
4. the fixed-step correction: for α_{n+1} = α_n + hα_n², 1/α_{n+1} = 1/α_n − h + h²α_n + O(α²),
   whose sum gives the ln(θ/α⁰) of PhaseIPrediction.time_to.
"""

import itertools
import math

import sympy as sp

from theorylab.jelassi2022.predictions import m3_closed_form


def test_small_alpha_expansion_of_the_logistic_gradient():
    a, f, fp, y = sp.symbols("alpha f fprime y", real=True)
    F = a**3 * f  # F and ∂_α F = 3α² f (f: the α-free part)
    loss = sp.log(1 + sp.exp(-y * F))
    g = sp.diff(loss, a)
    lead = -y / 2 * sp.diff(F, a)
    rest = sp.series((g - lead).subs(y, 1), a, 0, 5).removeO()
    assert sp.simplify(rest) == 0  # the correction starts at α⁵
    rest_m = sp.series((g - lead).subs(y, -1), a, 0, 5).removeO()
    assert sp.simplify(rest_m) == 0
    # the slip ℓ'(0) = −1 (instead of −½) leaves a term of order α²
    wrong = -y * sp.diff(F, a)
    assert sp.simplify(sp.series((g - wrong).subs(y, 1), a, 0, 5).removeO()) != 0


def _m3_enumerated(D, C):
    """E[y Σ_i (u c_i + s T)³] over Assumption 1's law (y = ±1, signal set uniform), exact."""
    u, s, q = sp.symbols("u s q", positive=True)
    p = {-1: q / 2, 0: 1 - q, 1: q / 2}
    sets = [tuple(range(k * C, (k + 1) * C)) for k in range(D // C)]
    L = len(sets)
    tot = 0
    others = [j for S in sets[1:] for j in S]  # the signal set is set 0 (all sets are alike)
    for y in (1, -1):
        for d in itertools.product((-1, 0, 1), repeat=len(others)):
            c = [y] * C + list(d)
            w = sp.Rational(1, 2) * sp.Mul(*[p[v] for v in d])
            T = sum(c)
            tot += w * y * sum((u * ci + s * T) ** 3 for ci in c)
    assert L == D // C
    return sp.expand(tot), (u, s, q)


def _m3_formula(u, s, q, D, C, k3=3):
    K = C**3 + k3 * C * (D - C) * q
    return u**3 * C + 3 * u**2 * s * C * (C + (D - C) * q) + 3 * u * s**2 * K + s**3 * D * K


def test_m3_closed_form_against_enumeration():
    for D, C in ((4, 2), (6, 2), (6, 3)):
        got, (u, s, q) = _m3_enumerated(D, C)
        assert sp.expand(got - _m3_formula(u, s, q, D, C)) == 0
        # a perturbed K (C(D − C)q instead of 3C(D − C)q) is rejected
        assert sp.expand(got - _m3_formula(u, s, q, D, C, k3=1)) != 0
        # the shipped function is the same polynomial (float64 evaluation: rounding only)
        vals = {u: 0.27, s: 0.07, q: 0.46}
        assert abs(m3_closed_form(0.27, 0.07, D, C, 0.46) - float(got.subs(vals))) < 1e-12


def test_blow_up_solution_of_the_flow():
    t, h, a0, p = sp.symbols("t h alpha0 p", positive=True)
    tI = a0 ** (2 - p) / ((p - 2) * h)
    alpha = a0 * (1 - t / tI) ** (-1 / (p - 2))
    resid = sp.diff(alpha, t) - h * alpha ** (p - 1)
    for pv in (3, 5, 7):
        assert sp.simplify(resid.subs(p, pv)) == 0
        assert sp.simplify(alpha.subs({p: pv, t: 0}) - a0) == 0
    wrong = a0 * (1 - t / (a0 ** (2 - p) / h)) ** (-1 / (p - 2))
    assert sp.simplify((sp.diff(wrong, t) - h * wrong ** (p - 1)).subs(p, 5)) != 0


def test_fixed_step_correction_of_the_plateau():
    x, h = sp.symbols("x h", positive=True)
    step = 1 / (x + h * x**2) - 1 / x
    ser = sp.series(step, x, 0, 2).removeO()
    assert sp.simplify(ser - (-h + h**2 * x)) == 0
    # Σ_n h²α_n with α_{n+1} − α_n = hα_n²: Σ h²α_n = h Σ (α_{n+1} − α_n)/α_n ≈ h ln(θ/α⁰), so
    # n(θ) = (1/α⁰ − 1/θ)/h + ln(θ/α⁰) for p = 3, the form of PhaseIPrediction.time_to. On the
    # scalar map itself its error stays O(1) while α⁰ shrinks by 10³; with the logarithm halved
    # the error grows like ln(1/α⁰).
    hv, theta = 0.7, 0.2

    def crossing(x0):
        x, n = x0, 0
        while x + hv * x * x < theta:
            x, n = x + hv * x * x, n + 1
        return n + (1 / x - 1 / theta) / (1 / x - 1 / (x + hv * x * x))

    def err(x0, k):
        return crossing(x0) - ((1 / x0 - 1 / theta) / hv + k * math.log(theta / x0))

    right = [abs(err(x0, 1.0)) for x0 in (1e-2, 1e-3, 1e-4, 1e-5)]
    halved = [abs(err(x0, 0.5)) for x0 in (1e-2, 1e-3, 1e-4, 1e-5)]
    assert max(right) - min(right) < 0.1  # converges to a constant (measured spread 0.004)
    assert halved[-1] - halved[0] > 3.0  # ½·ln(10³) ≈ 3.45 more
