"""What a sweep will take before it runs: the sum of its points' estimates
([`theorylab.core.cost`][]), through each paper's `Paper.cost` hook.

Points that differ only in ``train.seed`` cost the same and are timed once; what a process
pays once (the first step's compilation and caches) is counted once; a batched point
costs its runs (seeds × the batched axis's values) one after the other (an upper estimate: a
batched step serves several runs). At most [`ESTIMATE_BUDGET_S`][] seconds of this process's
CPU time are spent timing (CPU, not wall: a busy machine times as many configs as an idle
one): past that, each remaining distinct config is scaled from those timed of the same engine
by the paper's work per step (``CostModel.work``, its steps and rows), or, without one of the
same engine, taken to cost the mean of those timed (said so in the output). ``call`` points
(functions of a paper's own) have no estimate and are counted apart.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..cost import estimate, format_seconds, format_wall, machine_load, wall_range
from ..resources import format_bytes
from .spec import Point, get_paper

__all__ = ["ESTIMATE_BUDGET_S", "SweepEstimate", "estimate_points"]

#: CPU seconds a sweep's estimate may spend timing configs (a dry run may spend more on
#: request).
ESTIMATE_BUDGET_S = 6.0


@dataclass(frozen=True)
class SweepEstimate:
    """The estimate of the points a sweep will compute: `seconds` of CPU time in one process
    (the points' estimates, ``Estimate.seconds``; [`lines`][] gives the wall time on some
    workers), the largest `memory` of one point, the number of `points`, of distinct configs
    `timed`, `scaled` (from a timed one of the same engine by the work per step), `guessed`
    (the mean of those timed) and `refused` (by their paper's up-front checks), and of `call`
    points without an estimate."""

    points: int
    seconds: float
    memory: float
    timed: int
    guessed: int
    call: int
    refused: int = 0
    scaled: int = 0

    def lines(self, workers: int = 1) -> list[str]:
        """The estimate as the sweep prints it, with its wall time on `workers` workers
        ([`wall_range`][theorylab.core.cost.wall_range]: alone, and at the load now)."""
        where = f"on {workers} workers" if workers > 1 else "in one process"
        head = (f"estimate: {self.points} points to compute, about "
                f"{format_seconds(self.seconds)} of CPU time "
                f"({format_wall(*wall_range(self.seconds, workers))} {where})")
        out = [head + f"; at most {format_bytes(self.memory)} of memory per point",
               f"  from {self.timed} distinct configs timed on this machine ({machine_load()})"]
        untimed = f"not timed (the CPU budget of {ESTIMATE_BUDGET_S:g} s for timing ran out)"
        if self.scaled:
            out.append(f"  {self.scaled} more distinct configs {untimed}: each scaled from a "
                       "timed one of its engine by the work per step")
        if self.guessed:
            out.append(f"  {self.guessed} more distinct configs {untimed}: each taken as the "
                       "mean of those timed")
        if self.call:
            out.append(f"  {self.call} points call a paper's function: not estimated")
        if self.refused:
            out.append(f"  {self.refused} distinct configs that their paper refuses (they will "
                       "fail when they run): not estimated")
        return out


def _cost_key(point: Point) -> str:
    cfg = json.loads(json.dumps(point.payload.get("config", {}), default=str))
    cfg.get("train", {}).pop("seed", None)
    return json.dumps({"paper": point.payload.get("paper"), "config": cfg}, sort_keys=True)


def _kind(model) -> str:
    """The engine of a cost model without its sizes (``"exact (D = 10, ...)"`` → ``"exact"``):
    the work per step of two configs of one engine compares."""
    return model.engine.split(" (", 1)[0]


def _scaled(model, timed: list) -> float:
    """The seconds of `model`'s run from the estimate of the timed config of its engine whose
    work per step is the nearest (in ratio): its build, step and row times scaled by the
    ratio of the work per step."""
    near, est = min(timed, key=lambda t: abs(math.log(max(model.work, 1e-300)
                                                      / max(t[0].work, 1e-300))))
    r = model.work / max(near.work, 1e-300)
    return ((est.setup_s - est.warm_s) + model.steps * est.step_s
            + model.records * est.record_s) * r


def estimate_points(points: Sequence[Point], budget_s: float = ESTIMATE_BUDGET_S
                    ) -> SweepEstimate:
    """The [`SweepEstimate`][] of `points` (those still to compute)."""
    t0 = time.process_time()
    runs_of: dict[str, int] = {}
    sample: dict[str, Point] = {}
    call = 0
    for p in points:
        if p.kind == "call":
            call += 1
            continue
        key = _cost_key(p)
        sample.setdefault(key, p)
        runs = 1
        if p.kind == "batched":
            paper = get_paper(p.payload["paper"])
            runs = len(p.payload.get("seeds", [0])) * len(p.payload.get(paper.batched.field, [0]))
        runs_of[key] = runs_of.get(key, 0) + runs
    seconds_of: dict[str, float] = {}
    timed: dict[str, list] = {}  # engine -> [(cost model, estimate)] of the configs timed
    refused: set[str] = set()
    scaled: set[str] = set()
    memory = warm = 0.0
    for key, p in sample.items():
        paper = get_paper(p.payload["paper"])
        if paper.cost is None:
            continue
        try:
            model = paper.cost(paper.config_from_tables(p.payload["config"]))
            if time.process_time() - t0 > budget_s and seconds_of:
                model.check()  # refused up front as a timed one would be
                if _kind(model) in timed:  # scaled by the work from one of its engine
                    seconds_of[key] = _scaled(model, timed[_kind(model)])
                    scaled.add(key)
                continue
            est = estimate(model, budget_s=0.3)
        except Exception:  # a point its paper refuses fails when it runs, not here
            refused.add(key)
            continue
        timed.setdefault(_kind(model), []).append((model, est))
        seconds_of[key] = est.seconds - est.warm_s
        memory, warm = max(memory, est.total_memory), max(warm, est.warm_s)
    mean = sum(seconds_of.values()) / len(seconds_of) if seconds_of else math.nan
    total = warm + sum(runs_of[k] * seconds_of.get(k, mean) for k in runs_of
                       if k not in refused)
    return SweepEstimate(points=len(points), seconds=total, memory=memory,
                         timed=len(seconds_of) - len(scaled),
                         guessed=len(runs_of) - len(seconds_of) - len(refused), call=call,
                         refused=len(refused), scaled=len(scaled))
