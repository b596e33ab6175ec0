"""The paper notes' §9 reference configuration and the line configurations that the claim
checks and the figures share."""

from __future__ import annotations

import math

from .config import DataConfig, ExperimentConfig, ModelConfig, TrainConfig

__all__ = ["REF_SETS", "REF_Q", "REF_DIAG", "reference_config", "line_config"]

#: Figure 4's partition read from the mask (notes §1.5), 0-based.
REF_SETS = [[0, 8], [1, 5], [2, 4], [3, 7], [6, 9]]
#: q = ln(d)/D with d = 100, D = 10 (third-party script S7, notes §1.5).
REF_Q = math.log(100) / 10
#: frozen diagonal ln ln 100 (S7).
REF_DIAG = math.log(math.log(100))


def reference_config(**train) -> ExperimentConfig:
    """Digest §9: D = 10, C = 2, Figure 4's sets, d = 100, q = ln(100)/10, cubic σ,
    temperature 1, value_scale 1, diagonal ln ln d, lr 0.1, alpha0 0.01, exact exchangeable
    engine. Keyword arguments override `TrainConfig` fields."""
    base = dict(lr_v=0.1, alpha0=0.01, steps=20_000, method="exchangeable")
    base.update(train)
    return ExperimentConfig(
        data=DataConfig(D=10, C=2, partition=REF_SETS, d=100, q=REF_Q),
        model=ModelConfig(activation="cubic", temperature=1.0, value_scale=1.0, diag="loglogd"),
        train=TrainConfig(**base),
    )


def line_config(D: int, C: int, d: int, q: float, diag="loglogd", activation="cubic", seed=0,
                **train) -> ExperimentConfig:
    """A config like the reference one with another (D, C, d, q): random partition seeded by
    `seed`, temperature 1, value_scale 1."""
    base = dict(lr_v=0.1, alpha0=0.01, steps=20_000, method="exchangeable")
    base.update(train)
    return ExperimentConfig(
        data=DataConfig(D=D, C=C, partition="random", d=d, q=q, seed=seed),
        model=ModelConfig(activation=activation, temperature=1.0, value_scale=1.0, diag=diag),
        train=TrainConfig(**base),
    )
