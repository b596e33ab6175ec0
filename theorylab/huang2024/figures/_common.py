"""Shared pieces of the huang2024 figures: cached exact population runs of the figures' MAE
config ([`theorylab.huang2024.setups.figure_config`][]), and attention maps of masked queries
computed from a trained (Φ, Υ).

Setting (docs/papers/huang2024.md §9, the same as the claim checks,
[`theorylab.huang2024.setups`][]): one cluster, z ~ U[0.5, 1.5] (Gauss–Legendre
quadrature of 6 nodes), Bernoulli masks, masked keys kept in the softmax, loss normalised by
1/P, Q⁰ = 0, exact population GD (``population-laplace``) with η = η_q·P, η_q = 2. With one
cluster the dynamics commute with any relabelling of the patches, so contiguous areas (drawn
on the grid) and the notes' random areas give the same Φ and attention masses.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np

from ..config import ExperimentConfig
from ..data import AreaStructure, config_batch
from ..setups import ETA_Q, figure_config
from ..trainer import RunResult, run_experiment

__all__ = ["ETA_Q", "trained_run", "masked_query_attention", "expected_attention", "grid_of",
           "draw_areas", "fmt"]


@lru_cache(maxsize=64)
def trained_run(P: int, C1: int, C: int, gamma: float, steps: int,
                areas: str = "contiguous") -> RunResult:
    """Exact population GD of [`figure_config`][theorylab.huang2024.setups.figure_config]
    (cached: several figures read one run)."""
    return run_experiment(figure_config(P, C1, C, gamma=gamma, steps=steps, areas=areas),
                          progress=False)


def _draw(structure: AreaStructure, cfg: ExperimentConfig, n: int, seed: int):
    return config_batch(np.random.default_rng(np.random.SeedSequence([seed, 2024])), structure,
                        cfg, n)


def masked_query_attention(structure: AreaStructure, Phi: np.ndarray, Ups: np.ndarray,
                           cluster: np.ndarray, z: np.ndarray, mask: np.ndarray, *,
                           mask_keys: bool = True) -> np.ndarray:
    """(B, P, P) attention maps: row q of map b is the attention of query q when q is masked
    and the other patches are masked as in ``mask[b]`` (Huang et al. (2025), Def. 2.4 as
    RECONSTRUCTED: logit of key k = z_k Φ[q, v_k] + Υ[q, k] if k is unmasked, Υ[q, k] if it is
    masked). Under Bernoulli masks the other patches' masks are independent of q's, so row q
    of a random draw is a draw of q's attention conditioned on q being masked."""
    P = structure.P
    lab = structure.labels[cluster]  # (B, P)
    feat = structure.offset[cluster][:, None] + lab
    unm = ~mask
    zq = np.take_along_axis(z, lab, axis=1) * unm  # (B, P) key content coefficients
    phik = np.moveaxis(Phi[:, feat], 0, 1)  # (B, query, key)
    logits = Ups[None] + zq[:, None, :] * phik
    eye = np.eye(P, dtype=bool)
    logits = np.where(eye[None], Ups[None], logits)  # the query itself is masked
    allowed = np.ones_like(mask) if mask_keys else unm
    allowed = allowed[:, None, :] & ~eye[None] | (eye[None] & mask_keys)
    logits = np.where(allowed, logits, -np.inf)
    mx = logits.max(axis=2, keepdims=True)
    mx = np.where(np.isfinite(mx), mx, 0.0)
    e = np.exp(logits - mx)
    Z = e.sum(axis=2, keepdims=True)
    return np.where(Z > 0, e / np.where(Z > 0, Z, 1.0), 1.0 / P)


def expected_attention(run: RunResult, *, n_samples: int, seed: int, cluster: int = 0,
                       chunk: int = 32) -> tuple[np.ndarray, dict]:
    """Monte Carlo attention maps of masked queries of a trained run: the (n, P, P) per-draw
    maps of [`masked_query_attention`][] (cluster ``cluster``, fresh seeded draws of z and
    masks) and the batch (cluster, z, mask) they came from."""
    cfg, s = run.config, run.structure
    batch = _draw(s, cfg, n_samples, seed)
    batch.cluster[:] = cluster
    maps = np.empty((n_samples, s.P, s.P))
    for i in range(0, n_samples, chunk):
        sl = slice(i, i + chunk)
        maps[sl] = masked_query_attention(s, run.Phi, run.Ups, batch.cluster[sl], batch.z[sl],
                                          batch.mask[sl], mask_keys=cfg.model.mask_keys)
    return maps, {"cluster": batch.cluster, "z": batch.z, "mask": batch.mask}


def grid_of(values: np.ndarray) -> np.ndarray:
    """A length-P vector as its √P×√P row-major grid."""
    side = math.isqrt(values.shape[-1])
    return values.reshape(values.shape[:-1] + (side, side))


def draw_areas(ax, labels: np.ndarray, *, color: str = "k", lw: float = 1.0,
               highlight: dict | None = None) -> None:
    """Boundaries between areas of a (P,) label vector on the grid; ``highlight`` maps an area
    to (colour, line width) for its outline."""
    g = grid_of(labels)
    side = g.shape[0]
    highlight = highlight or {}
    for r in range(side):
        for c in range(side):
            a = g[r, c]
            for dr, dc in ((0, 1), (1, 0), (0, -1), (-1, 0)):
                rr, cc = r + dr, c + dc
                inside = 0 <= rr < side and 0 <= cc < side
                if inside and g[rr, cc] == a:
                    continue
                col, w = highlight.get(int(a), (color, lw))
                if not inside and int(a) not in highlight:
                    continue
                # the cell side facing (dr, dc): through its midpoint, across that direction
                x, y, hx, hy = c + 0.5 * dc, r + 0.5 * dr, 0.5 * abs(dr), 0.5 * abs(dc)
                ax.plot([x - hx, x + hx], [y - hy, y + hy], color=col, lw=w, solid_capstyle="butt")


def fmt(x: float, nd: int = 3) -> str:
    """A number for a generated sentence ('n/a' when not finite)."""
    return f"{x:.{nd}g}" if isinstance(x, (int, float)) and math.isfinite(x) else "n/a"
