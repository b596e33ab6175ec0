"""Huang, Wen, Chi & Liang (2025), "A Theoretical Analysis of Self-Supervised Learning for
Vision Transformers" (ICLR 2025): masked reconstruction (MAE) in a one-layer softmax-attention
ViT learns feature-position (FP) correlations for every area, and an information gap Δ decides
whether it first passes a phase that decouples the global FP correlations; trained
contrastively (CL), it collapses onto the global area (Thm 4.4).

Rooms of this subpackage, the same skeleton as the first paper's (docs/architecture.md):
[`data`][theorylab.huang2024.data] (Def. 2.1, Def. 2.5), [`model`][theorylab.huang2024.model]
(Def. 2.4 and the reconstruction loss), [`cl`][theorylab.huang2024.cl] (Def. 2.6, Def. 2.7 and
the InfoNCE loss of the CL side), [`config`][theorylab.huang2024.config],
[`observables`][theorylab.huang2024.observables] (the recorded Φ and attention masses),
[`engines`][theorylab.huang2024.engines] (brute force, exchangeable exact sums, the Laplace
exact sum at any P, the reduced population dynamics at any P, Monte Carlo, empirical, CL Monte
Carlo; every one written once against the kernel's array backend),
[`trainer`][theorylab.huang2024.trainer], the readings shared by claims and figures
([`setups`][theorylab.huang2024.setups]: every shared config, ladder and run;
[`phases`][theorylab.huang2024.phases]: the one phase reading, t_I, t_II, T*, the values at
T*; ``predictions``: one module per derived result), ``claims`` (Thm 4.1 and its ε, Thm 4.2,
Lemma 5.1, Thm 4.4, their derivation checks, the real-image check), ``figures`` (Figures 1–4
with their CL side, the MAE dynamics, the phase diagram, the rates, the diversity, the
asymptotics over three decades of P, CL per temperature), [`bench`][theorylab.huang2024.bench]
(the engines timed against plain autograd) and [`testing`][theorylab.huang2024.testing].
Most formulas are RECONSTRUCTED (the paper's body could not be read); every reconstruction
choice is a config field. Paper notes: ``docs/papers/huang2024.md``.
"""

from __future__ import annotations

from theorylab.core.paper import Paper

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
from .data import AreaStructure, Batch, information_gap
from .engines import make_engine
from .model import FullQModel, mae_loss_grad
from .phases import READ_AT, missing_readings
from .trainer import TRAJECTORY_SCHEMA, RunResult, run_experiment

__all__ = [
    "PAPER",
    "PAPER_NAME",
    "TRAJECTORY_SCHEMA",
    "AreaStructure",
    "Batch",
    "DataConfig",
    "ExperimentConfig",
    "FullQModel",
    "ModelConfig",
    "RunResult",
    "TrainConfig",
    "config_from_dict",
    "config_to_toml",
    "information_gap",
    "load_config",
    "mae_loss_grad",
    "make_engine",
    "run_experiment",
]


def _load_claims() -> dict:
    from .claims import CLAIMS

    return CLAIMS


def _load_figures() -> None:
    from . import figures  # noqa: F401  (registers the figures)


def _bench():
    from .bench import BENCH

    return BENCH


def _phase_readings(trajectory, cfg=None) -> dict:
    """The paper's phase readings of one MAE run ([`phases.phase_readings`][theorylab.huang2024.
    phases.phase_readings]: t_I, t_II, T*, the end values; none for a CL run or a table without
    the local queries' columns) and, with a config, the realised information gap ``Delta`` of
    its sizes."""
    need = {"step", "phi_glob_lq", "phi_own_lq", "attn_own_lq"}
    out = {}
    if (cfg is None or cfg.model.objective == "mae") and need <= set(trajectory.columns):
        from .phases import read_phases

        out = dict(read_phases(trajectory, cfg))
    if cfg is not None:
        out["Delta"] = float(cfg.delta)
    return out


def _cost(cfg):
    from .cost import cost_model

    return cost_model(cfg)


def _describe(cfg: ExperimentConfig) -> str:
    """``MAE, P = 256, C1 = 192, C = 4 (Δ = 0.65), K = 1, γ = 0.5, population-laplace,
    η = 200``."""
    d, m, t = cfg.data, cfg.model, cfg.train
    what = "MAE" if m.objective == "mae" else "CL" + (f" (τ = {m.cl_temperature:g})" if
                                                     m.cl_temperature is not None else "")
    return (f"{what}, P = {d.P}, C1 = {d.global_size}, C = {d.local_size} (Δ = {cfg.delta:.2f}"
            f"), K = {d.K}, γ = {m.gamma:g}, {t.engine}, η = {t.lr:g}")


#: The symbols of the plots' axes and titles (``Paper.symbols``): config keys, trajectory
#: columns (lq: a local area's queries, gq: the global area's) and phase readings.
SYMBOLS = {
    "data.P": "$P$", "data.K": "$K$", "data.C1": "$C_1$", "data.C": "$C$",
    "data.Delta": r"$\Delta$", "Delta": r"$\Delta$", "data.kappa_c": r"$\kappa_c$",
    "data.kappa_s": r"$\kappa_s$", "data.L": "$L$", "data.U": "$U$",
    "model.gamma": r"$\gamma$", "model.cl_temperature": r"$\tau$", "train.lr": r"$\eta$",
    "train.n_train": "$N$",
    "loss": "$L$", "loss_star": "$L^*$", "excess_loss": "$L - L^*$",
    "phi_glob_lq": r"$\Phi_{\rm glob}$ (local queries)",
    "phi_own_lq": r"$\Phi_{\rm own}$ (local queries)",
    "phi_glob_gq": r"$\Phi_{\rm glob}$ (global queries)",
    "phi_own_gq": r"$\Phi_{\rm own}$ (global queries)",
    "attn_own_lq": "attention on own area (local queries)",
    "attn_glob_lq": "attention on global area (local queries)",
    "attn_masked_lq": "attention on masked keys (local queries)",
    "attn_own_gq": "attention on own area (global queries)",
    "attn_glob_gq": "attention on global area (global queries)",
    "attn_masked_gq": "attention on masked keys (global queries)",
    "t_I": r"$t_{\rm I}$", "t_II": r"$t_{\rm II}$", "T_star": "$T^*$",
    "len_I": r"length of Phase I", "len_II": r"length of Phase II",
    "phi_glob_end_I": r"$\Phi_{\rm glob}(t_{\rm I})$",
    "attn_glob_end_I": r"attention on global area at $t_{\rm I}$",
    "phi_own_T": r"$\Phi_{\rm own}(T^*)$", "phi_glob_T": r"$\Phi_{\rm glob}(T^*)$",
    "attn_own_T": r"attention on own area at $T^*$",
    "attn_gap_T": r"attention gap to $1 - \gamma^{C-1}$ at $T^*$",
}

#: This paper as the entry points see it.
PAPER = Paper(
    name=PAPER_NAME,
    title=("Huang, Wen, Chi & Liang (2025), A Theoretical Analysis of Self-Supervised Learning "
           "for Vision Transformers"),
    config_from_tables=config_from_dict,
    run=run_experiment,
    load_claims=_load_claims,
    load_figures=_load_figures,
    notes="docs/papers/huang2024.md",
    config_doc=config_doc,
    trajectory_schema=TRAJECTORY_SCHEMA,
    bench=_bench,
    phase_readings=_phase_readings,
    reading_times=READ_AT,
    missing_readings=missing_readings,
    describe=_describe,
    symbols=SYMBOLS,
    cost=_cost,
    time_step=lambda cfg: cfg.train.lr,
)
