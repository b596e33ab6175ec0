"""How far apart two attention maps are, and how different the heads of a layer are (numpy,
float64).

An attention map ``A[..., q, k]`` holds, in row q, the weights query q puts on the keys
(non-negative, summing to 1). Distances between maps are taken row by row with the
**Jensen–Shannon divergence** and averaged over the queries (uniform query weights):

    JS(a, b) = ½ KL(a ‖ m) + ½ KL(b ‖ m),   m = (a + b)/2,

in units of ln 2, so it lies in [0, 1]: 0 for equal rows, 1 for rows on disjoint keys. Unlike
KL it is symmetric and bounded, and it does not explode on the near-zero tails of a local
map (a Gaussian window's weights fall to e⁻³⁶ across a 7 × 7 grid), so averages over queries
and images are not dominated by a few far keys.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import rel_entr

__all__ = ["js_divergence", "head_divergence"]


def _rows(a, name: str) -> np.ndarray:
    arr = np.asarray(a, dtype=np.float64)
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2] or arr.shape[-1] == 0:
        raise ValueError(f"{name}: must have shape (..., P, P) with P >= 1 (got {arr.shape})")
    if not np.all(np.isfinite(arr)) or np.any(arr < 0):
        raise ValueError(f"{name}: entries must be finite and non-negative")
    return arr


def js_divergence(A, B) -> np.ndarray:
    """Mean over queries of the Jensen–Shannon divergence (in units of ln 2, in [0, 1])
    between row q of `A` and row q of `B`; `A`, `B` broadcast to ``(..., P, P)``; returns
    shape ``(...)``. The rows are taken as given (validated to be non-negative and finite)."""
    a, b = _rows(A, "A"), _rows(B, "B")
    m = 0.5 * (a + b)
    js = 0.5 * (rel_entr(a, m).sum(-1) + rel_entr(b, m).sum(-1)) / math.log(2)
    return np.clip(js, 0.0, 1.0).mean(-1)


def head_divergence(A, head_axis: int = -3) -> np.ndarray:
    """Between-head diversity of the maps ``A`` (``(..., H, P, P)`` with the heads on
    `head_axis`): for each head, the mean over the other heads of [`js_divergence`][] between
    their maps; shape ``(..., H)``. Identical heads give 0; one head alone gives 0.
    The layer's mean pairwise divergence is the mean over heads of the result."""
    a = np.moveaxis(_rows(A, "A"), head_axis, -3)
    H = a.shape[-3]
    out = np.zeros(a.shape[:-2])
    if H < 2:
        return out
    for h in range(H):
        for k in range(h + 1, H):
            d = js_divergence(a[..., h, :, :], a[..., k, :, :])
            out[..., h] += d
            out[..., k] += d
    return out / (H - 1)
