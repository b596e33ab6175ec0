"""Huang et al. (2025), reconstructed CL model (predictions/cl_plateau.py, DERIVED): the reduced
InfoNCE loss with the expectation over the n negatives taken exactly,

    L_n(φ) = E_z[ −S(z, z) + E log(e^{S(z,z)} + Σ_{i ≤ n} X_i) ],
    X = e^{S(z, z')} (z' from the law) with probability 1/K, else 1,
    S(z, z') = g(z) g(z')/τ,   g(z) = z e^{zφ}/(e^{zφ} + ω),

and the module's way of computing it and its gradient: the Laplace-transform integrals

    E log Y = ∫_0^∞ (e^{−t} − e^{−ta} Λ(t)^n) dt/t,
    dL_n/dφ = E_z[ −dS(z, z) + ∫_0^∞ e^{−ta} Λ^{n−1} (a dS(z, z) Λ + n Λ_1) dt ].

Sympy enumerates the expectation over the negatives for a three-point coefficient law with
rational nodes and weights (every composition of the n negatives over "other cluster" and the
three nodes, with its multinomial weight) and differentiates it in φ, with φ, ω, τ, K symbolic;
the module's quadrature ([`cl_reduced_loss`], [`cl_reduced_grad`], ``expectation="exact"``) must
match it at rational points to its quadrature and rounding error (1e−11 relative), and the Frullani
identity behind the first integral is checked symbolically.

The earlier leading-order formula ("Jensen": the sum over the negatives replaced by n m(z),
m(z) = (1/K) E_{z'} e^{S(z,z')} + 1 − 1/K) is kept as the named wrong formula: its hand-derived
gradient

    dL_n^J/dφ = E_z[ (1 − q(z)) (Σ_{z'} W(z, z') dS(z, z') − dS(z, z)) ],
    q = e^{S(z,z)}/(e^{S(z,z)} + n m(z)),   W(z, z') = w(z') e^{S(z,z')}/(K m(z)),
    dS(z, z') = (g'(z) g(z') + g(z) g'(z'))/τ,   g'(z) = z² A(z)(1 − A(z)),

is checked against sympy's derivative of L_n^J to 40 digits (and ``expectation="jensen"`` to
float64 rounding), and it must differ from the exact loss and gradient (the check can fail). A
wrong variant (g' without the factor 1 − A) must fail too.
"""

from functools import cache
from itertools import product

import mpmath
import numpy as np
import sympy as sp

from theorylab.huang2024.predictions.cl_plateau import cl_reduced_grad, cl_reduced_loss

Z = [sp.Rational(1, 2), sp.Rational(1), sp.Rational(3, 2)]
W = [sp.Rational(1, 4), sp.Rational(1, 2), sp.Rational(1, 4)]
phi, om, tau, n, K = sp.symbols("phi omega tau n K", positive=True)

#: float64 quadrature of the exact expectation (trapezoid in ln t, step 0.3: halving it moves
#: the gradient by < 1e−13 relative; float64 sums of ≈ 300 terms of size ≤ 1 lose a few digits).
EXACT_RTOL = 1e-11


def _parts(wrong=False):
    A = [sp.exp(z * phi) / (sp.exp(z * phi) + om) for z in Z]
    g = [z * a for z, a in zip(Z, A)]
    dg = [z * (z * a if wrong else z * a * (1 - a)) for z, a in zip(Z, A)]
    S = [[g[i] * g[j] / tau for j in range(3)] for i in range(3)]
    dS = [[(dg[i] * g[j] + g[i] * dg[j]) / tau for j in range(3)] for i in range(3)]
    m = [sum(W[j] * sp.exp(S[i][j]) for j in range(3)) / K + 1 - 1 / K for i in range(3)]
    return S, dS, m


@cache
def _jensen(wrong=False):
    S, dS, m = _parts()
    L = sum(W[i] * (-S[i][i] + sp.log(sp.exp(S[i][i]) + n * m[i])) for i in range(3))
    S, dS, m = _parts(wrong)
    hand = 0
    for i in range(3):
        q = sp.exp(S[i][i]) / (sp.exp(S[i][i]) + n * m[i])
        Wij = [W[j] * sp.exp(S[i][j]) / (K * m[i]) for j in range(3)]
        hand += W[i] * (1 - q) * (sum(Wij[j] * dS[i][j] for j in range(3)) - dS[i][i])
    return L, sp.diff(L, phi), hand


@cache
def _exact(nneg: int):
    """L_n with the expectation over `nneg` negatives enumerated (compositions over the four
    outcomes: another cluster, or the same cluster with z' at one of the three nodes)."""
    S, _, _ = _parts()
    L = 0
    for i in range(3):
        inner = 0
        for c in product(range(nneg + 1), repeat=4):
            if sum(c) != nneg:
                continue
            weight = sp.factorial(nneg) / sp.prod([sp.factorial(k) for k in c])
            weight *= (1 - 1 / K) ** c[0] * sp.prod([(W[j] / K) ** c[j + 1] for j in range(3)])
            y = sp.exp(S[i][i]) + c[0] + sum(c[j + 1] * sp.exp(S[i][j]) for j in range(3))
            inner += weight * sp.log(y)
        L += W[i] * (-S[i][i] + inner)
    return L, sp.diff(L, phi)


JENSEN_POINTS = [(sp.Rational(13, 10), 5, sp.Rational(1, 10), 15, 4),
                 (sp.Rational(-1, 2), sp.Rational(7, 3), sp.Rational(1, 4), 3, 2),
                 (sp.Rational(5, 2), 12, sp.Rational(1, 5), 100, 8)]
#: (φ, ω, τ, K) for the exact loss; n is enumerated (1, 2, 3).
EXACT_POINTS = [(sp.Rational(13, 10), 5, sp.Rational(1, 5), 4),
                (sp.Rational(-1, 2), sp.Rational(7, 3), sp.Rational(1, 4), 2),
                (sp.Rational(5, 2), 12, sp.Rational(1, 5), 8),
                (sp.Rational(3, 1), 3, sp.Rational(1, 10), 4)]


def _at(expr, sub):
    return sp.N(expr.subs(sub), 45)


def _jsub(pt):
    return dict(zip((phi, om, tau, n, K), pt))


def _numpy_args():
    return (np.array([float(v) for v in Z]), np.array([float(v) for v in W]))


def test_the_frullani_identity_behind_the_laplace_integral():
    t, y = sp.symbols("t y", positive=True)
    got = sp.integrate((sp.exp(-t) - sp.exp(-t * y)) / t, (t, 0, sp.oo))
    assert sp.simplify(got - sp.log(y)) == 0
    assert sp.integrate(sp.exp(-t * y), (t, 0, sp.oo)) == 1 / y


def test_exact_loss_and_gradient_match_the_enumerated_expectation():
    z, w = _numpy_args()
    for nneg in (1, 2, 3):
        L, dL = _exact(nneg)
        for f, o, tt, k in EXACT_POINTS:
            sub = {phi: f, om: o, tau: tt, K: k}
            kw = {"omega": float(o), "tau": float(tt), "K": int(k), "negatives": float(nneg)}
            d = float(_at(dL, sub))
            assert abs(d) > 1e-3  # not trivially zero
            assert np.isclose(cl_reduced_grad(float(f), z, w, **kw), d, rtol=EXACT_RTOL,
                              atol=0), (nneg, f, cl_reduced_grad(float(f), z, w, **kw), d)
            assert np.isclose(cl_reduced_loss(float(f), z, w, **kw), float(_at(L, sub)),
                              rtol=EXACT_RTOL, atol=0)


def test_the_jensen_formula_is_not_the_exact_expectation():
    """log is concave: L_n^J ≥ L_n at every point, and at the points with φ > 0 (the
    plateau's side) the loss differs by more than 1 % and the gradient by more than 10 %
    (relative): the check can tell the two formulas apart."""
    z, w = _numpy_args()
    for f, o, tt, k in EXACT_POINTS:
        kw = {"omega": float(o), "tau": float(tt), "K": int(k), "negatives": 3.0}
        ex = cl_reduced_loss(float(f), z, w, **kw)
        je = cl_reduced_loss(float(f), z, w, **kw, expectation="jensen")
        assert je > ex
        if f > 0:
            assert je > ex * 1.01
            gx = cl_reduced_grad(float(f), z, w, **kw)
            gj = cl_reduced_grad(float(f), z, w, **kw, expectation="jensen")
            assert abs(gj - gx) > 0.1 * abs(gx)


def test_jensen_hand_gradient_equals_sympy_derivative():
    L, dL, hand = _jensen()
    for pt in JENSEN_POINTS:
        exact = _at(dL, _jsub(pt))
        assert abs(exact - _at(hand, _jsub(pt))) < sp.Float("1e-40")
        assert abs(exact) > sp.Float("1e-3")  # not trivially zero


def test_jensen_numpy_gradient_and_loss_match_sympy():
    L, dL, _ = _jensen()
    z, w = _numpy_args()
    for pt in JENSEN_POINTS:
        f, o, t, nn, k = (float(v) for v in pt)
        kw = {"omega": o, "tau": t, "K": int(k), "negatives": nn, "expectation": "jensen"}
        # float64 sums of ≤ 9 terms of size ≤ e^{22}: 1e-11 relative covers the rounding
        assert np.isclose(cl_reduced_grad(f, z, w, **kw), float(_at(dL, _jsub(pt))),
                          rtol=1e-11)
        assert np.isclose(cl_reduced_loss(f, z, w, **kw), float(_at(L, _jsub(pt))),
                          rtol=1e-11)


def test_the_n_to_infinity_limit_drops_the_positive():
    """n → ∞: L_n − log n → E_z[−S(z,z) + log m(z)] (the sum over the negatives concentrates
    at n m(z), so the exact and the Jensen formula share the limit) and its gradient is the
    hand formula with q = 0 (the ``negatives = inf`` branch)."""
    S, dS, m = _parts()
    Linf = sum(W[i] * (-S[i][i] + sp.log(m[i])) for i in range(3))
    z, w = _numpy_args()
    for pt in JENSEN_POINTS:
        f, o, t, _, k = (float(v) for v in pt)
        d = float(_at(sp.diff(Linf, phi), _jsub(pt)))
        for e in ("exact", "jensen"):
            kw = {"omega": o, "tau": t, "K": int(k), "negatives": float("inf"),
                  "expectation": e}
            assert np.isclose(cl_reduced_grad(f, z, w, **kw), d, rtol=1e-11)


def test_a_wrong_gradient_fails():
    _, dL, wrong = _jensen(wrong=True)
    mpmath.mp.dps = 45
    assert max(abs(_at(dL, _jsub(pt)) - _at(wrong, _jsub(pt)))
               for pt in JENSEN_POINTS) > sp.Float("1e-3")
