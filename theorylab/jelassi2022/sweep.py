"""Sweeps of empirical runs over seeds and learning rates in one batched computation (issue 6).

[`run_sweep`][] runs the grid seeds × lr_v × lr_A of problem (E) (Jelassi et al. (2022)) with
[`BatchedEmpiricalEngine`][theorylab.jelassi2022.engines.BatchedEmpiricalEngine]: every run is the
[`run_experiment`][theorylab.run_experiment] run of its own (seed, lr_v, lr_A), computed
together with the others in one launch sequence per step.
"""

from __future__ import annotations

import itertools
import sys
import warnings

import numpy as np
import pandas as pd

from theorylab.core.backend import Backend, get_backend

from .config import ExperimentConfig
from .data import make_wstar
from .engines import BatchedEmpiricalEngine
from .observables import fair_error, track
from .trainer import TRAJECTORY_SCHEMA, record_steps

__all__ = ["SWEEP_SCHEMA", "run_sweep"]

#: Column → dtype of a sweep table: the run's identity, then [`TRAJECTORY_SCHEMA`][].
SWEEP_SCHEMA: dict[str, str] = {
    "run": "int64",
    "seed": "int64",
    "lr_v": "float64",
    "lr_A": "float64",
    **TRAJECTORY_SCHEMA,
}


def run_sweep(
    cfg: ExperimentConfig,
    seeds=None,
    lr_v=None,
    lr_A=None,
    *,
    xp: Backend | None = None,
    progress: bool | None = None,
) -> pd.DataFrame:
    """Run the grid seeds × lr_v × lr_A of empirical GD as one batch; return a tidy table.

    **Arguments:**

    - `cfg`: the shared configuration (``train.engine = "empirical"``); ``train.backend``,
      ``device``, ``dtype``, ``chunk_size`` and ``stream`` apply to the whole batch.
    - `seeds`: distinct values of ``train.seed`` (data, A⁰, v⁰); default ``[train.seed]``.
    - `lr_v`: learning rates of v; default ``[train.lr_v]``.
    - `lr_A`: learning rates of A; default ``[train.lr_A]``, or each run's ``lr_v`` when
      ``train.lr_A`` is unset (the tie of [`TrainConfig`][theorylab.TrainConfig]).
    - `xp`: a backend (default from ``cfg.train``). `progress`: tqdm bar (default: on a tty).

    Returns one row per (run, recorded step), columns [`SWEEP_SCHEMA`][]: ``run``, ``seed``,
    ``lr_v``, ``lr_A`` and the columns of ``trajectory.csv``. A run whose loss or gradient stops
    being finite stops getting rows (a warning names it); the other runs go on.
    """
    from tqdm.auto import tqdm

    if cfg.train.engine != "empirical":
        raise ValueError(f"train.engine: run_sweep needs 'empirical' (got {cfg.train.engine!r})")
    tied = cfg.train.lr_A is None
    cfg = cfg.resolved()
    t = cfg.train
    seeds = [t.seed] if seeds is None else list(seeds)
    lr_v = [t.lr_v] if lr_v is None else [float(a) for a in lr_v]
    if lr_A is None:
        lrs = [(a, a if tied else t.lr_A_value) for a in lr_v]
    else:
        lrs = list(itertools.product(lr_v, [float(b) for b in lr_A]))
    partition = cfg.data.make_partition()
    wstar = make_wstar(cfg.data)
    xp = xp or get_backend(t.backend, t.dtype, t.device)
    engine = BatchedEmpiricalEngine(cfg, xp, partition, wstar, seeds, lrs)
    runs = engine.runs()
    schedule = set(int(s) for s in record_steps(t))
    alive = np.ones(engine.B, dtype=bool)
    rows: list[dict] = []
    params = engine.initial_params()
    show = sys.stderr.isatty() if progress is None else progress
    bar = tqdm(total=t.steps, disable=not show, desc="sweep", leave=False)
    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            for step in range(t.steps + 1):
                record = step in schedule
                ev = engine.evaluate(params, step, need_grad=step < t.steps, record=record)
                alive &= np.isfinite(ev.train_loss)
                if step < t.steps:
                    for g in ev.grads.values():
                        g = np.asarray(xp.to_numpy(g)).reshape(engine.B, -1)
                        alive &= np.isfinite(g).all(axis=1)
                if record:
                    A, v = engine.state(params)
                    for b in np.flatnonzero(alive & np.isfinite(A).all((1, 2))
                                            & np.isfinite(v).all(1)):
                        rows.append({
                            **runs[b],
                            "step": step,
                            "loss": ev.loss[b],
                            "error": ev.error[b],
                            "tie_mass": ev.tie_mass[b],
                            "error_fair": fair_error(ev.error[b], ev.tie_mass[b]),
                            "loss_se": ev.loss_se[b],
                            "error_se": ev.error_se[b],
                            "train_loss": ev.train_loss[b],
                            **track(A[b], v[b], wstar, partition, cfg.temperature,
                                    cfg.train.pa_margin),
                            "engine": engine.name,
                        })
                if step < t.steps:
                    params = engine.apply(params, ev.grads)
                    bar.update(1)
    finally:
        bar.close()
    dead = [runs[b] for b in np.flatnonzero(~alive)]
    if dead:
        warnings.warn(f"run_sweep: {len(dead)} run(s) diverged (non-finite values): {dead}",
                      RuntimeWarning, stacklevel=2)
    df = pd.DataFrame(rows, columns=list(SWEEP_SCHEMA))
    if not rows:
        df = pd.DataFrame({k: pd.Series(dtype=v) for k, v in SWEEP_SCHEMA.items()})
    df = df.astype(SWEEP_SCHEMA)
    return df.sort_values(["run", "step"], kind="stable").reset_index(drop=True)

