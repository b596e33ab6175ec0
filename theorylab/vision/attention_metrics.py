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

[`attention_maps`][] reads every layer's attention of a seed-batched model, [`metric_rows`][]
turns any per-map metrics into a table of per-head rows and their head means, and
[`head_average`][] selects the head means.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy.special import rel_entr

__all__ = ["js_divergence", "head_divergence", "attention_maps", "metric_rows", "head_average",
           "seed_summary"]


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


def attention_maps(model, x, chunk: int = 64) -> np.ndarray:
    """``(layers, S, n, heads, P, P)`` float32 attention of every block of a seed-batched
    model (``model.attentions(x)``, e.g. [`SeedViT`][theorylab.vision.nets.SeedViT]) on
    clean images `x` ``(S, n, C, H, W)``, `chunk` images per seed at a time, without
    gradients."""
    import torch

    with torch.no_grad():
        out = [model.attentions(x[:, i:i + chunk]).float().cpu().numpy()
               for i in range(0, x.shape[1], chunk)]
    return np.concatenate(out, axis=2)


def metric_rows(maps: np.ndarray, metrics, *, seeds, columns: dict[str, str],
                **labels) -> pd.DataFrame:
    """One row per (seed, layer, head) of attention maps ``(layers, S, n, heads, P, P)``:
    ``metrics(layer, s, A)`` gives, for one layer and seed's float64 maps ``A`` ``(n, heads,
    P, P)``, the metric name → per-image and per-head values ``(n, heads)``; each row holds
    their means over the images, with `labels` (e.g. ``model``, ``step``), ``seed``,
    ``layer``, ``head`` and ``n_images``, and a row ``head = −1`` per (seed, layer) holds the
    means over heads of the per-head values (the metric of each head, then averaged; never
    the metric of a head-averaged map). The table follows `columns` (name → dtype, in
    order)."""
    L, S, n, H = maps.shape[:4]
    rows = []
    for layer in range(L):
        for s in range(S):
            vals = {k: np.asarray(v).mean(axis=0)
                    for k, v in metrics(layer, s, maps[layer, s].astype(np.float64)).items()}
            common = {"seed": seeds[s], **labels, "layer": layer, "n_images": n}
            rows += [{**common, "head": h, **{k: float(v[h]) for k, v in vals.items()}}
                     for h in range(H)]
            rows.append({**common, "head": -1, **{k: float(v.mean()) for k, v in vals.items()}})
    return pd.DataFrame(rows).astype(columns)[list(columns)]


def head_average(table: pd.DataFrame, layer: int | None = None) -> pd.DataFrame:
    """The ``head = −1`` rows of a [`metric_rows`][] table (means over heads), one per
    (seed, model, layer); with `layer`, only that layer's (−1: the last layer of the
    table)."""
    out = table[table["head"] == -1]
    if layer is not None and "layer" in out:
        out = out[out["layer"] == (int(out["layer"].max()) if layer == -1 else layer)]
    return out.reset_index(drop=True)


def seed_summary(table: pd.DataFrame, metrics: tuple[str, ...], layer: int = -1,
                 head: int = -1) -> pd.DataFrame:
    """Mean and 95 % t-interval over the seeds of `metrics` of one `layer` (−1: the last) and
    `head` (−1: the head means) of a [`metric_rows`][] table: one row per (model, metric),
    columns ``model``, ``metric``, ``mean``, ``lo``, ``hi``, ``n_seeds`` (``lo``/``hi`` NaN
    with one seed)."""
    from theorylab.core.claims import t_interval

    last = int(table["layer"].max()) if layer == -1 else layer
    sub = table[(table["layer"] == last) & (table["head"] == head)]
    rows = []
    for model in sub.model.unique():
        g = sub[sub.model == model]
        for m in metrics:
            mean, lo, hi = t_interval(g[m].to_numpy(float))
            rows.append({"model": model, "metric": m, "mean": mean, "lo": lo, "hi": hi,
                         "n_seeds": len(g)})
    return pd.DataFrame(rows)
