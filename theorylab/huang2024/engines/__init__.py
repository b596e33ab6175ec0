"""Engines of Huang et al. (2025)'s problem on the kernel's engine interface, one private module
per engine, every one written once against the kernel's array backend
([`theorylab.core.backend`][]): ``train.backend = "numpy"`` or ``"torch"`` with
``train.device`` ``cpu``, ``cuda`` or ``cuda:N`` run the same code, with the same gradients
(written out, no autograd), equal to rounding.

All engines hold the reduced coordinates ``(Φ, Υ)`` of Q (module [`model`][theorylab.huang2024
.model]) and take gradient-descent steps ``Φ ← Φ − η ∂L/∂Φ``, ``Υ ← Υ − η ∂L/∂Υ``, which is GD
on Q restricted to the blocks that the loss depends on (the other blocks of Q get no gradient).

- ``population-brute``: the population loss as a finite sum over every cluster, every
  coefficient vector (a discrete law) and every mask: the reference, tiny P only.
- ``population-exact``: the same sum per masked query p, reduced by exchangeability. For a
  query p, the keys q ≠ p of one *atom* (a cell of the common refinement of the clusters'
  partitions; for K = 1 an area) are exchangeable under the data and mask laws; when
  Υ[p, ·] is constant on each atom minus {p} (true at Q⁰ = 0 and kept exactly by GD, since
  then every key of the atom gets the same gradient), the loss depends on the mask only
  through the number of unmasked keys per atom, which is binomial (Bernoulli masks) or
  multivariate hypergeometric (fixed-size masks). Φ is arbitrary. The sum runs over
  Π_a (c_a + 1) counts × |z-law|^{N_k} coefficient vectors per (query, cluster); states that
  break the symmetry are refused.
- ``population-laplace``: the same exact sum at any P (Bernoulli masks, ``loss_norm`` P or
  none) through 1/Z = ∫ e^{−tZ} dt and closed-form binomial generating functions, up to a
  trapezoid rule in ln t (~1e-15).
- ``population-montecarlo``: the same loss and gradient estimated on a fresh seeded batch per
  step, with the standard error of the loss.
- ``empirical``: full-batch GD on ``n_train`` fixed seeded samples (masks fixed, or fresh per
  step with ``train.resample_masks``).
- ``cl-montecarlo`` (``model.objective = "cl"``): the InfoNCE loss of module
  [`cl`][theorylab.huang2024.cl] on a fresh seeded batch of ``mc_samples`` images (two
  independently masked views each) per step, its exact gradient, with the standard
  error of the loss over the batch's images. It records the MAE engines' columns where they
  mean something: Φ own/global, and the attention masses of every query patch of the views
  (not only masked ones: every CL query is positional); ``loss_star`` and ``excess_loss`` are
  NaN (no infimum is known).
"""

from __future__ import annotations

from ..config import ExperimentConfig
from ..data import AreaStructure
from ._base import (
    RECORD_COLUMNS,
    Evaluation,
    MAEEngine,
    Params,
    batch_lstar,
    population_lstar,
)
from ._brute import BruteEngine
from ._cl import CLMonteCarloEngine
from ._empirical import EmpiricalEngine
from ._exact import ExactEngine, ExchangeableSum
from ._laplace import LaplaceEngine
from ._montecarlo import MonteCarloEngine
from ._resources import (
    MAX_EXACT_GROUPS,
    check_resources,
    exact_log10_rows,
    exact_sum_bytes,
    memory_estimate,
)

__all__ = [
    "BruteEngine",
    "CLMonteCarloEngine",
    "ENGINE_CLASSES",
    "EmpiricalEngine",
    "Evaluation",
    "ExactEngine",
    "ExchangeableSum",
    "LaplaceEngine",
    "MAEEngine",
    "MAX_EXACT_GROUPS",
    "MonteCarloEngine",
    "Params",
    "RECORD_COLUMNS",
    "batch_lstar",
    "check_resources",
    "exact_log10_rows",
    "exact_sum_bytes",
    "make_engine",
    "memory_estimate",
    "population_lstar",
]

ENGINE_CLASSES = {
    "population-brute": BruteEngine,
    "population-exact": ExactEngine,
    "population-laplace": LaplaceEngine,
    "population-montecarlo": MonteCarloEngine,
    "empirical": EmpiricalEngine,
    "cl-montecarlo": CLMonteCarloEngine,
}


def make_engine(cfg: ExperimentConfig, structure: AreaStructure | None = None) -> MAEEngine:
    """The engine named by ``cfg.train.engine``, once [`check_resources`][] has found that it
    fits."""
    structure = check_resources(cfg, structure)
    return ENGINE_CLASSES[cfg.train.engine](cfg, structure)
