"""Small shared builders for the tests (not a test module)."""

from __future__ import annotations

from theorylab import DataConfig, ExperimentConfig, ModelConfig, TrainConfig, make_wstar
from theorylab.jelassi2022.setups import REF_Q as FIG4_Q  # noqa: F401  (Figure 4's q)
from theorylab.jelassi2022.setups import REF_SETS as FIG4_SETS


def fig4_config(**train) -> ExperimentConfig:
    """The paper notes' §9 setting: Figure 4's partition, d = 100, q = ln(d)/D, cubic, τ = κ = 1."""
    model = train.pop("model", dict(activation="cubic", temperature=1.0, value_scale=1.0))
    return ExperimentConfig(
        data=DataConfig(D=10, partition=FIG4_SETS, d=100, q=FIG4_Q),
        model=ModelConfig(**model),
        train=TrainConfig(**train),
    ).resolved()


def small_config(D=6, C=2, d=5, q=0.4, seed=0, model=None, **train) -> ExperimentConfig:
    model = model or dict(activation="cubic", temperature=1.0, value_scale=1.0, diag=0.7)
    return ExperimentConfig(
        data=DataConfig(D=D, C=C, partition="random", d=d, q=q, seed=seed),
        model=ModelConfig(**model),
        train=TrainConfig(**train),
    ).resolved()


def parts(cfg):
    return cfg.data.make_partition(), make_wstar(cfg.data)
