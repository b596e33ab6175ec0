"""Up-front limits of the engines of Huang et al. (2025): the device, the enumeration counts
and the memory of a run, checked before any array of the run is allocated.

[`check_resources`][] runs when [`make_engine`][theorylab.huang2024.engines.make_engine] builds
an engine. It refuses, with one line ``<field>: ...`` that names the field to change, the
estimate and what would fit:

- a CUDA device that this machine does not have (``train.device``);
- the parameters and area labels alone (Φ is P×F with F = K·N features, Υ is P×P), field
  ``data.P`` or ``data.K``;
- an enumeration beyond ``train.max_configs`` (``population-brute``: every mask and coefficient
  vector; ``population-exact``: Π_a (c_a + 1) unmasked-key counts per query, counted in logs
  before any table is built, and at most [`MAX_EXACT_GROUPS`][] atoms per query), naming
  ``population-laplace``, which sums the same population loss at any P;
- the engine's memory (batch, enumeration tables, working arrays) against the free memory
  ([`check_memory`][theorylab.core.resources.check_memory]), field ``train.mc_samples``,
  ``train.n_train`` or ``train.engine``; ``population-exact`` counts the tables and working
  arrays of its sum ([`exact_sum_bytes`][]), on a CUDA device against that device's free
  memory (field ``train.device``).

The estimates are upper estimates of the peak memory in bytes (float64), from the arrays the
engines hold: they count every array of a step's working set, with a factor for the copies
that numpy and autograd keep.
"""

from __future__ import annotations

import math

import numpy as np

from theorylab.core.backend import check_device
from theorylab.core.resources import check_memory

from ..config import ExperimentConfig
from ..data import AreaStructure
from ._base import batch_chunk_budget
from ._exact import chunk_elements

__all__ = ["MAX_EXACT_GROUPS", "WORKING_ARRAYS", "check_resources", "exact_log10_rows",
           "exact_sum_bytes", "memory_estimate"]

#: ``population-exact`` enumerates the unmasked-key counts of a query with one array axis per
#: atom (numpy's broadcasting handles at most 32 axes).
MAX_EXACT_GROUPS = 32

_F8 = 8  # bytes of a float64 or int64
#: Copies of Φ and Υ alive at once: parameters, gradients, the next parameters, the checkpoint
#: and final-state arrays, and the Evaluation's temporaries.
_PARAM_COPIES = 6
#: Arrays of a (rows, P, P) shape alive at once in one evaluation of a batch chunk (logits,
#: exponentials, attention, their products and the gradient's terms).
_PP_ARRAYS = 14


def _sizes(cfg: ExperimentConfig) -> tuple[int, int, int, int]:
    """(P, K, N areas per cluster, F features) from the config's numbers alone."""
    d = cfg.data
    P, K = d.P, d.K
    N = 1 + (P - d.global_size) // d.local_size
    return P, K, N, K * N


def _base_bytes(cfg: ExperimentConfig) -> float:
    P, K, _N, F = _sizes(cfg)
    return _F8 * (_PARAM_COPIES * (P * F + P * P) + 6 * K * P)


def _chunk_bytes(cfg: ExperimentConfig) -> float:
    """The working set of one chunk of [`MAEEngine.eval_batch`][theorylab.huang2024.engines.
    MAEEngine.eval_batch] (its rows are chosen from the same budget)."""
    P, _K, N, F = _sizes(cfg)
    rows = max(1, batch_chunk_budget(cfg.train.device) // max(1, P * P * max(F, 4)))
    return _F8 * rows * (_PP_ARRAYS * P * P + 2 * P * F + 8 * P * N)


def _per_sample_bytes(cfg: ExperimentConfig) -> float:
    """Bytes a drawn sample costs: its cluster, coefficients and mask with the draw's
    temporaries, and the per-query attention masses kept for the whole batch."""
    P, _K, N, _F = _sizes(cfg)
    return 3 * _F8 * N + 2 * _F8 + (_F8 + 1) * P + 6 * _F8 * P


def _cl_bytes(cfg: ExperimentConfig) -> float:
    """``cl-montecarlo``: one unchunked pass over (B, 2 views, P, P) kept for the backward, and the
    similarities of every image with its n negatives (the gathered (B, n + 1, N)
    representations, per anchor view)."""
    P, _K, N, _F = _sizes(cfg)
    B = cfg.train.mc_samples
    sides = 2 if cfg.model.cl_symmetric else 1
    negatives = B * (cfg.cl_negatives + 1) * _F8 * (3 * N + 6) * sides
    return B * (_F8 * 2 * P * P * 16 + _F8 * 2 * P * N * 8 + 2 * _per_sample_bytes(cfg)) \
        + negatives


def _nodes(cfg: ExperimentConfig) -> int:
    """The number of coefficient values the exact engines sum over."""
    return cfg.train.z_nodes if cfg.data.z_law == "uniform" else len(cfg.data.z_values)


def _brute_log10(cfg: ExperimentConfig, structure: AreaStructure) -> float:
    """log10 of the configurations ``population-brute`` enumerates (clusters × coefficient
    vectors × masks)."""
    P = structure.P
    masks = (P * math.log10(2) if cfg.model.mask == "bernoulli"
             else (math.lgamma(P + 1) - math.lgamma(cfg.mask_size + 1)
                   - math.lgamma(P - cfg.mask_size + 1)) / math.log(10))
    return _log10_sum_pow(_nodes(cfg), structure.n_areas) + masks


def _atom_rows(structure: AreaStructure) -> tuple[np.ndarray, np.ndarray]:
    """(the size of each atom, log10 of the count rows Π_a (c_a + 1) of a query of each atom,
    whose own atom has one key fewer)."""
    size = np.bincount(structure.atoms()[0]).astype(np.float64)
    return size, np.sum(np.log10(size + 1.0)) - np.log10(size + 1.0) + np.log10(size)


def exact_log10_rows(structure: AreaStructure) -> tuple[float, int]:
    """(log10 of Σ_p Π_a (c_a + 1), the most atoms of any query): the rows of unmasked-key
    counts that ``population-exact`` enumerates, computed in logs without building them."""
    size, per_atom = _atom_rows(structure)
    log_rows = float(np.log10(np.sum(size * 10.0 ** (per_atom - per_atom.max())))
                     + per_atom.max())
    groups = int(len(size) - np.min(size == 1)) if len(size) else 0
    return log_rows, groups


#: Working arrays of the largest size counted for one chunk of ``population-exact``: about 25
#: are alive at once, and the allocator's slack adds up to about 3 more (the peak resident
#: memory of two steps at P = 256 measured 245–290 MB against 272 MB counted with 25).
WORKING_ARRAYS = 30


def exact_sum_bytes(cfg: ExperimentConfig, structure: AreaStructure) -> float:
    """Bytes the sum of ``population-exact`` holds on its device: the count and coefficient
    tables of every (cluster, atom) and one chunk's working arrays (``WORKING_ARRAYS`` of the
    largest: ``chunk_elements`` of the sum, or one query's (count rows × coefficient vectors ×
    atoms) when that is larger)."""
    chunk = chunk_elements(cfg.train.device)
    size, per_atom = _atom_rows(structure)
    groups = len(size)
    _P, K, N, _F = _sizes(cfg)
    log_cz = N * math.log10(max(_nodes(cfg), 1))
    log_query = float(per_atom.max()) + log_cz + math.log10(max(groups, 1))
    tables = K * float(np.sum(10.0 ** np.minimum(per_atom + math.log10(3 * groups + 4), 300.0)))
    return _F8 * (WORKING_ARRAYS * max(float(chunk), 10.0 ** min(log_query, 300.0)) + tables
                  + K * groups * 10.0 ** min(log_cz, 300.0) * 4)


def _log10_sum_pow(nz: int, exponents) -> float:
    """log10 of Σ_k nz^{N_k} (the coefficient vectors over the clusters), without overflow."""
    e = np.asarray(exponents, dtype=np.float64) * math.log10(max(nz, 1))
    return float(e.max() + np.log10(np.sum(10.0 ** (e - e.max()))))


def _count(log10: float) -> str:
    return f"{10 ** log10:.0f}" if log10 < 15 else f"~10^{log10:.0f}"


_LAPLACE = ("use population-laplace (the same exact population sum at any P; Bernoulli masks, "
            "loss_norm P or none) or population-montecarlo")


def memory_estimate(cfg: ExperimentConfig, structure: AreaStructure) -> tuple[float, dict]:
    """``(bytes, field=..., what=..., hint=...)`` of the engine ``cfg.train.engine`` for
    [`check_memory`][theorylab.core.resources.check_memory]: an upper estimate of its peak
    memory (see the module docstring)."""
    t = cfg.train
    P, K, N, F = _sizes(cfg)
    base = _base_bytes(cfg)
    engine = t.engine
    if engine in ("population-montecarlo", "empirical"):
        B = t.mc_samples if engine == "population-montecarlo" else t.n_train
        name = "mc_samples" if engine == "population-montecarlo" else "n_train"
        need = base + B * _per_sample_bytes(cfg) + _chunk_bytes(cfg)
        return need, {"field": f"train.{name}", "what": (
            f"{engine} ({B} samples of P = {P} patches)"),
            "hint": f"lower train.{name}" + (
                " (Monte Carlo needs no more samples than its standard error asks)"
                if name == "mc_samples" else "")}
    if engine == "cl-montecarlo":
        need = base + _cl_bytes(cfg)
        return need, {"field": "train.mc_samples", "what": (
            f"cl-montecarlo ({t.mc_samples} images, two views of P = {P} patches, "
            f"{cfg.cl_negatives} negatives each, one autograd graph)"),
            "hint": "lower train.mc_samples or model.cl_negatives"}
    nz = _nodes(cfg)
    if engine == "population-brute":
        n = 10.0 ** min(300.0, _brute_log10(cfg, structure))
        need = (base + 2 * _F8 * 2.0 ** min(P, 900) * P
                + n * (2 * (2 * _F8 + _F8 * N + P) + 6 * _F8 * P) + _chunk_bytes(cfg))
        return need, {"field": "train.engine", "what": (
            f"population-brute ({n:.3g} configurations of P = {P} patches)"),
            "hint": "use population-exact or population-laplace"}
    if engine == "population-exact":
        log_rows, groups = exact_log10_rows(structure)
        rows = 10.0 ** min(300.0, log_rows)
        # the count tables (int64 per atom and a probability per row) with their build-time
        # temporaries, the coefficient tables and one query's (counts, coefficients, atoms)
        # working arrays
        cz = 10.0 ** min(300.0, N * math.log10(max(nz, 1)))
        need = (base + rows * _F8 * (10 * groups + 2) + K * cz * _F8 * (3 * N + 1)
                + rows * cz * _F8 * (20 * groups + 6 * N) / P)
        if t.device == "cpu":
            need += exact_sum_bytes(cfg, structure)
        return need, {"field": "train.engine", "what": (
            f"population-exact ({_count(log_rows)} count rows × {cz:.3g} coefficient "
            "vectors)"),
            "hint": _LAPLACE}
    # population-laplace: its t-chunks are bounded; per evaluation the query types' keys and
    # logits, the atom values of Υ and P×P gradient scatters
    n_atoms = len(np.bincount(structure.atoms()[0]))
    chunk = 2_000_000 * _F8 * 30
    need = (base + _F8 * (P * (N + n_atoms + 2) + 4 * P * n_atoms * max(nz, 1) + 4 * P * P)
            + chunk)
    return need, {"field": "data.P", "what": (
        f"population-laplace (P = {P} patches, {n_atoms} atoms, {nz} coefficient nodes)"),
        "hint": "lower data.P"}


def check_resources(cfg: ExperimentConfig,
                    structure: AreaStructure | None = None) -> AreaStructure:
    """Refuse a run that this machine cannot hold or an engine cannot represent (see the
    module docstring), before anything of the run is allocated; return the area structure
    (built once the labels are known to fit)."""
    t = cfg.train
    if t.backend == "torch":
        check_device(t.device, "train.")
    P, K, N, F = _sizes(cfg)
    check_memory(_base_bytes(cfg), field="data.K" if K * N > P else "data.P", what=(
        f"the parameters Φ ({P}×{F}) and Υ ({P}×{P}) with the area labels of {K} "
        f"cluster(s)"), hint="lower data.P or data.K")
    structure = structure or cfg.data.make_structure()
    if t.engine == "population-brute":
        log_total = _brute_log10(cfg, structure)
        if log_total > math.log10(t.max_configs):
            raise ValueError(f"train.max_configs: brute force needs {_count(log_total)} "
                             f"configurations (> {t.max_configs}); use population-exact, "
                             "population-laplace or population-montecarlo")
    if t.engine == "population-exact":
        log_rows, groups = exact_log10_rows(structure)
        log_total = log_rows + _log10_sum_pow(_nodes(cfg), structure.n_areas)
        if groups > MAX_EXACT_GROUPS:
            raise ValueError(f"data.P: population-exact enumerates the unmasked keys of up to "
                             f"{groups} atoms per query, one array axis each (at most "
                             f"{MAX_EXACT_GROUPS}); {_LAPLACE}")
        if log_total > math.log10(t.max_configs):
            raise ValueError(f"train.max_configs: the exact sum enumerates {_count(log_total)} "
                             f"configurations (> {t.max_configs}); {_LAPLACE}")
    need, info = memory_estimate(cfg, structure)
    check_memory(need, **info)
    if t.engine == "population-exact" and t.device != "cpu":
        from theorylab.core.backend import get_backend

        dev_need = exact_sum_bytes(cfg, structure)
        check_memory(dev_need, field="train.device", what=(
            f"population-exact on {t.device} (its count tables and working tensors)"),
            hint=_LAPLACE, free=get_backend("torch", device=t.device).free_bytes())
    return structure
