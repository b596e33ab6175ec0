"""Huang et al. (2025), reconstructed model (docs/papers/huang2024.md §4.5, DERIVED): the
finite-P crossing law of the end of Phase I (``predictions.asymptotics.crossing_law``) and its
correction terms, per coefficient law.

Phase I ends where the global rate of a local query falls to its own rate; at leading order
a_1² E_z[z³ e^{2zΦ}] = c·μ_3 a_j with a_1²/a_j ∝ P^Δ (the notes' shares). Write y = 2L|Φ|
for a law with support [L, U] and λ = Δ ln P.

1. Laplace, exactly: ∫_L^∞ z³ e^{−az} dz = e^{−aL}(L³/a + 3L²/a² + 6L/a³ + 6/a⁴), so for the
   uniform law (U − L)·E_z[z³ e^{2zΦ}] = e^{−y} L⁴ K(y)/y − (the same at U, smaller by
   e^{−2(U−L)|Φ|}), K(y) = 1 + 3/y + 6/y² + 6/y³.
2. The crossing therefore solves y + ln y − ln K(y) = λ + const: the local slope of
   Φ·L/(Δ/2) = −y/Δ against ln P is −dy/dλ = −1/(1 + 1/y − K'/K) = −1 + 1/y + 2/y² + O(y⁻³).
   Its limit is −1 (Φ ≈ −(Δ/(2L)) ln P: −2 in units of Δ/2 for L = 1/2), approached from
   above like 1/(Δ ln P); a wrong correction (−1 − 1/y, the sign of the ln y term flipped) is
   rejected. For z ≡ 1 (L = U = 1) the same balance is y = λ + const: slope −1 exactly.
3. The global attention a_1 E_z e^{zΦ} = a_1 e^{−y/2}(2L/y)(1 + O(e^{−(U−L)|Φ|}))/(U − L): at
   the crossing ln attn = ½ ln a_j − ½ ln y − ½ ln K(y) + const, so with a_j ∝ P^{κ_c − 1} its
   local exponent is −(1 − κ_c)/2 − (Δ/2)(1/y + K'/K)·dy/dλ = −(1 − κ_c)/2 − Δ/(2y) + O(y⁻²):
   the limit −(1 − κ_c)/2 = −3/8 at κ_c = 1/4, approached from below; exactly −(1 − κ_c)/2
   for z ≡ 1.
4. The module's ``crossing_law`` (denominators and (1 − S) factors kept) follows 2 and 3 at
   large P, where those factors no longer move (a small κ_c makes a_1 → 0 fast).
"""

import math

import numpy as np
import sympy as sp

from theorylab.huang2024.predictions.asymptotics import crossing_law

z, a, L, y, w = sp.symbols("z a L y w", positive=True)
K = 1 + 3 / y + 6 / y ** 2 + 6 / y ** 3


def test_laplace_integral_of_z_cubed():
    lhs = sp.integrate(z ** 3 * sp.exp(-a * z), (z, L, sp.oo))
    rhs = sp.exp(-a * L) * (L ** 3 / a + 3 * L ** 2 / a ** 2 + 6 * L / a ** 3 + 6 / a ** 4)
    assert sp.simplify(lhs - rhs) == 0
    # with a = 2|Φ| = y/L: e^{−y} L⁴ K(y)/y
    assert sp.simplify(rhs.subs(a, y / L) - sp.exp(-y) * L ** 4 * K / y) == 0


def _series(expr, n=3):
    u = sp.symbols("u", positive=True)  # u = 1/y
    return sp.series(sp.simplify(expr.subs(y, 1 / u)), u, 0, n).removeO().subs(u, 1 / y)


def test_crossing_slope_correction():
    lam = y + sp.log(y) - sp.log(K)
    slope = -1 / sp.diff(lam, y)  # d(−y/Δ)/d ln P = −dy/dλ
    assert sp.simplify(_series(slope) - (-1 + 1 / y + 2 / y ** 2)) == 0
    wrong = -1 / sp.diff(y - sp.log(y) - sp.log(K), y)  # the ln y term with the wrong sign
    assert sp.simplify(_series(wrong) - (-1 + 1 / y + 2 / y ** 2)) != 0
    assert sp.limit(slope, y, sp.oo) == -1


def test_crossing_attention_correction():
    kc, D = sp.symbols("kappa_c Delta", positive=True)
    lam = y + sp.log(y) - sp.log(K)
    dy_dlnP = D / sp.diff(lam, y)
    # ln attn = ½ ln a_j − ½ ln y − ½ ln K + const, a_j ∝ P^{κ_c − 1}
    expo = (kc - 1) / 2 - sp.Rational(1, 2) * sp.diff(sp.log(y) + sp.log(K), y) * dy_dlnP
    lead = _series(expo, 2)
    assert sp.simplify(lead - ((kc - 1) / 2 - D / (2 * y))) == 0
    assert sp.limit(expo, y, sp.oo) == (kc - 1) / 2


def _law_slopes(P, L, U, kappa_c=0.05, Delta=0.65, h=0.01):
    """Central differences in ln P of Φ·L/(Δ/2) and ln attn of the module's law (real sizes
    C = P^κ_c, C1 = (P^{1+Δ} C)^{1/2}, masked keys in, γ = 1/2, constant 0)."""
    out = []
    for lp in (math.log(P) - h, math.log(P) + h):
        p = math.exp(lp)
        c = p ** kappa_c
        out.append(crossing_law(p, math.sqrt(p ** (1 + Delta) * c), c + 1, L, U, 0.5, 0.0))
    (f0, a0), (f1, a1) = out
    phi = 0.5 * (f0 + f1)
    return ((f1 - f0) / (2 * h) * L / (Delta / 2), (math.log(a1) - math.log(a0)) / (2 * h),
            2 * L * abs(phi))


def test_module_law_follows_the_corrections():
    for P in (1e40, 1e80):
        s, e, yy = _law_slopes(P, 0.5, 1.5)
        # the O(y⁻³) and O(y⁻²) remainders: a few units of y⁻³ and y⁻² (y ≈ 60–120 here)
        assert abs(s - (-1 + 1 / yy + 2 / yy ** 2)) < 10 / yy ** 3
        assert abs(s - (-1 - 1 / yy)) > 1 / yy
        assert abs(e - (-(1 - 0.05) / 2 - 0.65 / (2 * yy))) < 3 / yy ** 2
        s1, e1, _ = _law_slopes(P, 1.0, 1.0)
        assert abs(s1 + 1) < 1e-6 and abs(e1 + (1 - 0.05) / 2) < 1e-6


def test_uniform_law_limit_is_twice_the_point_law_s():
    # Φ_glob(t_I)/(Δ/2) per ln P far up the ladder: −1/L = −2 (uniform) against −1 (z ≡ 1)
    P0, P1 = 1e60, 1e120
    def phi(P, L, U):
        c = P ** 0.05
        return crossing_law(P, math.sqrt(P ** 1.65 * c), c + 1, L, U, 0.5, 0.0)[0]
    su = (phi(P1, 0.5, 1.5) - phi(P0, 0.5, 1.5)) / (math.log(P1 / P0) * 0.325)
    s1 = (phi(P1, 1.0, 1.0) - phi(P0, 1.0, 1.0)) / (math.log(P1 / P0) * 0.325)
    assert abs(s1 + 1) < 1e-6
    assert -2.0 < su < -1.9 and np.isfinite(su)
