"""The contrastive (CL) side of Huang et al. (2025): Def. 2.6 (ViT for CL), Def. 2.7 (data
augmentation) and the InfoNCE objective of Thm 4.4, in the reduced coordinates (Φ, Υ).

Everything here is RECONSTRUCTED (docs/papers/huang2024.md §3; the paper's definitions could
not be read), and every uncertain choice is a field of ``[model]``:

- **Views** (Def. 2.7, UNCERTAIN: masking or cropping): two views X̃¹, X̃² of one image X by
  two independent random masks drawn with the MAE mask law (``model.mask``, ``model.gamma``,
  ``model.mask_size``); a masked patch has the zero mask token as content.
- **Architecture** (Def. 2.6, UNCERTAIN): the same one-layer softmax attention as the MAE
  (notes §2.2). Every patch p of a view queries with its positional encoding e_p, so the logit
  of an unmasked key q of area m is ``z_m Φ[p, f(k, m)] + Υ[p, q]`` and that of a masked key
  ``Υ[p, q]`` (kept in the softmax when ``model.mask_keys``, else left out). The patch output
  is F_p = Σ_q attn_{p→q} x̃_q = Σ_m z_m s_{p,m} v_{k,m}, with s_{p,m} the attention on the
  unmasked keys of area m.
- **Representation** (``model.cl_pooling = "mean"``, UNCERTAIN): f(X̃) = (1/P) Σ_p F_p, whose
  coordinate on v_{k,m} is z_m · (1/P) Σ_p s_{p,m}. Features of different clusters are
  orthonormal, so ⟨f(X̃), f(X̃')⟩ = 0 when X and X' belong to different clusters.
- **Objective** (notes §3.3, UNCERTAIN: the negatives and τ): for a batch of B images
  (``train.mc_samples``), the similarity s_{ab}^{uv} = ⟨f(X̃_a^u), f(X̃_b^v)⟩/τ
  (``model.cl_temperature``), the negatives of image b are the images b+1, …, b+n (mod B),
  n = ``model.cl_negatives`` ≤ B − 1 (i.i.d. images of any cluster with their own masks), and

      ℓ_b^{1→2} = −s_{bb}^{12} + logsumexp(s_{bb}^{12}, s_{b,b+1}^{12}, …, s_{b,b+n}^{12}),

  the anchor view 1 against the second views. With ``model.cl_symmetric`` (default) the loss
  of image b is ½(ℓ_b^{1→2} + ℓ_b^{2→1}) (ℓ^{2→1}: view 2 as the anchor, the first views of
  the positive and the negatives), which is unchanged when the two views are swapped;
  otherwise it is ℓ_b^{1→2}. The batch loss is the mean over b (a Monte Carlo estimate of the
  population InfoNCE loss with n negatives).

Gradients by torch autograd in float64 (tested against central finite differences).
[`clean_attention`][] reads the attention of the trained model on clean (unmasked) images,
the measurement that MAE and CL share (the query e_p and the keys do not depend on the
objective).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .data import AreaStructure, Batch

__all__ = ["CLBatch", "CLEval", "clean_attention", "cl_loss_grad", "swap_views"]


@dataclass
class CLBatch:
    """B images with two views each: ``cluster`` (B,), ``z`` (B, Nmax) area coefficients (0
    past the cluster's areas), ``mask1``, ``mask2`` (B, P) bool (True = masked)."""

    cluster: np.ndarray
    z: np.ndarray
    mask1: np.ndarray
    mask2: np.ndarray

    def __len__(self) -> int:
        return int(self.cluster.shape[0])

    def view(self, v: int) -> Batch:
        """View ``v`` (1 or 2) as an MAE [`Batch`][] with weights 1/B."""
        B = len(self)
        return Batch(self.cluster, self.z, self.mask1 if v == 1 else self.mask2,
                     np.full(B, 1.0 / B))


def swap_views(batch: CLBatch) -> CLBatch:
    """The same images with the two views exchanged."""
    return CLBatch(batch.cluster, batch.z, batch.mask2, batch.mask1)


@dataclass
class CLEval:
    """A batch's InfoNCE loss (mean over images), per-image losses, gradients (None unless
    asked), and per-(image, view, query) attention masses: ``attn_own`` (unmasked keys of the
    query's own area), ``attn_glob`` (unmasked keys of the global area), ``attn_masked``
    (masked keys); arrays (B, 2, P)."""

    loss: float
    per_sample: np.ndarray
    grad_Phi: np.ndarray | None
    grad_Ups: np.ndarray | None
    attn_own: np.ndarray
    attn_glob: np.ndarray
    attn_masked: np.ndarray


def cl_loss_grad(structure: AreaStructure, Phi: np.ndarray, Ups: np.ndarray, batch: CLBatch,
                 *, temperature: float, negatives: int, symmetric: bool = True,
                 mask_keys: bool = True, pooling: str = "mean", need_grad: bool = True,
                 device: str = "cpu") -> CLEval:
    """The InfoNCE loss of the module docstring at (Φ (P, F), Υ (P, P)) and its gradients
    (torch autograd, float64; ``device`` cpu or cuda; numpy in and out)."""
    import torch

    if pooling != "mean":
        raise ValueError(f"model.cl_pooling: unknown pooling {pooling!r}")
    B, P = batch.mask1.shape
    if not 1 <= negatives <= B - 1:
        raise ValueError(f"model.cl_negatives: must be in 1 … B − 1 = {B - 1} (got {negatives})")
    dt = torch.float64
    Phi_t = torch.tensor(Phi, dtype=dt, device=device, requires_grad=need_grad)
    Ups_t = torch.tensor(Ups, dtype=dt, device=device, requires_grad=need_grad)
    lab_np = structure.labels[batch.cluster]  # (B, P)
    lab = torch.as_tensor(lab_np, device=device)
    feat = torch.as_tensor(structure.offset[batch.cluster][:, None] + lab_np, device=device)
    mask = torch.as_tensor(np.stack([batch.mask1, batch.mask2], axis=1), device=device)  # B2P
    unm = ~mask
    z = torch.as_tensor(batch.z, dtype=dt, device=device)  # (B, N)
    zfull = torch.gather(z, 1, lab)  # (B, P)
    zq = zfull[:, None, :] * unm  # (B, 2, P): value coefficient of each key, 0 if masked
    phik = Phi_t[:, feat].permute(1, 0, 2)  # (B, P_query, P_key)
    logits = Ups_t[None, None] + zq[:, :, None, :] * phik[:, None]  # (B, 2, P, P)
    if not mask_keys:
        logits = logits.masked_fill(mask[:, :, None, :], -math.inf)
    # a row with every key left out (all masked, mask_keys false) outputs 0
    empty = ~unm.any(dim=2) if not mask_keys else torch.zeros_like(mask[:, :, 0])
    logits = logits.masked_fill(empty[:, :, None, None], 0.0)
    attn = torch.softmax(logits, dim=3)
    attn = attn.masked_fill(empty[:, :, None, None], 0.0)
    N = batch.z.shape[1]
    onehot = torch.nn.functional.one_hot(lab, N).to(dt)  # (B, P, N)
    s = torch.einsum("bvpq,bqm->bvpm", attn * unm[:, :, None, :], onehot)  # (B, 2, P, N)
    f = z[:, None, :] * s.mean(dim=2)  # (B, 2, N): coordinates of f on v_{k, m}
    same = torch.as_tensor(batch.cluster[:, None] == batch.cluster[None, :], device=device)
    idx = (torch.arange(B, device=device)[:, None]
           + torch.arange(negatives + 1, device=device)[None, :]) % B  # (B, n+1): self first

    def one_side(a: int, b: int):
        fa, fb = f[:, a], f[:, b]  # (B, N)
        sim = torch.einsum("im,ijm->ij", fa, fb[idx]) / temperature  # (B, n+1)
        sim = sim * torch.gather(same, 1, idx).to(dt)  # different clusters: orthogonal
        return torch.logsumexp(sim, dim=1) - sim[:, 0]

    per = 0.5 * (one_side(0, 1) + one_side(1, 0)) if symmetric else one_side(0, 1)
    loss = per.mean()
    gPhi = gUps = None
    if need_grad:
        loss.backward()
        gPhi, gUps = Phi_t.grad.cpu().numpy(), Ups_t.grad.cpu().numpy()

    def np_(x):
        return x.detach().cpu().numpy()

    return CLEval(float(loss.detach()), np_(per), gPhi, gUps,
                  np_(torch.sum(s * onehot[:, None], dim=3)), np_(s[..., 0]),
                  np_(torch.sum(attn * mask[:, :, None, :], dim=3)))


def clean_attention(structure: AreaStructure, Phi: np.ndarray, Ups: np.ndarray,
                    cluster: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Attention masses (B, P, Nmax) of every query p on every area m of clean (unmasked)
    images: softmax_q(z_{m(q)} Φ[p, f(k, m(q))] + Υ[p, q]) summed over the keys of each area
    (max-subtracted softmax, numpy float64). The same function of (Φ, Υ) for the MAE and the
    CL model: at Q⁰ = 0 it is C_m/P."""
    lab = structure.labels[cluster]  # (B, P)
    feat = structure.offset[cluster][:, None] + lab
    zq = np.take_along_axis(z, lab, axis=1)
    logits = Ups[None] + zq[:, None, :] * np.moveaxis(Phi[:, feat], 0, 1)
    logits = logits - logits.max(axis=2, keepdims=True)
    e = np.exp(logits)
    attn = e / e.sum(axis=2, keepdims=True)
    onehot = (lab[:, :, None] == np.arange(z.shape[1])[None, None, :]).astype(np.float64)
    return np.einsum("bpq,bqm->bpm", attn, onehot)
