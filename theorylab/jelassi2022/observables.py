"""Quantities tracked along a run (Jelassi et al. (2022), §4: α, γ, ρ and patch association).

Lemmas 4.1–4.2 (FOUND-2nd: "instead of optimizing over A and v, we can consider the scalar
variables α, γ and ρ"; their statements are RECONSTRUCTED in the paper notes §4.3):
v = α·w*, A_ii = a (frozen), A_ij = γ within a set, A_ij = ρ across sets.
"""

from __future__ import annotations

import numpy as np

from .model import attention
from .partition import Partition

__all__ = [
    "alpha_beta",
    "gamma_rho",
    "symmetric_projection",
    "sym_dev",
    "patch_association",
    "pa_gap",
    "own_set_mass",
    "fair_error",
    "track",
    "symmetric_A",
    "TRACKED_COLUMNS",
]

#: The columns of [`track`][]: v against w* (α, β, cos), the reduced entries of A (γ, ρ) and
#: its distance to the partition-symmetric form, and patch association (Definition 2.2).
TRACKED_COLUMNS = (
    "alpha",
    "beta",
    "cos_v_wstar",
    "gamma",
    "rho",
    "sym_dev",
    "patch_association",
    "pa_gap",
    "own_set_mass",
)


def alpha_beta(v: np.ndarray, wstar: np.ndarray) -> tuple[float, float, float]:
    """α = ⟨v, w*⟩, β = ‖v − α w*‖, cos(v, w*) = α/‖v‖ (0 when v = 0)."""
    v = np.asarray(v, dtype=np.float64)
    alpha = float(v @ wstar)
    beta = float(np.linalg.norm(v - alpha * wstar))
    nv = float(np.linalg.norm(v))
    return alpha, beta, (alpha / nv if nv > 0 else 0.0)


def _masks(partition: Partition) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    same = partition.same_set_mask()
    diag = np.eye(partition.D, dtype=bool)
    return diag, same & ~diag, ~same


def gamma_rho(A: np.ndarray, partition: Partition) -> tuple[float, float]:
    """γ = mean same-set off-diagonal entry of A, ρ = mean cross-set entry (NaN if C = 1)."""
    _, same, cross = _masks(partition)
    A = np.asarray(A, dtype=np.float64)
    gamma = float(A[same].mean()) if same.any() else float("nan")
    return gamma, float(A[cross].mean())


def symmetric_A(D: int, partition: Partition, a: float, gamma: float, rho: float) -> np.ndarray:
    """The partition-symmetric matrix with diagonal a, same-set γ, cross-set ρ."""
    diag, same, _ = _masks(partition)
    A = np.full((D, D), float(rho))
    A[same] = gamma
    A[diag] = a
    return A


def symmetric_projection(A: np.ndarray, partition: Partition) -> np.ndarray:
    """Projection of A on partition-symmetric matrices: mean over the diagonal, the same-set
    off-diagonal entries and the cross-set entries."""
    A = np.asarray(A, dtype=np.float64)
    diag = np.eye(partition.D, dtype=bool)
    return symmetric_A(partition.D, partition, A[diag].mean(), *gamma_rho(A, partition))


def sym_dev(A: np.ndarray, partition: Partition) -> float:
    """Largest |A − symmetric_projection(A)|."""
    A = np.asarray(A, dtype=np.float64)
    return float(np.max(np.abs(A - symmetric_projection(A, partition))))


def pa_gap(A: np.ndarray, partition: Partition, temperature: float = 1.0) -> float:
    """min over rows i of (min_{j ∈ set(i)} A_ij − max_{j ∉ set(i)} A_ij) / τ: the logit margin by
    which every row's C largest entries are its own set (negative when some row ranks another
    set's patch at least as high as one of its own)."""
    A = np.asarray(A, dtype=np.float64)
    same = partition.same_set_mask()
    own_min = np.where(same, A, np.inf).min(axis=1)
    other_max = np.where(same, -np.inf, A).max(axis=1)
    return float(np.min(own_min - other_max)) / float(temperature)


def patch_association(A: np.ndarray, partition: Partition, margin: float = 0.0,
                      temperature: float = 1.0) -> bool:
    """Definition 2.2 (FOUND) with ⟨p_i, p_j⟩ = A_ij (Simplification 3.1): for every row i the
    C largest entries of row i are exactly i's set.

    ``margin = 0``: the literal definition (strict: no tie across the boundary). ``margin > 0``:
    the own set must lead by at least ``margin`` in logits A/τ ([`pa_gap`][]), so that an
    asymmetry at rounding level (γ − ρ ~ 1e-10 after one GD step from a symmetric start) does
    not count as patch association (theorylab's threshold, `TrainConfig.pa_margin`)."""
    g = pa_gap(A, partition, temperature)
    return bool(g > 0.0) if margin <= 0 else bool(g >= margin)


def fair_error(error, tie_mass):
    """Error when ties F = 0 are broken by a fair coin: ``error − tie_mass/2`` (``error`` counts
    ties as errors; a NaN tie mass counts as 0). Works on floats and arrays."""
    ties = np.nan_to_num(np.asarray(tie_mass, dtype=np.float64), nan=0.0)
    out = np.asarray(error, dtype=np.float64) - 0.5 * ties
    return float(out) if out.ndim == 0 else out


def own_set_mass(A: np.ndarray, partition: Partition, temperature: float) -> float:
    """min_i Σ_{j ∈ set(i)} S_ij, S = row-softmax(A/τ)."""
    S = attention(np.asarray(A, dtype=np.float64), temperature)
    return float(np.where(partition.same_set_mask(), S, 0.0).sum(axis=1).min())


def track(
    A: np.ndarray, v: np.ndarray, wstar: np.ndarray, partition: Partition, temperature: float,
    pa_margin: float = 0.0,
) -> dict[str, float | bool]:
    """Every tracked quantity of the state (A, v), keyed by ``TRACKED_COLUMNS``
    (`pa_margin`: see [`patch_association`][])."""
    alpha, beta, cos = alpha_beta(v, wstar)
    gamma, rho = gamma_rho(A, partition)
    return {
        "alpha": alpha,
        "beta": beta,
        "cos_v_wstar": cos,
        "gamma": gamma,
        "rho": rho,
        "sym_dev": sym_dev(A, partition),
        "patch_association": patch_association(A, partition, pa_margin, temperature),
        "pa_gap": pa_gap(A, partition, temperature),
        "own_set_mass": own_set_mass(A, partition, temperature),
    }
