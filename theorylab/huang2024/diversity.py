"""Attention-diversity metrics of attention maps (pure numpy).

Huang, Wen, Chi & Liang (ICLR 2025, arXiv:2403.02233) contrast two end states of a one-layer
softmax ViT: trained by masked reconstruction (MAE), each patch attends its own area, so
different patches attend different places ("diverse, local" attention); trained contrastively
(CL), every patch attends the same global area ("collapse to a single global pattern"). The
paper measures this on real ViTs with an "attention diversity metric" (its Figure 3) whose
formula could not be read (paper notes, docs/papers/huang2024.md, §5.1). This module
provides metrics with known formulas that tell these states apart, for the maps of the
synthetic model and for real ViTs alike.

An **attention map** is an array `A` of shape `(..., P, P)`: `A[..., q, k]` is the weight
that query position `q` puts on key position `k`. Rows must be non-negative and sum to 1 (within
`atol`, default [`ROW_SUM_ATOL`][]). Leading axes (layers, heads, samples, ...) are batch axes:
every metric returns an array of shape `(...)` (a 0-d array for a single map). For a real
ViT, drop the CLS token's row and column and renormalise the rows first, as Park et al. do.

**Probability model** (Park et al., ICLR 2023, "What do self-supervised ViTs learn?"). Draw a
query position `Q` with weights `p(q)` (uniform unless `query_weights` is given), then a key
position `K` from row `q` of `A`:

    joint       J(q, k) = p(q) · A[q, k]
    key law     p(k)    = Σ_q p(q) · A[q, k]
    H(Q) = −Σ_q p(q) log p(q)        H(K) = −Σ_k p(k) log p(k)
    H(K|Q) = Σ_q p(q) · (−Σ_k A[q, k] log A[q, k])
    I(Q;K) = Σ_{q,k} J(q, k) · log( J(q, k) / (p(q) p(k)) ) = H(K) − H(K|Q)

Natural logarithms (nats); `0 · log 0 = 0` (`scipy.special.entr` / `rel_entr`). A ratio whose
denominator is 0 is reported as 0: a denominator here vanishes only when one of the two
variables is deterministic, and then I(Q;K) = 0 as well.

**Metrics**, with their values on four reference maps at P positions (uniform p(q)):
uniform rows; identity; "collapse" = every row the same distribution on m keys, uniform on
them; "blocks" = every query attends its own block of b keys uniformly (a partition).

- [`normalized_mutual_information`][] (geometric): I / √(H(Q) H(K)).
  Uniform 0, identity 1, collapse 0, blocks 1 − log b / log P.
- [`collapse_index`][]: 1 − H(K) / log P.
  Uniform 0, identity 0, collapse 1 − log m / log P, blocks 0.
- [`sharpness_decomposition`][] `.total`: 1 − H(K|Q) / log P.
  Uniform 0, identity 1, collapse 1 − log m / log P, blocks 1 − log b / log P.
- [`mean_attention_distance`][]: Σ_q p(q) Σ_k A[q, k] ‖x_q − x_k‖ on the √P×√P grid.
  Uniform: the mean distance of two random patches; identity 0; collapse: the mean distance
  to the m keys; 2×2 blocks (2 + √2)/4.

NMI cannot tell **uniform attention** (the state at Q⁰ = 0) from **global collapse** (the CL end
state): in both the key a query attends does not depend on the query, so I(Q;K) = 0. What differs
is whether the queries focus at all. The sharpness decomposition splits each query's focus,
measured as the entropy deficit log P − H(K|Q), exactly into a part shared by all queries and a
query-specific part:

    log P − H(K|Q)  =  [log P − H(K)]  +  I(Q;K)
    (total focus)      (shared focus)     (diverse focus)

Uniform attention has no focus at all (0 = 0 + 0); global collapse has all of it shared
(total = shared > 0, diverse = 0); MAE-like local attention has it query-specific (shared ≈ 0,
diverse > 0). [`collapse_index`][] is the shared part; for collapse onto a global area of
P^κ keys it equals 1 − κ.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from scipy.special import entr, rel_entr

__all__ = [
    "NMI_NORMALIZATIONS",
    "ROW_SUM_ATOL",
    "EffectiveKeys",
    "Sharpness",
    "attention_distance_per_query",
    "check_attention",
    "collapse_index",
    "conditional_key_entropy",
    "effective_keys",
    "grid_distances",
    "grid_positions",
    "key_entropy",
    "key_marginal",
    "mean_attention_distance",
    "mutual_information",
    "normalized_mutual_information",
    "query_entropy",
    "sharpness_decomposition",
]

ROW_SUM_ATOL = 1e-5
"""Default tolerance on |Σ_k A[q, k] − 1|. Float64 softmax rows sum to 1 within P·2⁻⁵³ (about
1e-13 for P ≤ 1000); float32 rows, as exported from a ViT, typically within √P·2⁻²⁴ (about 1e-6
at P = 256). 1e-5 accepts both and still rejects unnormalised maps (logits, or rows that were
never softmaxed); the metrics then carry an error of order atol · log P."""

NMI_NORMALIZATIONS = ("geometric", "arithmetic", "min", "max", "query", "key", "log_p")
"""Denominators of [`normalized_mutual_information`][]: √(H(Q)H(K)), (H(Q)+H(K))/2,
min(H(Q), H(K)), max(H(Q), H(K)), H(Q), H(K), log P."""


class EffectiveKeys(NamedTuple):
    """Entropies of [`effective_keys`][] as effective numbers of keys (exp of an entropy)."""

    coverage: np.ndarray
    """exp H(K): how many keys the queries attend between them (P if all keys, m if m keys)."""
    per_query: np.ndarray
    """exp H(K|Q): how many keys one query attends (geometric mean over queries)."""
    patterns: np.ndarray
    """exp I(Q;K) = coverage / per_query: how many distinguishable attention patterns."""


class Sharpness(NamedTuple):
    """The focus of the queries, split as in [`sharpness_decomposition`][]; each in [0, 1]."""

    total: np.ndarray
    """1 − H(K|Q)/log P: how far the average query is from attending all keys uniformly."""
    shared: np.ndarray
    """1 − H(K)/log P: the focus common to all queries (the collapse index)."""
    diverse: np.ndarray
    """I(Q;K)/log P: the focus that depends on the query (total = shared + diverse)."""


# -- validation ------------------------------------------------------------------------------------
def check_attention(A, *, atol: float = ROW_SUM_ATOL, name: str = "A") -> np.ndarray:
    """Validate an attention map and return it as a float64 array.

    **Arguments:**

    - `A`: array-like of shape `(..., P, P)`, `P ≥ 1`; rows (last axis) non-negative and
      summing to 1 within `atol`.
    - `atol`: tolerance on |row sum − 1| (see [`ROW_SUM_ATOL`][]).
    - `name`: the argument name used in error messages.

    **Returns:** `A` as a float64 numpy array (a copy only when a conversion was needed).

    **Raises:** `ValueError` (one line, naming `name`) if the shape is not `(..., P, P)`, an
    entry is not finite or negative, or a row sum is off by more than `atol`.
    """
    if not (math.isfinite(atol) and atol >= 0):
        raise ValueError(f"atol must be a finite number >= 0, got {atol!r}")
    arr = np.asarray(A, dtype=np.float64)
    if arr.ndim < 2 or arr.shape[-1] != arr.shape[-2] or arr.shape[-1] == 0:
        raise ValueError(f"{name} must have shape (..., P, P) with P >= 1, got shape {arr.shape}")
    return _check_law(arr, atol, name, rows=True)


def _check_law(arr: np.ndarray, atol: float, name: str, rows: bool) -> np.ndarray:
    """`arr` when its last axis holds probability laws: finite, non-negative, summing to 1
    within `atol` (`rows`: the laws are the rows of a map, and the messages say so)."""
    label, total = (f"{name} rows", "row sum") if rows else (name, "sum")
    if not np.all(np.isfinite(arr)):
        raise ValueError(f"{name} must be finite (found NaN or inf)")
    if np.any(arr < 0):
        raise ValueError(f"{label} must be non-negative (min entry {arr.min():.3g})")
    dev = float(np.max(np.abs(arr.sum(axis=-1) - 1.0))) if arr.size else 0.0
    if dev > atol:
        raise ValueError(f"{label} must sum to 1 within atol={atol:g} "
                         f"(max |{total} - 1| = {dev:.3g})")
    return arr


def _prepare(A, query_weights, atol: float) -> tuple[np.ndarray, np.ndarray]:
    """(A, w) broadcast to a common leading shape: A (..., P, P), w (..., P)."""
    arr = check_attention(A, atol=atol)
    P = arr.shape[-1]
    if query_weights is None:
        return arr, np.full(arr.shape[:-1], 1.0 / P)
    w = np.asarray(query_weights, dtype=np.float64)
    if w.ndim < 1 or w.shape[-1] != P:
        raise ValueError(f"query_weights must have shape (..., {P}) to match A, "
                         f"got shape {w.shape}")
    try:
        lead = np.broadcast_shapes(arr.shape[:-2], w.shape[:-1])
    except ValueError:
        raise ValueError(f"query_weights leading shape {w.shape[:-1]} does not broadcast with "
                         f"A's leading shape {arr.shape[:-2]}") from None
    _check_law(w, atol, "query_weights", rows=False)
    return np.broadcast_to(arr, lead + (P, P)), np.broadcast_to(w, lead + (P,))


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, with 0 where den == 0 (then num == 0 too, see the module docstring)."""
    out = np.zeros(np.broadcast_shapes(np.shape(num), np.shape(den)))
    np.divide(num, den, out=out, where=den > 0)
    return out


# -- distributions and entropies -------------------------------------------------------------------
def key_marginal(A, *, query_weights=None, atol: float = ROW_SUM_ATOL) -> np.ndarray:
    """The key law p(k) = Σ_q p(q) A[q, k], shape `(..., P)`.

    **Arguments:**

    - `A`: attention maps, shape `(..., P, P)` (see [`check_attention`][]).
    - `query_weights`: p(q), shape `(..., P)` broadcastable with `A`'s leading axes;
      non-negative, summing to 1 within `atol`. Default: uniform 1/P.
    - `atol`: row-sum tolerance for `A` and sum tolerance for `query_weights`.
    """
    arr, w = _prepare(A, query_weights, atol)
    return np.einsum("...q,...qk->...k", w, arr)


def query_entropy(A, *, query_weights=None, atol: float = ROW_SUM_ATOL) -> np.ndarray:
    """H(Q) = −Σ_q p(q) log p(q) in nats, shape `(...)`; log P for uniform query weights.

    **Arguments:** as in [`key_marginal`][].
    """
    _, w = _prepare(A, query_weights, atol)
    return entr(w).sum(axis=-1)


def key_entropy(A, *, query_weights=None, atol: float = ROW_SUM_ATOL) -> np.ndarray:
    """H(K) = −Σ_k p(k) log p(k) in nats, shape `(...)`: the spread of all queries' attention
    taken together. log P when every key receives the same total weight; 0 under collapse onto
    one key.

    **Arguments:** as in [`key_marginal`][].
    """
    return entr(key_marginal(A, query_weights=query_weights, atol=atol)).sum(axis=-1)


def conditional_key_entropy(A, *, query_weights=None, atol: float = ROW_SUM_ATOL) -> np.ndarray:
    """H(K|Q) = Σ_q p(q) H(A[q, :]) in nats, shape `(...)`: the p(q)-average entropy of one
    query's attention row. log P for uniform rows, 0 for one-hot rows.

    **Arguments:** as in [`key_marginal`][].
    """
    arr, w = _prepare(A, query_weights, atol)
    return np.einsum("...q,...q->...", w, entr(arr).sum(axis=-1))


def mutual_information(A, *, query_weights=None, atol: float = ROW_SUM_ATOL) -> np.ndarray:
    """I(Q;K) = Σ_{q,k} J(q,k) log(J(q,k) / (p(q) p(k))) in nats, shape `(...)`.

    Computed from the joint law with `scipy.special.rel_entr` (no cancellation between two
    entropies, and queries with p(q) = 0 contribute exactly 0). Mathematically
    0 ≤ I ≤ min(H(Q), H(K)); rounding of order 1e-16 · log P below 0 is clipped to 0.

    **Arguments:** as in [`key_marginal`][].
    """
    arr, w = _prepare(A, query_weights, atol)
    pk = np.einsum("...q,...qk->...k", w, arr)
    joint = w[..., :, None] * arr
    indep = w[..., :, None] * pk[..., None, :]
    return np.maximum(rel_entr(joint, indep).sum(axis=(-2, -1)), 0.0)


def normalized_mutual_information(A, *, normalization: str = "geometric", query_weights=None,
                                  atol: float = ROW_SUM_ATOL) -> np.ndarray:
    """Normalised mutual information between query and key positions, shape `(...)`, in [0, 1].

    NMI = I(Q;K) / N, with N chosen by `normalization`:

    - `"geometric"` (default): N = √(H(Q) H(K)). This is the normalisation of the attention
      analysis code released with Park et al. (ICLR 2023), read in a public script that reuses
      it (uniform p(q), rows renormalised after the CLS token is dropped); Park et al.'s paper
      text was not checked for it.
    - `"arithmetic"`: (H(Q) + H(K)) / 2; `"min"`, `"max"`: min / max of H(Q), H(K).
    - `"key"`: N = H(K), the share of the key uncertainty explained by the query.
    - `"query"`: N = H(Q); `"log_p"`: N = log P. Under uniform p(q) both give I / log P, the
      `diverse` part of [`sharpness_decomposition`][].

    Reference values (uniform p(q)): uniform attention 0; identity 1 (every normalisation);
    every row the same distribution (global collapse) 0; each query attending its own block of
    b keys uniformly: I = log P − log b, so the geometric NMI is 1 − log b / log P.

    NMI is invariant under relabelling positions (the same permutation applied to queries,
    keys and `query_weights`); it knows nothing of the grid. A zero denominator gives 0.
    Rounding above 1 (order 1e-16) is clipped to 1.

    **Arguments:**

    - `A`, `query_weights`, `atol`: as in [`key_marginal`][].
    - `normalization`: one of [`NMI_NORMALIZATIONS`][].
    """
    if normalization not in NMI_NORMALIZATIONS:
        raise ValueError(f"normalization must be one of {NMI_NORMALIZATIONS}, "
                         f"got {normalization!r}")
    arr, w = _prepare(A, query_weights, atol)
    mi = mutual_information(arr, query_weights=w, atol=atol)
    hq = entr(w).sum(axis=-1)
    hk = entr(np.einsum("...q,...qk->...k", w, arr)).sum(axis=-1)
    den = {
        "geometric": lambda: np.sqrt(hq * hk),
        "arithmetic": lambda: 0.5 * (hq + hk),
        "min": lambda: np.minimum(hq, hk),
        "max": lambda: np.maximum(hq, hk),
        "query": lambda: hq,
        "key": lambda: hk,
        "log_p": lambda: np.full(mi.shape, math.log(arr.shape[-1])),
    }[normalization]()
    return np.clip(_ratio(mi, den), 0.0, 1.0)


# -- focus: effective keys and the sharpness decomposition -----------------------------------------
def effective_keys(A, *, query_weights=None, atol: float = ROW_SUM_ATOL) -> EffectiveKeys:
    """Effective numbers of keys: coverage exp H(K), per query exp H(K|Q), and their ratio
    exp I(Q;K), the number of distinguishable attention patterns. Each has shape `(...)`.

    Reference values: uniform attention (P, P, 1); identity (P, 1, P); global collapse onto m
    keys, uniformly (m, m, 1); each query on its own block of b keys (P, b, P/b).

    **Arguments:** as in [`key_marginal`][].
    """
    arr, w = _prepare(A, query_weights, atol)
    hk = key_entropy(arr, query_weights=w, atol=atol)
    hkq = conditional_key_entropy(arr, query_weights=w, atol=atol)
    mi = mutual_information(arr, query_weights=w, atol=atol)
    return EffectiveKeys(coverage=np.exp(hk), per_query=np.exp(hkq), patterns=np.exp(mi))


def sharpness_decomposition(A, *, query_weights=None, atol: float = ROW_SUM_ATOL) -> Sharpness:
    """Split the queries' focus into a shared part and a query-specific part (theorylab's own
    metric; each part has shape `(...)` and lies in [0, 1]).

    With H(K|Q) = H(K) − I(Q;K), the entropy deficit of the average query splits exactly:

        total   = 1 − H(K|Q) / log P       how sharply a query attends (0: uniform rows)
        shared  = 1 − H(K) / log P         focus common to all queries (the collapse index)
        diverse = I(Q;K) / log P           focus that differs between queries
        total   = shared + diverse

    **Why it separates uniform attention from global collapse.** Both have I(Q;K) = 0, so NMI
    and `diverse` are 0 for both. Uniform rows have H(K|Q) = H(K) = log P: total = shared = 0.
    Collapse onto m keys (every row the same distribution on them) has
    H(K|Q) = H(K) = log m: total = shared = 1 − log m / log P > 0 whenever m < P. Identity
    attention has shared = 0, diverse = 1; each query on its own block of b keys has shared = 0,
    diverse = 1 − log b / log P. In the synthetic setting of the paper, Q⁰ = 0 gives (0, 0, 0),
    CL collapse onto a global area of P^κ_s keys gives shared = total = 1 − κ_s, and MAE's
    own-area attention gives shared ≈ 0, diverse > 0.

    For P = 1 (log P = 0) every part is 0. Rounding (order 1e-16) outside [0, 1] is clipped, so
    the identity total = shared + diverse holds to about 1e-15.

    **Arguments:** as in [`key_marginal`][].
    """
    arr, w = _prepare(A, query_weights, atol)
    log_p = math.log(arr.shape[-1])
    hk = key_entropy(arr, query_weights=w, atol=atol)
    hkq = conditional_key_entropy(arr, query_weights=w, atol=atol)
    mi = mutual_information(arr, query_weights=w, atol=atol)
    den = np.full(hk.shape, log_p)
    total = np.clip(_ratio(log_p - hkq, den), 0.0, 1.0)
    shared = np.clip(_ratio(log_p - hk, den), 0.0, 1.0)
    diverse = np.clip(_ratio(mi, den), 0.0, 1.0)
    return Sharpness(total=total, shared=shared, diverse=diverse)


def collapse_index(A, *, query_weights=None, atol: float = ROW_SUM_ATOL) -> np.ndarray:
    """1 − H(K)/log P, shape `(...)`, in [0, 1]: the `shared` part of
    [`sharpness_decomposition`][]. 0 when the queries together weight every key equally
    (uniform, identity, a partition into own-area blocks); 1 − log m / log P when all queries
    attend the same m keys; 1 for collapse onto a single key. Unlike NMI it separates uniform
    attention (0) from global collapse (> 0).

    **Arguments:** as in [`key_marginal`][].
    """
    return sharpness_decomposition(A, query_weights=query_weights, atol=atol).shared


# -- spatial distance on the patch grid ------------------------------------------------------------
def grid_positions(P: int) -> np.ndarray:
    """Row-major coordinates (row, column) of the P patches of a √P×√P grid, shape `(P, 2)`,
    float64, in patch units: patch p sits at (p // √P, p % √P).

    **Raises:** `ValueError` if `P` is not a positive perfect square.
    """
    if isinstance(P, bool) or not isinstance(P, (int, np.integer)) or P < 1:
        raise ValueError(f"P must be a positive integer, got {P!r}")
    side = math.isqrt(int(P))
    if side * side != P:
        raise ValueError(f"P must be a perfect square (a √P×√P patch grid), got P={P}")
    row, col = np.divmod(np.arange(P), side)
    return np.stack([row, col], axis=-1).astype(np.float64)


def grid_distances(P: int) -> np.ndarray:
    """Euclidean distances between the patches of a √P×√P grid, shape `(P, P)`, patch units.

    **Raises:** `ValueError` if `P` is not a positive perfect square.
    """
    pos = grid_positions(P)
    return np.sqrt(((pos[:, None, :] - pos[None, :, :]) ** 2).sum(axis=-1))


def _checked_grid(arr: np.ndarray) -> np.ndarray:
    P = arr.shape[-1]
    if math.isqrt(P) ** 2 != P:
        raise ValueError(f"A must have P = side² positions on a square patch grid for "
                         f"distances, got P={P}")
    return grid_distances(P)


def attention_distance_per_query(A, *, atol: float = ROW_SUM_ATOL) -> np.ndarray:
    """d(q) = Σ_k A[q, k] ‖x_q − x_k‖, shape `(..., P)`: the attention-weighted Euclidean
    distance from each query patch to the keys it attends, in patch units, on the row-major
    √P×√P grid of [`grid_positions`][].

    **Arguments:**

    - `A`: attention maps, shape `(..., P, P)` with P a perfect square.
    - `atol`: row-sum tolerance (see [`check_attention`][]).
    """
    arr = check_attention(A, atol=atol)
    return np.einsum("...qk,qk->...q", arr, _checked_grid(arr))


def mean_attention_distance(A, *, query_weights=None, atol: float = ROW_SUM_ATOL) -> np.ndarray:
    """Mean attention distance Σ_q p(q) Σ_k A[q, k] ‖x_q − x_k‖, shape `(...)`, in patch units.

    The "mean attention distance" of Dosovitskiy et al. (ICLR 2021, the ViT paper) and Park et
    al. (ICLR 2023), averaged over queries with weights p(q) (uniform by default). Those papers
    report it in pixels: multiply by the patch size (16 for ViT-B/16) to compare. Reference
    values: identity 0; each query on its own 2×2 block (2 + √2)/4 ≈ 0.854; uniform attention
    the mean distance between two independent uniform patches of the grid (≈ 2.008 at P = 16,
    ≈ 4.136 at P = 64). Unlike NMI it depends on the grid, not only on the labels of positions.

    **Arguments:**

    - `A`: attention maps, shape `(..., P, P)` with P a perfect square.
    - `query_weights`, `atol`: as in [`key_marginal`][].
    """
    arr, w = _prepare(A, query_weights, atol)
    return np.einsum("...q,...q->...", w, attention_distance_per_query(arr, atol=atol))
