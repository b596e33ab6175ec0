"""Closed forms of the uniform generalized linear model of Theorem 3.1 (DERIVED, notes §4.1):
the best GLM along the uniform direction, sign(T) with T = Σ_j c_j, and the proved lower bound on
its error.

- [`glm_best_error`][]: the errors of sign(T) in closed form (a sum of D − C + 1 terms, any D);
- [`glm_exact_errors`][]: the same by exact enumeration (convolution of the set-sum laws), and
  the errors against f* (``fstar_literal``: f*·sign(T) ≤ 0; ``fstar_strict``: < 0);
- [`pz_bound`][]: the Paley–Zygmund lower bound ½(1 − x)²/(3 − 3/n + 1/(nq)), x = C²/(nq),
  n = D − C (proofs_checks/jelassi2022/check_glm_bound.py), which is ≥ 1/8 as q(D − C) → ∞ for
  x ≤ [`X_PROVED`][] = 1 − √3/2.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.stats import binom

from ..data import convolve, set_sum_distribution

__all__ = ["X_PROVED", "BOUND", "glm_best_error", "glm_exact_errors", "pz_bound"]

#: Theorem 3.1's bound.
BOUND = 1 / 8
#: the edge of the proved region as q(D − C) → ∞: (1 − x)² ≥ 3/4 (check_glm_bound.py).
X_PROVED = 1 - math.sqrt(3) / 2


def glm_best_error(D: int, C: int, q: float) -> dict[str, float]:
    """Closed-form errors of the uniform GLM sign(T), T = C + R, R = Σ_{j=1}^{n} δ_j,
    n = D − C (Assumption 1 data, y = +1 by symmetry).

    Given m ~ Binomial(n, q) non-zero δ_j, B = (R + m)/2 ~ Binomial(m, ½), so
    P[|R| > C | m] = 2·P[B > (m + C)/2] and P[|R| = C | m] = 2·P[B = (m + C)/2] (C > 0).
    Returns ``err_best_glm`` = ½P[|R| > C] + ¼P[|R| = C] (ties by a coin) and
    ``err_uniform`` = P[T ≤ 0] = ½P[|R| > C] + ½P[|R| = C] (ties as errors)."""
    n = D - C
    m = np.arange(n + 1)
    pm = binom.pmf(m, n, q)
    gt = 2.0 * binom.sf(np.floor((m + C) / 2), m, 0.5)
    eq = np.where((m + C) % 2 == 0, 2.0 * binom.pmf((m + C) // 2, m, 0.5), 0.0)
    return {"err_best_glm": float(pm @ (0.5 * gt + 0.25 * eq)),
            "err_uniform": float(pm @ (0.5 * gt + 0.5 * eq))}


def pz_bound(D: int, C: int, q: float) -> float:
    """The proved lower bound on the best-GLM error, ½·(1 − x)²/(3 − 3/n + 1/(nq)) with
    n = D − C and x = C²/(nq) (Paley–Zygmund on R², check_glm_bound.py); 0 where x ≥ 1."""
    n = D - C
    x = C * C / (n * q)
    return 0.0 if x >= 1 else 0.5 * (1 - x) ** 2 / (3 - 3 / n + 1 / (n * q))


def glm_exact_errors(D: int, C: int, q: float) -> dict[str, float]:
    """Exact errors of the uniform GLM sign(T) (see the module docstring) for the data of
    Assumption 1 with D patches, sets of size C, and spurious rate q."""
    one = {(s, s if abs(s) > 0.9 * C else 0): p for s, p in set_sum_distribution(C, q).items()}
    # (T, f*) with y = +1: the signal set contributes C to both
    joint = convolve({(C, C): 1.0}, one, D // C - 1)
    err = sum(p for (T, _), p in joint.items() if T <= 0)
    best = sum(p for (T, _), p in joint.items() if T < 0) + 0.5 * sum(
        p for (T, _), p in joint.items() if T == 0
    )
    lit = sum(p for (T, f), p in joint.items() if f * T <= 0)
    strict = sum(p for (T, f), p in joint.items() if f * T < 0)
    f0 = sum(p for (_, f), p in joint.items() if f == 0)
    return {"err_uniform": err, "err_best_glm": best, "fstar_literal": lit, "fstar_strict": strict,
            "p_fstar_zero": f0}
