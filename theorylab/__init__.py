"""theorylab: numerical verification of deep-learning theory.

First subject: Jelassi, Sander & Li (2022), "Vision Transformers provably learn spatial
structure". The public API is listed here; implementation modules are private or small.
"""

from ._activation import Activation
from ._backend import get_backend
from ._partition import Partition
from .config import (
    DataConfig,
    ExperimentConfig,
    ModelConfig,
    TrainConfig,
    config_from_dict,
    config_to_toml,
    load_config,
)
from .data import bayes_error, fstar, fstar_error, make_wstar, sample
from .engines import make_engine
from .model import PositionalAttentionModel, model_output
from .sweep import run_sweep
from .trainer import RunResult, run_experiment

__version__ = "0.1.0"

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
