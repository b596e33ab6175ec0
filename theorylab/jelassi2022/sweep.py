"""Sweeps of empirical runs over seeds and learning rates in one batched computation.

[`run_sweep`][] runs the grid seeds × lr_v × lr_A of problem (E) (Jelassi et al. (2022)) with
[`BatchedEmpiricalEngine`][theorylab.jelassi2022.engines.BatchedEmpiricalEngine]: every run is the
[`run_experiment`][theorylab.run_experiment] run of its own (seed, lr_v, lr_A), computed
together with the others in one launch sequence per step.
"""

from __future__ import annotations

import itertools
import numbers
import sys
import warnings
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from theorylab.core.backend import Backend, get_backend
from theorylab.core.config import check_float, check_int
from theorylab.core.paper import BatchedRun

from .config import ExperimentConfig, as_config, setting_of
from .data import make_wstar
from .engines import BatchedEmpiricalEngine
from .observables import fair_error, track
from .trainer import TRAJECTORY_SCHEMA, record_steps

__all__ = ["BATCHED", "SWEEP_SCHEMA", "batched_point_config", "run_sweep"]


def _values(name: str, values, check) -> list:
    """``values`` as a non-empty list, each checked by ``check(name, value)`` (one-line
    ``ValueError`` naming ``name`` and the offending value)."""
    if isinstance(values, (str, bytes)) or not isinstance(values, Iterable):
        raise ValueError(f"{name}: must be a list (got {values!r})")
    values = list(values)
    if not values:
        raise ValueError(f"{name}: must be a non-empty list (got [])")
    return [check(name, v) for v in values]


def _seed(name, value) -> int:
    # an int or numpy integer; 1.5 and 2.0 are refused, never truncated
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise ValueError(f"{name}: must be integers (got {value!r})")
    return check_int(name, value, lo=0)


def _lr(name, value) -> float:
    return check_float(name, value, lo=0.0)


#: The columns read from the batched evaluation, one value per run.
_EVAL_COLUMNS = ("loss", "error", "tie_mass", "loss_se", "error_se", "train_loss")
#: Column → dtype of a sweep table: the run's identity, then [`TRAJECTORY_SCHEMA`][].
SWEEP_SCHEMA: dict[str, str] = {
    "run": "int64",
    "seed": "int64",
    "lr_v": "float64",
    "lr_A": "float64",
    **TRAJECTORY_SCHEMA,
}


def batched_point_config(tables: Mapping[str, Any], cfg: dict) -> dict:
    """A sweep's batched point of this paper: ``cfg`` (the point's resolved tables) must run
    the empirical engine; ``train.lr_A`` stays tied to each run's ``lr_v`` unless the spec's
    ``tables`` set it (as in a "run" point)."""
    if cfg["train"]["engine"] != "empirical":
        raise ValueError(f"sweep.point: 'batched' needs train.engine = 'empirical' (got "
                         f"{cfg['train']['engine']!r})")
    if tables.get("train", {}).get("lr_A") is None:
        cfg["train"].pop("lr_A")
    return cfg


#: The sweep's batched points of this paper: seeds × ``train.lr_v`` in one [`run_sweep`][].
BATCHED = BatchedRun(function=f"{__name__}:run_sweep", axis="train.lr_v",
                     by=("run", "seed", "lr_v", "lr_A"), prepare=batched_point_config)


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
    - `seeds`: distinct values of ``train.seed`` (data, A⁰, v⁰), integers >= 0; default
      ``[train.seed]``.
    - `lr_v`: learning rates of v, finite numbers >= 0; default ``[train.lr_v]``.
    - `lr_A`: learning rates of A, finite numbers >= 0; default ``[train.lr_A]``, or each
      run's ``lr_v`` when ``train.lr_A`` is unset (the tie of
      [`TrainConfig`][theorylab.TrainConfig]).
    - `xp`: a backend (default from ``cfg.train``). `progress`: tqdm bar (default: on a tty).

    Bad arguments (an empty list, a seed that is not an integer, a learning rate that is a
    string, negative or not finite, a `cfg` that is neither a config nor a table of sections)
    raise a one-line ``ValueError`` that names the argument and the offending value.

    Returns one row per (run, recorded step), columns [`SWEEP_SCHEMA`][]: ``run``, ``seed``,
    ``lr_v``, ``lr_A`` and the columns of ``trajectory.csv``. A run whose loss or gradient stops
    being finite stops getting rows (a warning names it); the other runs go on.
    """
    from tqdm.auto import tqdm

    cfg = as_config(cfg)
    if xp is not None and not isinstance(xp, Backend):
        raise ValueError(f"xp: must be a Backend (get_backend(...); got {xp!r})")
    if cfg.train.engine != "empirical":
        raise ValueError(f"train.engine: run_sweep needs 'empirical' (got {cfg.train.engine!r})")
    tied = cfg.train.lr_A is None
    s = setting_of(cfg)
    cfg, t, partition = s.cfg, s.cfg.train, s.partition
    seeds = [t.seed] if seeds is None else _values("seeds", seeds, _seed)
    if len(set(seeds)) != len(seeds):
        raise ValueError(f"seeds: must be distinct (got {seeds})")
    lr_v = [t.lr_v] if lr_v is None else _values("lr_v", lr_v, _lr)
    if lr_A is None:
        lrs = [(a, a if tied else t.lr_A_value) for a in lr_v]
    else:
        lrs = list(itertools.product(lr_v, _values("lr_A", lr_A, _lr)))
    wstar = make_wstar(cfg.data)
    xp = xp or get_backend(t.backend, t.dtype, t.device, section="train.")
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
                            **{k: getattr(ev, k)[b] for k in _EVAL_COLUMNS},
                            "error_fair": fair_error(ev.error[b], ev.tie_mass[b]),
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
    df = pd.DataFrame(rows, columns=list(SWEEP_SCHEMA)).astype(SWEEP_SCHEMA)
    return df.sort_values(["run", "step"], kind="stable").reset_index(drop=True)

