"""The gradient-descent loop shared by every paper: recording, checkpoints, resume, faults.

[`train`][] drives any [`Engine`][theorylab.core.engine.Engine]: it evaluates, records a row at
the scheduled steps (log-spaced by default, the right grid for plateau-and-escape dynamics),
writes the run folder atomically after every recorded step, resumes from it, and stops with
[`DivergenceError`][] when a watched value stops being finite. The paper supplies the engine,
the row schema and its configuration's TOML text; nothing here knows what a paper computes.

The run folder it writes, resumes and checkpoints is [`RunFolder`][theorylab.core.runfolder.
RunFolder]; [`Recording`][] is the part of a loop that records rows, checkpoints and stops on a
divergence or an interrupt, shared with the gradient flow ([`flow`][theorylab.core.flow.flow]).
"""

from __future__ import annotations

import contextlib
import math
import sys
import time
from collections.abc import Callable, Iterable, Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import faults, livelog
from .engine import Engine
from .runfolder import (
    CHECKPOINT_SECONDS,
    RunFolder,
    _to_frame,
    check_out_folder,
    empty_table,
    run_folder,
    run_identity,
    same_config_except_steps,
    start_run,
)

if TYPE_CHECKING:  # pandas is imported where a table is made (a run needs it, a config check not)
    import pandas as pd

__all__ = [
    "CHECKPOINT_SECONDS",
    "DivergenceError",
    "Interrupted",
    "RECORD_MODES",
    "Recording",
    "RunFolder",
    "check_out_folder",
    "recording",
    "same_config_except_steps",
    "run_folder",
    "start_run",
    "TrainOutcome",
    "empty_table",
    "first_step",
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


class Interrupted(KeyboardInterrupt):
    """The run was interrupted (SIGINT, or SIGTERM where the caller maps it here). ``step`` is
    the step of the parameters saved in the checkpoint; ``out`` the run folder (None when the
    run had none); ``result`` the rows so far."""

    def __init__(self, step: int, out: Path | None, result: Any = None) -> None:
        super().__init__(f"interrupted at step {step}")
        self.step, self.out, self.result = step, out, result


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


def first_step(step: np.ndarray, mask: np.ndarray) -> float:
    """The first entry of `step` (a trajectory's recorded steps) where `mask` holds (NaN when
    it never does): the step at which a reading of a trajectory is reached."""
    idx = np.flatnonzero(mask)
    return float(step[idx[0]]) if idx.size else math.nan



def _check_finite(step: int, named: Mapping[str, object]) -> None:
    for name, value in named.items():
        arr = np.asarray(value, dtype=np.float64) if not hasattr(value, "detach") else (
            value.detach().cpu().numpy()
        )
        if not np.all(np.isfinite(arr)):
            raise DivergenceError(step, name)


def _evaluate(engine: Engine, params, step: int, **kw):
    """``engine.evaluate``, an ``OverflowError`` of its numbers (parameters beyond any float's
    range) turned into the divergence it is."""
    try:
        return engine.evaluate(params, step, **kw)
    except OverflowError as e:
        raise DivergenceError(step, f"the evaluation ({e})") from None


def _check_row(step: int, row: Mapping[str, object], finite: set[str]) -> None:
    """A recorded row's numbers: an infinite value, or a NaN in a column that was a number in
    an earlier row of the run (``finite``: those columns, updated here), is a divergence. A
    column that is NaN from the start is one the engine does not compute (an SE of an exact
    engine), not a divergence."""
    for name, value in row.items():  # a bool (numpy's too) is not a float
        if isinstance(value, (float, np.floating)) and (
                math.isinf(value) or (math.isnan(value) and name in finite)):
            raise DivergenceError(step, f"the recorded {name}")
    finite.update(_number_columns(row))


def _number_columns(row: Mapping[str, object]) -> set[str]:
    """The columns of ``row`` that hold finite floats."""
    return {k for k, v in row.items() if isinstance(v, (float, np.floating)) and math.isfinite(v)}


def _grad_items(grads) -> dict:
    if isinstance(grads, Mapping):
        return {f"gradient of {k}": v for k, v in grads.items()}
    return {"gradient": grads}



class Recording:
    """The recording of one run, shared by the loops ([`train`][], [`flow`][theorylab.core.flow.
    flow]); made by [`recording`][]. ``start`` is the first step to run, ``state`` the
    ``(step, params)`` the loop is at (one object: an interrupt never sees a step and a
    mismatched params), ``recorded`` the steps with a row, ``bar`` the progress bar."""

    def __init__(self, engine: Engine, folder: RunFolder | None, rows: list[dict], *,
                 steps: int, start: int, params, schema: Mapping[str, str], identity: str,
                 live: livelog.LiveLog | None, bar, outcome: Callable[..., TrainOutcome]) -> None:
        self.engine, self.folder, self.rows, self.steps = engine, folder, rows, steps
        self.schema, self.identity, self.live, self.bar = schema, identity, live, bar
        self.outcome = outcome
        self.start, self.state = start, (start, params)
        self.recorded = {int(r["step"]) for r in rows}
        self.finite = set().union(*map(_number_columns, rows))  # a NaN there is a divergence
        self.last_ckpt = -math.inf

    def record(self, step: int, params, ev=None) -> None:
        """Record the row of `step` at `params` (``ev``: its evaluation; None: evaluated here),
        append it to the folder and checkpoint it when [`CHECKPOINT_SECONDS`][theorylab.core.
        runfolder.CHECKPOINT_SECONDS] have passed or it is the last step."""
        engine = self.engine
        if ev is None:
            ev = _evaluate(engine, params, step, need_grad=False, record=True)
            _check_finite(step, engine.watched(ev))
        arrays = engine.params_to_arrays(params)
        _check_finite(step, arrays)
        row = {"step": step, **engine.record(params, step, ev)}
        _check_row(step, row, self.finite)
        self.rows.append(row)
        self.recorded.add(step)
        self.state = (step, params)
        if self.live is not None:
            self.live.add(row)
        if self.folder is not None:
            self.folder.append_row(row)
            now = time.monotonic()
            if now - self.last_ckpt >= CHECKPOINT_SECONDS or step == self.steps:
                self.folder.checkpoint(step, arrays, identity=self.identity, rows_to=step)
                self.last_ckpt = now

    def result(self, steps_done: int) -> TrainOutcome:
        """The loop's outcome: the rows so far, the parameters of ``state``."""
        return self.outcome(_to_frame(self.rows, self.schema), self.state[1], self.engine,
                            steps_done)

    def _last_row(self, at: int) -> int:
        return max((int(r["step"]) for r in self.rows if r["step"] <= at), default=-1)

    def _keep(self, rows: list[dict], *, finite_only: bool) -> None:
        """Write ``rows`` and a checkpoint at the current step (with ``finite_only``: where the
        parameters are finite; a resume, with other settings too, continues from there)."""
        if self.folder is None:
            return
        self.folder.write_rows(rows)
        at, params = self.state
        arrays = self.engine.params_to_arrays(params)
        if not finite_only or all(np.all(np.isfinite(v)) for v in arrays.values()):
            self.folder.checkpoint(at, arrays, identity=self.identity, rows_to=self._last_row(at))

    def _diverged(self, err: DivergenceError) -> None:
        """Keep the rows and, where the parameters are still finite, a checkpoint at the current
        step."""
        err.result = self.result(err.step)
        self._keep(self.rows, finite_only=True)

    def _interrupted(self) -> Interrupted:
        """Keep the rows to the current step and a checkpoint there."""
        at = self.state[0]
        self._keep([r for r in self.rows if r["step"] <= at], finite_only=False)
        return Interrupted(at, self.folder.out if self.folder else None, self.result(at))

    def finish(self) -> TrainOutcome:
        """The end of the run: the rows and the final state written; the outcome."""
        params = self.state[1]
        if self.folder is not None:
            self.folder.write_rows(self.rows)
            self.folder.final(self.engine.final_arrays(params))
        return self.result(self.steps)


@contextlib.contextmanager
def recording(engine: Engine, *, steps: int, schedule: Iterable[int], schema: Mapping[str, str],
              config_text: str = "", out: str | Path | None = None, resume: bool = False,
              same_run: Callable[[Path], None] | None = None, params: Any = None,
              progress: bool | None = None, desc: str | None = None,
              outcome: Callable[..., TrainOutcome] = TrainOutcome) -> Iterator[Recording]:
    """The [`Recording`][] of a run with [`train`][]'s arguments, in its locked run folder
    (resumed or started: [`start_run`][theorylab.core.runfolder.start_run]), with floating-point
    warnings off; a [`DivergenceError`][] or an interrupt in the block keeps what it must and
    ends as [`DivergenceError`][] or [`Interrupted`][]. `outcome`: builds the result from
    ``(trajectory, params, engine, steps_done)``."""
    from tqdm.auto import tqdm

    with run_folder(out, schema, config_text) as folder, livelog.for_run(schema) as live:
        start, params, rows = start_run(engine, folder, steps=steps, config_text=config_text,
                                        resume=resume, same_run=same_run, params=params,
                                        schedule=schedule)
        if live is not None:  # the rows a resumed run starts from
            live.add_rows(rows)
        show = sys.stderr.isatty() if progress is None else progress
        bar = tqdm(total=steps, initial=start, disable=not show, desc=desc or engine.name,
                   leave=False)
        rec = Recording(engine, folder, rows, steps=steps, start=start, params=params,
                        schema=schema, identity=run_identity(config_text), live=live, bar=bar,
                        outcome=outcome)
        try:
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                yield rec
        except DivergenceError as err:
            rec._diverged(err)
            raise
        except KeyboardInterrupt:
            raise rec._interrupted() from None
        finally:
            bar.close()


def train(engine: Engine, *, steps: int, schedule: Iterable[int], **run: Any) -> TrainOutcome:
    """Run ``steps`` gradient-descent steps of ``engine``; record a row at each step of
    ``schedule``.

    **Arguments** (`run`: the keywords of [`recording`][] after `schedule`):

    - `engine`: the problem ([`Engine`][theorylab.core.engine.Engine]).
    - `steps`: the number of GD steps; rows are recorded at the steps of `schedule` (0 to
      `steps`), each with the columns of `schema` (``step`` and ``engine.record(...)``).
    - `config_text`: the ``config.toml`` written into `out`.
    - `out`: the run folder (see [`RunFolder`][theorylab.core.runfolder.RunFolder]); None:
      nothing is written.
    - `resume`: continue from ``out/checkpoint.npz`` if present; `same_run(path)` must raise
      ``ValueError`` when the configuration saved at `path` is another run.
    - `params`: start from these parameters instead of ``engine.initial_params()``.
    - `progress`: show a tqdm bar; default: only when stderr is a terminal.

    Within a [`live_log`][theorylab.core.livelog.live_log] block, each recorded row is also
    logged in TensorBoard's event format (and, on a resume, the rows it starts from).

    Raises [`DivergenceError`][] (after writing the rows so far) when a watched value, a recorded
    parameter array, a gradient or a recorded number stops being finite (an infinite value, or
    a NaN in a column that held numbers before; the rows before it are kept).
    """
    schedule = set(int(s) for s in schedule)
    with recording(engine, steps=steps, schedule=schedule, **run) as rec:
        for step in range(rec.start, steps + 1):
            faults.check_stop()
            params = rec.state[1]
            record = step in schedule and step not in rec.recorded
            ev = _evaluate(engine, params, step, need_grad=step < steps, record=record)
            _check_finite(step, engine.watched(ev))
            if record:
                rec.record(step, params, ev)
            if step < steps:
                _check_finite(step, _grad_items(ev.grads))
                rec.state = (step + 1, engine.apply(params, ev.grads))
                rec.bar.update(1)
        return rec.finish()
