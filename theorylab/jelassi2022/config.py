"""Frozen, validated configuration that drives every engine.

Three sections mirror a TOML file: ``[data]`` (Jelassi et al. (2022), Definition 2.1 and
Assumption 1), ``[model]`` (eq. (T)) and ``[train]`` (problems (P) and (E)). Every invalid value
raises a one-line ``ValueError`` that starts with the field's name, e.g. ``data.C: must divide
D=10 (got C=3)``. ``ExperimentConfig.resolved()`` fills every default (σ = 1/√d, temperature = √d,
value_scale = D, ...) so that the written ``config.toml`` says exactly what ran;
[`setting_of`][] turns a config into its [`Setting`][], the resolved values that the derived
predictions and the engines read (the sets, σ, τ, κ, the diagonal, the learning rates), built
once per config and memoised.
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

from .activation import NAMED_ACTIVATIONS, Activation
from .partition import Partition, _as_sets

#: The name of this paper in ``[experiment] paper = ...`` and in claim ids.
PAPER_NAME = "jelassi2022"

__all__ = [
    "DataConfig",
    "ModelConfig",
    "TrainConfig",
    "ExperimentConfig",
    "Setting",
    "as_config",
    "setting_of",
    "config_doc",
    "load_config",
    "config_from_dict",
    "config_to_toml",
]

PARTITIONS = ("grid", "random")
ENGINES = ("population", "empirical")
METHODS = ("auto", "brute", "exchangeable", "montecarlo")
INIT_V = ("aligned", "gaussian")
RECORD = ("log", "linear", "all")
DTYPES = ("float64", "float32")
DIAG_NAMED = ("loglogd",)

#: Bounds of the sizes and of A's initial entries: field → (lowest, highest, reason of the
#: upper bound). The upper bounds are hard limits. No legitimate run on a 128 GB machine comes
#: near them, so a larger value is a typo (``D = 1e29``) and is refused in one line naming the
#: field instead of failing later as a MemoryError, an int64 overflow or a hang.
#:
#: - ``data.D``: A is D×D and the engines hold (rows, D, D) attention scores per chunk; 4096²
#:   float64 entries are 134 MB per copy (the paper uses D <= 100, the benchmarks D = 1024).
#: - ``data.d``: w*, v and every patch are d-vectors; one sample is D·d floats, 16 MB at
#:   D = 2 and d = 10⁶ (the paper and benchmarks use d <= 256).
#: - ``train.n_train``, ``train.n_test``: the empirical engine holds the n×D×d samples; 10⁸
#:   samples are 3.2 GB at the smallest D = d = 2 and exceed 128 GB once D·d > 160.
#: - ``train.mc_samples``: every evaluation draws mc_samples·D·d Gaussians; 10⁹ samples a
#:   step at D = d = 2 already take tens of seconds, with a standard error ~3·10⁻⁵ of the
#:   loss's spread.
#: - ``train.steps``: a step is a full-batch pass over the data (>= 1 ms): 10⁹ steps are
#:   over 11 days, and ``record = "all"`` would write a row for each.
#: - ``train.n_records``: each recorded step is a row of trajectory.csv and a test evaluation.
#: - ``train.max_configs``: each enumerated configuration costs at least one float64, so 10¹⁰
#:   of them are 80 GB.
#: - ``train.offdiag0``, ``train.offdiag0_std``, ``model.diag`` (|value| <= 10⁶): entries of
#:   A are softmax logits; the softmax of A/τ is saturated once two entries differ by 40·τ
#:   (e⁻⁴⁰ < 2⁻⁵², below float64's resolution), so 10⁶ leaves room for any temperature up to
#:   2.5·10⁴, while larger values (1e308) can only overflow (A/τ → inf, inf − inf = nan).
_LOGIT = "A's entries are softmax logits, saturated far below that"
LIMITS: dict[str, tuple[int | float, int | float, str]] = {
    "data.D": (2, 4096, "A is D×D"),
    "data.d": (2, 1_000_000, "a patch is a d-vector, a sample D·d floats"),
    "train.n_train": (1, 100_000_000, "the n_train×D×d samples are held in memory"),
    "train.n_test": (1, 100_000_000, "the n_test×D×d samples are held in memory"),
    "train.mc_samples": (2, 1_000_000_000, "each evaluation draws mc_samples×D×d Gaussians"),
    "train.steps": (0, 1_000_000_000, "a step is a full pass over the data"),
    "train.n_records": (2, 1_000_000, "each recorded step is a row and a test evaluation"),
    "train.max_configs": (1, 10_000_000_000, "an enumerated configuration costs >= 8 bytes"),
    "train.offdiag0": (-1e6, 1e6, _LOGIT),
    "train.offdiag0_std": (0.0, 1e6, _LOGIT),
    "model.diag": (-1e6, 1e6, _LOGIT),
}


def _bounded_int(name: str, value: Any) -> int:
    """An integer within its ``LIMITS``; the reason of the upper bound when it is exceeded."""
    lo, hi, why = LIMITS[name]
    _int(name, value, lo=lo)
    return _int(name, value, hi=hi, why=why)


def _bounded_float(name: str, value: Any) -> float:
    """A finite float within its ``LIMITS`` (the reason on failure)."""
    lo, hi, why = LIMITS[name]
    return _float(name, value, lo=lo, hi=hi, why=why)


# -- sections -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class DataConfig:
    """Data model of Jelassi et al. (2022), Definition 2.1 and Assumption 1 (FOUND).

    **Arguments:**

    - `D`: number of patches X_1, …, X_D (>= 2; Definition 2.1, FOUND).
    - `C`: patches per set; ``C`` must divide ``D`` (Definition 2.1, FOUND). Give ``C`` or
      ``L``; default ``D / L``.
    - `L`: number of sets (>= 2, since every set is a proper subset, Definition 2.1, FOUND);
      default ``D / C``.
    - `partition`: the sets S_1, …, S_L (Definition 2.1, FOUND): ``"grid"`` (square blocks of C
      patches on a √D×√D grid), ``"random"`` (seeded by `seed`) or an explicit list of sets
      (0-based patch indices).
    - `d`: patch dimension (>= 2, so that the noise space orthogonal to w* is not empty;
      Definition 2.1, FOUND).
    - `q`: probability that a patch outside the signal set carries ±w* (δ = ±1 w.p. q/2 each;
      Assumption 1, FOUND).
    - `sigma`: noise level, noise ~ N(0, σ²(I − w*w*ᵀ)); default ``1/√d`` (Assumption 2,
      FOUND).
    - `seed`: seeds w* and a random partition.
    """

    D: int = 10
    C: int | None = None
    L: int | None = None
    partition: str | list = "random"
    d: int = 100
    q: float = 0.2
    sigma: float | None = None
    seed: int = 0

    def __post_init__(self) -> None:
        D = _bounded_int("data.D", self.D)
        _set(self, "D", D)
        part = self.partition
        if isinstance(part, str):
            _choice("data.partition", part, PARTITIONS)
            if self.C is None and self.L is None:
                raise ValueError("data.C: give C (patches per set) or L (number of sets)")
            for name in ("C", "L"):
                if getattr(self, name) is not None:
                    n = _int(f"data.{name}", getattr(self, name), lo=1, hi=D)
                    if D % n != 0:
                        raise ValueError(f"data.{name}: must divide D={D} (got {name}={n})")
                    _set(self, name, n)
            C = self.C or D // self.L
            L = self.L or D // C
            if C * L != D:
                raise ValueError(f"data.L: C*L must equal D={D} (got C={C}, L={L})")
        else:
            sets = _as_sets(part, "data.partition")
            if sum(len(s) for s in sets) != D:
                raise ValueError(
                    f"data.partition: the sets cover {sum(len(s) for s in sets)} patches, "
                    f"not D={D}"
                )
            C, L = len(sets[0]), len(sets)
            if self.C is not None and _int("data.C", self.C) != C:
                raise ValueError(
                    f"data.C: explicit partition has sets of size {C} (got C={self.C})")
            if self.L is not None and _int("data.L", self.L) != L:
                raise ValueError(f"data.L: explicit partition has {L} sets (got L={self.L})")
            _set(self, "partition", [list(s) for s in sets])
        if L < 2:
            raise ValueError(
                f"data.L: need at least 2 sets (each S_l is a proper subset; got L={L})")
        _set(self, "C", C)
        _set(self, "L", L)
        _set(self, "d", _bounded_int("data.d", self.d))
        _set(self, "q", _float("data.q", self.q, lo=0.0, hi=1.0))
        _fields(self, "data", _float, ("sigma",), optional=True, lo=0.0)
        _set(self, "seed", _int("data.seed", self.seed, lo=0))
        if self.partition == "grid":
            Partition.grid(D, C)  # raises a ValueError naming data.D / data.C

    @property
    def sigma_value(self) -> float:
        """σ, defaulting to 1/√d (Jelassi et al. (2022), Assumption 2, FOUND)."""
        return 1.0 / math.sqrt(self.d) if self.sigma is None else self.sigma

    def make_partition(self) -> Partition:
        if self.partition == "grid":
            return Partition.grid(self.D, self.C)
        if self.partition == "random":
            import numpy as np

            seed = int(np.random.SeedSequence([self.seed, 1]).generate_state(1)[0])
            return Partition.random(self.D, self.C, seed)
        return Partition(tuple(tuple(s) for s in self.partition))


@dataclass(frozen=True)
class ModelConfig:
    """The simplified ViT of Jelassi et al. (2022), eq. (T) (FOUND), with its free choices.

    F(X) = Σ_i σ(value_scale · Σ_j S_ij ⟨v, X_j⟩),  S = row-softmax(A / temperature).

    **Arguments:**

    - `activation`: σ of eq. (T): ``"cubic"`` (h³), ``"quintic"`` (h⁵ + 0.03h) or polynomial
      coefficients in ascending powers (RECONSTRUCTED: the paper's σ could not be read).
    - `temperature`: divisor of A in the softmax; default ``√d`` (eq. (T), FOUND).
    - `value_scale`: factor inside σ; default ``D`` (eq. (T), FOUND).
    - `diag`: the frozen diagonal of A (Simplification 3.1, FOUND that it is frozen; its value is
      RECONSTRUCTED): a number, or ``"loglogd"`` for ln ln d (the third-party script S7).
    """

    activation: str | list = "cubic"
    temperature: float | None = None
    value_scale: float | None = None
    diag: float | str = "loglogd"

    def __post_init__(self) -> None:
        act = self.activation
        if isinstance(act, str):
            Activation.from_spec(act)
        else:
            _set(self, "activation", list(Activation.from_spec(act).coeffs))
        _fields(self, "model", _float, ("temperature", "value_scale"), optional=True, lo=0.0,
                lo_open=True)
        if isinstance(self.diag, str):
            _choice("model.diag", self.diag, DIAG_NAMED)
        else:
            _set(self, "diag", _bounded_float("model.diag", self.diag))

    def make_activation(self) -> Activation:
        return Activation.from_spec(self.activation)


@dataclass(frozen=True)
class TrainConfig:
    """Gradient descent on problem (P) (``engine="population"``) or (E) (``"empirical"``).

    Jelassi et al. (2022), problems (E) and (P) (FOUND): full-batch GD on the logistic loss.
    The initialisation and learning rates are RECONSTRUCTED (the paper's "Parametrization"
    block could not be read).

    **Arguments:**

    - `engine`: ``"population"`` (exact population risk, problem (P), FOUND) or
      ``"empirical"`` (N samples, problem (E), FOUND).
    - `method`: population engine: ``"auto"``, ``"brute"`` (enumeration, any A, tiny D),
      ``"exchangeable"`` (partition-symmetric states, exact), ``"montecarlo"`` (estimates).
    - `lr_v`: learning rate of v (RECONSTRUCTED: the paper's "Parametrization" block could not
      be read).
    - `lr_A`: learning rate of the off-diagonal of A; default ``lr_v`` (RECONSTRUCTED, as
      `lr_v`).
    - `steps`: number of full-batch GD steps (problems (E) and (P), FOUND).
    - `n_train`: training sample size N of the empirical engine (problem (E), FOUND).
    - `n_test`: test sample size of the empirical engine (fresh points, not in the paper).
    - `mc_samples`: Monte Carlo samples per evaluation (``method = "montecarlo"``).
    - `mc_resample`: draw fresh Monte Carlo samples at each step (``false``: the step-0 draws
      every step).
    - `init_v`: ``"aligned"`` (v⁰ = alpha0·w*) or ``"gaussian"`` (v⁰ ~ N(0, v0_scale²·I))
      (RECONSTRUCTED, as the learning rates).
    - `alpha0`: the scale of the aligned start v⁰ = alpha0·w* (``init_v = "aligned"``).
    - `v0_scale`: the std of the Gaussian start v⁰ ~ N(0, v0_scale²·I) (``init_v =
      "gaussian"``).
    - `offdiag0`: initial value of every off-diagonal entry of A (a softmax logit).
    - `offdiag0_std`: std of i.i.d. Gaussian perturbations added to the off-diagonal of A⁰
      (0 keeps A partition-symmetric).
    - `record`: ``"log"`` (log-spaced steps, default), ``"linear"`` or ``"all"``.
    - `n_records`: number of recorded steps for log/linear (step 0 and the last always).
    - `seed`: seeds samples, v⁰, perturbations of A⁰ and Monte Carlo draws.
    - `tie_tol`: F is counted as a tie F = 0 when ``|F| <= tie_tol·D·|σ|(κ·max_j|⟨v,X_j⟩|)``
      (see `model.tie_scale`); ``error`` counts ties as errors, ``error_fair`` as a fair coin.
      Default 1e-6, a *resolution*, not a rounding tolerance: at a partition-symmetric start the
      ties of the GLM phase (P[F = 0] = 0.12 in the reference setting) are broken at first order
      by the attention asymmetry γ − ρ, which population GD makes ~1e-10 after one step; with
      1e-12 those rounding-level asymmetries decided 7.7% of the mass deterministically (error
      0.2171 → 0.1414 at step 2 while the loss was still 0.693146). With 1e-6 they stay ties
      until A has really moved (measured: until γ − ρ > 1e-6 in the reference run).
    - `pa_margin`: patch association (Definition 2.2) is recorded only when every row's own set
      leads the other entries by at least this margin in logits A/τ (column ``pa_gap``); 0 gives
      the literal, strict Definition 2.2. Default 1e-3: an asymmetry below it changes no
      attention weight by more than 0.1%, and GD from a symmetric start makes γ > ρ by ~1e-10
      after one step, which the literal definition already counts as patch association.
    - `backend`: the array library, ``numpy`` or ``torch``.
    - `device`: ``cpu``, ``cuda`` or ``cuda:N`` (``cuda`` needs ``backend = "torch"``).
    - `dtype`: the floating-point type, ``float64`` or ``float32``.
    - `chunk_size`: rows per chunk in the engines (bounds memory); ``0`` or ``"auto"`` (stored
      as 0, the default): chosen from the device's free memory (`Backend.free_bytes`) and, on a
      CPU, capped so that a chunk's working set stays near the caches
      (`engines._base.CPU_CHUNK_BYTES`; docs/performance.md).
    - `stream`: empirical engine: keep the data on the host and move one chunk at a time to
      the device inside each step (``True``), never (``False``), or when the data do not fit
      in the device's free memory (``"auto"``, default).
    - `max_configs`: largest number of enumerated configurations the exact engines accept.
    - `mode`: ``"gd"`` (gradient descent, the paper's problems) or ``"flow"``: the gradient
      flow dθ/dt = −∇L(θ) of the same engine from the same start, integrated by an adaptive
      solver to the time t = lr_v·steps and recorded at the times of the GD steps (row of
      step s at t = lr_v·s; ``lr_A``/``lr_v`` keep their ratio as a rate of A; not with fresh
      Monte Carlo draws). ``theorylab run --flow`` sets it.
    - `flow_method`: the flow's solver (scipy.integrate): ``DOP853`` (order 8), ``RK45``,
      ``LSODA`` (stiff; finite-difference Jacobian, for small parameter vectors).
    - `flow_rtol`, `flow_atol`: the solver's relative and absolute tolerance on each parameter.
    """

    engine: str = "population"
    method: str = "auto"
    lr_v: float = 0.1
    lr_A: float | None = None
    steps: int = 1000
    n_train: int = 10_000
    n_test: int = 10_000
    mc_samples: int = 100_000
    mc_resample: bool = True
    init_v: str = "aligned"
    alpha0: float = 0.01
    v0_scale: float = 1e-3
    offdiag0: float = 0.0
    offdiag0_std: float = 0.0
    record: str = "log"
    n_records: int = 200
    seed: int = 0
    tie_tol: float = 1e-6
    pa_margin: float = 1e-3
    backend: str = "numpy"
    device: str = "cpu"
    dtype: str = "float64"
    chunk_size: int | str = 0
    stream: bool | str = "auto"
    max_configs: int = 200_000_000
    mode: str = "gd"
    flow_method: str = "DOP853"
    flow_rtol: float = 1e-9
    flow_atol: float = 1e-12

    def __post_init__(self) -> None:
        _choice("train.engine", self.engine, ENGINES)
        _choice("train.method", self.method, METHODS)
        _fields(self, "train", _float, ("lr_v",), lo=0.0)
        _fields(self, "train", _float, ("lr_A",), optional=True, lo=0.0)
        _fields(self, "train", _bounded_int, ("steps", "n_train", "n_test", "mc_samples"))
        _bool("train.mc_resample", self.mc_resample)
        _choice("train.init_v", self.init_v, INIT_V)
        _set(self, "alpha0", _float("train.alpha0", self.alpha0))
        _set(self, "v0_scale", _float("train.v0_scale", self.v0_scale, lo=0.0))
        _fields(self, "train", _bounded_float, ("offdiag0", "offdiag0_std"))
        _choice("train.record", self.record, RECORD)
        _set(self, "n_records", _bounded_int("train.n_records", self.n_records))
        _set(self, "seed", _int("train.seed", self.seed, lo=0))
        _set(self, "tie_tol", _float("train.tie_tol", self.tie_tol, lo=0.0, hi=1e-3))
        _set(self, "pa_margin", _float("train.pa_margin", self.pa_margin, lo=0.0))
        check_placement(self, DTYPES)
        if self.chunk_size == "auto":
            _set(self, "chunk_size", 0)
        _set(self, "chunk_size", _int("train.chunk_size", self.chunk_size, lo=0))
        if not (self.stream == "auto" or isinstance(self.stream, bool)):
            raise ValueError(f"train.stream: must be 'auto', true or false (got {self.stream!r})")
        _set(self, "max_configs", _bounded_int("train.max_configs", self.max_configs))
        if self.method == "brute" and self.init_v != "aligned":
            raise ValueError(
                "train.method: 'brute' is exact only for v parallel to w* (init_v='aligned'); "
                f"use method='montecarlo' for init_v={self.init_v!r}")
        if self.method == "exchangeable" and (self.init_v != "aligned" or self.offdiag0_std > 0):
            raise ValueError(
                "train.method: 'exchangeable' needs a partition-symmetric start: "
                "init_v='aligned' and offdiag0_std=0 (use 'brute' or 'montecarlo'; got "
                f"init_v={self.init_v!r}, offdiag0_std={self.offdiag0_std})")
        check_flow_fields(self)
        if self.mode == "flow" and self.method == "montecarlo" and self.mc_resample:
            raise ValueError("train.mode: 'flow' needs a deterministic gradient; Monte Carlo "
                             "with fresh draws per step (mc_resample = true) has none (set "
                             "mc_resample = false, or use an exact method)")
        if self.engine == "empirical" and self.method not in ("auto",):
            raise ValueError(
                f"train.method: only used by engine='population' (got {self.method!r} with "
                "engine='empirical'); leave it 'auto'"
            )

    @property
    def lr_A_value(self) -> float:
        return self.lr_v if self.lr_A is None else self.lr_A


@dataclass(frozen=True)
class ExperimentConfig(SectionedConfig):
    """Data, model and training configuration of one run.

    ``ExperimentConfig()`` is a valid run: every section at its defaults, with sets of
    ``C = 2`` patches in ``[data]`` (Figure 4's sets of two), since ``DataConfig()`` alone
    needs ``C`` or ``L``.
    """

    data: DataConfig = field(default_factory=lambda: DataConfig(C=2))
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)

    def __post_init__(self) -> None:
        self._check_sections()

    # -- defaults that depend on other sections --------------------------------------------------
    @property
    def temperature(self) -> float:
        t = self.model.temperature
        return math.sqrt(self.data.d) if t is None else t

    @property
    def value_scale(self) -> float:
        s = self.model.value_scale
        return float(self.data.D) if s is None else s

    @property
    def diag(self) -> float:
        a = self.model.diag
        if a == "loglogd":
            if self.data.d < 3:
                raise ValueError("model.diag: 'loglogd' needs d >= 3 (ln ln d must be defined)")
            return math.log(math.log(self.data.d))
        return float(a)

    def resolved(self) -> ExperimentConfig:
        """A copy with every default made explicit (the form written to ``config.toml``)."""
        data = dataclasses.replace(self.data, sigma=self.data.sigma_value)
        model = dataclasses.replace(
            self.model, temperature=self.temperature, value_scale=self.value_scale, diag=self.diag
        )
        train = dataclasses.replace(self.train, lr_A=self.train.lr_A_value)
        return ExperimentConfig(data, model, train)


def config_from_dict(d: Mapping[str, Any]) -> ExperimentConfig:
    """An [`ExperimentConfig`][] from ``{"data": {...}, "model": {...}, "train": {...}}``
    (and optionally ``[experiment] paper``)."""
    classes = {"data": DataConfig, "model": ModelConfig, "train": TrainConfig}
    return ExperimentConfig(**sections_from_tables(d, classes, PAPER_NAME))


def as_config(obj: Any) -> ExperimentConfig:
    """``obj`` if it is an [`ExperimentConfig`][], the config of a table of sections
    ([`config_from_dict`][]); ``ValueError`` naming the type otherwise (the Python API's check)."""
    if isinstance(obj, ExperimentConfig):
        return obj
    if isinstance(obj, Mapping):
        return config_from_dict(obj)
    raise ValueError(
        f"config: must be an ExperimentConfig or a table of sections (got {type(obj).__name__})")


@dataclass(frozen=True, eq=False)
class Setting:
    """The values of a config that the derivations and engines read, resolved once
    ([`setting_of`][]): `cfg` is the resolved config (for every other field), then the sets S_ℓ
    (`partition`, of `C` patches out of `D`), σ (`activation`), q, the noise level σ_ξ
    (`sigma`), τ (`tau`), κ (`kappa`), the frozen diagonal, the learning rates of v and A and
    the off-diagonal start g⁰ (`offdiag0`)."""

    cfg: ExperimentConfig
    partition: Partition
    activation: Activation
    D: int
    C: int
    q: float
    sigma: float
    tau: float
    kappa: float
    diag: float
    lr_v: float
    lr_A: float
    offdiag0: float


#: config (its repr: exact, as floats print to round-trip, and defined for the lists of an
#: explicit partition, which make a config unhashable) → its Setting
_SETTINGS: dict[str, Setting] = {}


def setting_of(cfg: Any) -> Setting:
    """The [`Setting`][] of `cfg` (an [`ExperimentConfig`][], a table of sections or a
    `Setting`, returned as it is), memoised per config."""
    if isinstance(cfg, Setting):
        return cfg
    cfg = as_config(cfg)
    key = repr(cfg)
    if key not in _SETTINGS:
        if len(_SETTINGS) >= 256:
            _SETTINGS.clear()
        r = cfg.resolved()
        part = r.data.make_partition()
        s = _SETTINGS[key] = Setting(
            r, part, r.model.make_activation(), part.D, part.C, r.data.q, r.data.sigma,
            r.model.temperature, r.model.value_scale, r.model.diag, r.train.lr_v, r.train.lr_A,
            r.train.offdiag0)
        _SETTINGS.setdefault(repr(r), s)  # engines built from the resolved config
    return _SETTINGS[key]


def load_config(path: str | Path) -> ExperimentConfig:
    """Load a TOML file with sections ``[data]``, ``[model]``, ``[train]`` (and optionally
    ``[experiment] paper = "jelassi2022"``)."""
    return config_from_dict(read_toml(path))


def config_to_toml(cfg: ExperimentConfig, header: str = "") -> str:
    """TOML text of a config, with ``[experiment] paper = "jelassi2022"`` first;
    ``load_config`` reads it back to an equal config."""
    return tables_to_toml({EXPERIMENT: {"paper": PAPER_NAME}, **cfg.to_dict()}, header)


# names of the named activations, for documentation and strategies
ACTIVATIONS = tuple(NAMED_ACTIVATIONS)

#: The TOML sections of a run config, in file order.
SECTIONS = {"data": DataConfig, "model": ModelConfig, "train": TrainConfig}


def _number(x: int | float) -> str:
    if isinstance(x, float):
        return f"{x:g}".replace("e+0", "e").replace("e+", "e")
    return f"{x:_}" if x >= 100_000 else str(x)


def _bound(name: str) -> str:
    lo, hi, why = LIMITS[name]
    return f"{_number(lo)} … {_number(hi)} ({why})"


def allowed_values() -> dict[str, str]:
    """``"section.field"`` → the allowed values in markdown, from the constants above."""
    out = {
        "data.partition": one_of(PARTITIONS) + ", or an array of sets",
        "model.activation": one_of(ACTIVATIONS) + ", or an array of coefficients",
        "model.diag": one_of(DIAG_NAMED) + ", or a number",
        "train.engine": one_of(ENGINES),
        "train.method": one_of(METHODS),
        "train.init_v": one_of(INIT_V),
        "train.record": one_of(RECORD),
        "train.chunk_size": '`"auto"`, or an integer ≥ 0',
        "train.stream": one_of(("auto", True, False)),
        **run_fields_allowed(DTYPES),
    }
    for name in LIMITS:
        out[name] = "; ".join(x for x in (out.get(name, ""), _bound(name)) if x)
    return out


def config_doc(level: int = 2) -> str:
    """Markdown reference of ``[data]``, ``[model]`` and ``[train]`` (docs/config.md), with
    ``level`` the heading level of each section."""
    return config_markdown(SECTIONS, allowed=allowed_values(), citation="Jelassi et al. (2022)",
                           level=level)
