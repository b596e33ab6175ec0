"""The gradient-descent loop shared by every paper: recording, checkpoints, resume, faults.

[`train`][] drives any [`Engine`][theorylab.core.engine.Engine]: it evaluates, records a row at
the scheduled steps (log-spaced by default, the right grid for plateau-and-escape dynamics),
writes the run folder atomically after every recorded step, resumes from it, and stops with
[`DivergenceError`][] when a watched value stops being finite. The paper supplies the engine,
the row schema and its configuration's TOML text; nothing here knows what a paper computes.

A run folder holds ``config.toml`` (the resolved configuration), ``trajectory.csv`` (one row per
recorded step), ``checkpoint.npz`` (the parameters at the last recorded step, for resume) and,
once the run is done, ``final_state.npz``.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import atomic_io
from .engine import Engine

__all__ = [
    "DivergenceError",
    "RECORD_MODES",
    "TrainOutcome",
    "empty_table",
    "record_schedule",
    "train",
]

#: Ways of spacing the recorded steps (``train.record`` of a config).
RECORD_MODES = ("log", "linear", "all")


class DivergenceError(FloatingPointError):
    """A run produced a non-finite value. ``step`` and ``quantity`` say where; ``result`` holds
    the rows recorded before it (also written to disk when the run has an output folder): a
    [`TrainOutcome`][] from [`train`][], the paper's own result type from a paper's runner."""

    def __init__(self, step: int, quantity: str, result: Any = None) -> None:
        super().__init__(f"run diverged at step {step}: {quantity} is not finite (NaN or overflow)")
        self.step = step
        self.quantity = quantity
        self.result = result


@dataclass
class TrainOutcome:
    """What [`train`][] returns: the recorded table, the final parameters, the engine."""

    trajectory: pd.DataFrame
    params: Any
    engine: Engine
    steps_done: int


def record_schedule(steps: int, n_records: int, mode: str = "log") -> np.ndarray:
    """Steps at which a row is recorded: always 0 and ``steps``; ``n_records`` log-spaced or
    linear ones, or every step (``mode = "all"`` or ``steps <= n_records``)."""
    if mode not in RECORD_MODES:
        raise ValueError(f"record: must be one of {list(RECORD_MODES)} (got {mode!r})")
    T = steps
    if mode == "all" or T <= n_records:
        return np.arange(T + 1)
    if mode == "linear":
        s = np.linspace(0, T, n_records)
    else:
        s = np.concatenate([[0], np.geomspace(1, T, n_records - 1)])
    return np.unique(np.concatenate([np.round(s).astype(np.int64), [0, T]]))


def empty_table(schema: Mapping[str, str]) -> pd.DataFrame:
    """A table with no rows and the columns and dtypes of ``schema``."""
    return pd.DataFrame({k: pd.Series(dtype=v) for k, v in schema.items()})


def _to_frame(rows: list[dict], schema: Mapping[str, str]) -> pd.DataFrame:
    if not rows:
        return empty_table(schema)
    return pd.DataFrame(rows, columns=list(schema)).astype(dict(schema))


def _check_finite(step: int, named: Mapping[str, object]) -> None:
    for name, value in named.items():
        arr = np.asarray(value, dtype=np.float64) if not hasattr(value, "detach") else (
            value.detach().cpu().numpy()
        )
        if not np.all(np.isfinite(arr)):
            raise DivergenceError(step, name)


def _grad_items(grads) -> dict:
    if isinstance(grads, Mapping):
        return {f"gradient of {k}": v for k, v in grads.items()}
    return {"gradient": grads}


class RunFolder:
    """The run folder: ``config.toml``, ``trajectory.csv``, ``checkpoint.npz``,
    ``final_state.npz``, each written atomically."""

    def __init__(self, out: Path, schema: Mapping[str, str]) -> None:
        self.out, self.schema = Path(out), schema
        self.out.mkdir(parents=True, exist_ok=True)

    def write_config(self, text: str) -> None:
        atomic_io.atomic_write_text(self.out / "config.toml", text)

    def write_rows(self, rows: list[dict]) -> None:
        atomic_io.write_csv(self.out / "trajectory.csv", _to_frame(rows, self.schema))

    def checkpoint(self, step: int, arrays: Mapping[str, np.ndarray]) -> None:
        atomic_io.write_npz(self.out / "checkpoint.npz", step=np.array(step), **arrays)

    def final(self, arrays: Mapping[str, np.ndarray]) -> None:
        atomic_io.write_npz(self.out / "final_state.npz", **arrays)

    def load(self, engine: Engine, same_run: Callable[[Path], None]):
        """(step, params, rows) of an earlier run in this folder, or None when there is none.

        ``same_run(config_path)`` raises ``ValueError`` when the saved configuration describes
        another run."""
        ckpt, traj = self.out / "checkpoint.npz", self.out / "trajectory.csv"
        if not ckpt.exists() or not traj.exists():
            return None
        same_run(self.out / "config.toml")
        with np.load(ckpt) as z:
            step = int(z["step"])
            params = engine.params_from_arrays({k: z[k] for k in z.files if k != "step"})
        table = pd.read_csv(traj).astype(dict(self.schema))
        rows = [r for r in table.to_dict("records") if r["step"] <= step]
        return step, params, rows


def train(
    engine: Engine,
    *,
    steps: int,
    schedule: Iterable[int],
    schema: Mapping[str, str],
    config_text: str = "",
    out: str | Path | None = None,
    resume: bool = False,
    same_run: Callable[[Path], None] | None = None,
    params: Any = None,
    progress: bool | None = None,
) -> TrainOutcome:
    """Run ``steps`` gradient-descent steps of ``engine``; record a row at each step of
    ``schedule``.

    **Arguments:**

    - `engine`: the problem ([`Engine`][theorylab.core.engine.Engine]).
    - `steps`: the number of GD steps; rows are recorded at the steps of `schedule` (0 to
      `steps`), each with the columns of `schema` (``step`` and ``engine.record(...)``).
    - `config_text`: the ``config.toml`` written into `out`.
    - `out`: the run folder (see [`RunFolder`][]); None: nothing is written.
    - `resume`: continue from ``out/checkpoint.npz`` if present; `same_run(path)` must raise
      ``ValueError`` when the configuration saved at `path` is another run.
    - `params`: start from these parameters instead of ``engine.initial_params()``.
    - `progress`: show a tqdm bar; default: only when stderr is a terminal.

    Raises [`DivergenceError`][] (after writing the rows so far) when a watched value, a recorded
    parameter array or a gradient stops being finite.
    """
    from tqdm.auto import tqdm

    folder = RunFolder(Path(out), schema) if out is not None else None
    schedule = set(int(s) for s in schedule)
    start, rows = 0, []
    if resume and folder is not None:
        loaded = folder.load(engine, same_run or (lambda path: None))
        if loaded is not None:
            start, params, rows = loaded
    if params is None:
        params = engine.initial_params()
    if folder is not None:
        folder.write_config(config_text)

    show = sys.stderr.isatty() if progress is None else progress
    bar = tqdm(total=steps, initial=start, disable=not show, desc=engine.name, leave=False)
    recorded = {int(r["step"]) for r in rows}
    try:
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            for step in range(start, steps + 1):
                record = step in schedule and step not in recorded
                ev = engine.evaluate(params, step, need_grad=step < steps, record=record)
                _check_finite(step, engine.watched(ev))
                if record:
                    arrays = engine.params_to_arrays(params)
                    _check_finite(step, arrays)
                    rows.append({"step": step, **engine.record(params, step, ev)})
                    recorded.add(step)
                    if folder is not None:
                        folder.write_rows(rows)
                        folder.checkpoint(step, arrays)
                if step < steps:
                    _check_finite(step, _grad_items(ev.grads))
                    params = engine.apply(params, ev.grads)
                    bar.update(1)
    except DivergenceError as err:
        err.result = TrainOutcome(_to_frame(rows, schema), params, engine, err.step)
        if folder is not None:
            folder.write_rows(rows)
        raise
    finally:
        bar.close()
    if folder is not None:
        folder.write_rows(rows)
        folder.final(engine.final_arrays(params))
    return TrainOutcome(_to_frame(rows, schema), params, engine, steps)
