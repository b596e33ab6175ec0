"""Verdict helpers: small pure functions of measured tables.

Every claim turns its measured table into a [`Verdict`][] with a pure function (no I/O, no
randomness), unit-tested on a table that agrees, one that disagrees and censored or flat ones.
The rules shared by all of them:

- a headline that is censored (a ladder whose smallest rung already passes, or whose largest
  never does; a run that ran out of steps), flat, or NaN gives ``inconclusive``, never
  ``agrees``;
- no verdict from a non-strict monotonicity ([`strictly_increasing`][]);
- no verdict from a log-log fit on fewer than [`MIN_FIT_POINTS`][] uncensored points
  ([`loglog_fit`][]).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..config import check_choice

__all__ = ["VERDICTS", "Verdict", "Reported", "MIN_FIT_POINTS", "strictly_increasing", "loglog_fit",
           "ladder_threshold", "combine", "premise_failed"]

#: ``agrees``: the measurement matches the prediction on the whole grid. ``agrees-in-regime``: it
#: matches inside the stated regime and departs outside it. ``partial``: some predicted items
#: hold and some fail. ``disagrees``: the prediction fails. ``inconclusive``: the measurement
#: cannot decide (censored, flat or NaN headline; too few points for a fit).
VERDICTS = ("agrees", "agrees-in-regime", "partial", "disagrees", "inconclusive")

#: Smallest number of uncensored points a log-log fit needs before a verdict may rest on it
#: (with 3 points any smooth monotone curve fits a line with r² > 0.9).
MIN_FIT_POINTS = 4


@dataclass(frozen=True)
class Verdict:
    """A verdict and the reasons that decided it (generated from the numbers).

    `judged` names the parts of the claim this verdict judged and `reported` those it only
    reported (a part dropped under some reading: its numbers are on the page, not in the
    verdict); [`combine`][] gathers both, and the readings table counts them per reading."""

    verdict: str
    reasons: tuple[str, ...] = ()
    judged: tuple[str, ...] = ()
    reported: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        check_choice("verdict", self.verdict, VERDICTS)
        both = set(self.judged) & set(self.reported)
        if both:
            raise ValueError(f"reported: parts {sorted(both)} are both judged and reported only")


@dataclass(frozen=True)
class Reported:
    """A part of a claim that is reported, not judged (under this reading): its `part` name and
    the `reason` (generated from the numbers). [`combine`][] adds the reason and counts the
    part as reported only; it does not change the verdict."""

    part: str
    reason: str


def premise_failed(why: str) -> Verdict:
    """The ``inconclusive`` verdict of a check whose premise failed, saying `why`."""
    return Verdict("inconclusive", (f"premise failed: {why}",))


def strictly_increasing(values) -> bool:
    """True when there are at least 2 values, all finite, each strictly above the previous."""
    v = np.asarray(values, dtype=np.float64)
    return bool(v.size >= 2 and np.all(np.isfinite(v)) and np.all(np.diff(v) > 0))


def loglog_fit(x, y, min_points: int = MIN_FIT_POINTS) -> dict[str, float]:
    """Least-squares slope of log y against log x over the finite, positive points.

    Returns ``{"slope", "r2", "n", "censored"}``; slope and r² are NaN when fewer than
    `min_points` points are usable or when y is flat (``censored`` counts the unusable ones)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    ok = np.isfinite(x) & np.isfinite(y) & (x > 0) & (y > 0)
    n = int(ok.sum())
    out = {"slope": math.nan, "r2": math.nan, "n": n, "censored": int(len(x) - n)}
    if n < min_points:
        return out
    lx, ly = np.log(x[ok]), np.log(y[ok])
    if np.ptp(lx) == 0 or np.ptp(ly) == 0:  # flat: no slope to speak of
        return out
    slope, icpt = np.polyfit(lx, ly, 1)
    resid = ly - (slope * lx + icpt)
    r2 = 1.0 - float(resid @ resid) / float(((ly - ly.mean()) ** 2).sum())
    out.update(slope=float(slope), r2=r2)
    return out


def ladder_threshold(N, ok, floor: float | None = None) -> tuple[float, str]:
    """The smallest rung of a sorted ladder `N` from which `ok` holds at every larger rung.

    Returns ``(value, status)``: status ``"ok"`` (a failing rung lies below it, or it is the
    smallest value the quantity can take, `floor`), ``"censored-below"`` (the smallest rung
    already passes: the true threshold may be lower), ``"censored-above"`` (the largest rung
    fails; value ∞), ``"empty"`` (value NaN)."""
    N = np.asarray(N, dtype=np.float64)
    ok = np.asarray(ok, dtype=bool)
    if N.size == 0:
        return math.nan, "empty"
    order = np.argsort(N)
    N, ok = N[order], ok[order]
    if not ok[-1]:
        return math.inf, "censored-above"
    fails = np.flatnonzero(~ok)
    first = int(fails[-1]) + 1 if fails.size else 0
    at_floor = floor is not None and N[first] <= floor
    return float(N[first]), ("censored-below" if first == 0 and not at_floor else "ok")


def combine(parts: list[Verdict | Reported]) -> Verdict:
    """Verdict of a claim made of several parts, in this order of precedence:

    - ``disagrees`` if any part disagrees (a contradiction is a finding whatever the rest);
    - ``inconclusive`` if any part is (the claim is not decided while a part is not);
    - ``partial`` if some part is partial;
    - ``agrees-in-regime`` if every part agrees and at least one only inside its regime (the
      whole claim then holds inside the regime: nothing fails, so it is not ``partial``);
    - ``agrees`` if every part agrees; ``inconclusive`` for no part.

    Reasons are concatenated in the order of the parts; a [`Reported`][] part adds its reason
    and is counted as reported only (unless another part judged a part of that name)."""
    reasons = tuple(r for p in parts
                    for r in ((p.reason,) if isinstance(p, Reported) else p.reasons))
    verdicts = [p for p in parts if isinstance(p, Verdict)]
    judged = tuple(dict.fromkeys(n for p in verdicts for n in p.judged))
    reported = tuple(dict.fromkeys(
        n for p in parts for n in ((p.part,) if isinstance(p, Reported) else p.reported)
        if n not in judged))
    kinds = [p.verdict for p in verdicts]
    if not kinds:
        return Verdict("inconclusive", reasons or ("no part was judged",), judged, reported)
    first = next((v for v in ("disagrees", "inconclusive", "partial", "agrees-in-regime")
                  if v in kinds), "agrees")
    return Verdict(first, reasons, judged, reported)
