"""What a verdict rests on: declared thresholds, their sensitivity, premises and seed intervals.

- [`Threshold`][]: every number that can change a verdict (a tolerance, a regime cut, a minimum
  effect), declared once in its claim with its value, where it comes from (one of
  [`SOURCES`][]) and the sentence that justifies it.
- [`sensitivity`][]: a claim's judge is a pure function of its tables and its threshold values,
  so the value at which the verdict flips, and the verdicts at half and twice each value, are
  computed from the stored tables without a rerun.
- [`Premise`][] and [`premises_verdict`][]: what must hold for the experiment to test the
  statement (converged, away from uniform attention, inside the regime); a failed premise gives
  ``inconclusive`` with its reason.
- [`t_interval`][], [`log_t_interval`][], [`bootstrap_interval`][]: intervals over seeds;
  [`wilson_interval`][]: the interval of a success probability from k successes in n seeds.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..config import check_choice
from .verdict import Verdict

__all__ = ["SOURCES", "Threshold", "threshold_values", "Premise", "premises_verdict",
           "sensitivity", "is_robust", "judged_rows", "t_interval", "log_t_interval",
           "bootstrap_interval", "wilson_interval", "format_interval", "SENSITIVITY_FACTORS",
           "INTERVAL_METHODS", "FEW_SEEDS", "IntervalMethod", "interval_coverage",
           "calibrated_level", "first_change"]

#: Where a threshold comes from. ``derived bound``: a bound on what the measurement neglects
#: (rounding, a sampling error, dropped terms of a derivation). ``paper convention``: the paper
#: states it (a bound of the statement, a reading of its assumptions). ``project choice``:
#: theorylab chose it; its reason says why and never rests on the data it judges.
SOURCES = ("derived bound", "paper convention", "project choice")

#: The factors of the robustness question (does the verdict survive ×0.5 and ×2?) and the
#: columns of the sensitivity table that hold the verdicts at them.
SENSITIVITY_FACTORS = {"verdict_half": 0.5, "verdict_double": 2.0}


@dataclass(frozen=True)
class Threshold:
    """A number that can change a verdict, declared once per claim.

    **Arguments:**

    - `name`: the key of the value in the judge's ``values`` mapping (e.g. ``"REGIME_CUT"``).
    - `value`: the value the verdict uses (finite, non-zero: sensitivity scales it).
    - `source`: one of [`SOURCES`][].
    - `reason`: the sentence that justifies the value (not computed from the judged data).
    - `role`: how it enters the verdict (e.g. "regime: points with snr below it are judged").
    - `judged`: True when the judge reads it (its flip point is computed from the tables);
      False when it enters the measurement itself (a flip needs a rerun; the page says so).
    """

    name: str
    value: float
    source: str
    reason: str
    role: str = ""
    judged: bool = True

    def __post_init__(self) -> None:
        check_choice("source", self.source, SOURCES)
        if not (math.isfinite(self.value) and self.value != 0):
            raise ValueError(f"value: must be finite and non-zero (got {self.value!r})")
        if not self.reason:
            raise ValueError(f"reason: threshold {self.name} needs a reason")


def threshold_values(thresholds: Sequence[Threshold],
                     overrides: Mapping[str, float] | None = None) -> dict[str, float]:
    """``{name: value}`` of the declared `thresholds`, with `overrides` (names must be
    declared) replacing some values."""
    out = {t.name: t.value for t in thresholds}
    for k, v in (overrides or {}).items():
        if k not in out:
            raise ValueError(f"thresholds: unknown name {k!r}; declared: {list(out)}")
        out[k] = float(v)
    return out


@dataclass(frozen=True)
class Premise:
    """What must hold for the experiment to test the statement, read from the table:
    `name` (e.g. "attention away from uniform"), whether it `holds`, and the numbers
    (`detail`)."""

    name: str
    holds: bool
    detail: str = ""


def premises_verdict(premises: Sequence[Premise]) -> Verdict | None:
    """``inconclusive`` naming every failed premise, or None when all hold."""
    bad = [p for p in premises if not p.holds]
    if not bad:
        return None
    return Verdict("inconclusive", tuple(
        f"premise failed: {p.name}" + (f" ({p.detail})" if p.detail else "") for p in bad))


def _verdict_at(judge, tables, values, name, x) -> str:
    return judge(tables, {**values, name: x}).verdict


def first_change(changes: Callable[[float], bool], points, start: float,
                 iters: int) -> float:
    """The first of `points` (a geometric scan moving away from `start`) at which `changes`
    holds, located by `iters` geometric bisections between it and the point before it
    (`start` before the first; from 0, halving); NaN when it holds at none."""
    prev = start
    for x in points:
        if changes(x):
            lo, hi = prev, x  # lo keeps the base verdict, hi does not
            for _ in range(iters):
                mid = math.copysign(math.sqrt(lo * hi), hi) if lo else hi / 2  # same sign
                if changes(mid):
                    hi = mid
                else:
                    lo = mid
            return hi
        prev = x
    return math.nan


def _flip(judge, tables, values, th: Threshold, base: str, up: bool, span: float,
          grid: int, iters: int) -> float:
    """The value nearest to ``th.value`` on one side (``up``: larger magnitude) at which the
    verdict differs from ``base``; NaN when none within a factor ``span``."""
    ratio = span ** (1.0 / grid)
    points = (th.value * (ratio ** k if up else ratio ** -k) for k in range(1, grid + 1))
    return first_change(lambda x: _verdict_at(judge, tables, values, th.name, x) != base,
                        points, th.value, iters)


def sensitivity(judge: Callable[[Mapping[str, pd.DataFrame], Mapping[str, float]], Verdict],
                tables: Mapping[str, pd.DataFrame], thresholds: Sequence[Threshold], *,
                fixed: Mapping[str, float] | None = None, span: float = 100.0, grid: int = 40,
                iters: int = 30) -> pd.DataFrame:
    """For each judged threshold: the verdict at its value, at ×0.5 and ×2, and the nearest
    values below and above it (in magnitude, within a factor `span`) where the verdict changes
    (``flip_below``, ``flip_above``: NaN when none; located by a geometric scan of `grid`
    steps and `iters` bisections, so to ~1e-9 relative). `judge(tables, values)` must be pure.

    Returns one row per threshold: threshold, value, source, judged, verdict, verdict_half
    (×0.5), verdict_double (×2), flip_below, flip_above, robust (verdict unchanged at ×0.5
    and ×2; NaN for a threshold that enters the measurement, not the judge).

    `fixed`: further values the judge reads and that stay as they are (a claim's predictions);
    the declared threshold values override none of them."""
    values = {**(fixed or {}), **threshold_values(thresholds)}
    base = judge(tables, values).verdict
    rows = []
    for th in thresholds:
        row = {"threshold": th.name, "value": th.value, "source": th.source,
               "judged": th.judged, "verdict": base}
        if th.judged:
            at = {c: _verdict_at(judge, tables, values, th.name, th.value * f)
                  for c, f in SENSITIVITY_FACTORS.items()}
            row.update(at)
            for col, up in (("flip_below", False), ("flip_above", True)):
                row[col] = _flip(judge, tables, values, th, base, up, span, grid, iters)
            row["robust"] = all(v == base for v in at.values())
        else:
            row.update({c: "rerun" for c in SENSITIVITY_FACTORS})
            row.update(flip_below=math.nan, flip_above=math.nan, robust=math.nan)
        rows.append(row)
    cols = ["threshold", "value", "source", "judged", "verdict",
            *SENSITIVITY_FACTORS, "flip_below", "flip_above",
            "robust"]
    return pd.DataFrame(rows, columns=cols)


def is_robust(sens: pd.DataFrame | None) -> bool | None:
    """True when the verdict survives ×0.5 and ×2 of every judged threshold, False when some
    factor flips it, None when there is no judged threshold."""
    judged = judged_rows(sens)
    return None if len(judged) == 0 else bool(judged.robust.astype(bool).all())


def judged_rows(sens: pd.DataFrame | None) -> pd.DataFrame:
    """The rows of a [`sensitivity`][] table whose threshold the judge reads (none without a
    table)."""
    if sens is None or len(sens) == 0:
        return pd.DataFrame(columns=["threshold", "judged", "robust"])
    return sens[sens.judged.astype(bool)]


def t_interval(x, level: float = 0.95) -> tuple[float, float, float]:
    """(mean, lower, upper): Student-t interval of the mean of the finite values of `x`
    (bounds NaN with fewer than 2 values; a zero spread gives a zero-width interval)."""
    from scipy import stats

    v = _finite(x)
    m = float(v.mean()) if v.size else math.nan
    if v.size < 2:
        return m, math.nan, math.nan
    half = float(stats.t.ppf(0.5 + level / 2, v.size - 1) * v.std(ddof=1) / math.sqrt(v.size))
    return m, m - half, m + half


def _finite(x) -> np.ndarray:
    """The finite values of `x`, as float64."""
    v = np.asarray(x, dtype=np.float64)
    return v[np.isfinite(v)]


def log_t_interval(x, level: float = 0.95) -> tuple[float, float, float]:
    """(geometric mean, lower, upper): [`t_interval`][] of log x, mapped back (for positive
    quantities such as a sample size; non-positive or infinite values are dropped)."""
    v = _finite(x)
    m, lo, hi = t_interval(np.log(v[v > 0]), level)
    return tuple(math.exp(t) if math.isfinite(t) else math.nan for t in (m, lo, hi))


def bootstrap_interval(x, stat: Callable = np.mean, level: float = 0.95, n_boot: int = 4000,
                       seed: int = 0) -> tuple[float, float, float]:
    """(stat, lower, upper): percentile bootstrap interval of `stat` over the finite values of
    `x` (`n_boot` resamples, seeded: the same input gives the same interval)."""
    v = _finite(x)
    s = float(stat(v)) if v.size else math.nan
    if v.size < 2:
        return s, math.nan, math.nan
    rng = np.random.default_rng(seed)
    idx = rng.integers(0, v.size, (n_boot, v.size))  # the same draws as one resample at a time
    try:
        boots = np.asarray(stat(v[idx], axis=1), dtype=np.float64)
    except TypeError:  # a statistic without an axis argument
        boots = np.array([stat(v[i]) for i in idx])
    a = (1 - level) / 2
    return s, float(np.quantile(boots, a)), float(np.quantile(boots, 1 - a))


def wilson_interval(k: int, n: int, level: float = 0.95) -> tuple[float, float, float]:
    """(k/n, lower, upper): Wilson score interval of a success probability from `k`
    successes in `n` trials (e.g. seeds). It stays inside [0, 1] and is not empty at k = 0 or
    k = n (0 of 4 gives [0, 0.49], 4 of 4 gives [0.51, 1] at 95 %); NaN for n = 0."""
    from scipy import stats

    if n <= 0:
        return math.nan, math.nan, math.nan
    if not 0 <= k <= n:
        raise ValueError(f"k: must lie in [0, n={n}] (got {k})")
    p = k / n
    z = float(stats.norm.ppf(0.5 + level / 2))
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    lo = 0.0 if k == 0 else max(0.0, mid - half)  # exact ends (mid − half is 0 only to rounding)
    hi = 1.0 if k == n else min(1.0, mid + half)
    return p, lo, hi


#: How a claim's intervals over seeds are made: ``t`` ([`t_interval`][]), ``log-t``
#: ([`log_t_interval`][]), ``bootstrap`` ([`bootstrap_interval`][]), ``wilson``
#: ([`wilson_interval`][]), ``exact`` (deterministic: no seeds), ``extrapolation`` (a settled
#: limit and the change of its extrapolation: [`theorylab.core.claims.bands.settle`][]).
INTERVAL_METHODS = ("t", "log-t", "bootstrap", "wilson", "exact", "extrapolation")

#: Below this many seeds an interval is a t-interval or a bootstrap shown calibrated on a null
#: table (a percentile bootstrap covers well under its level with a handful of seeds).
FEW_SEEDS = 10


@dataclass(frozen=True)
class IntervalMethod:
    """How a claim's intervals over seeds are made, declared once per claim.

    **Arguments:**

    - `method`: one of [`INTERVAL_METHODS`][].
    - `seeds`: how many seeds one interval rests on (0 for ``exact``).
    - `level`: the nominal level (0.95 by default).
    - `paired`: whether the ladder's rungs share their random draws (the same seeds at every
      rung: differences between rungs carry no seed noise of their own).
    - `calibration`: where the interval is shown to cover its level on a null table (a test,
      ``tests/...py::name``; [`interval_coverage`][]); required for a bootstrap on fewer than
      [`FEW_SEEDS`][] seeds.
    """

    method: str
    seeds: int = 0
    level: float = 0.95
    paired: bool = False
    calibration: str = ""

    def __post_init__(self) -> None:
        check_choice("method", self.method, INTERVAL_METHODS)
        if not 0 < self.level < 1:
            raise ValueError(f"level: must lie in (0, 1) (got {self.level!r})")
        if self.seeds < 0 or (self.method not in ("exact", "extrapolation")
                              and self.seeds < 2):
            raise ValueError(f"seeds: an interval over seeds needs at least 2 (got "
                             f"{self.seeds})")
        if self.method == "bootstrap" and self.seeds < FEW_SEEDS and not self.calibration:
            raise ValueError(f"calibration: a bootstrap on {self.seeds} < {FEW_SEEDS} seeds "
                             "must name where it is shown calibrated on a null table")

    def text(self) -> str:
        """One line for the page, e.g. ``t-interval (95 %) over 8 seeds, paired``."""
        if self.method == "exact":
            return "exact: deterministic, no interval over seeds"
        if self.method == "extrapolation":
            return "the change of the extrapolated limit between the last sub-ladders"
        name = {"t": "t-interval", "log-t": "t-interval of the log", "bootstrap":
                "percentile bootstrap", "wilson": "Wilson interval"}[self.method]
        out = f"{name} ({self.level:.0%}) over {self.seeds} seeds"
        out += ", paired across the ladder" if self.paired else ""
        return out + (f", calibrated in {self.calibration}" if self.calibration else "")


def interval_coverage(interval: Callable, sample: Callable, truth: float, n: int, *,
                      reps: int = 400, seed: int = 0) -> tuple[float, float, float]:
    """How often `interval` (``interval(x) -> (estimate, lower, upper)``) covers `truth` on
    `reps` null tables of `n` draws each (``sample(rng, n) -> array``, draws whose statistic
    is `truth`): (coverage, Wilson lower, Wilson upper) at 95 %. An interval is calibrated at
    level L when L lies inside the Wilson interval of its coverage (or below it)."""
    rng = np.random.default_rng(seed)
    hits = 0
    for _ in range(reps):
        _, lo, hi = interval(sample(rng, n))
        hits += bool(lo <= truth <= hi)
    return wilson_interval(hits, reps)


def calibrated_level(interval_at: Callable[[float], Callable], sample: Callable, truth: float,
                     n: int, *, target: float = 0.95, reps: int = 400, seed: int = 0,
                     iters: int = 8, highest: float = 0.9999) -> float:
    """The nominal level at which the interval ``interval_at(level)`` covers `truth` with
    frequency `target` on null tables of `n` draws ([`interval_coverage`][], the same tables at
    every level), by bisection between `target` and `highest`; NaN when even `highest` covers
    less (a percentile bootstrap never leaves the range of its draws: with 4 seeds of a
    symmetric law it covers the mean at most 1 − 2/2⁴ = 87.5 % of the time, whatever its
    level)."""
    def cover(level: float) -> float:
        return interval_coverage(interval_at(level), sample, truth, n, reps=reps, seed=seed)[0]

    lo, hi = target, highest
    if cover(lo) >= target:
        return lo
    if cover(hi) < target:
        return math.nan
    for _ in range(iters):
        mid = 0.5 * (lo + hi)
        lo, hi = (lo, mid) if cover(mid) >= target else (mid, hi)
    return hi


def format_interval(m: float, lo: float, hi: float, n: int, fmt: str = ".3g") -> str:
    """``"1200 [850, 1700], 5 seeds"``."""
    if not math.isfinite(lo):
        return f"{m:{fmt}} ({n} seed{'s' if n != 1 else ''}, no interval)"
    return f"{m:{fmt}} [{lo:{fmt}}, {hi:{fmt}}], {n} seeds"
