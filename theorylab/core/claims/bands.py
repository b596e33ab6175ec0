"""Judging a number as a referee would: a band on both sides, on a settled limit, against the
nearest wrong answer.

- [`band_verdict`][]: a measured value with its interval against a predicted value with a
  declared tolerance. Two-sided by default (a one-sided band only where the paper's sentence is
  one-sided); ``disagrees`` when the interval misses the band, ``inconclusive: cannot
  distinguish X from Y`` when it meets the bands of two candidate values, ``agrees`` when the
  value lies in the band and no other candidate is consistent with the interval.
- [`Settlement`][] and [`settle`][]: an asymptotic prediction (a limit slope, exponent or
  constant read off a ladder) is judged on the extrapolation of its local estimates with the
  derived correction form, and only when the drift between the last two sub-ladders is below a
  third of the distance to the nearest other candidate (a counterfactual). The tolerance never
  grows with the drift: a slope still moving is ``inconclusive: not settled``, with the size of
  the ladder the extrapolation says would settle it.
- [`judge_band`][] and [`judge_settled`][]: the same, reading the prediction's value and
  tolerance from a judge's ``values`` and its candidates from the declared counterfactuals, so
  that re-judging under a counterfactual needs nothing else.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass

import numpy as np

from ..config import check_choice
from .verdict import Verdict

__all__ = ["CORRECTIONS", "Settlement", "Settled", "band", "band_verdict", "settle",
           "settled_verdict", "candidates", "nearest_distance", "scale_distance", "judge_band",
           "judge_settled",
           "judged_sides",
           "NEAR_TOLERANCES"]

#: A counterfactual is *near* a prediction when it lies within this many tolerances of it.
NEAR_TOLERANCES = 3.0

#: The derived correction forms a limit is extrapolated with: the local estimate at ladder
#: position x is a + b·g(x) (a: the limit), g given here. Which form holds is part of the
#: derivation (different forms give different limits from the same estimates).
CORRECTIONS: dict[str, Callable[[np.ndarray], np.ndarray]] = {
    "a + b/ln x": lambda x: 1.0 / np.log(x),
    "a + b/ln² x": lambda x: 1.0 / np.log(x) ** 2,
    "a + b·ln ln x/ln x": lambda x: np.log(np.log(x)) / np.log(x),
    "a + b/x": lambda x: 1.0 / x,
    "a + b/√x": lambda x: 1.0 / np.sqrt(x),
}

#: A settled drift must lie below this fraction of the distance from the judged value to the
#: nearest other candidate (so the extrapolation cannot move from one candidate to the other
#: within the ladder's next step).
SETTLE_FRACTION = 1.0 / 3.0


@dataclass(frozen=True)
class Settlement:
    """How an asymptotic prediction is extrapolated before it is judged.

    **Arguments:**

    - `form`: one of [`CORRECTIONS`][]' keys (the local estimate at ladder position x tends to
      the limit as a + b·g(x)).
    - `derivation`: where the form is derived (a notes' section, a ``proofs_checks/`` file).
    - `variable`: the ladder's variable as the page names it (``"P"``, ``"d"``).
    """

    form: str
    derivation: str
    variable: str = "x"

    def __post_init__(self) -> None:
        check_choice("form", self.form, tuple(CORRECTIONS))
        if not self.derivation.strip():
            raise ValueError("derivation: a correction form needs its derivation")


def band(value: float, tol: float, scale: str = "shift", sides: str = "two") -> tuple[float,
                                                                                   float]:
    """The accepted range of a prediction `value` with half-width `tol`: ``value ± tol``
    (scale ``shift``) or ``value ×/÷ (1 + tol)`` (scale ``factor``); an ``upper`` bound is open
    below (it accepts everything up to its upper edge), a ``lower`` bound open above."""
    if scale == "factor":
        a, b = sorted((value / (1 + tol), value * (1 + tol)))
    else:
        a, b = value - tol, value + tol
    if sides == "upper":
        a = -math.inf
    elif sides == "lower":
        b = math.inf
    return a, b


def _meets(lo: float, hi: float, rng: tuple[float, float]) -> bool:
    return lo <= rng[1] and hi >= rng[0]


def _g(x: float) -> str:
    return f"{x:.3g}"


def _interval_text(m: float, lo: float, hi: float) -> str:
    return _g(m) if lo == hi == m else f"{_g(m)} [{_g(lo)}, {_g(hi)}]"


def band_verdict(estimate: float | Sequence[float], value: float, tol: float, *,
                 scale: str = "shift", sides: str = "two",
                 alternatives: Mapping[str, float] | None = None,
                 what: str = "measured") -> Verdict:
    """The verdict on a measured `estimate` (a value, or ``(value, lower, upper)``; NaN bounds
    read as the value itself) against the prediction `value` with half-width `tol`.

    - ``disagrees`` when the interval misses the band ([`band`][]);
    - ``inconclusive: cannot distinguish V from A`` when the interval also meets the band (same
      half-width, two-sided) of an alternative A (a declared counterfactual's value); for a
      one-sided band the alternatives on its open side are listed as those the check cannot
      tell apart, and the verdict stays ``agrees``;
    - ``inconclusive`` when the value lies outside the band while its interval reaches it;
    - ``agrees`` otherwise (the value inside the band, no alternative consistent).

    A NaN value gives ``inconclusive``."""
    m, lo, hi = (float(estimate),) * 3 if np.ndim(estimate) == 0 else map(float, estimate)
    if not math.isfinite(m):
        return Verdict("inconclusive", (f"{what}: no finite estimate",))
    lo = m if math.isnan(lo) else min(lo, m)
    hi = m if math.isnan(hi) else max(hi, m)
    rng = band(value, tol, scale, sides)
    side_text = {"two": "two-sided", "upper": "upper bound", "lower": "lower bound"}[sides]
    band_text = (f"{_g(value)} ± {_g(tol)}" if scale == "shift" else
                 f"{_g(value)} ×/÷ {_g(1 + tol)}")
    meas = f"{what} {_interval_text(m, lo, hi)}"
    if not _meets(lo, hi, rng):
        return Verdict("disagrees", (f"{meas} outside the band {band_text} ({side_text})",))
    alts = {k: float(a) for k, a in (alternatives or {}).items() if float(a) != float(value)}
    close = {k: a for k, a in alts.items() if _meets(lo, hi, band(a, tol, scale))}
    # on the open side of a one-sided band (below an upper bound, above a lower one)
    open_side = {k: a for k, a in close.items()
                 if sides != "two" and (a < value) == (sides == "upper")}
    close = {k: a for k, a in close.items() if k not in open_side}
    if close:
        return Verdict("inconclusive", (f"{meas}: cannot distinguish {_g(value)} from "
                                        f"{_named(close)}",))
    if not rng[0] <= m <= rng[1]:
        return Verdict("inconclusive", (f"{meas} outside the band {band_text} ({side_text}), "
                                        "its interval reaching it",))
    note = f"; one-sided: cannot tell it apart from {_named(open_side)}" if open_side else ""
    return Verdict("agrees", (f"{meas} inside the band {band_text} ({side_text}){note}",))


def _named(values: Mapping[str, float]) -> str:
    """``"0.5 (slope 1/2), 1 (declared)"``: candidate values with their names."""
    return ", ".join(f"{_g(a)} ({k})" for k, a in values.items())


@dataclass(frozen=True)
class Settled:
    """What [`settle`][] found.

    - `settled`: whether the drift between the last two sub-ladders lies below `allowed`.
    - `limit`, `lower`, `upper`: the extrapolated limit (from the last two sub-ladders) and its
      interval (± the difference from the extrapolation of the two before: how much the
      extrapolation itself still moves). NaN with fewer than 3 usable sub-ladders.
    - `drift`: |last − previous| local estimate; `allowed`: a third of `nearest`, the
      distance from the judged value to the nearest other candidate.
    - `settle_at`: the ladder position at which the extrapolated form's drift per step (the
      ladder's last ratio) falls below `allowed` (NaN: never within 10⁶ steps, or no
      extrapolation); the last position when settled.
    - `local`: the local estimates used, in ladder order; `x`: their positions.
    """

    settled: bool
    limit: float
    lower: float
    upper: float
    drift: float
    allowed: float
    nearest: float
    settle_at: float
    local: tuple[float, ...]
    x: tuple[float, ...]


def _extrapolants(x: np.ndarray, s: np.ndarray, g: Callable) -> tuple[np.ndarray, np.ndarray]:
    """(a_k, b_k) of the form a + b·g(x) through consecutive pairs of sub-ladders."""
    gx = g(x)
    b = np.diff(s) / np.diff(gx)
    a = s[1:] - b * gx[1:]
    return a, b


def settle(x, local, form: str, nearest: float) -> Settled:
    """Whether local estimates `local` at ladder positions `x` (one per sub-ladder, e.g. the
    geometric middle of its P values) have settled, and the limit the correction `form`
    ([`CORRECTIONS`][]) extrapolates them to. `nearest`: the distance from the judged value to
    the nearest other candidate (a counterfactual); the drift between the last two
    sub-ladders must lie below a third of it."""
    g = CORRECTIONS[form]
    xv = np.asarray(x, dtype=np.float64)
    sv = np.asarray(local, dtype=np.float64)
    ok = np.isfinite(xv) & np.isfinite(sv) & (xv > 1)
    xv, sv = xv[ok], sv[ok]
    order = np.argsort(xv)
    xv, sv = xv[order], sv[order]
    allowed = SETTLE_FRACTION * nearest
    nan = math.nan
    drift = float(abs(sv[-1] - sv[-2])) if xv.size >= 2 else nan
    if xv.size < 3:
        return Settled(False, nan, nan, nan, drift, allowed, nearest, nan, tuple(sv),
                       tuple(xv))
    a, b = _extrapolants(xv, sv, g)
    limit, err = float(a[-1]), float(abs(a[-1] - a[-2]))
    settled = bool(drift < allowed)
    at = float(xv[-1]) if settled else _settle_at(float(xv[-1]), float(xv[-1] / xv[-2]),
                                                  float(b[-1]), g, allowed)
    return Settled(settled, limit, limit - err, limit + err, drift, allowed, nearest, at,
                   tuple(float(v) for v in sv), tuple(float(v) for v in xv))


def _settle_at(x_last: float, ratio: float, b: float, g: Callable, allowed: float,
               max_steps: int = 1_000_000) -> float:
    """The first ladder position x_last·ratio^n at which a + b·g changes by less than
    `allowed` over one step (the ladder's last ratio; the limit a does not change it); NaN
    when none within `max_steps`."""
    if not (ratio > 1 and math.isfinite(b) and math.isfinite(allowed)):
        return math.nan
    lx, lr = math.log(x_last), math.log(ratio)
    n = np.arange(1, max_steps + 1, dtype=np.float64)
    with np.errstate(over="ignore", invalid="ignore"):
        xs = np.exp(lx + lr * np.concatenate(([0.0], n)))
        gs = g(xs)
        step = np.abs(b * np.diff(gs))
    hit = np.flatnonzero(np.isfinite(step) & (step < allowed))
    return float(xs[hit[0] + 1]) if hit.size else math.nan


def settled_verdict(x, local, value: float, tol: float, form: str, *,
                    alternatives: Mapping[str, float] | None = None, scale: str = "shift",
                    sides: str = "two", variable: str = "x",
                    what: str = "extrapolated limit", nearest: float | None = None) -> Verdict:
    """The verdict on an asymptotic prediction `value` from local estimates `local` at ladder
    positions `x` (one per sub-ladder): [`settle`][] against `nearest` (the distance from the
    declared prediction to its nearest counterfactual; None: from `value` to the nearest of
    `alternatives`, or the tolerance when there is none), then [`band_verdict`][] on the
    extrapolated limit and its interval when settled, else ``inconclusive: not settled
    (slopes …)`` with the ladder size the extrapolation says would settle it."""
    if nearest is None:
        nearest = nearest_distance(value, (alternatives or {}).values(), tol, scale)
    st = settle(x, local, form, nearest)
    seq = ", ".join(f"{v:.3g}" for v in st.local) or "none"
    if not math.isfinite(st.limit):
        return Verdict("inconclusive", (f"not settled (slopes {seq}): at least 3 "
                                        "sub-ladders are needed to extrapolate",))
    where = f"{variable} = " + ", ".join(f"{v:.3g}" for v in st.x)
    if not st.settled:
        at = (f"the extrapolation {form} (limit {st.limit:.3g}) says {variable} ≈ "
              f"{st.settle_at:.2g} would settle it" if math.isfinite(st.settle_at) else
              f"the extrapolation {form} does not settle within 10⁶ further steps")
        return Verdict("inconclusive", (
            f"not settled (slopes {seq} at {where}): drift {st.drift:.3g} between the last "
            f"two sub-ladders ≥ {st.allowed:.3g}, a third of the distance {st.nearest:.3g} to "
            f"the nearest counterfactual; {at}",))
    v = band_verdict((st.limit, st.lower, st.upper), value, tol, scale=scale, sides=sides,
                     alternatives=alternatives, what=f"{what} ({form})")
    return Verdict(v.verdict, (f"settled (slopes {seq} at {where}; drift {st.drift:.3g} < "
                               f"{st.allowed:.3g})",) + v.reasons)


def scale_distance(value: float, other: float, scale: str = "shift") -> float:
    """How far `other` lies from `value` on the axis of `scale`: |other − value| (``shift``)
    or |ln(other/value)| (``factor``; ∞ for the opposite sign)."""
    if scale == "factor":
        return abs(math.log(other / value)) if other / value > 0 else math.inf
    return abs(other - value)


def nearest_distance(value: float, others, tol: float, scale: str = "shift") -> float:
    """The distance from `value` to the nearest of `others` (other values than itself), in the
    units of the value (for scale ``factor``: |value|·(ratio − 1) of the nearest ratio); the
    tolerance `tol` when there is none."""
    rest = [float(a) for a in others if float(a) != float(value)]
    d = min((scale_distance(value, a, scale) for a in rest), default=math.inf)
    if scale == "factor":
        return math.expm1(d) * abs(value) if math.isfinite(d) else tol * abs(value)
    return d if rest else tol


def candidates(name: str, declared: float, counterfactuals: Sequence) -> dict[str, float]:
    """The values a prediction `name` is told apart from: the declared value (``declared``)
    and each counterfactual's override of it (by the counterfactual's name)."""
    out = {"declared": float(declared)}
    for cf in counterfactuals:
        if name in cf.values:
            out[cf.name] = float(cf.values[name])
    return out


def _declared(p, values: Mapping[str, float], counterfactuals: Sequence
              ) -> tuple[float, float, str, dict[str, float]]:
    """A declared prediction `p` as judged at `values`: its value, its band tolerance (the
    threshold it names), its sides ([`judged_sides`][]) and its candidates."""
    if not p.tolerance:
        raise ValueError(f"tolerance: prediction {p.name} declares no band tolerance")
    return (float(values[p.name]), float(values[p.tolerance]), judged_sides(p, values),
            candidates(p.name, p.value, counterfactuals))


def judge_band(prediction, estimate, values: Mapping[str, float],
               counterfactuals: Sequence = (), what: str = "measured") -> Verdict:
    """[`band_verdict`][] of a declared [`Prediction`][theorylab.core.claims.Prediction]:
    its value and its tolerance (the threshold it names) read from the judge's `values`, the
    alternatives from the declared `counterfactuals` (and the declared value, when a
    counterfactual is judged)."""
    value, tol, sides, alts = _declared(prediction, values, counterfactuals)
    return band_verdict(estimate, value, tol, scale=prediction.scale, sides=sides,
                        alternatives=alts, what=what)


def judged_sides(prediction, values: Mapping[str, float]) -> str:
    """The sides a prediction is judged with at `values`: its declared `sides` at its declared
    value; two-sided at any other value. A one-sided prediction is a bound, but a
    counterfactual or a resolution step is a point statement ("T ∝ d⁴" against the bound
    "T ≤ d³"): judged as a bound moved up, it would accept every measurement below it and the
    bound's closed side could never be told apart from anything."""
    p = prediction
    return p.sides if float(values[p.name]) == float(p.value) else "two"


def judge_settled(prediction, x, local, values: Mapping[str, float],
                  counterfactuals: Sequence = (), what: str = "extrapolated limit") -> Verdict:
    """[`settled_verdict`][] of a declared asymptotic prediction (its
    [`Settlement`][] gives the form and the ladder's variable); whether the slopes have
    settled is read against the declared value's nearest counterfactual, so that a
    counterfactual or a resolution step is judged on the same settlement."""
    p = prediction
    if p.settlement is None:
        raise ValueError(f"settlement: prediction {p.name} declares no correction form")
    value, tol, sides, alts = _declared(p, values, counterfactuals)
    # the settlement rule is the declaration's: the drift against a third of the distance from
    # the declared value to its nearest counterfactual, whichever value is judged
    return settled_verdict(x, local, value, tol, p.settlement.form, scale=p.scale,
                           sides=sides, alternatives=alts, variable=p.settlement.variable,
                           what=what, nearest=nearest_distance(p.value, alts.values(), tol,
                                                               p.scale))
