"""Engines for problems (P) and (E) of Jelassi et al. (2022); [`make_engine`][] picks one."""

from __future__ import annotations

import numpy as np

from theorylab.core.backend import Backend, get_backend

from ..config import ExperimentConfig
from ..partition import Partition
from ._base import Engine, Evaluation
from ._batched import BatchedEmpiricalEngine
from ._brute import BruteForceEngine
from ._empirical import EmpiricalEngine
from ._exchangeable import ExchangeableEngine, count_patterns, n_histograms
from ._montecarlo import MonteCarloEngine

__all__ = [
    "Engine",
    "Evaluation",
    "BruteForceEngine",
    "ExchangeableEngine",
    "MonteCarloEngine",
    "EmpiricalEngine",
    "BatchedEmpiricalEngine",
    "make_engine",
    "choose_method",
    "BRUTE_AUTO_LIMIT",
]

#: "auto" uses brute force for non-symmetric aligned states up to this many configurations.
BRUTE_AUTO_LIMIT = 2_000_000

_METHODS = {
    "brute": BruteForceEngine,
    "exchangeable": ExchangeableEngine,
    "montecarlo": MonteCarloEngine,
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
    xp = xp or get_backend(t.backend, t.dtype, t.device)
    if t.engine == "empirical":
        return EmpiricalEngine(cfg, xp, partition, wstar)
    return _METHODS[choose_method(cfg, partition)](cfg, xp, partition, wstar)
