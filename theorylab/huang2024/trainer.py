"""Runs of Huang et al. (2025)'s MAE problem: [`run_experiment`][] on the kernel's GD loop.

One row per recorded step (schema [`TRAJECTORY_SCHEMA`][]). The loop itself (recording,
checkpoints, resume, divergence stop, progress) is [`theorylab.core.trainer.train`][].
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

from theorylab.core import flow as core_flow
from theorylab.core.flow import run_section
from theorylab.core.trainer import DivergenceError, same_config_except_steps

from .config import ExperimentConfig, config_to_toml, load_config
from .data import AreaStructure
from .engines import RECORD_COLUMNS, MAEEngine, make_engine

__all__ = ["TRAJECTORY_SCHEMA", "DivergenceError", "RunResult", "excess_text",
           "lstar_missing_reason", "run_experiment"]

#: Column → dtype of ``trajectory.csv``.
#:
#: - ``loss``: exact population loss (``population-brute``/``-exact``/``-laplace``), a Monte
#:   Carlo estimate with standard error ``loss_se`` (NaN otherwise), or the training loss
#:   (``empirical``); ``loss_star``: its infimum L* where computable (masked keys in the
#:   softmax; the batch's own infimum for ``empirical``), else NaN (the reason:
#:   [`lstar_missing_reason`][]); ``excess_loss`` = L − L*. Every column is described in
#:   docs/huang2024-outputs.md.
#: - ``phi_own_*``, ``phi_glob_*``: mean FP correlation Φ[p, v_{k,own area}] and
#:   Φ[p, v_{k,global}] over (cluster, patch) pairs with p in the global area (``gq``) or in a
#:   local area (``lq``).
#: - ``attn_own_*``, ``attn_glob_*``, ``attn_masked_*``: attention of a masked query on the
#:   unmasked keys of its own area, on the unmasked keys of the global area, and on the masked
#:   keys, averaged over the data, the masks and the query patches of each kind. With
#:   ``cl-montecarlo`` (``model.objective = "cl"``) every query patch of both views counts (a
#:   CL query is positional whether masked or not), ``loss_se`` is the standard error over the
#:   batch's images and ``loss_star``, ``excess_loss`` are NaN.
TRAJECTORY_SCHEMA: dict[str, str] = {
    "step": "int64",
    **{c: "float64" for c in RECORD_COLUMNS if c != "engine"},
    "engine": "string",
}


@dataclass
class RunResult(core_flow.RunResult):
    """Outcome of [`run_experiment`][]: the trajectory, the final (Φ, Υ) and provenance."""

    Phi: np.ndarray
    Ups: np.ndarray
    structure: AreaStructure

    def summary_values(self, last) -> dict[str, str]:
        return {"Delta": f"{self.config.delta:.4g}", "loss": f"{last['loss']:.6g}",
                "excess": excess_text(self.config, last["excess_loss"]),
                **{k: f"{last[k]:.4g}" for k in ("phi_own_lq", "phi_glob_lq", "attn_own_lq",
                                                   "attn_own_gq")}}


def lstar_missing_reason(cfg: ExperimentConfig) -> str | None:
    """Why ``loss_star`` (and so ``excess_loss``) is NaN for runs of ``cfg``, or None when
    the engine computes it (docs/huang2024-outputs.md)."""
    if cfg.model.objective == "cl":
        return "no infimum is known for the CL objective"
    if not cfg.model.mask_keys:
        return "L* has no closed form with masked keys left out of the softmax"
    return None


def excess_text(cfg: ExperimentConfig, value: float) -> str:
    """The excess loss for the summary line: the number, or ``n/a (<reason>)``."""
    if np.isfinite(value):
        return f"{value:.6g}"
    why = lstar_missing_reason(cfg)
    return f"n/a ({why})" if why else f"{value:.6g}"


def run_experiment(cfg: ExperimentConfig, *, out: str | Path | None = None, resume: bool = False,
                   progress: bool | None = None, engine: MAEEngine | None = None) -> RunResult:
    """Run gradient descent as ``cfg`` says; return the trajectory and the final state.

    ``out``: folder for ``trajectory.csv``, ``config.toml`` (resolved), ``checkpoint.npz`` and
    ``final_state.npz``; ``resume``: continue from ``out/checkpoint.npz`` (``train.steps`` may
    grow); ``engine``: a prebuilt engine (default: the one ``cfg.train.engine`` names).
    Raises [`DivergenceError`][] (after writing the rows so far) when a value is not finite."""
    cfg = cfg.resolved()
    engine = engine or make_engine(cfg)

    def result(outcome) -> RunResult:
        p = outcome.params
        return RunResult(outcome.trajectory, engine.name, cfg, outcome.steps_done, p.Phi, p.Ups,
                         engine.structure)

    flow = ", gradient flow" if cfg.train.mode == "flow" else ""
    return run_section(
        engine, cfg.train, result=result, schema=TRAJECTORY_SCHEMA,
        config_text=config_to_toml(cfg, f"theorylab resolved configuration (engine: "
                                        f"{engine.name}, Delta = {cfg.delta:.6g}{flow})"),
        out=out, resume=resume, same_run=same_config_except_steps(cfg, load_config),
        progress=progress)
