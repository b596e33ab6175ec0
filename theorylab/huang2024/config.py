"""Frozen, validated configuration of a Huang et al. (2025) MAE run.

Three sections mirror a TOML file: ``[data]`` (Def. 2.1: patches, clusters, areas,
coefficients), ``[model]`` (Def. 2.4 and Def. 2.5: the attention, the masking, the loss) and
``[train]`` (Thm 4.1's gradient descent); ``[experiment] paper = "huang2024"`` is accepted.
Every invalid value raises a one-line ``ValueError`` that starts with the field's name, e.g.
``data.P: must be a perfect square for contiguous areas (got 10)``. Every reconstruction
choice (docs/papers/huang2024.md) is a field here.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from theorylab.core.config import (
    EXPERIMENT,
    SectionedConfig,
    check_placement,
    read_toml,
    sections_from_tables,
    tables_to_toml,
)
from theorylab.core.config import check_bool as _bool
from theorylab.core.config import check_choice as _choice
from theorylab.core.config import check_fields as _fields
from theorylab.core.config import check_float as _float
from theorylab.core.config import check_int as _int
from theorylab.core.config import frozen_set as _set
from theorylab.core.configdoc import config_markdown, one_of, run_fields_allowed
from theorylab.core.flow import check_flow_fields

from .data import AreaStructure, contiguous_labels, information_gap, random_labels, sizes_for_gap

#: The name of this paper in ``[experiment] paper = ...``.
PAPER_NAME = "huang2024"

__all__ = [
    "PAPER_NAME",
    "DataConfig",
    "ModelConfig",
    "TrainConfig",
    "ExperimentConfig",
    "config_from_dict",
    "config_to_toml",
    "load_config",
]

AREAS = ("random", "contiguous")
Z_LAWS = ("uniform", "values")
MASKS = ("bernoulli", "fixed")
LOSS_NORMS = ("P", "mask", "none")
ENGINES = ("population-brute", "population-exact", "population-laplace", "population-montecarlo",
           "empirical", "cl-montecarlo", "population-reduced")
OBJECTIVES = ("mae", "cl")
CL_POOLINGS = ("mean",)
#: The engines of each objective.
CL_ENGINES = ("cl-montecarlo",)
INITS = ("zero", "gaussian")
RECORD = ("log", "linear", "all")
DTYPES = ("float64",)
#: Engines whose gradient changes from step to step (fresh draws): they have no gradient flow.
STOCHASTIC_ENGINES = ("population-montecarlo", "cl-montecarlo")
#: The engines that sum over the coefficient law (a uniform law needs ``train.z_nodes``).
EXACT_ENGINES = ("population-brute", "population-exact", "population-laplace",
                 "population-reduced")
#: The most Gauss–Legendre nodes of ``train.z_nodes`` (1.5 s to compute 256 on a shared CPU).
MAX_Z_NODES = 256
#: Hard upper bounds of sizes and magnitudes: field → (highest, reason). No run of the engines
#: comes near them (the memory check refuses far smaller sizes with its estimate); a larger
#: value is a typo (``P = 1e300``) refused in one line instead of an overflow, a hang or a crash.
#:
#: - ``data.P``: Υ is P×P, 8·10¹⁸ bytes of float64 at P = 10⁹ (the memory check refuses far
#:   smaller P with its estimate; this bound keeps the estimate itself finite).
#: - ``data.L``, ``data.U``, ``data.z_values``: a coefficient multiplies a patch; the loss holds
#:   z² and E[z²] = (U³ − L³)/(3(U − L)) overflows float64 for U near 10¹⁵⁰.
#: - ``train.steps``: one step takes at least a millisecond: 10⁹ steps are over 11 days.
#: - ``train.n_records``: each recorded step is a row of trajectory.csv (the schedule is held
#:   in memory: 10⁹ rows are 8 GB).
#: - ``train.threads``: far beyond any machine's cores; the run caps it at the usable cores.
LIMITS = {
    "data.P": (1_000_000_000, "Υ is P×P"),
    "data.coefficient": (1e6, "a coefficient multiplies a patch and the loss holds z²"),
    "train.steps": (1_000_000_000, "a step takes at least a millisecond"),
    "train.n_records": (1_000_000, "each recorded step is a row of trajectory.csv"),
    "train.threads": (1024, "far beyond any machine's cores; capped at the usable cores"),
}
#: The finest trapezoid step of ``population-laplace`` (its nodes grow like 1/step; 0.2 is
#: already at rounding error against the enumeration).
MIN_LAPLACE_STEP = 0.05
#: The smallest CL temperature τ: the logits are cosine similarities over τ, so the loss grows
#: like 1/τ; below 10⁻⁶ the loss and its spread leave any meaningful range (and overflow).
MIN_CL_TEMPERATURE = 1e-6


def _bounded(name: str, value: Any, lo: int) -> int:
    """An integer >= ``lo`` and within its [`LIMITS`][] (the reason when it is exceeded)."""
    hi, why = LIMITS[name]
    _int(name, value, lo=lo)
    return _int(name, value, hi=hi, why=why)


@dataclass(frozen=True)
class DataConfig:
    """Data model of Huang et al. (2025), Def. 2.1 (areas FOUND; sizes, coefficient law and
    coordinates RECONSTRUCTED).

    **Arguments:**

    - `P`: number of patches (>= 2).
    - `K`: number of clusters (equally likely; RECONSTRUCTED).
    - `areas`: ``"random"`` (a seeded random partition per cluster) or ``"contiguous"`` (runs of
      a boustrophedon path on a √P×√P grid, one of the square's 8 symmetries per cluster).
    - `C1`: global area size; ``P − C1`` must be a multiple of `C`, and ``C <= C1``; default
      ``round(P^κ_s)``.
    - `C`: local area size; default ``round(P^κ_c)``.
    - `kappa_s`: size exponent of the global area, used when `C1` is not given (size
      ``round(P^κ_s)``; RECONSTRUCTED).
    - `kappa_c`: size exponent of the local areas, used when `C` is not given (size
      ``round(P^κ_c)``; RECONSTRUCTED).
    - `Delta`: the information gap Δ = 2κ_s − κ_c − 1 to hold (RECONSTRUCTED formula), instead
      of one of the two sizes: with `C` or `kappa_c` the global size C1 is the admissible one
      (C ≤ C1 < P, C dividing P − C1) whose Δ is closest to `Delta`; with `C1` or `kappa_s`
      the local size C is. The realised Δ of the integer sizes is ``delta`` and its rounding
      ``delta_rounding`` = realised − `Delta` (recorded in every table that holds Δ fixed).
    - `z_law`: ``"uniform"`` on [L, U] or ``"values"`` (the finite list `z_values` with
      probabilities `z_probs`): the law of each area's coefficient z_j (i.i.d. across areas;
      RECONSTRUCTED, the paper allows any law on the support).
    - `z_values`: the values of z for ``z_law = "values"`` (each in [L, U]).
    - `z_probs`: their probabilities; default uniform.
    - `L`, `U`: the support [L, U] of z, 0 < L <= U.
    - `seed`: seeds random areas.
    """

    P: int = 16
    K: int = 1
    areas: str = "random"
    C1: int | None = None
    C: int | None = None
    kappa_s: float | None = None
    kappa_c: float | None = None
    Delta: float | None = None
    z_law: str = "uniform"
    L: float = 0.5
    U: float = 1.5
    z_values: list | None = None
    z_probs: list | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        P = _bounded("data.P", self.P, lo=2)
        _set(self, "P", P)
        _set(self, "K", _int("data.K", self.K, lo=1))
        _choice("data.areas", self.areas, AREAS)
        if self.areas == "contiguous":
            if math.isqrt(P) ** 2 != P:
                raise ValueError(f"data.P: must be a perfect square for contiguous areas (got {P})")
            if self.K > 8:
                raise ValueError(f"data.K: contiguous areas support at most 8 clusters (the "
                                 f"square's symmetries; got {self.K})")
        _fields(self, "data", _float, ("kappa_s", "kappa_c"), optional=True, lo=0.0, hi=1.0)
        if self.Delta is not None:
            _set(self, "Delta", _float("data.Delta", self.Delta, lo=-1.0, hi=1.0))
            given = [n for n in ("C1", "kappa_s", "C", "kappa_c") if getattr(self, n) is not None]
            if len(given) != 1:
                raise ValueError("data.Delta: give it with exactly one of C, kappa_c (the local "
                                 f"size), C1, kappa_s (the global size); got {given or 'none'}")
        else:
            if self.C1 is None and self.kappa_s is None:
                raise ValueError("data.C1: give the global area size C1 or kappa_s (or Delta "
                                 "with a local size)")
            if self.C is None and self.kappa_c is None:
                raise ValueError("data.C: give the local area size C or kappa_c (or Delta with "
                                 "a global size)")
        for size, kappa in (("C1", "kappa_s"), ("C", "kappa_c")):
            if getattr(self, size) is not None and getattr(self, kappa) is not None:
                raise ValueError(f"data.{size}: give {size} or {kappa}, not both")
            _fields(self, "data", _int, (size,), optional=True, lo=1, hi=P)
        C1, C = self.global_size, self.local_size
        if C1 >= P:
            raise ValueError(f"data.C1: the global area must leave room for local areas "
                             f"(got C1={C1} >= P={P})")
        if C > C1:
            raise ValueError(f"data.C: local areas must not exceed the global area (got C={C} "
                             f"> C1={C1})")
        if (P - C1) % C != 0:
            raise ValueError(f"data.C: must divide P − C1 = {P - C1} (got C={C})")
        _choice("data.z_law", self.z_law, Z_LAWS)
        zmax, zwhy = LIMITS["data.coefficient"]
        _set(self, "L", _float("data.L", self.L, lo=0.0, lo_open=True, hi=zmax, why=zwhy))
        _set(self, "U", _float("data.U", self.U, lo=self.L))
        _set(self, "U", _float("data.U", self.U, hi=zmax, why=zwhy))
        if self.z_law == "values":
            vals = self.z_values
            if not isinstance(vals, (list, tuple)) or not vals:
                raise ValueError(f"data.z_values: a non-empty list is required with "
                                 f"z_law = 'values' (got {vals!r})")
            vals = [_float("data.z_values", v, lo=self.L, hi=self.U) for v in vals]
            _set(self, "z_values", vals)
            if self.z_probs is not None:
                pr = self.z_probs
                if not isinstance(pr, (list, tuple)) or len(pr) != len(vals):
                    raise ValueError(f"data.z_probs: must be a list of {len(vals)} "
                                     f"probabilities (got {pr!r})")
                pr = [_float("data.z_probs", v, lo=0.0) for v in pr]
                if abs(sum(pr) - 1.0) > 1e-12:
                    raise ValueError(f"data.z_probs: must sum to 1 (got {sum(pr)!r})")
                _set(self, "z_probs", pr)
        elif self.z_values is not None or self.z_probs is not None:
            name = "data.z_values" if self.z_values is not None else "data.z_probs"
            raise ValueError(f"{name}: only used with z_law = 'values'")
        _set(self, "seed", _int("data.seed", self.seed, lo=0))

    def _given(self, size: int | None, kappa: float | None) -> int | None:
        """An area size given as itself or by its exponent κ (round(P^κ)); None if neither."""
        if size is not None or kappa is None:
            return size
        return max(1, int(round(self.P ** kappa)))

    def _sizes(self) -> tuple[int, int]:
        """(C1, C): the sizes given, the other one from ``Delta`` when one is not."""
        C1, C = self._given(self.C1, self.kappa_s), self._given(self.C, self.kappa_c)
        if C1 is None or C is None:
            return sizes_for_gap(self.P, self.Delta, C=C, C1=C1)
        return C1, C

    @property
    def global_size(self) -> int:
        return self._sizes()[0]

    @property
    def local_size(self) -> int:
        return self._sizes()[1]

    @property
    def delta(self) -> float:
        """The information gap Δ = 2κ_s − κ_c − 1 of the actual sizes, κ = ln(size)/ln P
        (Huang et al. (2025), Thm 4.1; the formula is RECONSTRUCTED)."""
        return information_gap(self.P, self.global_size, self.local_size)

    @property
    def delta_rounding(self) -> float:
        """Realised Δ − the `Delta` asked for (0 when no Δ was asked for)."""
        return 0.0 if self.Delta is None else self.delta - self.Delta

    def make_structure(self) -> AreaStructure:
        C1, C = self.global_size, self.local_size
        if self.areas == "contiguous":
            return AreaStructure(contiguous_labels(self.P, C1, C, self.K))
        return AreaStructure(random_labels(self.P, C1, C, self.K, self.seed))


@dataclass(frozen=True)
class ModelConfig:
    """The MAE model of Huang et al. (2025), Def. 2.4 and Def. 2.5, and the CL model of Def. 2.6
    and Def. 2.7 (RECONSTRUCTED).

    **Arguments:**

    - `objective`: ``"mae"`` (masked reconstruction, Definition 2.4) or ``"cl"`` (the InfoNCE
      objective of Theorem 4.4 on two views by independent masking, Definition 2.7;
      RECONSTRUCTED, UNCERTAIN augmentation, notes §3; the mask fields below make the views).

    - `mask`: ``"bernoulli"`` (each patch masked independently with probability `gamma`) or
      ``"fixed"`` (a uniform set of `mask_size` patches, default ``round(gamma·P)``).
    - `gamma`: masking probability.
    - `mask_size`: the number of masked patches of a ``"fixed"`` mask; default
      ``round(gamma·P)``.
    - `mask_keys`: masked keys stay in the softmax (with their positional logit only).
    - `loss_norm`: ``"P"`` (the sum over masked patches divided by P), ``"mask"`` (by the
      number of masked patches) or ``"none"`` (MAE only).
    - `cl_temperature`: the InfoNCE temperature τ of Theorem 4.4's objective (CL only;
      RECONSTRUCTED, UNCERTAIN value, notes §3.3); default ``0.1``.
    - `cl_negatives`: negatives per positive pair: the second views of the next n images of
      the batch (other samples of any cluster; CL only; RECONSTRUCTED, UNCERTAIN number,
      notes §3.3; a review says "enough" negatives are needed); default ``mc_samples − 1``.
    - `cl_pooling`: the representation f of a view: ``"mean"`` of the patch outputs,
      f = (1/P) Σ_p F_p, Definition 2.6 (CL only; RECONSTRUCTED, UNCERTAIN: a CLS-like
      query or a head are the alternatives, notes §3.1); default ``mean``.
    - `cl_symmetric`: the InfoNCE loss averaged over both anchor views (symmetric under
      swapping the views) instead of view 1 as the only anchor (CL only; RECONSTRUCTED,
      UNCERTAIN).
    """

    objective: str = "mae"
    cl_temperature: float | None = None
    cl_negatives: int | None = None
    cl_pooling: str | None = None
    cl_symmetric: bool = True
    mask: str = "bernoulli"
    gamma: float = 0.5
    mask_size: int | None = None
    mask_keys: bool = True
    loss_norm: str = "P"

    def __post_init__(self) -> None:
        _choice("model.objective", self.objective, OBJECTIVES)
        cl = self.objective == "cl"
        for name in ("cl_temperature", "cl_negatives", "cl_pooling"):
            if getattr(self, name) is not None and not cl:
                raise ValueError(f"model.{name}: only used with objective = 'cl'")
        if self.cl_temperature is not None:
            _set(self, "cl_temperature", _float("model.cl_temperature", self.cl_temperature,
                                                lo=0.0, lo_open=True))
            _set(self, "cl_temperature", _float(
                "model.cl_temperature", self.cl_temperature, lo=MIN_CL_TEMPERATURE,
                why="the loss grows like 1/τ and leaves any meaningful range below that"))
        _fields(self, "model", _int, ("cl_negatives",), optional=True, lo=1)
        if self.cl_pooling is not None:
            _choice("model.cl_pooling", self.cl_pooling, CL_POOLINGS)
        _bool("model.cl_symmetric", self.cl_symmetric)
        if not self.cl_symmetric and not cl:
            raise ValueError("model.cl_symmetric: only used with objective = 'cl'")
        _choice("model.mask", self.mask, MASKS)
        _set(self, "gamma", _float("model.gamma", self.gamma, lo=0.0, hi=1.0, lo_open=True))
        if self.mask_size is not None:
            if self.mask != "fixed":
                raise ValueError("model.mask_size: only used with mask = 'fixed'")
            _set(self, "mask_size", _int("model.mask_size", self.mask_size, lo=1))
        _bool("model.mask_keys", self.mask_keys)
        _choice("model.loss_norm", self.loss_norm, LOSS_NORMS)

    @property
    def temperature(self) -> float:
        """τ of the CL objective (default 0.1)."""
        return 0.1 if self.cl_temperature is None else self.cl_temperature

    @property
    def pooling(self) -> str:
        """The CL pooling (default mean)."""
        return "mean" if self.cl_pooling is None else self.cl_pooling


@dataclass(frozen=True)
class TrainConfig:
    """Full-batch gradient descent on the MAE loss (Huang et al. (2025), Thm 4.1: GD, FOUND;
    the initialisation Q⁰ = 0 is RECONSTRUCTED).

    **Arguments:**

    - `engine`: ``"population-brute"`` (every mask and coefficient enumerated; tiny P),
      ``"population-exact"`` (the same sum reduced by exchangeability), ``"population-montecarlo"``
      (fresh seeded batches of `mc_samples`), ``"empirical"`` (`n_train` fixed samples),
      ``"population-laplace"`` (the exact sum at any P through 1/Z = ∫e^{−tZ}dt; Bernoulli
      masks, ``loss_norm`` P or none), ``"cl-montecarlo"`` (the CL objective on a fresh seeded
      batch of `mc_samples` images, two views each, per step),
      ``population-reduced`` (the population GD on the seven numbers per query class that the
      data law's symmetries leave free, at any P; one cluster, Bernoulli masks, Q⁰ = 0,
      loss_norm P or none; the other areas in mean field: module
      ``theorylab.huang2024.engines._reduced``).
    - `lr`: the step size η.
    - `steps`: number of GD steps.
    - `init`: ``"zero"`` (Q⁰ = 0) or ``"gaussian"`` (i.i.d. N(0, `init_scale`²) entries of Φ and
      Υ). ``population-exact`` and ``population-laplace`` need Υ[p, ·] constant on every atom
      minus {p} (an atom: a cell of the common refinement of the clusters' partitions) and
      refuse a Gaussian start.
    - `init_scale`: standard deviation of a ``"gaussian"`` initialisation.
    - `mc_samples`: samples per Monte Carlo evaluation (a fresh seeded batch each step).
    - `n_train`: number of fixed samples of the empirical engine.
    - `seed`: seeds the initialisation, the Monte Carlo batches and the empirical samples.
    - `resample_masks`: empirical engine: fresh masks of the fixed images at every step.
    - `z_nodes`: Gauss–Legendre nodes for a uniform law in the exact engines (at most 256;
      0: none, so those engines refuse a uniform law).
    - `laplace_step`: step of the trapezoid rule in ln t of ``population-laplace`` (0.2: error
      ~1e-15 against the enumeration; 0.3: ~5e-13; 0.4: ~6e-10, measured at P ≤ 16).
    - `count_nodes`: ``population-reduced`` only: a count of unmasked keys with more than
      `count_nodes` + 1 values (the global area's) is summed by the `count_nodes`-point Gauss
      rule of its binomial law; 0 sums every count exactly.
    - `threads`: torch threads during an evaluation on the torch backend on a CPU (0: torch's
      default). Default 1: the arrays are small, and on a shared 2-core machine 20
      ``population-laplace`` steps at P = 64 took 0.53 s with 1 thread and 17.5 s with 2.
    - `record`, `n_records`: recorded steps (log-spaced by default).
    - `max_configs`: the largest enumeration the exact engines accept.
    - `backend`, `device`: ``numpy`` (CPU) or ``torch`` (``cpu``, ``cuda``, ``cuda:N``), as in
      the first paper: every engine is written once against the kernel's array backend, with
      its gradient written out, so both run the same code; equal to rounding (≤ 1e-12).
    - `dtype`: float64 (the only one so far).
    - `mode`: ``"gd"`` (gradient descent, Thm 4.1's dynamics) or ``"flow"``: the gradient flow
      dθ/dt = −∇L(θ) of the same engine from the same start, integrated by an adaptive solver
      to the time t = lr·steps and recorded at the times of the GD steps (row of step s at
      t = lr·s); not with fresh Monte Carlo batches (``population-montecarlo``,
      ``cl-montecarlo``) or fresh masks. ``theorylab run --flow`` sets it.
    - `flow_method`: the flow's solver (scipy.integrate): ``DOP853`` (order 8), ``RK45``,
      ``LSODA`` (stiff; finite-difference Jacobian, for small parameter vectors).
    - `flow_rtol`, `flow_atol`: the solver's relative and absolute tolerance on each parameter.
    """

    engine: str = "population-montecarlo"
    lr: float = 1.0
    steps: int = 100
    init: str = "zero"
    init_scale: float = 0.0
    mc_samples: int = 256
    n_train: int = 1000
    resample_masks: bool = False
    z_nodes: int = 0
    laplace_step: float = 0.2
    count_nodes: int = 0
    threads: int = 1
    record: str = "log"
    n_records: int = 100
    seed: int = 0
    max_configs: int = 20_000_000
    backend: str = "numpy"
    device: str = "cpu"
    dtype: str = "float64"
    mode: str = "gd"
    flow_method: str = "DOP853"
    flow_rtol: float = 1e-9
    flow_atol: float = 1e-12

    def __post_init__(self) -> None:
        _choice("train.engine", self.engine, ENGINES)
        _set(self, "lr", _float("train.lr", self.lr, lo=0.0))
        _set(self, "steps", _bounded("train.steps", self.steps, lo=0))
        _choice("train.init", self.init, INITS)
        _set(self, "init_scale", _float("train.init_scale", self.init_scale, lo=0.0))
        _set(self, "mc_samples", _int("train.mc_samples", self.mc_samples, lo=2))
        _set(self, "n_train", _int("train.n_train", self.n_train, lo=1))
        _bool("train.resample_masks", self.resample_masks)
        _set(self, "z_nodes", _int("train.z_nodes", self.z_nodes, lo=0, hi=MAX_Z_NODES,
                                   why="Gauss–Legendre nodes come from a dense n×n "
                                       "eigenproblem; the quadrature error falls geometrically "
                                       "with n"))
        _set(self, "laplace_step", _float("train.laplace_step", self.laplace_step, lo=0.0,
                                          hi=1.0, lo_open=True))
        _set(self, "laplace_step", _float(
            "train.laplace_step", self.laplace_step, lo=MIN_LAPLACE_STEP,
            why="the trapezoid's nodes grow like 1/step, and 0.2 is already at rounding error"))
        _set(self, "count_nodes", _int("train.count_nodes", self.count_nodes, lo=0, hi=256,
                                       why="a Gauss rule of more nodes than the exact sum "
                                           "needs gains nothing"))
        if self.count_nodes and self.engine != "population-reduced":
            raise ValueError("train.count_nodes: only used by engine = 'population-reduced'")
        _set(self, "threads", _bounded("train.threads", self.threads, lo=0))
        _choice("train.record", self.record, RECORD)
        _set(self, "n_records", _bounded("train.n_records", self.n_records, lo=2))
        _set(self, "seed", _int("train.seed", self.seed, lo=0))
        _set(self, "max_configs", _int("train.max_configs", self.max_configs, lo=1))
        check_placement(self, DTYPES)
        check_flow_fields(self)
        if self.mode == "flow" and (self.engine in STOCHASTIC_ENGINES or self.resample_masks):
            why = "fresh masks per step" if self.resample_masks else "a fresh batch per step"
            raise ValueError(f"train.mode: 'flow' needs a deterministic gradient; {self.engine} "
                             f"with {why} has none (use population-exact, population-laplace, "
                             "population-brute or empirical with fixed masks)")


@dataclass(frozen=True)
class ExperimentConfig(SectionedConfig):
    """Data, model and training configuration of one run."""

    data: DataConfig = field(default_factory=lambda: DataConfig(C1=8, C=2))
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)

    def __post_init__(self) -> None:
        self._check_sections()
        if self.model.mask_size is not None and self.model.mask_size > self.data.P:
            raise ValueError(f"model.mask_size: must be <= P={self.data.P} "
                             f"(got {self.model.mask_size})")
        if self.model.mask == "fixed" and self.mask_size < 1:
            raise ValueError(f"model.gamma: round(gamma·P) masks no patch (gamma="
                             f"{self.model.gamma}, P={self.data.P}); set mask_size")
        m = self.model
        if not m.mask_keys and (self.mask_size == self.data.P if m.mask == "fixed"
                                else m.gamma == 1.0):
            name = "model.mask_size" if m.mask_size is not None else "model.gamma"
            raise ValueError(f"{name}: every patch is masked (gamma={m.gamma}, mask_size="
                             f"{self.mask_size}, P={self.data.P}) and masked keys are left out "
                             "of the softmax (mask_keys = false), so no query has a key; mask "
                             "fewer patches or set model.mask_keys = true")
        if (self.train.engine in EXACT_ENGINES and self.data.z_law == "uniform"
                and self.train.z_nodes == 0):
            raise ValueError(f"train.z_nodes: {self.train.engine} sums over the coefficient "
                             "law; a uniform law needs Gauss–Legendre nodes (set "
                             "train.z_nodes > 0, e.g. 16) or use data.z_law = 'values'")
        if (self.train.engine in ("population-exact", "population-laplace")
                and self.train.init == "gaussian" and self.train.init_scale > 0):
            raise ValueError(f"train.init: {self.train.engine} needs Υ[p, ·] constant on every "
                             "atom minus {p}, which a Gaussian start breaks; use init = 'zero', "
                             "or engine = 'population-montecarlo' or 'population-brute'")
        if self.train.engine != "empirical" and self.train.resample_masks:
            raise ValueError("train.resample_masks: only used by engine = 'empirical'")
        cl = self.model.objective == "cl"
        if cl != (self.train.engine in CL_ENGINES):
            raise ValueError(f"train.engine: objective = {self.model.objective!r} needs "
                             f"{'one of ' + str(list(CL_ENGINES)) if cl else 'an MAE engine'} "
                             f"(got {self.train.engine!r})")
        if cl and self.cl_negatives > self.train.mc_samples - 1:
            raise ValueError(f"model.cl_negatives: at most mc_samples − 1 = "
                             f"{self.train.mc_samples - 1} (other images of the batch; got "
                             f"{self.cl_negatives})")

    @property
    def cl_negatives(self) -> int:
        """Negatives per positive pair (default: every other image of the batch)."""
        n = self.model.cl_negatives
        return self.train.mc_samples - 1 if n is None else n

    @property
    def mask_size(self) -> int:
        m = self.model.mask_size
        return int(round(self.model.gamma * self.data.P)) if m is None else m

    @property
    def delta(self) -> float:
        return self.data.delta

    def resolved(self) -> ExperimentConfig:
        """A copy with area sizes and the mask size explicit (the form of ``config.toml``)."""
        d = self.data
        data = dataclasses.replace(d, C1=d.global_size, C=d.local_size, kappa_s=None,
                                   kappa_c=None, Delta=None)
        model = self.model
        if model.mask == "fixed":
            model = dataclasses.replace(model, mask_size=self.mask_size)
        if model.objective == "cl":
            model = dataclasses.replace(model, cl_temperature=model.temperature,
                                        cl_negatives=self.cl_negatives,
                                        cl_pooling=model.pooling)
        return ExperimentConfig(data, model, self.train)


def config_from_dict(d: Mapping[str, Any]) -> ExperimentConfig:
    """An [`ExperimentConfig`][] from ``{"data": {...}, "model": {...}, "train": {...}}``
    (and optionally ``[experiment] paper``)."""
    classes = {"data": DataConfig, "model": ModelConfig, "train": TrainConfig}
    required = {"data": "P, C1 or kappa_s, C or kappa_c"}
    return ExperimentConfig(**sections_from_tables(d, classes, PAPER_NAME, required=required))


def load_config(path: str | Path) -> ExperimentConfig:
    """Load a TOML file with ``[data]``, ``[model]``, ``[train]`` (and ``[experiment] paper =
    "huang2024"``)."""
    return config_from_dict(read_toml(path))


def config_to_toml(cfg: ExperimentConfig, header: str = "") -> str:
    """TOML text of a config with ``[experiment] paper = "huang2024"`` first; ``load_config``
    reads it back to an equal config."""
    return tables_to_toml({EXPERIMENT: {"paper": PAPER_NAME}, **cfg.to_dict()}, header)


def config_doc(level: int = 2) -> str:
    """Markdown reference of ``[data]``, ``[model]`` and ``[train]`` (docs/config.md)."""
    allowed = {"data.areas": one_of(AREAS), "data.z_law": one_of(Z_LAWS),
               "model.objective": one_of(OBJECTIVES), "model.cl_pooling": one_of(CL_POOLINGS),
               "model.mask": one_of(MASKS), "model.loss_norm": one_of(LOSS_NORMS),
               "train.engine": one_of(ENGINES), "train.init": one_of(INITS),
               "train.record": one_of(RECORD), **run_fields_allowed(DTYPES)}
    return config_markdown({"data": DataConfig, "model": ModelConfig, "train": TrainConfig},
                           allowed=allowed, citation="Huang et al. (2025)", level=level)
