"""What a trajectory plot shows: which columns get a panel, which are said in a note instead,
the step axis, and the phase markers. ``theorylab plot`` ([`theorylab.analysis.plots`][]) draws
with these choices; the kernel knows no paper: the columns come from the table (and the paper's
trajectory schema where known), the phase times from the paper's hook.

- A column **constant to rounding** (its range at most [`ROUNDING`][] of its scale, the scale
  being max(1, its largest magnitude)) gets no panel: a note on the figure gives its value
  (β ≤ 4e-16, ``sym_dev`` ≈ 1e-15 and ``cos_v_wstar`` ≡ 1 of an aligned exact run are
  rounding, not dynamics).
- Columns **equal to rounding at every row** share one panel, titled with every name (the
  global area's own area is the global area, so a global query's ``phi_own_gq`` is its
  ``phi_glob_gq``); the note says so.
- The **step axis** is logarithmic (symlog, linear below step 1 so that step 0 is drawn) when
  the run spans at least [`LOG_DECADES`][] decades of steps and either its steps were recorded
  on a logarithmic grid or a panel makes half of its change within the first
  [`EARLY_FRACTION`][] of the steps: the plateau-and-escape dynamics where a linear axis
  crushes the early phase against the left edge.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["EARLY_FRACTION", "LOG_DECADES", "ROUNDING", "Panels", "choose_panels",
           "constant_to_rounding", "equal_to_rounding", "log_steps", "phase_marks"]

#: A change this small relative to a column's scale is rounding: ~10⁴ float64 ulps of
#: accumulated error, far below anything a panel could show (a project choice).
ROUNDING = 1e-10
#: A logarithmic step axis needs at least this many decades of recorded steps.
LOG_DECADES = 2.0
#: ... and half a panel's change within this fraction of the steps (or a log-spaced record).
EARLY_FRACTION = 0.05


def _values(col) -> np.ndarray:
    return np.asarray(col, dtype=float)


def _scale(*arrays: np.ndarray) -> float:
    finite = [np.abs(a[np.isfinite(a)]) for a in arrays]
    top = max((float(a.max()) for a in finite if a.size), default=0.0)
    return max(1.0, top)


def constant_to_rounding(values, rounding: float = ROUNDING) -> bool:
    """Whether `values` (NaN ignored) change by at most `rounding` of their scale
    (max(1, largest magnitude)); a column of NaN alone is constant."""
    v = _values(values)
    v = v[np.isfinite(v)]
    return v.size == 0 or float(v.max() - v.min()) <= rounding * _scale(v)


def equal_to_rounding(a, b, rounding: float = ROUNDING) -> bool:
    """Whether two columns agree at every row to `rounding` of their scale (NaN where the other
    is NaN too)."""
    x, y = _values(a), _values(b)
    if x.shape != y.shape:
        return False
    nan_x, nan_y = ~np.isfinite(x), ~np.isfinite(y)
    if not np.array_equal(nan_x, nan_y):
        return False
    keep = ~nan_x
    if not keep.any():
        return True
    return float(np.max(np.abs(x[keep] - y[keep]))) <= rounding * _scale(x[keep], y[keep])


def _fmt(x: float) -> str:
    return f"{x:.3g}" if math.isfinite(x) else str(x)


@dataclass
class Panels:
    """The panels of a trajectory plot: each a list of columns equal to rounding (the first is
    drawn), and the notes the figure states for what it leaves out."""

    panels: list[list[str]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    constant: dict[str, float] = field(default_factory=dict)


def choose_panels(table, columns: Sequence[str], *, limit: int | None = None,
                  rounding: float = ROUNDING) -> Panels:
    """The panels for `columns` of `table` (a DataFrame; one run, or several with the same
    columns): the constant columns go to a note with their value, the equal ones share a
    panel, at most `limit` panels (the rest said in a note)."""
    out = Panels()
    varying = []
    for c in columns:
        v = _values(table[c])
        if constant_to_rounding(v, rounding):
            finite = v[np.isfinite(v)]
            value = float(np.median(finite)) if finite.size else math.nan
            # a value within rounding of 0 is 0 (β ≤ 4e-16 of an aligned run)
            out.constant[c] = 0.0 if abs(value) <= rounding * _scale(finite) else value
        else:
            varying.append(c)
    for c in varying:
        for group in out.panels:
            if equal_to_rounding(table[group[0]], table[c], rounding):
                group.append(c)
                break
        else:
            out.panels.append([c])
    if out.constant:
        shown = ", ".join(f"{c} ≈ {_fmt(v)}" for c, v in out.constant.items())
        out.notes.append(f"constant to rounding, not drawn: {shown}")
    same = [" = ".join(g) for g in out.panels if len(g) > 1]
    if same:
        out.notes.append("equal at every step, one panel: " + "; ".join(same))
    if limit is not None and len(out.panels) > limit:
        left = [g[0] for g in out.panels[limit:]]
        out.panels = out.panels[:limit]
        out.notes.append(f"not drawn (more than {limit} panels; --columns picks): "
                         + ", ".join(left))
    return out


def _log_spaced(steps: np.ndarray) -> bool:
    """Whether the positive recorded steps grow geometrically (the gaps grow with the step)."""
    s = np.unique(steps[steps > 0])
    if s.size < 8:
        return False
    gaps = np.diff(s)
    half = gaps.size // 2
    return float(np.median(gaps[half:])) > 4.0 * float(np.median(gaps[:half]))


def _early(steps: np.ndarray, values: np.ndarray, fraction: float) -> bool:
    """Whether half of `values`' total change is made within the first `fraction` of the
    steps."""
    ok = np.isfinite(values)
    s, v = steps[ok], values[ok]
    if s.size < 3 or v[-1] == v[0]:
        return False
    moved = np.abs(v - v[0]) >= 0.5 * abs(v[-1] - v[0])
    first = s[np.argmax(moved)]
    return bool(first - s[0] <= fraction * (s[-1] - s[0]))


def log_steps(table, panels: Sequence[Sequence[str]], step: str = "step") -> bool:
    """Whether the step axis of `table`'s panels should be logarithmic (module docstring)."""
    steps = _values(table[step])
    pos = steps[steps > 0]
    if pos.size < 3 or math.log10(pos.max() / pos.min()) < LOG_DECADES:
        return False
    if _log_spaced(steps):
        return True
    order = np.argsort(steps, kind="stable")
    return any(_early(steps[order], _values(table[g[0]])[order], EARLY_FRACTION)
               for g in panels)


def phase_marks(readings: Mapping[str, object] | None, steps) -> dict[str, float]:
    """The phase times to mark: the entries of `readings` named like times (``t_…``,
    ``T_…``) that are finite steps within the recorded ones, in time order."""
    if not readings:
        return {}
    s = _values(steps)
    lo, hi = float(np.nanmin(s)), float(np.nanmax(s))
    marks = {}
    for name, value in readings.items():
        if not (name.startswith(("t_", "T_")) and isinstance(value, (int, float, np.number))
                and not isinstance(value, (bool, np.bool_))):
            continue
        v = float(value)
        if math.isfinite(v) and lo <= v <= hi:
            marks[name] = v
    return dict(sorted(marks.items(), key=lambda kv: kv[1]))
