"""The closed form of the best-GLM error used by Theorem 3.1's check
(theorylab.jelassi2022.claims.thm31.glm_best_error), derived with q symbolic.

With y = +1, T = C + R and R = Σ_{j=1}^{n} δ_j (n = D − C, δ = ±1 w.p. q/2, 0 w.p. 1 − q).
Conditioning on the number m of non-zero δ_j (Binomial(n, q)), the signs are fair coins, so
B = (R + m)/2 ~ Binomial(m, ½) and

    P[|R| > C] = Σ_m Bin(n, q; m) · 2·P[B > (m + C)/2],
    P[|R| = C] = Σ_m Bin(n, q; m) · 2·P[B = (m + C)/2]      (C > 0, m + C even),

and the best GLM along the uniform direction errs with ½P[|R| > C] + ¼P[|R| = C]. The checks
compare this with the enumeration of all 3^n sign patterns as polynomials in q, reject a
variant that drops the factor 2 of the two-sided tie (a one-sided tie), and compare the
float closed form with the polynomial and with the claim's enumeration engine.
"""

import itertools
import math

import sympy as sp

from theorylab.jelassi2022.claims.thm31 import glm_best_error, glm_exact_errors

q = sp.symbols("q", positive=True)


def _enumerated(n: int, C: int):
    """½P[|R| > C] + ¼P[|R| = C] by enumeration of every δ ∈ {−1, 0, 1}^n (polynomial in q)."""
    count: dict[tuple[int, int], int] = {}  # (non-zero entries, |R|) → number of patterns
    for d in itertools.product((-1, 0, 1), repeat=n):
        key = (sum(v != 0 for v in d), abs(sum(d)))
        count[key] = count.get(key, 0) + 1
    tot = 0
    for (k, r), cnt in count.items():
        w = sp.Rational(1, 2) if r > C else sp.Rational(1, 4) if r == C else 0
        tot += w * cnt * (q / 2) ** k * (1 - q) ** (n - k)
    return sp.expand(tot)


def _closed(n: int, C: int, tie_factor: int = 2):
    tot = 0
    for m in range(n + 1):
        pm = sp.binomial(n, m) * q**m * (1 - q) ** (n - m)
        gt = 2 * sum(sp.binomial(m, b) for b in range(m + 1) if 2 * b > m + C) / 2**m
        eq = (tie_factor * sp.binomial(m, (m + C) // 2) / 2**m) if (m + C) % 2 == 0 else 0
        tot += pm * (sp.Rational(1, 2) * gt + sp.Rational(1, 4) * eq)
    return sp.expand(tot)


CASES = ((4, 2), (5, 2), (6, 3), (7, 4))


def test_closed_form_equals_enumeration_for_symbolic_q():
    for n, C in CASES:
        assert sp.expand(_closed(n, C) - _enumerated(n, C)) == 0


def test_one_sided_tie_is_rejected():
    for n, C in CASES:
        assert sp.expand(_closed(n, C, tie_factor=1) - _enumerated(n, C)) != 0


def test_float_closed_form_matches_polynomial_and_engine():
    for n, C in CASES:
        poly = _enumerated(n, C)
        for qv in (0.1, 0.45, 0.9):
            got = glm_best_error(n + C, C, qv)["err_best_glm"]
            # a sum of n + 1 float64 products of O(1) terms: rounding only
            assert abs(got - float(poly.subs(q, qv))) < 1e-13
    # against the claim's enumeration (convolution over the sets) at the reference point
    ref = glm_exact_errors(10, 2, math.log(100) / 10)
    assert abs(glm_best_error(10, 2, math.log(100) / 10)["err_best_glm"]
               - ref["err_best_glm"]) < 1e-13
    assert abs(glm_best_error(10, 2, math.log(100) / 10)["err_uniform"] - 0.217073) < 5e-7
