"""Every configuration and ladder that the first paper's claim checks, figures and docs share:
the paper notes' §9 reference setting, the readings of the RECONSTRUCTED choices (temperature,
start of v), and the ladders in d, D and N.

**Readings.** The printed eq. (T) has the temperature τ = √d; Simplification 3.1 sets d = D for
the positional part, which reads as τ = √D; the §9 reference setting uses τ = 1. With the
diagonal of A frozen, τ is not only a rescaling of A's learning rate: the frozen logit a/τ
changes (ln ln 100 = 1.53 is a logit 1.53 at τ = 1, 0.48 at τ = √10 and 0.15 at τ = 10), so
the start attention moves towards uniform as τ grows. [`with_readings`][] therefore scales A's
learning rate by τ² (the speed of the logits A/τ is then the same under every reading) and
leaves the diagonal at ln ln d, so that what a reading changes is the diagonal's logit alone.
The start of v is ``"random"`` (v⁰ ~ N(0, (ν²/d)·I_d) with ν = [`V0_NORM`][], the abstract's
"from random initialization"; its scale is not printed) or ``"aligned"`` (v⁰ = ν·w*, which
makes the reduction to (α, γ, ρ) exact from the start).
"""

from __future__ import annotations

import math

from .config import DataConfig, ExperimentConfig, ModelConfig, TrainConfig

__all__ = ["REF_SETS", "REF_Q", "REF_DIAG", "V0_NORM", "TEMPERATURES", "V_STARTS",
           "reference_config", "line_config", "temperature_value", "with_readings",
           "REF_SEEDS", "ADMISSIBLE_Q", "reference_q", "ESCAPE_D", "ESCAPE_SEEDS", "ESCAPE_LR",
           "BOUNDARY_D", "boundary_lr"]

#: Figure 4's partition read from the mask (notes §1.5), 0-based.
REF_SETS = [[0, 8], [1, 5], [2, 4], [3, 7], [6, 9]]
#: q = ln(d)/D with d = 100, D = 10 (third-party script S7, notes §1.5).
REF_Q = math.log(100) / 10
#: frozen diagonal ln ln 100 (S7).
REF_DIAG = math.log(math.log(100))
#: ‖v⁰‖ of both starts: the aligned start's α⁰ = 0.01 of the notes' §9, and the norm of the
#: random start (v⁰ ~ N(0, (V0_NORM²/d)·I_d)).
V0_NORM = 0.01
#: the temperature readings: value → label.
TEMPERATURES = {"1": "τ = 1 (§9 setting)", "sqrt(D)": "τ = √D (d = D, Simplification 3.1)",
                "sqrt(d)": "τ = √d (eq. (T) as printed)"}
#: the readings of the start of v.
V_STARTS = {"random": "v⁰ random, ‖v⁰‖ = 0.01", "aligned": "v⁰ = 0.01·w*"}
#: seeds of the reference runs from a random start.
REF_SEEDS = tuple(range(8))
#: the q at which a temperature reading's reference runs are judged when REF_Q lies beyond its
#: association boundary (τ = √d: q*(10) ≈ 0.40 at d = 100, below REF_Q = 0.46); the other
#: readings run at REF_Q.
ADMISSIBLE_Q = {"sqrt(d)": 0.30}
#: the d ladder of the phase-I escape time (two decades), its seeds and learning rate (ten times
#: the reference one: the escape time is ∝ 1/η at leading order, and GD stays within 0.1 % of
#: its flow at this step size, so the exponent in d does not depend on it).
ESCAPE_D = (10, 32, 100, 316, 1000)
ESCAPE_SEEDS = tuple(range(24))
ESCAPE_LR = 1.0
#: the D ladder of the association boundary q*(D) and of t_II (C = 2, d = 100).
BOUNDARY_D = (8, 12, 16, 24)


def boundary_lr(D: int) -> float:
    """The learning rate (v and A) of the D ladder: 0.25·(D/8)², so that phase II takes a
    similar number of steps at every D (t_II grows about like D³ in continuous time). Measured:
    GD at D = 32 with lr 4 and lr 2 reaches γ − ρ = 1 at continuous times η·t within 0.1 % of
    each other (and at D = 16 with lr 1 and 0.1), so the ladder follows the gradient flow."""
    return 0.25 * (D / 8) ** 2


def reference_config(**train) -> ExperimentConfig:
    """Digest §9: D = 10, C = 2, Figure 4's sets, d = 100, q = ln(100)/10, cubic σ,
    temperature 1, value_scale 1, diagonal ln ln d, lr 0.1, alpha0 0.01, exact exchangeable
    engine. Keyword arguments override `TrainConfig` fields."""
    return _config(DataConfig(D=10, C=2, partition=REF_SETS, d=100, q=REF_Q), "loglogd",
                   "cubic", train)


def line_config(D: int, C: int, d: int, q: float, diag="loglogd", activation="cubic", seed=0,
                **train) -> ExperimentConfig:
    """A config like the reference one with another (D, C, d, q): random partition seeded by
    `seed`, temperature 1, value_scale 1."""
    return _config(DataConfig(D=D, C=C, partition="random", d=d, q=q, seed=seed), diag,
                   activation, train)


def _config(data: DataConfig, diag, activation, train: dict) -> ExperimentConfig:
    """`data` with temperature 1, value_scale 1, lr 0.1, alpha0 0.01, 20 000 steps of the
    exact exchangeable engine, `train` overriding these."""
    base = dict(lr_v=0.1, alpha0=V0_NORM, steps=20_000, method="exchangeable")
    base.update(train)
    return ExperimentConfig(
        data=data,
        model=ModelConfig(activation=activation, temperature=1.0, value_scale=1.0, diag=diag),
        train=TrainConfig(**base),
    )


def reference_q(temperature: str) -> float:
    """The q of the reference runs under a temperature reading ([`ADMISSIBLE_Q`][], else
    [`REF_Q`][])."""
    return ADMISSIBLE_Q.get(temperature, REF_Q)


def temperature_value(reading: str, D: int, d: int) -> float:
    """τ of a temperature reading (``"1"``, ``"sqrt(D)"``, ``"sqrt(d)"``) at these sizes."""
    values = {"1": 1.0, "sqrt(D)": math.sqrt(D), "sqrt(d)": math.sqrt(d)}
    if reading not in values:
        raise ValueError(f"temperature: one of {list(TEMPERATURES)} (got {reading!r})")
    return values[reading]


def with_readings(cfg: ExperimentConfig, temperature: str = "1", v_start: str = "random"
                  ) -> ExperimentConfig:
    """`cfg` under a temperature reading (τ set, A's learning rate ×τ²; see the module) and a
    start of v (``"random"``: Gaussian with ‖v⁰‖ ≈ [`V0_NORM`][]; ``"aligned"``: v⁰ =
    V0_NORM·w*, exact exchangeable engine)."""
    cfg = cfg.resolved()
    tau = temperature_value(temperature, cfg.data.D, cfg.data.d)
    train = {"lr_A": cfg.train.lr_A_value * tau ** 2}
    population = cfg.train.engine == "population"
    if v_start == "random":
        train.update(init_v="gaussian", v0_scale=V0_NORM / math.sqrt(cfg.data.d),
                     method="montecarlo" if population else "auto", alpha0=V0_NORM)
    elif v_start == "aligned":
        train.update(init_v="aligned", alpha0=V0_NORM,
                     method="exchangeable" if population else "auto")
    else:
        raise ValueError(f"v_start: one of {list(V_STARTS)} (got {v_start!r})")
    return cfg.replace(model={"temperature": tau}, train=train)
