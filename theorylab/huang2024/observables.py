"""What a run of Huang et al. (2025)'s model records: the FP correlations Φ to the own and the
global area, and the attention masses of the queries on their own area, the global area and the
masked keys, split by query patches of the global area (``gq``) and of a local area (``lq``).

The engines fill one row per recorded step with [`RECORD_COLUMNS`][] (schema
``TRAJECTORY_SCHEMA`` of [`theorylab.huang2024.trainer`][]); the functions here turn
parameters and per-query attention masses into those numbers, the same way for every engine.

The contrastive runs (``cl-montecarlo``) also record the attention on **clean** (unmasked)
images that Theorem 4.4 speaks of ([`clean_masses`][], columns [`CLEAN_COLUMNS`][]): the
masses of local-area queries on the global area and on their own area, and of global-area
queries on the global area, averaged over [`N_CLEAN`][] seeded clean images (the same images
at every step and for every run of a data setting: the Thm 4.4 checks' read-out batch).
"""

from __future__ import annotations

import math

import numpy as np

from .cl import clean_attention
from .data import AreaStructure, Batch

__all__ = ["CLEAN_COLUMNS", "N_CLEAN", "RECORD_COLUMNS", "attention_means",
           "clean_batch", "clean_masses", "masked_query_masses", "phi_summary", "view_masses"]

#: The columns that an engine's recorded row fills (the trainer adds ``step``).
RECORD_COLUMNS = (
    "loss", "loss_se", "loss_star", "excess_loss",
    "phi_own_gq", "phi_glob_gq", "phi_own_lq", "phi_glob_lq",
    "attn_own_gq", "attn_glob_gq", "attn_masked_gq",
    "attn_own_lq", "attn_glob_lq", "attn_masked_lq",
    "clean_glob_lq", "clean_own_lq", "clean_glob_gq",
    "engine",
)
#: The clean-image attention columns (``cl-montecarlo``; NaN for the MAE engines).
CLEAN_COLUMNS = ("clean_glob_lq", "clean_own_lq", "clean_glob_gq")
#: Clean images of the clean-image read-out.
N_CLEAN = 256
#: Images per chunk of the clean read-out (bounds its (images, P, P) arrays).
_CLEAN_CHUNK = 32
_KINDS = ("own", "glob", "masked")


def phi_summary(structure: AreaStructure, Phi: np.ndarray) -> dict[str, float]:
    """Mean Φ to the own area and to the global area, over (cluster, patch) pairs whose patch
    lies in the global area (``gq``) or in a local area (``lq``)."""
    feat = structure.feature_index()  # (K, P)
    glob_q = structure.labels == 0
    rows = np.broadcast_to(np.arange(structure.P), feat.shape)
    own = Phi[rows, feat]
    glob = Phi[rows, np.broadcast_to(structure.offset[:, None], feat.shape)]
    return {f"phi_{name}_{tag}": float(phi[sel].mean()) if sel.any() else math.nan
            for tag, sel in (("gq", glob_q), ("lq", ~glob_q))
            for name, phi in (("own", own), ("glob", glob))}


def attention_means(sums: dict[str, float], counts: dict[str, float]) -> dict[str, float]:
    """``{"attn_own_gq": ..., ...}`` from summed masses ``{"own_gq": Σ, ...}`` and the number
    of queries summed per tag ``{"gq": n, "lq": n}`` (NaN where no query of a kind)."""
    return {f"attn_{key}": (v / counts[key[-2:]] if counts[key[-2:]] else math.nan)
            for key, v in sums.items()}


def masked_query_masses(structure: AreaStructure, batch: Batch, own: np.ndarray,
                        glob: np.ndarray, masked: np.ndarray) -> dict[str, float]:
    """Attention masses of the masked queries of a weighted batch (per-(sample, query) arrays
    ``own``, ``glob``, ``masked``), averaged over the batch's weights and the masked query
    patches of each kind."""
    lab = structure.labels[batch.cluster]
    out = {}
    for tag, sel in (("gq", lab == 0), ("lq", lab != 0)):
        w = batch.weight[:, None] * batch.mask * sel
        tot = w.sum()
        for name, arr in zip(_KINDS, (own, glob, masked)):
            out[f"attn_{name}_{tag}"] = float(np.sum(w * arr) / tot) if tot > 0 else math.nan
    return out


def view_masses(structure: AreaStructure, cluster: np.ndarray, own: np.ndarray,
                glob: np.ndarray, masked: np.ndarray) -> dict[str, float]:
    """Attention masses of every query of both views of a CL batch (arrays (B, 2, P)),
    averaged over images, views and the query patches of each kind (a CL query is positional
    whether its patch is masked or not)."""
    lab = structure.labels[cluster]  # (B, P)
    return {f"attn_{name}_{tag}": (float(np.sum(arr * sel[:, None, :]) / (2 * sel.sum()))
                                   if sel.any() else math.nan)
            for tag, sel in (("gq", lab == 0), ("lq", lab != 0))
            for name, arr in zip(_KINDS, (own, glob, masked))}


def clean_batch(structure: AreaStructure, data) -> tuple[np.ndarray, np.ndarray]:
    """The clean read-out images of a data setting (``[data]`` section `data`): clusters
    (N_CLEAN,) and coefficients (N_CLEAN, most areas), seeded by ``data.seed`` alone (the same
    images for every run and step), coefficients uniform on [L, U] (the law of the values
    with ``z_law = "values"``)."""
    rng = np.random.default_rng(np.random.SeedSequence([data.seed, 44]))
    cl = rng.integers(0, structure.K, size=N_CLEAN)
    shape = (N_CLEAN, int(structure.n_areas.max()))
    if data.z_law == "values":
        p = None if data.z_probs is None else np.asarray(data.z_probs, dtype=np.float64)
        z = rng.choice(np.asarray(data.z_values, dtype=np.float64), size=shape, p=p)
    else:
        z = rng.uniform(data.L, data.U, size=shape)
    return cl, z


def clean_masses(structure: AreaStructure, Phi: np.ndarray, Ups: np.ndarray,
                 cluster: np.ndarray, z: np.ndarray) -> dict[str, float]:
    """The columns [`CLEAN_COLUMNS`][]: attention of local-area queries on the global area
    (``clean_glob_lq``) and on their own area (``clean_own_lq``), and of global-area queries
    on the global area (``clean_glob_gq``), on the clean images (`cluster`, `z`), averaged
    over images and query patches ([`clean_attention`][theorylab.huang2024.cl.
    clean_attention], in chunks of images)."""
    sums = np.zeros(3)
    counts = np.zeros(3)
    for start in range(0, len(cluster), _CLEAN_CHUNK):
        cl, zz = cluster[start:start + _CLEAN_CHUNK], z[start:start + _CLEAN_CHUNK]
        a = clean_attention(structure, Phi, Ups, cl, zz)
        lab = structure.labels[cl]
        loc = lab != 0
        own = np.take_along_axis(a, lab[:, :, None], axis=2)[..., 0]
        sums += [a[..., 0][loc].sum(), own[loc].sum(), a[..., 0][~loc].sum()]
        counts += [loc.sum(), loc.sum(), (~loc).sum()]
    with np.errstate(invalid="ignore", divide="ignore"):
        means = sums / counts
    return dict(zip(CLEAN_COLUMNS, (float(m) for m in means)))
