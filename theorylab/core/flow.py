"""Gradient flow beside gradient descent: dθ/dt = −∇L(θ) of any engine, integrated by an
adaptive solver and recorded on the gradient-descent clock.

Gradient descent θ_{n+1} = θ_n − η ∇L(θ_n) is the explicit Euler method, with step η, of the
flow dθ/dt = −∇L(θ). [`flow`][] integrates that flow with one of scipy's adaptive solvers
([`FLOW_METHODS`][]) on the same engine, from the same start, to the time T = η·steps, and
records the row of GD step s at time t = η·s (so a flow's ``trajectory.csv`` has GD's columns
and steps, and reads the same way: phase times, plots, export; in time units multiply ``step``
by η). Where an engine steps some parameters with their own rates (a ``lr_A`` beside ``lr_v``),
the flow is the limit of GD with those ratios kept: dθ/dt = (step(θ) − θ)/η with ``step`` the
engine's own GD step, η its ``time_step``.

The vector field comes from the engine itself, through the kernel's engine interface
(``evaluate``, ``apply``, ``params_to_arrays``, ``params_from_arrays``): no engine writes flow
code. Its global error against GD is O(η) on a fixed horizon (Euler's order), which the tests
measure on a ladder of step sizes. The run folder is the trainer's ([`RunFolder`][theorylab.
core.trainer.RunFolder]): rows appended as recorded, checkpoints, resume (from the state of the
last checkpoint, with a fresh first solver step), faults as in [`train`][theorylab.core.trainer.
train].
"""

from __future__ import annotations

import functools
import math
import sys
import time
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from . import livelog
from .config import check_run_steps
from .engine import Engine
from .trainer import (
    CHECKPOINT_SECONDS,
    DivergenceError,
    Interrupted,
    TrainOutcome,
    _check_finite,
    _check_row,
    _evaluate,
    _number_columns,
    _to_frame,
    run_folder,
    run_identity,
    start_run,
)

__all__ = ["FLOW_METHODS", "FlowOutcome", "dynamics", "flow", "flow_field"]

#: The adaptive solvers of ``scipy.integrate`` a flow may use: ``DOP853`` (explicit
#: Runge–Kutta of order 8, the default: tight tolerances at few steps), ``RK45`` (order 5) and
#: ``LSODA`` (switches to a stiff method where the flow is stiff; its Jacobian by finite
#: differences costs one evaluation per parameter, so it is for small parameter vectors).
FLOW_METHODS = ("DOP853", "RK45", "LSODA")


def dynamics(train_config) -> Callable[..., TrainOutcome]:
    """The loop that a ``[train]`` section asks for: [`train`][theorylab.core.trainer.train]
    (gradient descent), or with ``mode = "flow"`` [`flow`][] with its ``flow_method``,
    ``flow_rtol`` and ``flow_atol``; both take the same arguments. A section of fewer than one
    step (a setting made for its engine alone) is refused: ``ValueError`` naming
    ``train.steps``."""
    check_run_steps(getattr(train_config, "steps", 1))  # read like mode (duck-typed)
    if getattr(train_config, "mode", "gd") != "flow":
        from .trainer import train

        return train
    return functools.partial(flow, method=train_config.flow_method,
                             rtol=train_config.flow_rtol, atol=train_config.flow_atol)


@dataclass
class FlowOutcome(TrainOutcome):
    """[`TrainOutcome`][theorylab.core.trainer.TrainOutcome] of a flow, with the solver's
    work: ``evaluations`` (gradient evaluations) and ``solver_steps`` (accepted steps)."""

    evaluations: int = 0
    solver_steps: int = 0


class _Layout:
    """The engine's parameters as one flat float64 vector and back (its ``flow_arrays`` and
    ``flow_params`` where it has them, else its checkpoint arrays)."""

    def __init__(self, engine: Engine, params) -> None:
        self.to_arrays = getattr(engine, "flow_arrays", engine.params_to_arrays)
        self.from_arrays = getattr(engine, "flow_params", engine.params_from_arrays)
        arrays = self.to_arrays(params)
        self.engine = engine
        self.keys = list(arrays)
        self.shapes = [np.shape(arrays[k]) for k in self.keys]
        sizes = [int(np.prod(s)) for s in self.shapes]
        self.bounds = np.r_[0, np.cumsum(sizes)].astype(int)

    def pack(self, params) -> np.ndarray:
        arrays = self.to_arrays(params)
        return np.concatenate([np.asarray(arrays[k], dtype=np.float64).ravel()
                               for k in self.keys])

    def unpack(self, y: np.ndarray):
        arrays = {k: y[a:b].reshape(s) for k, s, a, b in
                  zip(self.keys, self.shapes, self.bounds[:-1], self.bounds[1:])}
        return self.from_arrays(arrays)


def flow_field(engine: Engine, params) -> tuple[Callable[[float, np.ndarray], np.ndarray],
                                                 np.ndarray, Callable[[np.ndarray], Any]]:
    """``(rhs, y0, unpack)``: the flow's vector field ``rhs(t, y)`` on the flat parameter
    vector, the start ``y0`` (of `params`) and the map back to the engine's parameters.
    ``rhs`` is (step(θ) − θ)/η with the engine's own GD step and η = ``engine.time_step``; it
    raises [`DivergenceError`][theorylab.core.trainer.DivergenceError] where the loss or the
    gradient is not finite."""
    eta = float(getattr(engine, "time_step", 0.0) or 0.0)
    if not eta > 0:
        raise ValueError(f"train.mode: gradient flow needs a positive step size to set its "
                         f"clock (t = η·step); the engine's is {eta!r}")
    layout = _Layout(engine, params)

    def rhs(t: float, y: np.ndarray) -> np.ndarray:
        p = layout.unpack(y)
        step = int(t / eta)
        ev = engine.evaluate(p, step, need_grad=True, record=False)
        _check_finite(step, engine.watched(ev))
        grads = ev.grads
        _check_finite(step, {f"gradient of {k}": v for k, v in grads.items()}
                      if isinstance(grads, Mapping) else {"gradient": grads})
        return (layout.pack(engine.apply(p, grads)) - layout.pack(p)) / eta

    return rhs, layout.pack(params), layout.unpack


def flow(
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
    method: str = "DOP853",
    rtol: float = 1e-9,
    atol: float = 1e-12,
) -> FlowOutcome:
    """Integrate the gradient flow of ``engine`` to the time of GD step `steps`; record the
    row of step s at time η·s for each s of `schedule` (η = ``engine.time_step``).

    **Arguments:** as [`train`][theorylab.core.trainer.train] (`steps`, `schedule`, `schema`,
    `config_text`, `out`, `resume`, `same_run`, `params`, `progress`), and the solver:
    `method` (one of [`FLOW_METHODS`][]), `rtol` and `atol` (its relative and absolute
    tolerances on each parameter).

    Raises [`DivergenceError`][theorylab.core.trainer.DivergenceError] (after writing the rows
    so far) when a value stops being finite, ``ValueError("train.mode: ...")`` when the solver
    fails (its message), and [`Interrupted`][theorylab.core.trainer.Interrupted] on SIGINT.
    """
    from scipy import integrate
    from tqdm.auto import tqdm

    if method not in FLOW_METHODS:
        raise ValueError(f"train.flow_method: must be one of {list(FLOW_METHODS)} "
                         f"(got {method!r})")
    identity = run_identity(config_text)
    with run_folder(out, schema, config_text) as folder, livelog.for_run(schema) as live:
        marks = sorted(set(int(s) for s in schedule if 0 <= int(s) <= steps))
        start, params, rows = start_run(engine, folder, steps=steps, config_text=config_text,
                                        resume=resume, same_run=same_run, params=params,
                                        schedule=marks)
        if live is not None:  # the rows a resumed run starts from
            live.add_rows(rows)
        rhs, y, unpack = flow_field(engine, params)
        eta = float(engine.time_step)
        count = {"evaluations": 0, "solver_steps": 0}

        def counted(t, y):
            count["evaluations"] += 1
            return rhs(t, y)

        recorded = {int(r["step"]) for r in rows}
        finite = set().union(*map(_number_columns, rows))  # a NaN there is a divergence
        pending = [s for s in marks if s >= start and s not in recorded]
        show = sys.stderr.isatty() if progress is None else progress
        bar = tqdm(total=steps, initial=start, disable=not show, desc=f"{engine.name} (flow)",
                   leave=False)
        state = (start, y)  # the last recorded step and its state (what a checkpoint holds)
        last_ckpt = -math.inf

        def record(s: int, ys: np.ndarray) -> None:
            nonlocal last_ckpt, state
            p = unpack(ys)
            ev = _evaluate(engine, p, s, need_grad=False, record=True)
            _check_finite(s, engine.watched(ev))
            arrays = engine.params_to_arrays(p)
            _check_finite(s, arrays)
            row = {"step": s, **engine.record(p, s, ev)}
            _check_row(s, row, finite)
            rows.append(row)
            state = (s, ys)
            if live is not None:
                live.add(row)
            if folder is not None:
                folder.append_row(row)
                now = time.monotonic()
                if now - last_ckpt >= CHECKPOINT_SECONDS or s == steps:
                    folder.checkpoint(s, arrays, identity=identity, rows_to=s)
                    last_ckpt = now

        try:
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                if pending and pending[0] == start:
                    record(start, y)
                    pending.pop(0)
                if start < steps:
                    solver = getattr(integrate, method)(counted, start * eta, y, steps * eta,
                                                        rtol=rtol, atol=atol)
                    while pending:
                        message = solver.step()
                        if solver.status == "failed":
                            raise ValueError(
                                f"train.mode: the {method} solver failed at t = {solver.t:.6g} "
                                f"(step {solver.t / eta:.6g}): {message}")
                        count["solver_steps"] += 1
                        reached = solver.t / eta
                        dense = None
                        while pending and (pending[0] <= reached * (1 + 1e-12)
                                           or solver.status == "finished"):
                            s = pending.pop(0)
                            if s == steps and solver.status == "finished":
                                ys = np.array(solver.y)
                            else:
                                dense = dense or solver.dense_output()
                                ys = np.asarray(dense(s * eta), dtype=np.float64)
                            record(s, ys)
                        bar.update(max(0, min(steps, int(reached)) - bar.n))
        except DivergenceError as err:
            at, ys = state
            err.result = FlowOutcome(_to_frame(rows, schema), unpack(ys), engine, err.step,
                                     **count)
            if folder is not None:
                folder.write_rows(rows)
                folder.checkpoint(at, engine.params_to_arrays(unpack(ys)), identity=identity,
                                  rows_to=at)
            raise
        except KeyboardInterrupt:
            at, ys = state
            if folder is not None:
                folder.write_rows([r for r in rows if r["step"] <= at])
                folder.checkpoint(at, engine.params_to_arrays(unpack(ys)), identity=identity,
                                  rows_to=at)
            raise Interrupted(at, folder.out if folder else None,
                              FlowOutcome(_to_frame(rows, schema), unpack(ys), engine, at,
                                          **count)) from None
        finally:
            bar.close()
        final = unpack(state[1])
        if folder is not None:
            folder.write_rows(rows)
            folder.final(engine.final_arrays(final))
        return FlowOutcome(_to_frame(rows, schema), final, engine, steps, **count)
