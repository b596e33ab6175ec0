"""The population risk of the cubic model from five per-set statistics, written apart from the
engines: the derivations of the phase-II dynamics ([`phase_two`][theorylab.jelassi2022.
predictions.phase_two]) evaluate it instead of an engine.

For a partition-symmetric state (diagonal a frozen, γ inside a set, ρ across sets) write the
softmax of a row as (S_a, S_γ, S_ρ) and a₁ = S_a − S_γ, a₂ = S_γ − S_ρ, a₃ = S_ρ. The
pre-activation of patch i in set ℓ is κα N_i with N_i = a₁ c_i + a₂ s_ℓ + a₃ T (s_ℓ the sum of
c over the set, T = Σ_j c_j). With c ∈ {−1, 0, 1}, c³ = c and c² = |c|, so for σ(h) = h³
(DERIVED by hand; proofs_checks/jelassi2022/check_set_statistics.py checks it in sympy)

    Σ_i N_i³ = a₁³ T + 3a₁²a₂ U + 3a₁²a₃ T K + 3a₁a₂² W + 6a₁a₂a₃ T Q + 3a₁a₃² T³
               + C a₂³ W + 3C a₂²a₃ T Q + 3C a₂a₃² T³ + D a₃³ T³,

with the statistics T = Σ_ℓ s_ℓ, K = Σ_ℓ n_ℓ (non-zero patches), U = Σ_ℓ s_ℓ n_ℓ,
Q = Σ_ℓ s_ℓ², W = Σ_ℓ s_ℓ³. They are sums over sets, so their joint law is the convolution of
L − 1 i.i.d. per-set laws (the δ's of a set) with the signal set's (s = n = C for y = +1).
F = κ³α³ Σ_i N_i³ is odd in c, so y = −1 (c → −c) gives the same margin yF and the expectation
runs over the y = +1 law only. The law is exact (finite sums in float64); nothing of the engines
is used.
"""

from __future__ import annotations

import functools
import itertools

import numpy as np

from ..data import convolve

__all__ = ["StatisticsLaw", "statistics_law", "cubic_sum", "cubic_sum_grad", "softmax_row",
           "loss_and_grad"]


@functools.lru_cache(maxsize=32)
def statistics_law(D: int, C: int, q: float) -> StatisticsLaw:
    """The exact joint law of (T, K, U, Q, W) for y = +1 (cached per D, C, q)."""
    per_set: dict[tuple, float] = {}
    for d in itertools.product((-1, 0, 1), repeat=C):
        p = float(np.prod([q / 2 if x else 1 - q for x in d]))
        if p == 0.0:
            continue
        s, n = sum(d), sum(abs(x) for x in d)
        key = (s, n, s * n, s * s, s ** 3)
        per_set[key] = per_set.get(key, 0.0) + p
    # the signal set (y = +1), then the L − 1 other sets
    law = convolve({(C, C, C * C, C * C, C ** 3): 1.0}, per_set, D // C - 1)
    keys = np.array(sorted(law), dtype=np.float64)
    probs = np.array([law[tuple(int(x) for x in k)] for k in keys])
    return StatisticsLaw(D=D, C=C, q=q, stats=keys, p=probs)


class StatisticsLaw:
    """Atoms (rows of (T, K, U, Q, W)) and their probabilities."""

    def __init__(self, D, C, q, stats, p) -> None:
        self.D, self.C, self.q = D, C, q
        self.stats, self.p = stats, p
        self.T, self.K, self.U, self.Q, self.W = stats.T

    def __len__(self) -> int:
        return self.p.size


def softmax_row(diag: float, gamma: float, rho: float, tau: float, D: int, C: int):
    """(S_a, S_γ, S_ρ) of a symmetric row and their derivatives in γ and ρ
    (``dS[θ] = (dS_a, dS_γ, dS_ρ)``)."""
    lg = np.array([diag, gamma, rho]) / tau
    mult = np.array([1.0, C - 1.0, D - C])
    e = np.exp(lg - lg[mult > 0].max())
    S = e / (mult * e).sum()
    dS = {}
    for th, j in (("gamma", 1), ("rho", 2)):
        d = -S * mult[j] * S[j]
        d[j] += S[j]
        dS[th] = d / tau
    return S, dS


def _a(S):
    return S[0] - S[1], S[1] - S[2], S[2]


def cubic_sum(law: StatisticsLaw, a1: float, a2: float, a3: float) -> np.ndarray:
    """Σ_i N_i³ at every atom of `law` (see the module)."""
    T, K, U, Q, W, C, D = law.T, law.K, law.U, law.Q, law.W, law.C, law.D
    return (a1 ** 3 * T + 3 * a1 ** 2 * a2 * U + 3 * a1 ** 2 * a3 * T * K
            + 3 * a1 * a2 ** 2 * W + 6 * a1 * a2 * a3 * T * Q + 3 * a1 * a3 ** 2 * T ** 3
            + C * a2 ** 3 * W + 3 * C * a2 ** 2 * a3 * T * Q + 3 * C * a2 * a3 ** 2 * T ** 3
            + D * a3 ** 3 * T ** 3)


def cubic_sum_grad(law: StatisticsLaw, a1: float, a2: float, a3: float):
    """∂(Σ_i N_i³)/∂(a₁, a₂, a₃) at every atom."""
    T, K, U, Q, W, C, D = law.T, law.K, law.U, law.Q, law.W, law.C, law.D
    g1 = (3 * a1 ** 2 * T + 6 * a1 * a2 * U + 6 * a1 * a3 * T * K + 3 * a2 ** 2 * W
          + 6 * a2 * a3 * T * Q + 3 * a3 ** 2 * T ** 3)
    g2 = (3 * a1 ** 2 * U + 6 * a1 * a2 * W + 6 * a1 * a3 * T * Q + 3 * C * a2 ** 2 * W
          + 6 * C * a2 * a3 * T * Q + 3 * C * a3 ** 2 * T ** 3)
    g3 = (3 * a1 ** 2 * T * K + 6 * a1 * a2 * T * Q + 6 * a1 * a3 * T ** 3
          + 3 * C * a2 ** 2 * T * Q + 6 * C * a2 * a3 * T ** 3 + 3 * D * a3 ** 2 * T ** 3)
    return g1, g2, g3


def loss_and_grad(law: StatisticsLaw, alpha: float, gamma: float, rho: float, diag: float,
                  tau: float, kappa: float) -> tuple[float, dict[str, float]]:
    """The population risk L(α, γ, ρ) of the cubic model and its gradient (∂_α, and ∂_γ, ∂_ρ
    with respect to the common same-set and cross-set values), from `law`."""
    D, C = law.D, law.C
    S, dS = softmax_row(diag, gamma, rho, tau, D, C)
    a = _a(S)
    phi = cubic_sum(law, *a)
    k3 = kappa ** 3
    F = k3 * alpha ** 3 * phi
    loss = float(law.p @ np.logaddexp(0.0, -F))
    lp = -0.5 * (1.0 - np.tanh(0.5 * F))  # ℓ'(F) = −sigmoid(−F), y = +1
    g = {"alpha": float(law.p @ (lp * 3 * k3 * alpha ** 2 * phi))}
    ga = cubic_sum_grad(law, *a)
    for th in ("gamma", "rho"):
        d = dS[th]
        da = (d[0] - d[1], d[1] - d[2], d[2])
        dphi = da[0] * ga[0] + da[1] * ga[1] + da[2] * ga[2]
        # the derivative in the common value: the sum over the D(C − 1) same-set (D(D − C)
        # cross-set) entries of ∂L/∂A_ik, as the engines report it
        g[th] = float(law.p @ (lp * k3 * alpha ** 3 * dphi))
    return loss, g
