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
core.runfolder.RunFolder]): rows appended as recorded, checkpoints, resume (from the state of the
last checkpoint, with a fresh first solver step), faults as in [`train`][theorylab.core.trainer.
train].
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from .config import MODES, check_choice, check_float, check_run_steps, frozen_set
from .engine import Engine
from .trainer import (
    DivergenceError,
    TrainOutcome,
    _check_finite,
    _grad_items,
    record_schedule,
    recording,
)

if TYPE_CHECKING:  # pandas is imported where a table is made
    import pandas as pd

__all__ = ["FLOW_METHODS", "FlowOutcome", "RunResult", "check_flow_fields", "dynamics", "flow",
           "flow_field", "run_section"]

#: The adaptive solvers of ``scipy.integrate`` a flow may use: ``DOP853`` (explicit
#: Runge–Kutta of order 8, the default: tight tolerances at few steps), ``RK45`` (order 5) and
#: ``LSODA`` (switches to a stiff method where the flow is stiff; its Jacobian by finite
#: differences costs one evaluation per parameter, so it is for small parameter vectors).
FLOW_METHODS = ("DOP853", "RK45", "LSODA")


def check_flow_fields(train) -> None:
    """A ``[train]`` section's loop: ``mode`` (one of [`MODES`][theorylab.core.config.MODES]),
    ``flow_method`` (one of [`FLOW_METHODS`][]), ``flow_rtol`` (1e-14 … 1e-2) and ``flow_atol``
    (0 … 1), the tolerances stored as floats; ``ValueError`` naming the field otherwise."""
    check_choice("train.mode", train.mode, MODES)
    check_choice("train.flow_method", train.flow_method, FLOW_METHODS)
    frozen_set(train, "flow_rtol", check_float("train.flow_rtol", train.flow_rtol, lo=1e-14,
                                               hi=1e-2))
    frozen_set(train, "flow_atol", check_float("train.flow_atol", train.flow_atol, lo=0.0,
                                               hi=1.0))


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


def run_section(engine: Engine, train, *, result: Callable[[TrainOutcome], Any], **run: Any):
    """Run `engine` as a ``[train]`` section says ([`dynamics`][]: GD or its flow, for
    ``train.steps`` steps, rows at [`record_schedule`][theorylab.core.trainer.record_schedule]
    of its ``n_records`` and ``record``) and return ``result(outcome)``: a paper's run result
    from the loop's outcome, also for the rows a [`DivergenceError`][theorylab.core.trainer.
    DivergenceError] carries. `run`: the other keywords of [`train`][theorylab.core.trainer.
    train] (``schema``, ``config_text``, ``out``, ``resume``, ``same_run``, ...)."""
    try:
        outcome = dynamics(train)(
            engine, steps=train.steps,
            schedule=record_schedule(train.steps, train.n_records, train.record), **run)
    except DivergenceError as err:
        err.result = result(err.result)
        raise
    return result(outcome)


@dataclass
class RunResult:
    """What a paper's runner returns from [`run_section`][]: the recorded table, the engine's
    name, the resolved configuration and the steps done. A paper's subclass adds its final
    state and the values of its summary line ([`summary_values`][RunResult.summary_values])."""

    trajectory: pd.DataFrame
    engine: str
    config: Any
    steps_done: int

    def summary_values(self, last) -> Mapping[str, str]:
        """The paper's ``name=value`` pairs of the summary line, from the last row ``last``."""
        return {}

    def summary(self) -> str:
        """The one line ``theorylab run`` prints at the end of a run: ``engine=NAME [(gradient
        flow)] steps=N`` and the paper's [`summary_values`][RunResult.summary_values] of the
        last row."""
        flow = " (gradient flow)" if self.config.train.mode == "flow" else ""
        values = self.summary_values(self.trajectory.iloc[-1])
        return " ".join([f"engine={self.engine}{flow} steps={self.steps_done}",
                         *(f"{k}={v}" for k, v in values.items())])


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
        _check_finite(step, _grad_items(ev.grads))
        return (layout.pack(engine.apply(p, ev.grads)) - layout.pack(p)) / eta

    return rhs, layout.pack(params), layout.unpack


def flow(engine: Engine, *, method: str = "DOP853", rtol: float = 1e-9, atol: float = 1e-12,
         **run: Any) -> FlowOutcome:
    """Integrate the gradient flow of ``engine`` to the time of GD step `steps`; record the
    row of step s at time η·s for each s of `schedule` (η = ``engine.time_step``).

    **Arguments:** `run`: the keywords of [`train`][theorylab.core.trainer.train] (`steps`,
    `schedule`, `schema`, `config_text`, `out`, `resume`, `same_run`, `params`, `progress`),
    and the solver: `method` (one of [`FLOW_METHODS`][]), `rtol` and `atol` (its relative and
    absolute tolerances on each parameter).

    Raises [`DivergenceError`][theorylab.core.trainer.DivergenceError] (after writing the rows
    so far) when a value stops being finite, ``ValueError("train.mode: ...")`` when the solver
    fails (its message), and [`Interrupted`][theorylab.core.trainer.Interrupted] on SIGINT.
    """
    from scipy import integrate

    check_choice("train.flow_method", method, FLOW_METHODS)
    steps = run.pop("steps")
    marks = sorted(set(int(s) for s in run.pop("schedule") if 0 <= int(s) <= steps))
    count = {"evaluations": 0, "solver_steps": 0}
    with recording(engine, steps=steps, schedule=marks, desc=f"{engine.name} (flow)",
                   outcome=lambda *a: FlowOutcome(*a, **count), **run) as rec:
        start = rec.start
        rhs, y, unpack = flow_field(engine, rec.state[1])
        eta = float(engine.time_step)

        def counted(t, y):
            count["evaluations"] += 1
            return rhs(t, y)

        pending = [s for s in marks if s >= start and s not in rec.recorded]
        if pending and pending[0] == start:
            rec.record(start, unpack(y))
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
                    rec.record(s, unpack(ys))
                rec.bar.update(max(0, min(steps, int(reached)) - rec.bar.n))
        return rec.finish()
