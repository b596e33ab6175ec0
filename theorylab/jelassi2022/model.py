"""The simplified ViT with positional attention, Jelassi et al. (2022), eq. (T) (FOUND).

    F(X) = Σ_i σ(κ · Σ_j S_ij ⟨v, X_j⟩),   S_ij = exp(A_ij/τ) / Σ_r exp(A_ir/τ),

with κ = ``value_scale`` (D in the paper), τ = ``temperature`` (√d in the paper), σ polynomial.
The diagonal of A is frozen (Simplification 3.1, FOUND); v ∈ ℝ^d is shared by all positions.

Everything downstream of the projections ``U_nj = ⟨v, X_nj⟩`` is written once in
[`evaluate_projections`][]: the empirical engine feeds ``U = X·v``, the exact population engines
feed ``U = α·c`` (c = ⟨w*, X_j⟩ ∈ {−1,0,1}), the Monte Carlo engine ``U = α·c + β·z``. Because S
does not depend on the data, one evaluation costs O(N·D²) after the O(N·D·d) projection.

Gradients (DERIVED, checked against finite differences and torch.autograd in the tests): with
ℓ(m) = log(1 + e^{−m}), g_n = w_n ℓ'(y_n F_n) y_n, G_ni = g_n σ'(H_ni):

    ∂L/∂U = κ G S,   ∂L/∂S = κ Gᵀ U,   ∂L/∂A_ik = S_ik (∂L/∂S_ik − Σ_j S_ij ∂L/∂S_ij) / τ,

(the softmax derivative ∂S_ij/∂A_ik = S_ij (δ_jk − S_ik)/τ), and ∂L/∂v = Σ_nj ∂L/∂U_nj X_nj.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from theorylab.core.backend import Backend, NumpyBackend

from .activation import Activation

__all__ = [
    "PositionalAttentionModel",
    "ProjectionEval",
    "attention",
    "evaluate_projections",
    "grad_A_from_dS",
    "tie_scale",
    "model_output",
]


@dataclass(frozen=True)
class PositionalAttentionModel:
    """Hyper-parameters of eq. (T): σ, τ = temperature, κ = value_scale."""

    activation: Activation
    temperature: float
    value_scale: float

    @classmethod
    def from_config(cls, cfg) -> PositionalAttentionModel:
        """From an [`ExperimentConfig`][theorylab.jelassi2022.config.ExperimentConfig] (defaults
        resolved)."""
        return cls(cfg.model.make_activation(), cfg.temperature, cfg.value_scale)


@dataclass
class ProjectionEval:
    """Sums over a chunk of samples (weights w_n), so that chunks add up.

    ``loss`` = Σ w ℓ(yF); ``loss_sq`` = Σ w ℓ(yF)²; ``error`` = Σ w [yF ≤ tol·tie_scale];
    ``ties`` = Σ w [|F| ≤ tol·tie_scale] (the mass of exact ties F = 0, included in ``error``);
    ``F`` (n,); ``dU`` (n, D) = ∂loss/∂U; ``dS`` (D, D) = ∂loss/∂S (None without gradients).
    """

    loss: object
    loss_sq: object
    error: object
    ties: object
    F: object
    dU: object | None
    dS: object | None


def attention(A, temperature: float, xp: Backend | None = None):
    """S = row-softmax(A / τ), max-subtracted (Jelassi et al. (2022), eq. (T))."""
    xp = xp or NumpyBackend()
    return xp.row_softmax(A / temperature)


def evaluate_projections(
    U,
    y,
    weight,
    S,
    model: PositionalAttentionModel,
    xp: Backend,
    *,
    need_grad: bool = True,
    tie_tol: float = 1e-12,
    need_dU: bool = True,
) -> ProjectionEval:
    """Loss, error and gradients of eq. (T) given the projections ``U_nj = ⟨v, X_nj⟩``.

    **Arguments:**

    - `U`: (n, D) projections; `y`: (n,) labels ±1; `weight`: (n,) sample weights (they sum to
      1 over the whole data set, not necessarily over this chunk).
    - `S`: (D, D) attention matrix (rows sum to 1).
    - `model`: σ, τ, κ. `xp`: the backend. `tie_tol`: see [`TrainConfig`][].
    - `need_dU`: with ``False`` (and ``need_grad``) only ``dS`` is formed, one matrix product
      fewer; callers that know U = α·c use ⟨S, dS⟩ = Σ_nj dU_nj U_nj instead (Monte Carlo).

    Leading batch axes (a batch of runs) are allowed: U (..., n, D), S (..., D, D), y and
    `weight` broadcasting against (..., n); the sums of [`ProjectionEval`][] then have shape
    (...), ``dS`` (..., D, D). For 2-D inputs the arithmetic is the unbatched one.
    """
    kappa = model.value_scale
    H = kappa * (U @ xp.swap(S))
    sig, dsig = (model.activation.value_and_grad(H) if need_grad
                 else (model.activation(H), None))
    F = xp.sum(sig, axis=-1)
    m = y * F
    ell = xp.softplus_neg(m)
    loss = xp.sum(weight * ell, axis=-1)
    loss_sq = xp.sum(weight * ell * ell, axis=-1)
    tol = tie_tol * tie_scale(U, model, xp)
    error = xp.sum(weight * xp.cast(m <= tol), axis=-1)
    ties = xp.sum(weight * xp.cast(xp.abs(m) <= tol), axis=-1)
    if not need_grad:
        return ProjectionEval(loss, loss_sq, error, ties, F, None, None)
    g = -weight * xp.sigmoid(-m) * y  # w_n ℓ'(m_n) y_n
    G = g[..., None] * dsig
    dU = kappa * (G @ S) if need_dU else None
    dS = kappa * (xp.swap(G) @ U)
    return ProjectionEval(loss, loss_sq, error, ties, F, dU, dS)


def tie_scale(U, model: PositionalAttentionModel, xp: Backend):
    """Per-sample bound D·|σ|(κ·max_j |U_nj|) on every term of F (|σ| = [`Activation.majorant`][]).

    Rounding errors of F are a tiny multiple of it; F is counted as 0 (an error) when
    ``y·F <= tie_tol · tie_scale``, so that exact ties F = 0 are not decided by rounding."""
    D = U.shape[-1]
    return D * model.activation.majorant()(model.value_scale * xp.max(xp.abs(U), axis=-1))


def grad_A_from_dS(S, dS, temperature: float, xp: Backend, *, freeze_diag: bool = True):
    """∂L/∂A from ∂L/∂S through the row softmax; the frozen diagonal gets 0 (Simplification 3.1).

    ∂L/∂A_ik = S_ik (∂L/∂S_ik − Σ_j S_ij ∂L/∂S_ij) / τ. Leading batch axes are carried along.
    """
    inner = xp.sum(S * dS, axis=-1)
    dA = S * (dS - inner[..., None]) / temperature
    if freeze_diag:
        dA = dA * xp.asarray(1.0 - np.eye(S.shape[-1]), dtype=xp.dtype)
    return dA


def model_output(X, A, v, model: PositionalAttentionModel, xp: Backend | None = None):
    """F(X) of eq. (T) for inputs X (N, D, d); returns an (N,) array."""
    xp = xp or NumpyBackend()
    X, A, v = xp.asarray(X), xp.asarray(A), xp.asarray(v)
    S = attention(A, model.temperature, xp)
    H = model.value_scale * ((X @ v) @ S.T)
    return xp.sum(model.activation(H), axis=1)
