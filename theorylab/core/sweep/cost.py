"""What a sweep will take before it runs: the sum of its points' estimates
([`theorylab.core.cost`][]), through each paper's `Paper.cost` hook.

Points that differ only in ``train.seed`` cost the same and are timed once; what a process
pays once (the first step's compilation and caches) is counted once; a batched point
costs its runs (seeds × the batched axis's values) one after the other (an upper estimate: a
batched step serves several runs). At most [`ESTIMATE_BUDGET_S`][] seconds are spent timing:
past that, each remaining distinct config is taken to cost the mean of those timed (said so in
the output). ``call`` points (functions of a paper's own) have no estimate and are counted
apart.
"""

from __future__ import annotations

import json
import math
import time
from collections.abc import Sequence
from dataclasses import dataclass

from ..cost import estimate, format_seconds, machine_load
from ..resources import format_bytes
from .spec import Point, get_paper

__all__ = ["ESTIMATE_BUDGET_S", "SweepEstimate", "estimate_points"]

#: Seconds a sweep's estimate may spend timing configs (a dry run may spend more on
#: request).
ESTIMATE_BUDGET_S = 6.0


@dataclass(frozen=True)
class SweepEstimate:
    """The estimate of the points a sweep will compute: `seconds` of CPU time in one process
    (the points' estimates, ``Estimate.seconds``;
    divide by the workers for a cluster), the largest `memory` of one point, the number of `points`,
    of distinct configs `timed`, `guessed` and `refused` (by their paper's up-front checks),
    and of `call` points without an estimate."""

    points: int
    seconds: float
    memory: float
    timed: int
    guessed: int
    call: int
    refused: int = 0

    def lines(self, workers: int = 1) -> list[str]:
        head = (f"estimate: {self.points} points to compute, about "
                f"{format_seconds(self.seconds)} of CPU time in one process (wall time: the "
                f"same alone on a core, longer on a busy machine")
        if workers > 1:
            head += f"; about {format_seconds(self.seconds / workers)} on {workers} workers"
        head += ")"
        out = [head + f"; at most {format_bytes(self.memory)} of memory per point",
               f"  from {self.timed} distinct configs timed on this machine ({machine_load()})"]
        if self.guessed:
            out.append(f"  {self.guessed} more distinct configs not timed (the time budget of "
                       f"{ESTIMATE_BUDGET_S:g} s ran out): each taken as the mean of those timed")
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


def estimate_points(points: Sequence[Point], budget_s: float = ESTIMATE_BUDGET_S
                    ) -> SweepEstimate:
    """The [`SweepEstimate`][] of `points` (those still to compute)."""
    t0 = time.perf_counter()
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
    refused: set[str] = set()
    memory = warm = 0.0
    for key, p in sample.items():
        if time.perf_counter() - t0 > budget_s and seconds_of:
            break
        paper = get_paper(p.payload["paper"])
        if paper.cost is None:
            continue
        try:
            est = estimate(paper.cost(paper.config_from_tables(p.payload["config"])),
                           budget_s=0.3)
        except Exception:  # a point its paper refuses fails when it runs, not here
            refused.add(key)
            continue
        seconds_of[key] = est.seconds - est.warm_s
        memory, warm = max(memory, est.total_memory), max(warm, est.warm_s)
    mean = sum(seconds_of.values()) / len(seconds_of) if seconds_of else math.nan
    total = warm + sum(runs_of[k] * seconds_of.get(k, mean) for k in runs_of
                       if k not in refused)
    return SweepEstimate(points=len(points), seconds=total, memory=memory,
                         timed=len(seconds_of),
                         guessed=len(runs_of) - len(seconds_of) - len(refused), call=call,
                         refused=len(refused))
