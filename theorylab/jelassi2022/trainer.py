"""Runs of Jelassi et al. (2022): [`run_experiment`][] on the kernel's training loop.

One row per recorded step (schema [`TRAJECTORY_SCHEMA`][]): the engine's loss and error, and the
quantities of [`theorylab.jelassi2022.observables`][]. The loop itself (recording, checkpoints,
resume, divergence stop, progress) is [`theorylab.core.trainer.train`][].
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from theorylab.core import flow as core_flow
from theorylab.core.flow import run_section
from theorylab.core.trainer import DivergenceError, record_schedule, same_config_except_steps

from .config import ExperimentConfig, TrainConfig, config_to_toml, load_config, setting_of
from .data import make_wstar
from .engines import Engine, make_engine
from .observables import TRACKED_COLUMNS
from .partition import Partition

__all__ = [
    "TRAJECTORY_SCHEMA",
    "DivergenceError",
    "RunResult",
    "record_steps",
    "run_experiment",
]

#: Column → dtype of ``trajectory.csv``. ``loss``/``error``: exact population values (exact
#: engines), estimates with standard errors ``loss_se``/``error_se`` (Monte Carlo), or test-set
#: values (empirical; ``train_loss`` is the training objective). ``error`` counts F = 0 as an
#: error; ``tie_mass`` = P[F = 0]; ``error_fair`` = ``error − tie_mass/2``, the error of a fair
#: coin on ties (the one to compare with the Bayes error and with empirical errors, whose
#: ties the noise part of v breaks at random). ``pa_gap``: the logit margin of patch
#: association ([`theorylab.jelassi2022.observables.pa_gap`][]); ``patch_association`` uses
#: ``train.pa_margin``. NaN where not defined.
TRAJECTORY_SCHEMA: dict[str, str] = {
    "step": "int64",
    "loss": "float64",
    "error": "float64",
    "tie_mass": "float64",
    "error_fair": "float64",
    "loss_se": "float64",
    "error_se": "float64",
    "train_loss": "float64",
    "alpha": "float64",
    "beta": "float64",
    "cos_v_wstar": "float64",
    "gamma": "float64",
    "rho": "float64",
    "sym_dev": "float64",
    "patch_association": "bool",
    "pa_gap": "float64",
    "own_set_mass": "float64",
    "engine": "string",
}
assert set(TRACKED_COLUMNS) <= set(TRAJECTORY_SCHEMA)


@dataclass
class RunResult(core_flow.RunResult):
    """Outcome of [`run_experiment`][]: the trajectory table, the final state and provenance."""

    A: np.ndarray
    v: np.ndarray
    wstar: np.ndarray
    partition: Partition

    def summary_values(self, last) -> dict[str, str]:
        return {**{k: f"{last[k]:.6g}" for k in ("loss", "error", "alpha", "gamma", "rho")},
                "patch_association": str(bool(last["patch_association"]))}


def record_steps(train: TrainConfig) -> np.ndarray:
    """Steps at which a row is recorded: always 0 and ``steps``; log-spaced, linear or all."""
    return record_schedule(train.steps, train.n_records, train.record)


def run_experiment(
    cfg: ExperimentConfig,
    *,
    out: str | Path | None = None,
    resume: bool = False,
    progress: bool | None = None,
    engine: Engine | None = None,
    initial: dict[str, np.ndarray] | None = None,
) -> RunResult:
    """Run gradient descent as ``cfg`` says; return the trajectory and the final state.

    **Arguments:**

    - `cfg`: the experiment, an [`ExperimentConfig`][theorylab.jelassi2022.config.ExperimentConfig]
      or a table of sections (defaults are resolved here; anything else is a one-line
      `ValueError`).
    - `out`: folder for ``trajectory.csv`` (rows appended as they are recorded),
      ``config.toml``, ``checkpoint.npz`` (at most every
      [`CHECKPOINT_SECONDS`][theorylab.core.runfolder.CHECKPOINT_SECONDS]) and
      ``final_state.npz``; see [`theorylab.core.trainer`][] for what a fault leaves there.
    - `resume`: continue from ``out/checkpoint.npz`` if present (``train.steps`` may grow;
      a damaged, foreign or too-far checkpoint is refused with ``ValueError("resume: ...")``).
    - `progress`: show a tqdm bar; default: only when stderr is a terminal.
    - `engine`: a prebuilt engine (for tests and benchmarks); default [`make_engine`][].
    - `initial`: start from a given state instead of the configured initialisation:
      ``{"A": (D, D) array}`` and/or ``{"v": (d,) array}`` (the other one from the config),
      e.g. a pre-trained A for fine-tuning with ``lr_A = 0`` (Theorem 5.1). The diagonal of the
      given A is kept as it is (frozen).

    Raises [`DivergenceError`][] (after writing the rows so far) when a value stops being finite.
    """
    s = setting_of(cfg)
    if resume and out is None:
        raise ValueError("resume: needs an output folder (got out=None)")
    cfg, partition = s.cfg, s.partition
    wstar = make_wstar(cfg.data)
    engine = engine or make_engine(cfg, partition, wstar)
    params = None
    if initial is not None and not isinstance(initial, Mapping):
        raise ValueError(f"initial: must be a mapping {{'A': array, 'v': array}} (got "
                         f"{type(initial).__name__})")
    if initial:
        unknown = set(initial) - {"A", "v"}
        if unknown:
            raise ValueError(f"initial: unknown keys {sorted(unknown)} (allowed: A, v)")
        A0, v0 = engine.state(engine.initial_params())
        arrays = {}
        for key, default in (("A", A0), ("v", v0)):
            given = initial.get(key, default)
            try:
                arrays[key] = arr = np.asarray(given, dtype=np.float64)
            except (TypeError, ValueError):
                raise ValueError(f"initial: {key} must be an array of numbers "
                                 f"(got {given!r:.80})") from None
            if arr.shape != default.shape:
                raise ValueError(f"initial: A must be {A0.shape} and v {v0.shape}")
            if not np.all(np.isfinite(arr)):
                raise ValueError(f"initial: {key} has non-finite entries (NaN or infinity)")
        params = engine.params_from_arrays(arrays)

    def result(outcome) -> RunResult:
        A, v = engine.state(outcome.params)
        return RunResult(outcome.trajectory, engine.name, cfg, outcome.steps_done, A, v, wstar,
                         partition)

    header = f"theorylab resolved configuration (engine: {engine.name})"
    if cfg.train.mode == "flow":
        header += ", gradient flow"
        if getattr(engine, "name", "") == "population-montecarlo" and cfg.train.mc_resample:
            raise ValueError("train.mode: 'flow' needs a deterministic gradient; method 'auto' "
                             "chose Monte Carlo with fresh draws per step (set "
                             "mc_resample = false, or start aligned for an exact method)")
    return run_section(engine, cfg.train, result=result, schema=TRAJECTORY_SCHEMA,
                       config_text=config_to_toml(cfg, header), out=out, resume=resume,
                       same_run=same_config_except_steps(cfg, load_config), params=params,
                       progress=progress)
