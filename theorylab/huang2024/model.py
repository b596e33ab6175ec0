"""The one-layer softmax-attention MAE of Huang et al. (2025), Def. 2.4, its loss and gradients.

RECONSTRUCTED (Def. 2.4 and the loss could not be read; docs/papers/huang2024.md): a masked
patch p has the zero mask token as content, so its query is its positional encoding e_p alone;
with one merged attention matrix Q ∈ ℝ^{d×d} and the identity value map on patch content,

    F_p(X̃; Q) = Σ_q attn_{p→q} x̃_q,   attn_{p→q} = softmax_q( e_pᵀ Q (x̃_q + e_q) ),

where x̃_q = x_q for unmasked q and 0 for masked q; masked keys stay in the softmax when
``mask_keys`` is true (their logit is e_pᵀ Q e_q), otherwise they are left out (a row with no
key left has F_p = 0). With orthonormal features and positions the logit of an unmasked key q
of area m is ``z_m Φ[p, f(k, m)] + Υ[p, q]`` with the FP correlations ``Φ = Eᵀ Q V`` and the
positional correlations ``Υ = Eᵀ Q E`` (E: the positional encodings, V: the features), the
coordinates in which this module computes. The loss (RECONSTRUCTED; ``loss_norm`` picks the
normalisation) is

    L(Q) = E[ norm(ℳ) · ½ Σ_{p∈ℳ} ‖F_p(X̃; Q) − x_p‖² ],  norm = 1/P, 1/|ℳ| or 1.

[`mae_loss_grad`][] evaluates a weighted batch and its exact gradients in (Φ, Υ) on any array
backend ([`theorylab.core.backend`][]: numpy, torch on a CPU or CUDA; one code path);
[`FullQModel`][] evaluates the same loss at a full matrix Q in any orthonormal basis, with the
gradient in Q (the chain rule through Φ = EᵀQV, Υ = EᵀQE; tested to agree).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from theorylab.core.backend import Backend, NumpyBackend

from .data import AreaStructure, Batch

__all__ = ["BatchEval", "FullQModel", "key_arrays", "mae_loss_grad", "norm_factor", "phi_gradient"]


def norm_factor(loss_norm: str, mask: np.ndarray) -> np.ndarray:
    """Per-sample normalisation of the sum over masked patches: 1/P, 1/|ℳ| (0 when nothing is
    masked: the sum is empty) or 1."""
    B, P = mask.shape
    if loss_norm == "P":
        return np.full(B, 1.0 / P)
    if loss_norm == "mask":
        m = mask.sum(axis=1)
        return np.where(m > 0, 1.0 / np.maximum(m, 1), 0.0)
    return np.ones(B)


@dataclass
class BatchEval:
    """A weighted batch's loss (Σ_b w_b ℓ_b), per-sample losses ℓ_b, gradients (None unless
    asked) and per-(sample, query) attention masses, conditioned on the query being masked:
    ``attn_own`` (unmasked keys of the query's own area), ``attn_glob`` (unmasked keys of the
    global area), ``attn_masked`` (masked keys)."""

    loss: float
    per_sample: np.ndarray
    grad_Phi: np.ndarray | None
    grad_Ups: np.ndarray | None
    attn_own: np.ndarray
    attn_glob: np.ndarray
    attn_masked: np.ndarray


def key_arrays(structure: AreaStructure, Phi, Ups, batch, xp: Backend):
    """What the logits of a batch are made of, on the backend: ``(lab, feat, z, Υ, phik)``,
    each patch's area (B, P) and feature index (B, P), the area coefficients (B, N), Υ, and
    ``phik[b, p, q] = Φ[p, feature of key q]`` (B, P, P)."""
    lab_np = structure.labels[batch.cluster]  # (B, P)
    feat = xp.asindex(structure.offset[batch.cluster][:, None] + lab_np)
    phik = xp.moveaxis(xp.asarray(Phi)[:, feat], 0, 1)  # (B, P_query, P_key)
    return xp.asindex(lab_np), feat, xp.asarray(batch.z), xp.asarray(Ups), phik


def phi_gradient(structure: AreaStructure, feat, G, xp: Backend) -> np.ndarray:
    """∂L/∂Φ (P, F) as numpy from ``G[b, p, q]`` = ∂L/∂logit_{pq} · zq_q (B, P, P): a logit
    holds zq_q Φ[p, feat_q], so ∂L/∂Φ[p, f] = Σ_{b,q: feat=f} G[b, p, q]."""
    foh = xp.cast(feat[:, :, None] == xp.arange(structure.F)[None, None, :])
    # Σ_b Σ_q G[b, p, q] foh[b, q, f] as one matrix product (P, B·P) @ (B·P, F)
    X = xp.moveaxis(G, 0, 1).reshape(G.shape[1], -1)
    return xp.to_numpy(X @ foh.reshape(-1, structure.F))


def mae_loss_grad(structure: AreaStructure, Phi, Ups, batch: Batch, *,
                  mask_keys: bool = True, loss_norm: str = "P", need_grad: bool = True,
                  xp: Backend | None = None) -> BatchEval:
    """The MAE loss of a weighted batch at (Φ (P, F), Υ (P, P)) and its exact gradients.

    Huang et al. (2025), Def. 2.4 and the reconstruction loss (both RECONSTRUCTED; see the
    module docstring). Max-subtracted softmax; rows whose keys are all left out output 0. The
    gradient is the softmax backward written out (no autograd). Computed on the backend ``xp``
    (default numpy float64; Φ and Υ numpy or already on it); the batch and every output are
    numpy."""
    xp = xp or NumpyBackend()
    B, P = batch.mask.shape
    Nmax = batch.z.shape[1]
    lab, feat, z, Ups, phik = key_arrays(structure, Phi, Ups, batch, xp)
    mask = xp.asbool(batch.mask)
    maskf, unmf = xp.cast(mask), xp.cast(~mask)
    zj = xp.take_along_axis(z, lab, 1)  # (B, P): z of each patch's area, the target of p
    zq = zj * unmf  # value coefficient of each key, 0 on masked keys
    logits = Ups[None, :, :] + zq[:, None, :] * phik
    if not mask_keys:
        logits = xp.where(~mask[:, None, :], logits, -math.inf)
    mx = xp.max(logits, axis=2, keepdims=True)
    mx = xp.where(xp.isfinite(mx), mx, 0.0)
    e = xp.exp(logits - mx)
    Z = xp.sum(e, axis=2, keepdims=True)
    attn = xp.where(Z > 0, e / xp.where(Z > 0, Z, 1.0), 0.0)  # (B, P, P)
    onehot = xp.cast(lab[:, :, None] == xp.arange(Nmax)[None, None, :])  # (B, P, N)
    # s[b,p,m]: attention on unmasked keys of area m; output coefficient of v_m is z_m s_m
    # batched matrix products (BLAS) rather than einsums, on every backend
    s = (attn * unmf[:, None, :]) @ onehot
    resid = z[:, None, :] * s - zj[:, :, None] * onehot  # (B, P, N)
    lq = 0.5 * xp.sum(resid * resid, axis=2)  # (B, P): ½‖F_p − x_p‖²
    nf = xp.asarray(norm_factor(loss_norm, batch.mask))
    per_sample = nf * xp.sum(lq * maskf, axis=1)
    w = xp.asarray(batch.weight)
    loss = xp.item(xp.sum(w * per_sample))
    gPhi = gUps = None
    if need_grad:
        # ∂ℓ_p/∂attn_{pq} = ⟨F_p − x_p, x̃_q⟩ = zq_q · resid[p, m(q)]
        h = zq[:, None, :] * (resid @ xp.moveaxis(onehot, 1, 2))
        H = xp.sum(attn * h, axis=2, keepdims=True)
        rw = (w * nf)[:, None] * maskf  # (B, P): weight of query rows
        dl = attn * (h - H) * rw[:, :, None]  # ∂L/∂logit_{pq} (softmax backward)
        gUps = xp.to_numpy(xp.sum(dl, axis=0))
        gPhi = phi_gradient(structure, feat, dl * zq[:, None, :], xp)
    return BatchEval(loss, xp.to_numpy(per_sample), gPhi, gUps,
                     xp.to_numpy(xp.sum(s * onehot, axis=2)), xp.to_numpy(s[:, :, 0]),
                     xp.to_numpy(xp.sum(attn * maskf[:, None, :], axis=2)))


class FullQModel:
    """The model at a full matrix Q ∈ ℝ^{d×d}, d = P + F, with positional encodings ``E``
    (d, P) and features ``V`` (d, F) the columns of an orthogonal ``basis`` (default: the
    identity). Huang et al. (2025), Def. 2.4 (RECONSTRUCTED): logits e_pᵀ Q (x̃_q + e_q)."""

    def __init__(self, structure: AreaStructure, basis: np.ndarray | None = None) -> None:
        self.structure = structure
        P, F = structure.P, structure.F
        self.basis = np.eye(P + F) if basis is None else np.asarray(basis, dtype=np.float64)
        self.E, self.V = self.basis[:, :P], self.basis[:, P:]

    def reduced(self, Q: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """(Φ = EᵀQV, Υ = EᵀQE)."""
        return self.E.T @ Q @ self.V, self.E.T @ Q @ self.E

    def patches(self, batch: Batch) -> np.ndarray:
        """(B, P, d): the clean patches x_q = z_{m(q)} v_{k, m(q)}."""
        lab = self.structure.labels[batch.cluster]
        feat = self.structure.offset[batch.cluster][:, None] + lab
        return np.take_along_axis(batch.z, lab, axis=1)[:, :, None] * self.V.T[feat]

    def tokens(self, batch: Batch) -> np.ndarray:
        """(B, P, d): x̃_q + e_q for every key (x̃_q = x_q unmasked, 0 masked)."""
        return self.patches(batch) * ~batch.mask[:, :, None] + self.E.T[None, :, :]

    def loss_grad(self, Q: np.ndarray, batch: Batch, *, mask_keys: bool = True,
                  loss_norm: str = "P") -> tuple[float, np.ndarray]:
        """Loss and ∂L/∂Q computed in the embedding space (logits E_pᵀ Q t_q, outputs and
        targets as d-vectors), independently of [`mae_loss_grad`][]."""
        B, P = batch.mask.shape
        T = self.tokens(batch)  # (B, P, d)
        logits = np.einsum("dp,de,bqe->bpq", self.E, Q, T)
        unm = ~batch.mask
        allowed = np.ones((B, P), bool) if mask_keys else unm
        logits = np.where(allowed[:, None, :], logits, -np.inf)
        mx = np.max(logits, axis=2, keepdims=True)
        mx = np.where(np.isfinite(mx), mx, 0.0)
        e = np.exp(logits - mx)
        Z = e.sum(axis=2, keepdims=True)
        attn = np.where(Z > 0, e / np.where(Z > 0, Z, 1.0), 0.0)
        X = self.patches(batch)
        Xt = X * unm[:, :, None]  # masked patches are zero
        Fout = np.einsum("bpq,bqd->bpd", attn, Xt)
        R = Fout - X
        nf = norm_factor(loss_norm, batch.mask)
        rw = (batch.weight * nf)[:, None] * batch.mask
        loss = float(np.sum(rw * 0.5 * np.sum(R * R, axis=2)))
        h = np.einsum("bpd,bqd->bpq", R, Xt)
        dl = attn * (h - np.sum(attn * h, axis=2, keepdims=True)) * rw[:, :, None]
        gQ = np.einsum("dp,bpq,bqe->de", self.E, dl, T)
        return loss, gQ

    def grad_from_reduced(self, gPhi: np.ndarray, gUps: np.ndarray) -> np.ndarray:
        """∂L/∂Q from (∂L/∂Φ, ∂L/∂Υ): E ∂Φ Vᵀ + E ∂Υ Eᵀ (the chain rule)."""
        return self.E @ gPhi @ self.V.T + self.E @ gUps @ self.E.T
