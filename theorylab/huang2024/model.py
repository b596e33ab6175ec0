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

[`mae_loss_grad`][] evaluates a weighted batch and its exact gradients in (Φ, Υ);
[`FullQModel`][] evaluates the same loss at a full matrix Q in any orthonormal basis, with the
gradient in Q (the chain rule through Φ = EᵀQV, Υ = EᵀQE; tested to agree).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .data import AreaStructure, Batch

__all__ = ["BatchEval", "FullQModel", "mae_loss_grad", "mae_loss_grad_torch", "norm_factor"]


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


def _logits(structure: AreaStructure, Phi, Ups, batch: Batch):
    """(logits (B,P,P), zq (B,P) value coefficients of keys, lab (B,P), feat (B,P))."""
    lab = structure.labels[batch.cluster]  # (B, P)
    feat = structure.offset[batch.cluster][:, None] + lab  # (B, P)
    unm = ~batch.mask
    zq = np.take_along_axis(batch.z, lab, axis=1) * unm  # (B, P): 0 on masked keys
    phik = np.moveaxis(Phi[:, feat], 0, 1)  # (B, P_query, P_key)
    logits = Ups[None, :, :] + zq[:, None, :] * phik
    return logits, zq, lab, feat


def mae_loss_grad(structure: AreaStructure, Phi: np.ndarray, Ups: np.ndarray, batch: Batch, *,
                  mask_keys: bool = True, loss_norm: str = "P",
                  need_grad: bool = True) -> BatchEval:
    """The MAE loss of a weighted batch at (Φ (P, F), Υ (P, P)) and its exact gradients.

    Huang et al. (2025), Def. 2.4 and the reconstruction loss (both RECONSTRUCTED; see the
    module docstring). Max-subtracted softmax; rows whose keys are all left out output 0."""
    B, P = batch.mask.shape
    logits, zq, lab, feat = _logits(structure, Phi, Ups, batch)
    unm = ~batch.mask
    allowed = np.ones((B, P), dtype=bool) if mask_keys else unm
    logits = np.where(allowed[:, None, :], logits, -np.inf)
    mx = np.max(logits, axis=2, keepdims=True)
    mx = np.where(np.isfinite(mx), mx, 0.0)
    e = np.exp(logits - mx)
    Z = e.sum(axis=2, keepdims=True)
    attn = np.where(Z > 0, e / np.where(Z > 0, Z, 1.0), 0.0)  # (B, P, P)
    Nmax = batch.z.shape[1]
    onehot = (lab[:, :, None] == np.arange(Nmax)[None, None, :]).astype(np.float64)  # (B,P,N)
    # s[b,p,m]: attention on unmasked keys of area m; output coefficient of v_m is z_m s_m
    s = np.einsum("bpq,bqm->bpm", attn * unm[:, None, :], onehot)
    zj = np.take_along_axis(batch.z, lab, axis=1)  # (B, P): the target coefficient z_{j(p)}
    own = onehot  # own[b,p,m] = [lab(p) == m]
    resid = batch.z[:, None, :] * s - zj[:, :, None] * own  # (B, P, N)
    lq = 0.5 * np.sum(resid * resid, axis=2)  # (B, P): ½‖F_p − x_p‖²
    nf = norm_factor(loss_norm, batch.mask)
    per_sample = nf * np.sum(lq * batch.mask, axis=1)
    loss = float(np.dot(batch.weight, per_sample))
    s_own = np.sum(s * own, axis=2)
    s_glob = s[:, :, 0]
    s_masked = np.sum(attn * batch.mask[:, None, :], axis=2)
    gPhi = gUps = None
    if need_grad:
        # ∂ℓ_p/∂attn_{pq} = ⟨F_p − x_p, x̃_q⟩ = zq_q · resid[p, m(q)]
        h = zq[:, None, :] * np.take_along_axis(resid, np.broadcast_to(lab[:, None, :],
                                                                       (B, P, P)), axis=2)
        H = np.sum(attn * h, axis=2, keepdims=True)
        dl = attn * (h - H)  # ∂ℓ_p/∂logit_{pq} (softmax backward)
        rw = (batch.weight * nf)[:, None] * batch.mask  # (B, P): weight of query rows
        dl = dl * rw[:, :, None]
        gUps = dl.sum(axis=0)
        # logit_{pq} ∋ zq_q Φ[p, feat_q] → ∂/∂Φ[p, f] = Σ_{b,q: feat=f} dl zq
        foh = (feat[:, :, None] == np.arange(structure.F)[None, None, :]).astype(np.float64)
        gPhi = np.einsum("bpq,bqf->pf", dl * zq[:, None, :], foh)
    return BatchEval(loss, per_sample, gPhi, gUps, s_own, s_glob, s_masked)


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

    def tokens(self, batch: Batch) -> np.ndarray:
        """(B, P, d): x̃_q + e_q for every key."""
        lab = self.structure.labels[batch.cluster]
        feat = self.structure.offset[batch.cluster][:, None] + lab
        zq = np.take_along_axis(batch.z, lab, axis=1) * ~batch.mask
        return zq[:, :, None] * self.V.T[feat] + self.E.T[None, :, :]

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
        lab = self.structure.labels[batch.cluster]
        feat = self.structure.offset[batch.cluster][:, None] + lab
        z = np.take_along_axis(batch.z, lab, axis=1)
        X = z[:, :, None] * self.V.T[feat]  # (B, P, d) clean patches
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


def mae_loss_grad_torch(structure: AreaStructure, Phi: np.ndarray, Ups: np.ndarray, batch: Batch,
                        *, mask_keys: bool = True, loss_norm: str = "P", need_grad: bool = True,
                        device: str = "cpu") -> BatchEval:
    """[`mae_loss_grad`][] on torch (``device`` cpu or cuda, float64): the same forward pass,
    gradients by autograd; inputs and outputs are numpy arrays."""
    import torch

    dt = torch.float64
    B, P = batch.mask.shape
    Phi_t = torch.tensor(Phi, dtype=dt, device=device, requires_grad=need_grad)
    Ups_t = torch.tensor(Ups, dtype=dt, device=device, requires_grad=need_grad)
    lab_np = structure.labels[batch.cluster]
    lab = torch.as_tensor(lab_np, device=device)
    feat = torch.as_tensor(structure.offset[batch.cluster][:, None] + lab_np, device=device)
    mask = torch.as_tensor(batch.mask, device=device)
    unm = ~mask
    z = torch.as_tensor(batch.z, dtype=dt, device=device)
    zfull = torch.gather(z, 1, lab)  # (B, P): z of each patch's area
    zq = zfull * unm
    phik = Phi_t[:, feat].permute(1, 0, 2)  # (B, P_query, P_key)
    logits = Ups_t[None] + zq[:, None, :] * phik
    allowed = torch.ones_like(mask) if mask_keys else unm
    logits = torch.where(allowed[:, None, :], logits, torch.tensor(-math.inf, dtype=dt,
                                                                    device=device))
    mx = torch.amax(logits, dim=2, keepdim=True).detach()
    mx = torch.where(torch.isfinite(mx), mx, torch.zeros_like(mx))
    e = torch.exp(logits - mx)
    Z = e.sum(dim=2, keepdim=True)
    attn = e / torch.where(Z > 0, Z, torch.ones_like(Z))
    onehot = torch.nn.functional.one_hot(lab, batch.z.shape[1]).to(dt)  # (B, P, N)
    s = torch.einsum("bpq,bqm->bpm", attn * unm[:, None, :], onehot)
    resid = z[:, None, :] * s - zfull[:, :, None] * onehot
    lq = 0.5 * torch.sum(resid * resid, dim=2)
    nf = torch.as_tensor(norm_factor(loss_norm, batch.mask), dtype=dt, device=device)
    per_sample = nf * torch.sum(lq * mask, dim=1)
    loss = torch.sum(torch.as_tensor(batch.weight, dtype=dt, device=device) * per_sample)
    gPhi = gUps = None
    if need_grad:
        loss.backward()
        gPhi, gUps = Phi_t.grad.cpu().numpy(), Ups_t.grad.cpu().numpy()

    def np_(x):
        return x.detach().cpu().numpy()

    return BatchEval(float(loss.detach()), np_(per_sample), gPhi, gUps,
                     np_(torch.sum(s * onehot, dim=2)), np_(s[:, :, 0]),
                     np_(torch.sum(attn * mask[:, None, :], dim=2)))
