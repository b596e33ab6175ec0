"""Engines for problems (P) and (E) of Jelassi et al. (2022); [`make_engine`][] picks one."""

from __future__ import annotations

import numpy as np

from theorylab.core.backend import Backend, get_backend
from theorylab.core.resources import check_memory

from ..config import ExperimentConfig
from ..partition import Partition
from ._base import Engine, Evaluation
from ._batched import BatchedEmpiricalEngine
from ._brute import BruteForceEngine
from ._empirical import EmpiricalEngine
from ._exchangeable import ExchangeableEngine, count_patterns, n_histograms
from ._montecarlo import MonteCarloEngine
from ._reduced import ReducedEngine, reduced_start

__all__ = [
    "Engine",
    "Evaluation",
    "BruteForceEngine",
    "ExchangeableEngine",
    "MonteCarloEngine",
    "ReducedEngine",
    "reduced_start",
    "EmpiricalEngine",
    "BatchedEmpiricalEngine",
    "make_engine",
    "choose_method",
    "BRUTE_AUTO_LIMIT",
    "memory_estimate",
]

#: "auto" uses brute force for non-symmetric aligned states up to this many configurations.
BRUTE_AUTO_LIMIT = 2_000_000

#: The engine of each population method, and of the empirical problem.
_METHODS = {
    "brute": BruteForceEngine,
    "exchangeable": ExchangeableEngine,
    "montecarlo": MonteCarloEngine,
    "empirical": EmpiricalEngine,
}


def choose_method(cfg: ExperimentConfig, partition: Partition) -> str:
    """The population method that ``method="auto"`` resolves to.

    Exact whenever possible: partition-symmetric aligned starts use the exchangeable engine (GD
    keeps the symmetry, Lemmas 4.1–4.2), other aligned starts brute force when small enough,
    everything else (v with a component orthogonal to w*, large D) Monte Carlo.
    """
    t = cfg.train
    if t.method != "auto":
        return t.method
    if t.init_v != "aligned":
        return "montecarlo"
    D, C, L = partition.D, partition.C, partition.L
    if t.offdiag0_std == 0:
        P = count_patterns(C).shape[0]
        if n_histograms(L - 1, P) <= t.max_configs:
            return "exchangeable"
    n_brute = 2 * L * 3 ** (D - C)
    if n_brute <= min(BRUTE_AUTO_LIMIT, t.max_configs):
        return "brute"
    return "montecarlo"


def make_engine(
    cfg: ExperimentConfig,
    partition: Partition,
    wstar: np.ndarray,
    xp: Backend | None = None,
) -> Engine:
    """Build the engine that ``cfg.train`` asks for (``engine`` and ``method``)."""
    t = cfg.train
    method = "empirical" if t.engine == "empirical" else choose_method(cfg, partition)
    need, info = memory_estimate(cfg, partition, method)
    check_memory(need, **info)
    xp = xp or get_backend(t.backend, t.dtype, t.device, section="train.")
    return _METHODS[method](cfg, xp, partition, wstar)


def _count(n: int) -> str:
    """``n`` in full, or ``~10^k`` once it has more than 15 digits (a message stays readable)."""
    digits = len(str(n))
    return str(n) if digits <= 15 else f"~10^{digits - 1}"


def memory_estimate(cfg: ExperimentConfig, partition: Partition, method: str):
    """``(bytes, field=..., what=..., hint=...)`` for [`check_memory`][theorylab.core.resources.
    check_memory]: an upper estimate of the host memory the engine holds when it is built.

    Measured peaks (numpy, float64, tracemalloc; ``tests/test_faults_cli.py`` checks
    peak ≤ estimate ≤ 2·peak for brute force at D = 12): brute force 94 MB at D = 12, C = 2
    (estimate 119 MB) and 1.96 GB at D = 13, C = 1 (estimate 2.31 GB); exchangeable 83 MB at
    D = 40, C = 4 (estimate 125 MB) and 1.96 GB at D = 64, C = 4 (estimate 2.50 GB)."""
    t = cfg.train
    D, C, L = partition.D, partition.C, partition.L
    item = 4 if t.dtype == "float32" else 8
    if method == "empirical":
        n = t.n_train + t.n_test
        # X of train and test in the run's dtype, and one float64 temporary of the same size
        # while a sample is drawn
        need = n * D * cfg.data.d * (item + 8)
        return need, {"field": "train.n_train", "what": (
            f"the empirical engine (N + N_test = {n} samples of D×d = {D}×{cfg.data.d})"),
            "hint": "lower train.n_train, train.n_test or data.d, or use engine = 'population'"}
    if method == "brute":
        n_grid = 3 ** (D - C)
        n = 2 * L * n_grid
        need = n * D * 10 + n * 24 + n_grid * (40 + 25 * (D - C))
        return need, {"field": "train.method", "what": (
            f"brute force ({_count(n)} configurations of D = {D} patches)"),
            "hint": "use method = 'exchangeable' (partition-symmetric start) or 'montecarlo'"}
    if method == "exchangeable":
        P = count_patterns(C).shape[0]
        n = n_histograms(L - 1, P)
        # the table (int8 patterns, two float64 weights per row) and, whatever the size, the
        # smaller tables it is built from and a few chunk-sized work arrays (measured with
        # tracemalloc: ≤ 75 MB at D = 24–64, C = 2–4)
        need = n * (P + 16) + 100e6
        return need, {"field": "train.method", "what": (
            f"the exchangeable engine ({_count(n)} histograms of {P} patterns)"),
            "hint": "use method = 'montecarlo' or a smaller data.D"}
    # Monte Carlo draws its samples chunk by chunk: its resident memory is O(D²) + one chunk,
    # unless the numpy backend keeps the draws (mc_resample = false; torch redraws them from the
    # same seed when they do not fit): then c and z, M×D values each, and y
    if t.mc_resample or t.backend != "numpy":
        return 0.0, {"field": "train.mc_samples", "what": "Monte Carlo", "hint": ""}
    M = t.mc_samples
    return M * (2 * D + 1) * item, {"field": "train.mc_samples", "what": (
        f"Monte Carlo with fixed draws (mc_resample = false: {M} draws of D = {D} patches "
        "kept)"), "hint": "lower train.mc_samples or set train.mc_resample = true"}
