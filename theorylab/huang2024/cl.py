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

[`cl_loss_grad`][] computes the loss and its exact gradient (the backward pass through the
similarities, the mean pooling and the softmax attention, written out; tested against central
finite differences and torch autograd) on any array backend ([`theorylab.core.backend`][]).
[`clean_attention`][] reads the attention of the trained model on clean (unmasked) images,
the measurement that MAE and CL share (the query e_p and the keys do not depend on the
objective).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from theorylab.core.backend import Backend, NumpyBackend

from .data import AreaStructure, Batch
from .model import BatchEval, key_arrays, phi_gradient

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


class CLEval(BatchEval):
    """A batch's InfoNCE loss (mean over images), per-image losses, gradients (None unless
    asked), and per-(image, view, query) attention masses: ``attn_own`` (unmasked keys of the
    query's own area), ``attn_glob`` (unmasked keys of the global area), ``attn_masked``
    (masked keys); arrays (B, 2, P). The fields of the MAE side's
    [`BatchEval`][theorylab.huang2024.model.BatchEval]."""


def cl_loss_grad(structure: AreaStructure, Phi, Ups, batch: CLBatch, *, temperature: float,
                 negatives: int, symmetric: bool = True, mask_keys: bool = True,
                 pooling: str = "mean", need_grad: bool = True,
                 xp: Backend | None = None) -> CLEval:
    """The InfoNCE loss of the module docstring at (Φ (P, F), Υ (P, P)) and its exact
    gradients, computed on the backend ``xp`` (default numpy float64; Φ and Υ numpy or already
    on it); the batch and every output are numpy."""
    if pooling != "mean":
        raise ValueError(f"model.cl_pooling: unknown pooling {pooling!r}")
    B, P = batch.mask1.shape
    if not 1 <= negatives <= B - 1:
        raise ValueError(f"model.cl_negatives: must be in 1 … B − 1 = {B - 1} (got {negatives})")
    xp = xp or NumpyBackend()
    N = batch.z.shape[1]
    lab, feat, z, Ups, phik = key_arrays(structure, Phi, Ups, batch, xp)
    mask = xp.asbool(np.stack([batch.mask1, batch.mask2], axis=1))  # (B, 2, P)
    maskf, unmf = xp.cast(mask), xp.cast(~mask)
    zq = xp.take_along_axis(z, lab, 1)[:, None, :] * unmf  # (B, 2, P): 0 on masked keys
    logits = Ups[None, None] + zq[:, :, None, :] * phik[:, None]  # (B, 2, P, P)
    if not mask_keys:
        logits = xp.where(mask[:, :, None, :], -math.inf, logits)
        # a row with every key left out (all masked) outputs 0
        empty = (xp.sum(unmf, axis=2) == 0)[:, :, None, None]
        logits = xp.where(empty, 0.0, logits)
        attn = xp.where(empty, 0.0, xp.row_softmax(logits))
    else:
        attn = xp.row_softmax(logits)
    onehot = xp.cast(lab[:, :, None] == xp.arange(N)[None, None, :])  # (B, P, N)
    # (B, 2, P, N); a batched matrix product (BLAS), not an einsum, on every backend
    s = (attn * unmf[:, :, None, :]) @ onehot[:, None]
    f = z[:, None, :] * (xp.sum(s, axis=2) / P)  # (B, 2, N): coordinates of f on v_{k, m}
    idx_np = (np.arange(B)[:, None] + np.arange(negatives + 1)[None, :]) % B  # self first
    idx = xp.asindex(idx_np)
    same = xp.asarray(batch.cluster[:, None] == batch.cluster[idx_np])  # (B, n+1)
    scale = same / temperature  # different clusters: orthogonal features, similarity 0
    sides = [(0, 1), (1, 0)] if symmetric else [(0, 1)]
    kappa = 1.0 / len(sides)
    per, saved = 0.0, []
    for a, b in sides:
        fa, fb = f[:, a], f[:, b][idx]  # (B, N), (B, n+1, N)
        sim = xp.einsum("im,ijm->ij", fa, fb) * scale
        lse = xp.logsumexp(sim, 1)
        per = per + kappa * (lse - sim[:, 0])
        saved.append((a, b, fa, fb, sim, lse))
    loss = xp.item(xp.sum(per)) / B
    gPhi = gUps = None
    if need_grad:
        df = xp.zeros((B, 2, N))
        for a, b, fa, fb, sim, lse in saved:
            dsim = xp.exp(sim - lse[:, None]) * (kappa / B)  # softmax over the candidates
            dsim[:, 0] = dsim[:, 0] - kappa / B  # minus the positive's similarity
            dsim = dsim * scale
            df[:, a] = df[:, a] + xp.einsum("ij,ijm->im", dsim, fb)
            back = (dsim[:, :, None] * fa[:, None, :]).reshape(-1, N)
            df[:, b] = df[:, b] + xp.index_add(xp.zeros((B, N)), idx.reshape(-1), back)
        # f = z · mean_p s: every query p of a view gets dsv; s sums the unmasked keys' area
        dsv = df * z[:, None, :] / P  # (B, 2, N)
        g = unmf * xp.einsum("bvm,bqm->bvq", dsv, onehot)  # ∂L/∂attn[b, v, p, q] (any p)
        dl = attn * (g[:, :, None, :] - xp.sum(attn * g[:, :, None, :], axis=3, keepdims=True))
        gUps = xp.to_numpy(xp.sum(dl, axis=(0, 1)))
        gPhi = phi_gradient(structure, feat, xp.sum(dl * zq[:, :, None, :], axis=1), xp)
    return CLEval(loss, xp.to_numpy(per), gPhi, gUps,
                  xp.to_numpy(xp.sum(s * onehot[:, None], axis=3)), xp.to_numpy(s[..., 0]),
                  xp.to_numpy(xp.sum(attn * maskf[:, :, None, :], axis=3)))


def clean_attention(structure: AreaStructure, Phi: np.ndarray, Ups: np.ndarray,
                    cluster: np.ndarray, z: np.ndarray) -> np.ndarray:
    """Attention masses (B, P, Nmax) of every query p on every area m of clean (unmasked)
    images: softmax_q(z_{m(q)} Φ[p, f(k, m(q))] + Υ[p, q]) summed over the keys of each area
    (numpy float64). The same function of (Φ, Υ) for the MAE and the CL model: at Q⁰ = 0 it
    is C_m/P.

    Computed per area, not per key: every key q of area m carries the same feature term
    z_m Φ[p, f(k, m)], so the mass on area m is e^{z_m Φ[p, f(k, m)]} · U_k[p, m] with
    U_k[p, m] = Σ_{q ∈ m} e^{Υ[p, q]} (one matrix product per cluster k), normalised over the
    areas in the log domain (max-subtracted); (B, P, Nmax) exponentials instead of (B, P, P).
    Areas past a cluster's own (m ≥ n_areas[k]) get mass 0."""
    B, N = len(cluster), z.shape[1]
    P = Ups.shape[0]
    out = np.zeros((B, P, N))
    umax = Ups.max(axis=1, keepdims=True)
    eU = np.exp(Ups - umax)
    for k in np.unique(cluster):
        n_k = int(structure.n_areas[k])
        oh = (structure.labels[k][:, None] == np.arange(n_k)[None, :]).astype(np.float64)
        with np.errstate(divide="ignore"):
            logU = np.log(eU @ oh) + umax  # (P, n_k); −∞ for an area without keys
        sel = np.flatnonzero(cluster == k)
        off = int(structure.offset[k])
        logits = z[sel, None, :n_k] * Phi[None, :, off:off + n_k] + logU[None]
        logits -= logits.max(axis=2, keepdims=True)
        mass = np.exp(logits, out=logits)
        mass /= mass.sum(axis=2, keepdims=True)
        out[sel, :, :n_k] = mass
    return out
