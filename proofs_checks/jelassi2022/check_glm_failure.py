"""Exact failure probability of a GLM on a small configuration (Theorem 3.1, FOUND): the
uniform GLM sign(T), T = C + Σ_{D−C} δ_j (y = +1). For D = 4, C = 2:
P[T ≤ 0] = P[δ₁ = δ₂ = −1] = q²/4, computed symbolically by enumeration and compared with
theorylab's exact formula; the reference point's value 0.217073 is reproduced."""

import itertools
import math

import sympy as sp

from theorylab.jelassi2022.claims.thm31 import glm_exact_errors


def _sym_error(D, C, q):
    p = {-1: q / 2, 0: 1 - q, 1: q / 2}
    tot = 0
    for deltas in itertools.product((-1, 0, 1), repeat=D - C):
        if C + sum(deltas) <= 0:
            term = 1
            for x in deltas:
                term *= p[x]
            tot += term
    return sp.expand(tot)


def test_small_configuration_closed_form():
    q = sp.symbols("q", positive=True)
    assert sp.simplify(_sym_error(4, 2, q) - q**2 / 4) == 0
    for qv in (0.1, 0.5, 0.9):
        got = glm_exact_errors(4, 2, qv)["err_uniform"]
        assert abs(got - qv**2 / 4) < 1e-15  # exact sums of a few products: rounding only


def test_reference_point_value():
    q = sp.Rational(1, 1) * sp.log(100) / 10
    val = float(_sym_error(10, 2, q))
    assert abs(val - 0.217073) < 5e-7  # the lead's value, quoted to 6 digits
    assert abs(glm_exact_errors(10, 2, math.log(100) / 10)["err_uniform"] - val) < 1e-12
