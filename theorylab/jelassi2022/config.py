"""Frozen, validated configuration that drives every engine.

Three sections mirror a TOML file: ``[data]`` (Jelassi et al. (2022), Definition 2.1 and
Assumption 1), ``[model]`` (eq. (T)) and ``[train]`` (problems (P) and (E)). Every invalid value
raises a one-line ``ValueError`` that starts with the field's name, e.g. ``data.C: must divide
D=10 (got C=3)``. ``ExperimentConfig.resolved()`` fills every default (σ = 1/√d, temperature = √d,
value_scale = D, ...) so that the written ``config.toml`` says exactly what ran.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from theorylab.core.config import (
    EXPERIMENT,
    check_keys,
    paper_of,
    read_toml,
    section_from_dict,
    tables_to_toml,
)
from theorylab.core.config import check_bool as _bool
from theorylab.core.config import check_choice as _choice
from theorylab.core.config import check_float as _float
from theorylab.core.config import check_int as _int
from theorylab.core.config import frozen_set as _set

from .activation import NAMED_ACTIVATIONS, Activation
from .partition import Partition, _as_sets

#: The name of this paper in ``[experiment] paper = ...`` and in claim ids.
PAPER_NAME = "jelassi2022"

__all__ = [
    "DataConfig",
    "ModelConfig",
    "TrainConfig",
    "ExperimentConfig",
    "load_config",
    "config_from_dict",
    "config_to_toml",
]

ENGINES = ("population", "empirical")
METHODS = ("auto", "brute", "exchangeable", "montecarlo")
INIT_V = ("aligned", "gaussian")
RECORD = ("log", "linear", "all")
DEVICES = ("cpu", "cuda")
DTYPES = ("float64", "float32")
BACKENDS = ("numpy", "torch")
DIAG_NAMED = ("loglogd",)


# -- sections -----------------------------------------------------------------------------------
@dataclass(frozen=True)
class DataConfig:
    """Data model of Jelassi et al. (2022), Definition 2.1 and Assumption 1 (FOUND).

    **Arguments:**

    - `D`: number of patches (>= 2).
    - `C`: patches per set; ``C`` must divide ``D``. Give ``C`` or ``L`` (``L = D / C``).
    - `L`: number of sets (>= 2, since every set is a proper subset, Definition 2.1).
    - `partition`: ``"grid"`` (square blocks of C patches on a √D×√D grid), ``"random"``
      (seeded by `seed`) or an explicit list of sets (0-based patch indices).
    - `d`: patch dimension (>= 2, so that the noise space orthogonal to w* is not empty).
    - `q`: probability that a patch outside the signal set carries ±w* (δ = ±1 w.p. q/2 each).
    - `sigma`: noise level; default ``1/√d`` (Assumption 2). Noise ~ N(0, σ²(I − w*w*ᵀ)).
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
        D = _int("data.D", self.D, lo=2)
        _set(self, "D", D)
        part = self.partition
        if isinstance(part, str):
            _choice("data.partition", part, ("grid", "random"))
            C, L = self.C, self.L
            if C is None and L is None:
                raise ValueError("data.C: give C (patches per set) or L (number of sets)")
            if C is not None:
                C = _int("data.C", C, lo=1, hi=D)
                if D % C != 0:
                    raise ValueError(f"data.C: must divide D={D} (got C={C})")
            if L is not None:
                L = _int("data.L", L, lo=1, hi=D)
                if D % L != 0:
                    raise ValueError(f"data.L: must divide D={D} (got L={L})")
            if C is None:
                C = D // L
            if L is None:
                L = D // C
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
        _set(self, "d", _int("data.d", self.d, lo=2))
        _set(self, "q", _float("data.q", self.q, lo=0.0, hi=1.0))
        if self.sigma is not None:
            _set(self, "sigma", _float("data.sigma", self.sigma, lo=0.0))
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

    - `activation`: ``"cubic"`` (h³), ``"quintic"`` (h⁵ + 0.03h) or polynomial coefficients in
      ascending powers. RECONSTRUCTED: the paper's σ could not be read.
    - `temperature`: divisor of A in the softmax; default ``√d`` (FOUND in (T)).
    - `value_scale`: factor inside σ; default ``D`` (FOUND in (T)).
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
        if self.temperature is not None:
            _set(self, "temperature", _float("model.temperature", self.temperature, lo=0.0,
                                             lo_open=True))
        if self.value_scale is not None:
            _set(self, "value_scale", _float("model.value_scale", self.value_scale, lo=0.0,
                                             lo_open=True))
        if isinstance(self.diag, str):
            _choice("model.diag", self.diag, DIAG_NAMED)
        else:
            _set(self, "diag", _float("model.diag", self.diag))

    def make_activation(self) -> Activation:
        return Activation.from_spec(self.activation)


@dataclass(frozen=True)
class TrainConfig:
    """Gradient descent on problem (P) (``engine="population"``) or (E) (``"empirical"``).

    Jelassi et al. (2022), problems (E) and (P) (FOUND): full-batch GD on the logistic loss.
    The initialisation and learning rates are RECONSTRUCTED (the paper's "Parametrization"
    block could not be read).

    **Arguments:**

    - `engine`: ``"population"`` (exact population risk) or ``"empirical"`` (N samples).
    - `method`: population engine: ``"auto"``, ``"brute"`` (enumeration, any A, tiny D),
      ``"exchangeable"`` (partition-symmetric states, exact), ``"montecarlo"`` (estimates).
    - `lr_v`, `lr_A`: learning rates of v and of the off-diagonal of A (`lr_A` defaults to
      `lr_v`).
    - `steps`: number of GD steps.
    - `n_train`, `n_test`: sample sizes of the empirical engine (test points are fresh).
    - `mc_samples`: Monte Carlo samples per evaluation; `mc_resample`: fresh samples each step.
    - `init_v`: ``"aligned"`` (v⁰ = alpha0·w*) or ``"gaussian"`` (v⁰ ~ N(0, v0_scale²·I)).
    - `offdiag0`: initial value of every off-diagonal entry of A; `offdiag0_std`: std of i.i.d.
      Gaussian perturbations added to it (0 keeps A partition-symmetric).
    - `record`: ``"log"`` (log-spaced steps, default), ``"linear"`` or ``"all"``;
      `n_records`: number of recorded steps for log/linear (step 0 and the last always).
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
    - `backend`, `device`, `dtype`: ``numpy``/``torch``, ``cpu``/``cuda``, float64/float32.
    - `chunk_size`: rows per chunk in the engines (bounds memory); ``0`` or ``"auto"`` (stored
      as 0, the default): chosen from the device's free memory (`Backend.free_bytes`) and, on a
      CPU, capped so that a chunk's working set stays near the caches
      (`engines._base.CPU_CHUNK_BYTES`; docs/performance.md).
    - `stream`: empirical engine: keep the data on the host and move one chunk at a time to
      the device inside each step (``True``), never (``False``), or when the data do not fit
      in the device's free memory (``"auto"``, default).
    - `max_configs`: largest number of enumerated configurations the exact engines accept.
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

    def __post_init__(self) -> None:
        _choice("train.engine", self.engine, ENGINES)
        _choice("train.method", self.method, METHODS)
        _set(self, "lr_v", _float("train.lr_v", self.lr_v, lo=0.0))
        if self.lr_A is not None:
            _set(self, "lr_A", _float("train.lr_A", self.lr_A, lo=0.0))
        _set(self, "steps", _int("train.steps", self.steps, lo=0))
        _set(self, "n_train", _int("train.n_train", self.n_train, lo=1))
        _set(self, "n_test", _int("train.n_test", self.n_test, lo=1))
        _set(self, "mc_samples", _int("train.mc_samples", self.mc_samples, lo=2))
        _bool("train.mc_resample", self.mc_resample)
        _choice("train.init_v", self.init_v, INIT_V)
        _set(self, "alpha0", _float("train.alpha0", self.alpha0))
        _set(self, "v0_scale", _float("train.v0_scale", self.v0_scale, lo=0.0))
        _set(self, "offdiag0", _float("train.offdiag0", self.offdiag0))
        _set(self, "offdiag0_std", _float("train.offdiag0_std", self.offdiag0_std, lo=0.0))
        _choice("train.record", self.record, RECORD)
        _set(self, "n_records", _int("train.n_records", self.n_records, lo=2))
        _set(self, "seed", _int("train.seed", self.seed, lo=0))
        _set(self, "tie_tol", _float("train.tie_tol", self.tie_tol, lo=0.0, hi=1e-3))
        _set(self, "pa_margin", _float("train.pa_margin", self.pa_margin, lo=0.0))
        _choice("train.backend", self.backend, BACKENDS)
        dev = self.device
        if not isinstance(dev, str) or not (dev == "cpu" or dev.split(":")[0] == "cuda"):
            raise ValueError(f"train.device: must be 'cpu', 'cuda' or 'cuda:N' (got {dev!r})")
        if self.backend == "numpy" and dev != "cpu":
            raise ValueError(f"train.device: backend 'numpy' runs on 'cpu' only (got {dev!r})")
        _choice("train.dtype", self.dtype, DTYPES)
        if self.chunk_size == "auto":
            _set(self, "chunk_size", 0)
        _set(self, "chunk_size", _int("train.chunk_size", self.chunk_size, lo=0))
        if not (self.stream == "auto" or isinstance(self.stream, bool)):
            raise ValueError(f"train.stream: must be 'auto', true or false (got {self.stream!r})")
        _set(self, "max_configs", _int("train.max_configs", self.max_configs, lo=1))
        if self.engine == "empirical" and self.method not in ("auto",):
            raise ValueError(
                f"train.method: only used by engine='population' (got {self.method!r} with "
                "engine='empirical'); leave it 'auto'"
            )

    @property
    def lr_A_value(self) -> float:
        return self.lr_v if self.lr_A is None else self.lr_A


@dataclass(frozen=True)
class ExperimentConfig:
    """Data, model and training configuration of one run."""

    data: DataConfig = field(default_factory=DataConfig)
    model: ModelConfig = field(default_factory=ModelConfig)
    train: TrainConfig = field(default_factory=TrainConfig)

    def __post_init__(self) -> None:
        for name, cls in (("data", DataConfig), ("model", ModelConfig), ("train", TrainConfig)):
            value = getattr(self, name)
            if isinstance(value, Mapping):
                _set(self, name, section_from_dict(cls, name, value))
            elif not isinstance(value, cls):
                raise ValueError(f"{name}: must be a {cls.__name__} or a table (got {value!r})")

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

    def replace(self, **sections: Mapping[str, Any]) -> ExperimentConfig:
        """Copy with some fields changed, e.g. ``cfg.replace(train={"steps": 10})``."""
        new = {}
        for name in ("data", "model", "train"):
            sec = getattr(self, name)
            changes = dict(sections.pop(name, {}))
            check_keys(type(sec), name, changes)
            new[name] = dataclasses.replace(sec, **changes)
        if sections:
            raise ValueError(
                f"{next(iter(sections))}: unknown section (allowed: data, model, train)")
        return ExperimentConfig(**new)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        return {
            name: {
                f.name: getattr(getattr(self, name), f.name)
                for f in fields(getattr(self, name))
                if getattr(getattr(self, name), f.name) is not None
            }
            for name in ("data", "model", "train")
        }


def config_from_dict(d: Mapping[str, Any]) -> ExperimentConfig:
    """Build an [`ExperimentConfig`][] from ``{"data": {...}, "model": {...}, "train": {...}}``."""
    if not isinstance(d, Mapping):
        raise ValueError(f"config: must be a table (got {d!r})")
    for key in d:
        if key not in ("data", "model", "train", EXPERIMENT):
            raise ValueError(f"{key}: unknown section (allowed: data, model, train, {EXPERIMENT})")
    paper_of(d, (PAPER_NAME,), PAPER_NAME)  # a config of another paper is refused here
    return ExperimentConfig(
        **{
            name: section_from_dict(cls, name, d.get(name, {}))
            for name, cls in (("data", DataConfig), ("model", ModelConfig), ("train", TrainConfig))
        }
    )


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
