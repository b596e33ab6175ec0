"""theorylab: numerical verification of deep-learning theory.

The kernel ([`theorylab.core`][]) holds what every paper shares; each paper has one subpackage
(``theorylab.jelassi2022``: Jelassi, Sander & Li (2022), "Vision Transformers provably learn
spatial structure"); [`theorylab.vision`][] holds the real-image side. The names below are the
first paper's public API, re-exported so that ``from theorylab import run_experiment`` keeps
working; ``theorylab.papers.PAPERS`` lists the papers the entry points know.
"""

from theorylab.core import __version__
from theorylab.core.backend import get_backend
from theorylab.jelassi2022 import (
    Activation,
    DataConfig,
    ExperimentConfig,
    ModelConfig,
    Partition,
    PositionalAttentionModel,
    RunResult,
    TrainConfig,
    bayes_error,
    config_from_dict,
    config_to_toml,
    fstar,
    fstar_error,
    load_config,
    make_engine,
    make_wstar,
    model_output,
    run_experiment,
    run_sweep,
    sample,
)

__all__ = [
    "Activation",
    "DataConfig",
    "ExperimentConfig",
    "ModelConfig",
    "Partition",
    "PositionalAttentionModel",
    "RunResult",
    "TrainConfig",
    "bayes_error",
    "config_from_dict",
    "config_to_toml",
    "fstar",
    "fstar_error",
    "get_backend",
    "load_config",
    "make_engine",
    "make_wstar",
    "model_output",
    "run_experiment",
    "run_sweep",
    "sample",
    "__version__",
]
