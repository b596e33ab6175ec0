"""Huang et al. (2025), reconstructed model (docs/papers/huang2024.md §4.5, DERIVED): the sign
boundary of another local area's rate at Q⁰ = 0 (``predictions.rates.other_rate_boundary``).

1. With a_1 = s·C1, a = s·C, a_j = s·(C − 1) and M = (P − C1)/C, the leading-order rate of
   another local area, μ_1μ_2 a [a_1² + (M − 2)a²] − μ_3 a²(1 − a) − μ_1μ_2 a a_j (1 − a_j), is
   a quadratic in C1 whose positive root is the module's
   C1 = [C + √(C² − 4(C(P − 2C) − rhs/(μ_1μ_2 s²)))]/2, rhs = μ_3 a(1 − a) + μ_1μ_2 a_j(1 − a_j),
   symbolically in P, C, s and the moments.
2. Its limit a, a_j → 0 at fixed C1²/(PC) (masked keys in: s = (1 − γ)/P, a = (1 − γ)C/P, and
   (M − 2)a² → (1 − γ)(1 − ρ)a): P^Δ = C1²/(PC) = κ = [μ_3/(μ_1μ_2) + 1 − (1 − γ)(1 − ρ)]/(1 − γ),
   the module's asymptotic Δ₀ = ln κ / ln P.
A wrong quadratic (the (M − 2) cross term dropped) is rejected.
"""

import sympy as sp

from theorylab.huang2024.predictions.rates import ZMoments, local_query_leading, other_rate_boundary

P, C, C1, s, m1, m2, m3 = sp.symbols("P C C1 s mu1 mu2 mu3", positive=True)


def _rate(with_cross: bool = True):
    a1, a, aj = s * C1, s * C, s * (C - 1)
    M = (P - C1) / C
    cross = (M - 2) * a * a if with_cross else 0
    return m1 * m2 * a * (a1 ** 2 + cross) - m3 * a * a * (1 - a) - m1 * m2 * a * aj * (1 - aj)


def _module_root():
    a, aj = s * C, s * (C - 1)
    rhs = m3 * a * (1 - a) + m1 * m2 * aj * (1 - aj)
    cc = C * (P - 2 * C) - rhs / (m1 * m2 * s * s)
    return (C + sp.sqrt(C * C - 4 * cc)) / 2


def test_quadratic_root_is_the_module_s():
    r = _rate()
    assert sp.simplify(r.subs(C1, _module_root())) == 0
    assert sp.degree(sp.expand(r / (m1 * m2 * s ** 3 * C)), C1) == 2


def test_the_module_matches_the_symbolic_root_numerically():
    mu = ZMoments(1.0, 13 / 12, 1.25)
    for Pv, Cv, g, mk in ((400, 4, 0.5, True), (4096, 8, 0.75, False)):
        b = other_rate_boundary(Pv, Cv, mu, gamma=g, mask_keys=mk)
        sv = (1 - g) / Pv if mk else 1 / (Pv - 1)
        root = float(_module_root().subs({P: Pv, C: Cv, s: sv, m1: mu.mu1, m2: mu.mu2,
                                          m3: mu.mu3}))
        assert abs(root - b["C1"]) < 1e-9 * root
        assert abs(local_query_leading(Pv, root, Cv, mu, gamma=g, mask_keys=mk)["other"]) < 1e-15


def test_a_dropped_cross_term_is_rejected():
    assert sp.simplify(_rate(with_cross=False).subs(C1, _module_root())) != 0


def test_asymptotic_constant_with_masked_keys_in():
    g, rho, k = sp.symbols("gamma rho kappa", positive=True)
    # at the root with a, a_j → 0: μ12 a_1² = μ3 a + μ12 a − μ12 (1 − γ)(1 − ρ) a, with
    # a_1 = (1 − γ)C1/P and a = (1 − γ)C/P; C1² = κ P C solves it
    kappa = (m3 / (m1 * m2) + 1 - (1 - g) * (1 - rho)) / (1 - g)
    lhs = (1 - g) ** 2 * k * P * C / P ** 2  # a_1² with C1² = κ P C
    rhs = (1 - g) * C / P * (m3 / (m1 * m2) + 1 - (1 - g) * (1 - rho))
    assert sp.simplify((lhs - rhs).subs(k, kappa)) == 0
