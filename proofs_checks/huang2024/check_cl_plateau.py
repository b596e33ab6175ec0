"""Huang et al. (2025), reconstructed CL model (predictions/cl_plateau.py, DERIVED):
the hand-derived gradient of the reduced InfoNCE loss

    L_n(φ) = E_z[ −S(z, z) + log(e^{S(z,z)} + n m(z)) ],
    m(z) = (1/K) E_{z'} e^{S(z,z')} + 1 − 1/K,
    S(z, z') = g(z) g(z')/τ,   g(z) = z e^{zφ}/(e^{zφ} + ω),

is

    dL_n/dφ = E_z[ (1 − q(z)) (Σ_{z'} W(z, z') dS(z, z') − dS(z, z)) ],
    q = e^{S(z,z)}/(e^{S(z,z)} + n m(z)),   W(z, z') = w(z') e^{S(z,z')}/(K m(z)),
    dS(z, z') = (g'(z) g(z') + g(z) g'(z'))/τ,   g'(z) = z² A(z)(1 − A(z)).

Sympy differentiates L_n for a three-point coefficient law with rational nodes and weights and
symbolic φ, ω, τ, n, K; the hand formula is compared with it at rational points to 40 digits,
and the module's numpy function [`cl_reduced_grad`] with both to float64 rounding. A wrong
variant (g' without the factor 1 − A, the slope of an unsaturated softmax) must fail.
"""

from functools import cache

import mpmath
import numpy as np
import sympy as sp

from theorylab.huang2024.predictions.cl_plateau import cl_reduced_grad, cl_reduced_loss

Z = [sp.Rational(1, 2), sp.Rational(1), sp.Rational(3, 2)]
W = [sp.Rational(1, 4), sp.Rational(1, 2), sp.Rational(1, 4)]
phi, om, tau, n, K = sp.symbols("phi omega tau n K", positive=True)


def _parts(wrong=False):
    A = [sp.exp(z * phi) / (sp.exp(z * phi) + om) for z in Z]
    g = [z * a for z, a in zip(Z, A)]
    dg = [z * (z * a if wrong else z * a * (1 - a)) for z, a in zip(Z, A)]
    S = [[g[i] * g[j] / tau for j in range(3)] for i in range(3)]
    dS = [[(dg[i] * g[j] + g[i] * dg[j]) / tau for j in range(3)] for i in range(3)]
    m = [sum(W[j] * sp.exp(S[i][j]) for j in range(3)) / K + 1 - 1 / K for i in range(3)]
    return S, dS, m


@cache
def _exprs(wrong=False):
    S, dS, m = _parts()
    L = sum(W[i] * (-S[i][i] + sp.log(sp.exp(S[i][i]) + n * m[i])) for i in range(3))
    S, dS, m = _parts(wrong)
    hand = 0
    for i in range(3):
        q = sp.exp(S[i][i]) / (sp.exp(S[i][i]) + n * m[i])
        Wij = [W[j] * sp.exp(S[i][j]) / (K * m[i]) for j in range(3)]
        hand += W[i] * (1 - q) * (sum(Wij[j] * dS[i][j] for j in range(3)) - dS[i][i])
    return L, sp.diff(L, phi), hand


POINTS = [(sp.Rational(13, 10), 5, sp.Rational(1, 10), 15, 4),
          (sp.Rational(-1, 2), sp.Rational(7, 3), sp.Rational(1, 4), 3, 2),
          (sp.Rational(5, 2), 12, sp.Rational(1, 5), 100, 8)]


def _at(expr, pt):
    sub = dict(zip((phi, om, tau, n, K), pt))
    return sp.N(expr.subs(sub), 45)


def test_hand_gradient_equals_sympy_derivative():
    L, dL, hand = _exprs()
    for pt in POINTS:
        exact = _at(dL, pt)
        assert abs(exact - _at(hand, pt)) < sp.Float("1e-40")
        assert abs(exact) > sp.Float("1e-3")  # not trivially zero


def test_numpy_gradient_and_loss_match_sympy():
    L, dL, _ = _exprs()
    z = np.array([float(v) for v in Z])
    w = np.array([float(v) for v in W])
    for pt in POINTS:
        f, o, t, nn, k = (float(v) for v in pt)
        kw = {"omega": o, "tau": t, "K": int(k), "negatives": nn}
        # float64 sums of ≤ 9 terms of size ≤ e^{22}: 1e-11 relative covers the rounding
        assert np.isclose(cl_reduced_grad(f, z, w, **kw), float(_at(dL, pt)), rtol=1e-11)
        assert np.isclose(cl_reduced_loss(f, z, w, **kw), float(_at(L, pt)), rtol=1e-11)


def test_the_n_to_infinity_limit_drops_the_positive():
    """n → ∞: L_n − log n → E_z[−S(z,z) + log m(z)] and its gradient is the hand formula with
    q = 0 (the numpy function's ``negatives = inf`` branch)."""
    S, dS, m = _parts()
    Linf = sum(W[i] * (-S[i][i] + sp.log(m[i])) for i in range(3))
    z = np.array([float(v) for v in Z])
    w = np.array([float(v) for v in W])
    for pt in POINTS:
        f, o, t, _, k = (float(v) for v in pt)
        d = float(_at(sp.diff(Linf, phi), pt))
        kw = {"omega": o, "tau": t, "K": int(k), "negatives": float("inf")}
        assert np.isclose(cl_reduced_grad(f, z, w, **kw), d, rtol=1e-11)


def test_a_wrong_gradient_fails():
    _, dL, wrong = _exprs(wrong=True)
    mpmath.mp.dps = 45
    assert max(abs(_at(dL, pt) - _at(wrong, pt)) for pt in POINTS) > sp.Float("1e-3")
