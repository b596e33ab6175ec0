"""Jelassi, Sander & Li (2022), "Vision Transformers provably learn spatial structure"
(NeurIPS 2022): a one-layer ViT with positional attention learns the partition of patches into
sets while gradient descent minimises a logistic loss.

Rooms of this subpackage, in the paper's order: [`partition`][theorylab.jelassi2022.partition]
and [`data`][theorylab.jelassi2022.data] (Definition 2.1, Assumption 1),
[`activation`][theorylab.jelassi2022.activation] and [`model`][theorylab.jelassi2022.model]
(eq. (T)), [`config`][theorylab.jelassi2022.config], [`engines`][theorylab.jelassi2022.engines]
(problems (P) and (E)), [`observables`][theorylab.jelassi2022.observables] (α, β, γ, ρ, patch
association), [`trainer`][theorylab.jelassi2022.trainer] (runs on the kernel's loop),
[`sweep`][theorylab.jelassi2022.sweep] (batched seeds × learning rates),
[`claims`][theorylab.jelassi2022.claims] (Theorems 3.1–5.1) and ``figures`` (the paper's
figures and theorylab's figures on the dynamics). Paper notes: ``docs/papers/jelassi2022.md``.
"""

from __future__ import annotations

from theorylab.core.paper import Paper

from .activation import Activation
from .config import (
    PAPER_NAME,
    DataConfig,
    ExperimentConfig,
    ModelConfig,
    TrainConfig,
    config_doc,
    config_from_dict,
    config_to_toml,
    load_config,
)
from .data import bayes_error, fstar, fstar_error, make_wstar, sample
from .engines import make_engine
from .model import PositionalAttentionModel, model_output
from .partition import Partition
from .phases import READ_AT, missing_readings
from .sweep import BATCHED, run_sweep
from .trainer import TRAJECTORY_SCHEMA, RunResult, run_experiment

__all__ = [
    "PAPER",
    "PAPER_NAME",
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
    "load_config",
    "make_engine",
    "make_wstar",
    "model_output",
    "run_experiment",
    "run_sweep",
    "sample",
]


def _load_claims():
    from .claims import CLAIMS

    return CLAIMS


def _load_figures() -> None:
    from . import figures  # noqa: F401  (registers the figures)


def _bench():
    from .bench import BENCH

    return BENCH


def _phase_readings(trajectory, cfg=None) -> dict:
    """The paper's phase readings ([`phases.phase_readings`][theorylab.jelassi2022.phases.
    phase_readings]) with the phase-III target of [`phases.pa_target`][theorylab.jelassi2022.
    phases.pa_target] (memoised; t_III NaN where it is too costly to compute); none for a
    table without α, γ and ρ."""
    if not {"step", "alpha", "gamma", "rho"} <= set(trajectory.columns):
        return {}
    from .phases import pa_target, read_phases

    return read_phases(trajectory, cfg, target_error=pa_target(cfg))


def _cost(cfg):
    from .cost import cost_model

    return cost_model(cfg)


def _describe(cfg: ExperimentConfig) -> str:
    """``D = 10, C = 2, d = 100, q = 0.46, cubic σ, population GD, η_v = 0.1``."""
    d, m, t = cfg.data, cfg.model, cfg.train
    act = m.activation if isinstance(m.activation, str) else "polynomial"
    return (f"D = {d.D}, C = {d.C}, d = {d.d}, q = {d.q:.3g}, {act} σ, {t.engine} GD "
            f"({t.method}), η_v = {t.lr_v:g}")


#: The symbols of the plots' axes and titles (``Paper.symbols``): config keys, trajectory
#: columns and phase readings.
SYMBOLS = {
    "data.D": "$D$", "data.C": "$C$", "data.L": "$L$", "data.d": "$d$", "data.q": "$q$",
    "train.lr_v": r"$\eta_v$", "train.lr_A": r"$\eta_A$", "train.alpha0": r"$\alpha_0$",
    "train.n_train": "$N$", "train.mc_samples": "Monte Carlo samples",
    "alpha": r"$\alpha$", "beta": r"$\beta$", "gamma": r"$\gamma$", "rho": r"$\rho$",
    "error_fair": "error (ties split)",
    "tie_mass": "mass of ties", "cos_v_wstar": r"$\cos(v, w^*)$",
    "sym_dev": "deviation from symmetry", "pa_gap": "patch-association margin",
    "patch_association": "patch association", "own_set_mass": "attention on own set",
    "t_I": r"$t_{\rm I}$", "t_II": r"$t_{\rm II}$", "t_PA": r"$t_{\rm PA}$",
    "t_III": r"$t_{\rm III}$",
}

#: This paper as the entry points see it.
PAPER = Paper(
    name=PAPER_NAME,
    title="Jelassi, Sander & Li (2022), Vision Transformers provably learn spatial structure",
    config_from_tables=config_from_dict,
    run=run_experiment,
    load_claims=_load_claims,
    load_figures=_load_figures,
    notes="docs/papers/jelassi2022.md",
    config_doc=lambda: config_doc(level=3),
    trajectory_schema=TRAJECTORY_SCHEMA,
    bench=_bench,
    batched=BATCHED,
    phase_readings=_phase_readings,
    reading_times=READ_AT,
    missing_readings=missing_readings,
    describe=_describe,
    symbols=SYMBOLS,
    cost=_cost,
    time_step=lambda cfg: cfg.train.lr_v if cfg.train.lr_v > 0 else cfg.train.lr_A_value,
    default=True,  # the configs written before the second paper name no paper
)
