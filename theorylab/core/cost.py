"""Cost before work: what a run will take (steps, seconds on this machine, memory), from a
measured per-step cost, said before it starts.

A paper describes the cost of one config in a [`CostModel`][] (its `Paper.cost` hook): the
work of one step of its engine in the paper's own units (only ratios matter: a table's rows
× patterns, samples × patches², ...), the memory the engine holds (the paper's up-front
estimate, the one that refuses runs that do not fit), how to build the engine, and, when the
config is too large to time in a second or two, a smaller config of the same engine.
[`estimate`][] builds the engine (or the smaller one), times a few gradient steps and a
recorded step on this machine, and scales the smaller config's times by the ratio of the work
(linear in the work: an estimate, good to a small factor; the docs give measured checks).
``theorylab run`` and ``theorylab sweep`` print the estimate before a run predicted longer
than [`LONG_RUN_S`][]; ``--dry-run`` prints it and runs nothing.

[`recorded_estimate`][] is the estimate of a command made of parts whose last runtimes are
recorded (the claim checks' summaries, the figures' manifest): their CPU seconds, and the wall
range at the load now, before a command of more than [`LONG_RUN_S`][] starts.

[`announce`][] is for derived computations (a prediction that evaluates an exact engine many
times): it says what it will cost before it starts, and refuses above a limit unless asked.
[`Progress`][] is for a derived computation whose iterations cannot be timed apart from it
(a reduced dynamics stepped to its stopping rule): it says, a couple of seconds in, how long
the whole loop will take at the pace so far, and draws a progress bar on a terminal.
"""

from __future__ import annotations

import math
import os
import statistics
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, NamedTuple

import numpy as np

from .resources import format_bytes
from .threads import usable_cores

__all__ = ["LONG_RUN_S", "CostModel", "Estimate", "Progress", "announce", "cpu_seconds",
           "estimate", "recorded_estimate", "Timing", "format_seconds", "format_wall",
           "machine_load", "time_engine", "wall_range"]

#: A run predicted to take longer than this (seconds) prints its estimate before it starts.
LONG_RUN_S = 60.0
#: Seconds [`time_engine`][] may spend on timed steps (at least one step is always timed).
TIMING_BUDGET_S = 1.0


@dataclass(frozen=True)
class CostModel:
    """The cost of one config, as a paper describes it.

    - `engine`: the engine's name (for the message).
    - `steps`, `records`: the gradient steps and the recorded rows of the run.
    - `work`: the work of one step in the paper's units (only ratios to `smaller`'s work
      matter).
    - `memory`: bytes the engine holds (the paper's up-front estimate).
    - `build`: ``() -> Engine``: builds this config's engine (kernel interface).
    - `smaller`: ``() -> CostModel`` of a smaller config of the same engine, to be timed in
      place of this one when this one is too large to time in about a second; ``None``: time
      this one.
    - `flow`: the run is a gradient flow (its number of gradient evaluations is chosen by the
      solver as it goes, so only the cost of one evaluation is known up front).
    - `note`: what the paper adds (e.g. the work units).
    - `check`: ``() -> None``: raises the ``ValueError`` with which the run would refuse this
      config up front (memory, enumeration limits), before anything is built or timed.
    """

    engine: str
    steps: int
    records: int
    work: float
    memory: float
    build: Callable[[], Any]
    smaller: Callable[[], CostModel] | None = None
    flow: bool = False
    note: str = ""
    check: Callable[[], None] = lambda: None


@dataclass(frozen=True)
class Estimate:
    """What a run will take: `setup_s` (building the engine), `step_s` (one gradient step, or
    one gradient evaluation of a flow), `record_s` (what a recorded step adds), `memory`
    (bytes), for `steps` steps and `records` rows; `timed` says what was timed and how it was
    scaled; `machine` where."""

    engine: str
    steps: int
    records: int
    setup_s: float
    step_s: float
    record_s: float
    memory: float
    timed: str
    machine: str
    flow: bool = False
    notes: tuple[str, ...] = field(default=())
    #: the part of `setup_s` paid once per process (the first step's caches, compilation)
    warm_s: float = 0.0
    #: the clock of the times: ``"cpu"`` (this process's CPU time) or ``"wall"``
    clock: str = "wall"
    #: CPU seconds per wall second of the timed steps (threads kept busy)
    parallel: float = 1.0
    #: how much slower than alone the run goes at the machine's current load (≥ 1)
    load: float = 1.0
    #: bytes this process holds already (interpreter, libraries) beside the engine's `memory`
    process_memory: float = 0.0

    @property
    def total_memory(self) -> float:
        """The process's resident memory during the run: what it holds already and the
        engine's estimate."""
        return self.memory + self.process_memory

    @property
    def wall_range(self) -> tuple[float, float]:
        """Predicted wall time: alone on the machine, and at the load of the moment the
        estimate was made (other jobs sharing the CPUs); equal for a wall-clock estimate."""
        if self.clock != "cpu":
            return self.seconds, self.seconds
        low = self.seconds / max(self.parallel, 1.0)
        return low, low * max(self.load, 1.0)

    @property
    def seconds(self) -> float:
        """Predicted time of the run in its clock (CPU seconds of this process, or wall
        seconds on a GPU; for a flow: of gradient descent with the same steps, the scale the
        flow's own count of evaluations is compared with)."""
        return self.setup_s + self.steps * self.step_s + self.records * self.record_s

    def lines(self) -> list[str]:
        """The estimate as the commands print it."""
        what = "gradient evaluation" if self.flow else "step"
        if self.clock == "cpu":
            when = (f"about {format_seconds(self.seconds)} of CPU time "
                    f"({format_wall(*self.wall_range)})")
        else:
            when = f"about {format_seconds(self.seconds)}"
        out = [f"estimate: {self.engine}, {self.steps} steps, {self.records} recorded rows, "
               f"{when} and {format_bytes(self.total_memory)} of memory on this machine"
               + (f" (the engine {format_bytes(self.memory)}, this process "
                  f"{format_bytes(self.process_memory)} already)" if self.process_memory else ""),
               f"  {format_seconds(self.step_s)} per {what}, {format_seconds(self.setup_s)} to "
               f"build the engine, {format_seconds(self.record_s)} more per recorded row "
               f"({self.timed})",
               f"  machine: {self.machine}"]
        if self.flow:
            out.append(f"  gradient flow: the solver chooses its number of gradient "
                       f"evaluations as it goes (not known before it runs); the time above is "
                       f"that of {self.steps} evaluations, gradient descent's count")
        return out + [f"  {n}" for n in self.notes]

    def __str__(self) -> str:
        return "\n".join(self.lines())


def format_wall(low: float, high: float) -> str:
    """A wall-time range as the estimates print it: ``2.4 s wall alone``, or ``2.4 s–9.1 s
    wall (alone, at the load now)``."""
    if high <= 1.05 * low:
        return f"{format_seconds(low)} wall alone"
    return f"{format_seconds(low)}–{format_seconds(high)} wall (alone, at the load now)"


def format_seconds(s: float) -> str:
    """``0.31 ms``, ``2.4 s``, ``3 min 20 s``, ``2 h 10 min``, ``3.2 days``."""
    if not math.isfinite(s):
        return "unknown"
    if s < 1e-3:
        return f"{s * 1e6:.3g} µs"
    if s < 1:
        return f"{s * 1e3:.3g} ms"
    if s < 60:
        return f"{s:.3g} s"
    if s < 3600:
        return f"{int(s // 60)} min {int(round(s % 60))} s"
    if s < 86400 * 2:
        return f"{int(s // 3600)} h {int(round(s % 3600 / 60))} min"
    return f"{s / 86400:.3g} days"


def _resident_bytes() -> float:
    """This process's resident memory now (Linux: ``VmRSS``), 0 where it cannot be read."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            for line in fh:
                if line.startswith("VmRSS:"):
                    return float(line.split()[1]) * 1024
    except OSError:  # pragma: no cover - not Linux
        pass
    return 0.0


def _load_factor(workers: int = 1) -> float:
    """How much slower than alone each of `workers` single-threaded jobs runs now: the
    1-minute load average (this process included, which the first job replaces) and the
    other jobs, per usable CPU, at least 1."""
    try:
        load = os.getloadavg()[0]
    except OSError:  # pragma: no cover
        return 1.0
    return max(1.0, (load + max(workers, 1) - 1) / usable_cores())


def wall_range(cpu_s: float, workers: int = 1) -> tuple[float, float]:
    """Predicted wall time of `cpu_s` seconds of single-threaded work shared by `workers`
    processes (a sweep's points, one per worker at a time): alone on the machine (the CPU time
    divided by the workers that get a core each), and at the machine's load now (the other
    jobs of the load average share the cores with them)."""
    workers = max(int(workers), 1)
    low = cpu_s / min(workers, usable_cores())
    return low, cpu_s / workers * _load_factor(workers)


def machine_load() -> str:
    """This machine as an estimate names it: CPUs usable by this process and the load
    average (a busy shared machine runs slower than the estimate says if the load drops)."""
    try:
        load = ", load average {:.2f} {:.2f} {:.2f}".format(*os.getloadavg())
    except OSError:  # pragma: no cover
        load = ""
    return f"{usable_cores()} usable CPUs{load}"


class Timing(NamedTuple):
    """What [`time_engine`][] measured: seconds to `build` the engine, the first step's
    `warm`-up beyond the others, the median gradient `step`, what a `record`ed step adds, the
    number `n` of steps timed, the `clock` they are in (``"cpu"``: this process's CPU time,
    all its threads; ``"wall"``: where the work runs on a GPU, whose time the CPU clock does
    not see) and `parallel`, the CPU seconds per wall second of the timed steps (the threads
    the steps kept busy; 1 under load or on one thread)."""

    build: float
    warm: float
    step: float
    record: float
    n: int
    clock: str = "wall"
    parallel: float = 1.0


def _cuda_used() -> bool:
    torch = sys.modules.get("torch")
    try:
        return bool(torch is not None and torch.cuda.is_initialized())
    except Exception:  # pragma: no cover - a torch without CUDA support
        return False


def time_engine(build: Callable[[], Any], budget_s: float = TIMING_BUDGET_S) -> Timing:
    """The [`Timing`][] of the engine ``build()`` makes: the time to build it, what its first
    step takes beyond the others (caches, compilation: paid once per process whatever the
    size), the median of gradient steps (``evaluate`` with gradients, always at the start, so
    nothing diverges; the step's ``apply`` is an update of the parameters, negligible beside
    it, and is not called) after that first one, timed until `budget_s` of wall time is used
    (at least one, at most ten), and what a recorded step adds (``evaluate`` with ``record``
    and ``record``). Times are CPU times of this process, which other jobs on a shared
    machine do not inflate, unless the engine works on a GPU (then wall times)."""
    def clocks() -> tuple[float, float]:
        return time.perf_counter(), time.process_time()

    w0, c0 = clocks()
    engine = build()
    params = engine.initial_params()
    w1, c1 = clocks()

    def step(record: bool = False) -> tuple[float, float]:
        a, b = clocks()
        ev = engine.evaluate(params, 0, need_grad=True, record=record)
        if record:
            engine.record(params, 0, ev)
        c, d = clocks()
        return c - a, d - b

    with np.errstate(all="ignore"):
        first = step()
        times: list[tuple[float, float]] = []
        while len(times) < 10 and (not times or sum(t[0] for t in times) < budget_s):
            times.append(step())
        recorded = step(record=True)
    gpu = _cuda_used()
    k = 0 if gpu else 1
    median = statistics.median(t[k] for t in times)
    wall = statistics.median(t[0] for t in times)
    parallel = 1.0 if gpu or wall <= 0 else max(1.0, statistics.median(t[1] for t in times) / wall)
    build_s = (w1 - w0) if gpu else (c1 - c0)
    return Timing(build_s, max(0.0, first[k] - median), median,
                  max(0.0, recorded[k] - median), len(times), "wall" if gpu else "cpu",
                  parallel)


def estimate(model: CostModel, budget_s: float = TIMING_BUDGET_S) -> Estimate:
    """Time `model`'s engine (or its `smaller` config, its build and step times scaled by the
    ratio of the work; the first step's warm-up is not scaled) on this machine and return the
    [`Estimate`][] of the whole run. Costs about `budget_s` plus building the (smaller)
    engine. A config the run would refuse raises its ``ValueError`` first (`model.check`)."""
    model.check()
    timed_model = model.smaller() if model.smaller is not None else model
    t = time_engine(timed_model.build, budget_s)
    build, warm, step, record, n = t.build, t.warm, t.step, t.record, t.n
    if timed_model is model:
        timed = f"timed: {n} steps of this config"
        scale = 1.0
    else:
        scale = model.work / max(timed_model.work, 1e-300)
        timed = (f"timed: {n} steps of a smaller config of the same engine, "
                 f"{_ratio(scale)} less work per step, scaled linearly")
    notes = (model.note,) if model.note else ()
    return Estimate(engine=model.engine, steps=model.steps, records=model.records,
                    setup_s=build * scale + warm, step_s=step * scale, record_s=record * scale,
                    memory=model.memory, timed=timed, machine=machine_load(), flow=model.flow,
                    notes=notes, warm_s=warm, clock=t.clock, parallel=t.parallel,
                    load=_load_factor(), process_memory=_resident_bytes())


def _ratio(x: float) -> str:
    return f"{x:.3g}×" if x < 1e4 else f"10^{math.log10(x):.1f}×"


def cpu_seconds() -> float:
    """The CPU time (user and system) of this process and of its children that have ended."""
    import resource

    own = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + kids.ru_utime + kids.ru_stime


def recorded_estimate(what: str, seconds: float, *, found: int, of: int, clock: str,
                      source: str, spent: float = 0.0) -> list[str]:
    """The estimate of a command made of `of` parts (`what`: ``"claims"``, ``"figures"``),
    `found` of which have a recorded runtime summing to `seconds` (in `clock`: ``"cpu"``, or
    ``"wall"`` where only wall times were recorded, an upper bound of their CPU time), read
    from `source`: the CPU time of the whole command (those parts and the `spent` seconds the
    command's process has used already: starting, importing; [`cpu_seconds`][]) and the wall
    time from now, alone and at the load now ([`wall_range`][]). ``[]`` when the whole is not
    over [`LONG_RUN_S`][]: short commands say nothing."""
    if spent + seconds <= LONG_RUN_S:
        return []
    def parts(n: int) -> str:
        return f"{n} {what.removesuffix('s') if n == 1 else what}"

    recorded = ("CPU time" if clock == "cpu" else
                "wall time (no CPU time recorded: on a busy machine that run's wall time "
                "exceeds its CPU time)")
    missing = "" if found == of else f"; {of - found} of the {parts(of)} have none (not counted)"
    return [f"estimate: about {format_seconds(spent + seconds)} of CPU time "
            f"({format_wall(*wall_range(seconds))} from now) for {parts(of)} on this machine "
            f"({machine_load()})",
            f"  from the {recorded} of the last run of {parts(found)} ({source}), and "
            f"{format_seconds(spent)} this process has spent starting{missing}"]


def announce(what: str, seconds: float, *, limit_s: float | None = None,
             allow_long: bool = False, hint: str = "", say: Callable[[str], None] | None = None
             ) -> None:
    """Say before a derived computation starts that it will take about `seconds` (when that
    is more than a few seconds), on stderr; refuse with ``ValueError`` when it is over
    `limit_s` and not `allow_long` (the message gives the estimate and `hint`)."""
    say = say or (lambda text: print(text, file=sys.stderr))
    if limit_s is not None and seconds > limit_s and not allow_long:
        raise ValueError(f"{what}: would take about {format_seconds(seconds)} on this machine "
                         f"(over the limit of {format_seconds(limit_s)}); {hint}".rstrip("; "))
    if seconds > 5.0:
        say(f"{what}: about {format_seconds(seconds)} on this machine ({machine_load()})")


class Progress:
    """The progress of a long loop of at most `total` iterations: call ``tick()`` after each.

    Once `after_s` seconds have passed, it says once on stderr (``say``) how long the whole
    loop will take at the pace so far when that is more than `say_over_s` ("at most": a loop
    may stop early); on a terminal it also draws a tqdm bar from then on. ``close()`` (or the
    ``with`` block's end) removes the bar."""

    def __init__(self, what: str, total: int, *, after_s: float = 2.0,
                 say_over_s: float = 10.0, say: Callable[[str], None] | None = None) -> None:
        self.what, self.total = what, int(total)
        self.after_s, self.say_over_s = after_s, say_over_s
        self.say = say or (lambda text: print(text, file=sys.stderr))
        self.t0 = time.perf_counter()
        self.done = 0
        self.said = False
        self.bar = None

    def tick(self, n: int = 1) -> None:
        self.done += n
        if self.bar is not None:
            self.bar.update(n)
            return
        if self.said:
            return
        spent = time.perf_counter() - self.t0
        if spent < self.after_s:
            return
        self.said = True
        whole = spent / self.done * self.total
        if whole <= self.say_over_s:
            return
        self.say(f"{self.what}: {self.done} of at most {self.total} iterations in "
                 f"{format_seconds(spent)}; at this pace at most {format_seconds(whole)} in all "
                 f"({machine_load()})")
        if sys.stderr.isatty():
            from tqdm.auto import tqdm

            self.bar = tqdm(total=self.total, initial=self.done, desc=self.what, leave=False)

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc) -> None:
        self.close()
