"""Which reading of the paper a verdict holds for, and what it could detect.

Three declarations a claim makes beside its thresholds:

- [`Variant`][]: a RECONSTRUCTED choice that can change the verdict (a temperature, the start of
  a parameter, a step-size convention), with its main [`Reading`][] and the plausible
  alternatives. A full check runs the claim under each alternative, one at a time around the
  main reading, and judges each (the page's "verdict per reading").
- [`Prediction`][]: a number the judge compares the measurement with (an exponent, a constant,
  a multiplier of a derived column), read by the judge from its ``values`` the way thresholds
  are. Its **resolution** ([`resolution`][]) is the smallest change of it (a factor or a shift)
  that turns the verdict into ``disagrees``: how sharp the check is.
- [`Counterfactual`][]: a wrong statement the check must reject (a wrong exponent, no phase, the
  opposite sign), written as overrides of prediction values; [`counterfactual_table`][]
  re-judges the stored tables under each, with no rerun. A counterfactual is *rejected* when
  the judge says ``disagrees`` under it.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field

import pandas as pd

from ..config import check_choice
from .bands import Settlement
from .robustness import first_change
from .verdict import Verdict

__all__ = ["READING_SOURCES", "PREDICTION_SOURCES", "LEGACY_SOURCES", "SIDES", "SCALES",
           "Reading", "Variant",
           "Prediction", "Counterfactual", "counterfactual_table", "resolution",
           "can_fail_cell", "rejected_count", "readings_cell", "reading_dependent",
           "dropped_parts"]

#: Where a reading of a RECONSTRUCTED choice comes from.
READING_SOURCES = ("printed in the paper", "paper notes", "project choice")

#: Where a predicted value comes from: ``paper`` (a sentence of the paper that its notes,
#: ``docs/papers/<paper>.md``, quote verbatim under a FOUND tag; the prediction names the quote
#: and the notes' section), ``derived`` (our algebra in the simulated model; the prediction names
#: the ``proofs_checks/`` file or the test that checks it against the exact engine) or
#: ``heuristic`` (our guess, said so). Only ``paper`` predictions are evidence for the paper: a
#: theorem check judges nothing else, and the laws we derived are judged in derivation checks.
PREDICTION_SOURCES = ("paper", "derived", "heuristic")

#: The older names of the sources, still accepted and mapped onto [`PREDICTION_SOURCES`][]:
#: ``paper statement`` → ``paper`` (its quote and section still to be declared),
#: ``paper statement (reconstructed)`` → ``heuristic`` (a statement whose details we
#: reconstructed is our reading, never the paper's sentence), ``our derivation`` →
#: ``derived`` (its check still to be named). [`theorylab.core.claims.referee`][] lists every
#: prediction that still uses one.
LEGACY_SOURCES = {"paper statement": "paper", "paper statement (reconstructed)": "heuristic",
                  "our derivation": "derived"}

#: How a band judges a prediction: ``two`` (both sides: |measured − predicted| within the
#: tolerance; the default), ``upper`` (the prediction is an upper bound: measured ≤ predicted +
#: tolerance) or ``lower`` (a lower bound). One-sided only where the paper's sentence is.
SIDES = ("two", "upper", "lower")

#: How a prediction changes: ``factor`` (multiplicatively: a constant, a multiplier of a derived
#: column; its resolution is a factor) or ``shift`` (additively: an exponent, a slope, an
#: offset, a sign; its resolution is a shift).
SCALES = ("factor", "shift")

_VALUE_TYPES = (bool, int, float, str)


@dataclass(frozen=True)
class Reading:
    """One reading of a RECONSTRUCTED choice.

    **Arguments:**

    - `value`: what the claim's run receives (a number, a string or a bool), e.g. ``0.1``,
      ``"sqrt(d)"``, ``"random"``.
    - `label`: how the page names it, e.g. ``"τ = √d (eq. (T))"``.
    - `source`: one of [`READING_SOURCES`][].
    - `setting`: the admissible setting this reading runs at, when the main reading's setting
      would make the experiment uninformative under it (e.g. ``"q = 0.30, below q*(D) of this
      reading"``): declared, so that the reading is judged in full rather than accepted as
      ``inconclusive``; the run receives the reading's value and chooses the setting from it.
    """

    value: object
    label: str
    source: str
    setting: str = ""

    def __post_init__(self) -> None:
        if not isinstance(self.value, _VALUE_TYPES):
            raise ValueError(f"value: a reading's value must be a number, string or bool "
                             f"(got {type(self.value).__name__})")
        check_choice("source", self.source, READING_SOURCES)
        if not self.label:
            raise ValueError("label: a reading needs a label")


@dataclass(frozen=True)
class Variant:
    """A RECONSTRUCTED choice that can change a verdict, with the readings to run.

    **Arguments:**

    - `name`: the key of the value in the `readings` mapping the claim's run receives (e.g.
      ``"temperature"``).
    - `main`: the reading the claim's verdict uses.
    - `alternatives`: the other plausible readings (at least one; a quick check runs only the
      first).
    - `reason`: why the choice is a reconstruction and what it can change.
    """

    name: str
    main: Reading
    alternatives: tuple[Reading, ...]
    reason: str

    def __post_init__(self) -> None:
        if not self.name.isidentifier():
            raise ValueError(f"name: a variant's name must be an identifier (got {self.name!r})")
        if not self.alternatives:
            raise ValueError(f"alternatives: variant {self.name} needs at least one")
        values = [self.main.value, *(r.value for r in self.alternatives)]
        if len({repr(v) for v in values}) != len(values):
            raise ValueError(f"alternatives: the readings of {self.name} must differ "
                             f"(got {values})")
        if not self.reason:
            raise ValueError(f"reason: variant {self.name} needs a reason")

    @property
    def readings(self) -> tuple[Reading, ...]:
        """The main reading, then the alternatives."""
        return (self.main, *self.alternatives)


@dataclass(frozen=True)
class Prediction:
    """A predicted number the judge reads from its ``values`` (by `name`).

    **Arguments:**

    - `name`: the key in the judge's ``values`` (distinct from every threshold's name).
    - `value`: the predicted value (an exponent such as ``1.0``, a constant, ``1.0`` for the
      multiplier of a derived column); finite, and non-zero for scale ``factor``.
    - `scale`: one of [`SCALES`][].
    - `meaning`: what it is, e.g. ``"exponent of T* in (P/C)/η"``.
    - `source`: one of [`PREDICTION_SOURCES`][] (or an older name of
      [`LEGACY_SOURCES`][], mapped onto it; `legacy_source` keeps the name given).
    - `quote`: for ``paper``: the paper's sentence, verbatim as the notes quote it.
    - `section`: for ``paper``: the heading of the notes' section that quotes it (under a
      FOUND tag).
    - `check`: for ``derived``: the ``proofs_checks/`` file or the test (``tests/...py::name``)
      that checks the derivation against the exact engine.
    - `tolerance`: the name of the declared [`Threshold`][theorylab.core.claims.Threshold]
      that is the half-width of the band the prediction is judged with (a shift for scale
      ``shift``; for scale ``factor`` the band is ×/÷(1 + tolerance)).
    - `sides`: one of [`SIDES`][] (``two`` by default; one-sided only for a ``paper``
      prediction whose sentence is one-sided, and then the page lists the declared alternatives
      on the open side: the check cannot tell them apart).
    - `settlement`: for an asymptotic prediction (a limit slope, exponent or constant read off a
      ladder): the derived correction form it is extrapolated with
      ([`Settlement`][theorylab.core.claims.bands.Settlement]).
    - `weak`: non-empty when the page declares the check WEAK for this prediction (its
      resolution is wider than the distance to a near counterfactual): the sentence saying so.
    - `headline`: whether the prediction is a headline part of the verdict (a headline part may
      not be WEAK).
    - `direction`: the paper's one-sided sentence states a direction only ("more than", "at
      least as"): the bound's value is the smallest difference that counts, ours, not the
      paper's. Its wrong readings lie beyond the open end (no difference, the other way), and
      a tighter bound is a stronger statement the sentence leaves open, not a wrong reading
      (the referee asks near counterfactuals there:
      [`wrong_sides`][theorylab.core.claims.referee.wrong_sides]). Only for a one-sided
      ``paper`` prediction.
    """

    name: str
    value: float
    scale: str
    meaning: str
    source: str
    quote: str = ""
    section: str = ""
    check: str = ""
    tolerance: str = ""
    sides: str = "two"
    settlement: Settlement | None = None
    weak: str = ""
    headline: bool = True
    direction: bool = False
    legacy_source: str = field(default="", init=False, compare=False)

    def __post_init__(self) -> None:
        check_choice("scale", self.scale, SCALES)
        if self.source in LEGACY_SOURCES:  # older declarations: mapped, flagged by the referee
            object.__setattr__(self, "legacy_source", self.source)
            object.__setattr__(self, "source", LEGACY_SOURCES[self.source])
        else:
            check_choice("source", self.source, PREDICTION_SOURCES)
        if not math.isfinite(self.value) or (self.scale == "factor" and self.value == 0):
            raise ValueError(f"value: prediction {self.name} must be finite"
                             + (" and non-zero (scale factor)" if self.scale == "factor" else "")
                             + f" (got {self.value!r})")
        if not self.meaning:
            raise ValueError(f"meaning: prediction {self.name} needs a meaning")
        check_choice("sides", self.sides, SIDES)
        if self.legacy_source:
            return
        if self.source == "paper" and not (self.quote.strip() and self.section.strip()):
            raise ValueError(f"quote: paper prediction {self.name} needs the sentence quoted "
                             "verbatim (quote) and the notes' section that quotes it (section)")
        if self.source == "derived" and not self.check.strip():
            raise ValueError(f"check: derived prediction {self.name} needs the proofs_checks/ "
                             "file or test that checks it (check)")
        if self.source != "paper" and (self.quote or self.section):
            raise ValueError(f"quote: only a paper prediction quotes the paper ({self.name} is "
                             f"{self.source})")
        if self.sides != "two" and self.source != "paper":
            raise ValueError(f"sides: prediction {self.name} is one-sided ({self.sides}), which "
                             f"only a one-sided sentence of the paper allows (source "
                             f"{self.source})")
        if self.direction and self.sides == "two":
            raise ValueError(f"direction: prediction {self.name} is two-sided; only a one-sided "
                             "sentence of the paper can state a direction only")

    @property
    def one_sided(self) -> bool:
        """Whether the band is one-sided (``upper`` or ``lower``)."""
        return self.sides != "two"


@dataclass(frozen=True)
class Counterfactual:
    """A wrong statement the check must reject on the measured data.

    **Arguments:**

    - `name`: short, e.g. ``"slope −1/2"``.
    - `statement`: the wrong statement in words (what a careless reading would say).
    - `values`: the overrides of declared prediction (or threshold) values that express it.
    """

    name: str
    statement: str
    values: Mapping[str, float] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if not self.values:
            raise ValueError(f"values: counterfactual {self.name!r} overrides nothing")
        if not self.statement:
            raise ValueError(f"statement: counterfactual {self.name!r} needs a statement")


Judge = Callable[[Mapping[str, pd.DataFrame], Mapping[str, float]], Verdict]


def counterfactual_table(judge: Judge, tables: Mapping[str, pd.DataFrame],
                         values: Mapping[str, float],
                         counterfactuals: Sequence[Counterfactual]) -> pd.DataFrame:
    """The verdict of `judge` on `tables` under each counterfactual (its overrides on top of
    the declared `values`). One row each: counterfactual, statement, overrides, verdict,
    rejected (the verdict is ``disagrees``), reason (the judge's first reason)."""
    rows = []
    for cf in counterfactuals:
        v = judge(tables, {**values, **{k: float(x) for k, x in cf.values.items()}})
        rows.append({"counterfactual": cf.name, "statement": cf.statement,
                     "overrides": ", ".join(f"{k}={x:g}" for k, x in cf.values.items()),
                     "verdict": v.verdict, "rejected": v.verdict == "disagrees",
                     "reason": v.reasons[0] if v.reasons else ""})
    return pd.DataFrame(rows, columns=["counterfactual", "statement", "overrides", "verdict",
                                       "rejected", "reason"])


def _changed(p: Prediction, step: float, up: bool) -> float:
    """The prediction's value after a change of size `step` (> 0): a factor ``1 + step``
    (``×`` up, ``÷`` down) or a shift ``±step``."""
    if p.scale == "factor":
        return p.value * (1 + step) if up else p.value / (1 + step)
    return p.value + step if up else p.value - step


def resolution(judge: Judge, tables: Mapping[str, pd.DataFrame], values: Mapping[str, float],
               predictions: Sequence[Prediction], *, smallest: float = 1e-4,
               largest: float = 100.0, grid: int = 36, iters: int = 24) -> pd.DataFrame:
    """How sharp the check is: for each prediction, the smallest change that turns the verdict
    on `tables` into ``disagrees`` (or, when the declared verdict already is ``disagrees``, out
    of it), searched downwards and upwards.

    A change is a step s > 0: the value ×(1 + s) / ÷(1 + s) for scale ``factor``, ± s for scale
    ``shift``; steps from `smallest` to `largest` are scanned geometrically (`grid` points),
    then bisected `iters` times, so a step is located to ~1e-5 relative. The verdict need not
    be monotone in the step: the first change found on the scan is reported.

    Returns one row per prediction: prediction, value, scale, meaning, source, verdict (at the
    declared values), target (``disagrees`` or ``not disagrees``), value_down and value_up (the
    prediction's value at the first change downwards and upwards; NaN when none within the
    scan), change_down and change_up (as text: ``×0.93``/``×1.08`` or ``−0.15``/``+0.12``;
    ``none within ×101`` or ``none within ±100``)."""
    base = judge(tables, values).verdict
    want_disagree = base != "disagrees"
    ratio = (largest / smallest) ** (1.0 / (grid - 1))
    rows = []
    for p in predictions:
        row = {"prediction": p.name, "value": p.value, "scale": p.scale, "meaning": p.meaning,
               "source": p.source, "verdict": base,
               "target": "disagrees" if want_disagree else "not disagrees"}
        for up, key in ((False, "down"), (True, "up")):
            def flips(s: float, up=up, p=p) -> bool:
                v = judge(tables, {**values, p.name: _changed(p, s, up)}).verdict
                return (v == "disagrees") == want_disagree
            s = first_change(flips, (smallest * ratio ** k for k in range(grid)), 0.0, iters)
            row[f"value_{key}"] = _changed(p, s, up) if math.isfinite(s) else math.nan
            row[f"change_{key}"] = _change_text(p, s, up)
        rows.append(row)
    return pd.DataFrame(rows, columns=["prediction", "value", "scale", "meaning", "source",
                                       "verdict", "target", "value_down", "value_up",
                                       "change_down", "change_up"])


def _change_text(p: Prediction, s: float, up: bool) -> str:
    if not math.isfinite(s):
        return "none within ×101" if p.scale == "factor" else "none within ±100"
    if p.scale == "factor":
        return f"×{(1 + s) if up else 1 / (1 + s):.4g}"
    return f"{'+' if up else '−'}{s:.3g}"


def rejected_count(table: pd.DataFrame | None) -> tuple[int, int]:
    """(rejected, declared) counterfactuals of a [`counterfactual_table`][]."""
    if table is None or len(table) == 0:
        return 0, 0
    return int(table.rejected.astype(bool).sum()), len(table)


#: Verdicts under which a counterfactual cannot be rejected because nothing was decided.
UNDECIDED = ("inconclusive", "skipped", "error")


def can_fail_cell(kind: str, verdict: str, table: pd.DataFrame | None) -> str:
    """The summary's ``can fail?`` cell: ``yes: rejects k/n``, ``partly: rejects k/n``,
    ``NO: rejects 0/n``, ``NO: none declared`` (a theorem check without counterfactuals),
    ``untested (<verdict>)`` when the verdict decided nothing, ``–`` for another kind without
    counterfactuals."""
    k, n = rejected_count(table)
    if n == 0:
        return "NO: none declared" if kind == "theorem check" else "–"
    if verdict in UNDECIDED:
        return f"untested ({verdict})"
    if k == n:
        return f"yes: rejects {k}/{n}"
    return f"partly: rejects {k}/{n}" if k else f"NO: rejects 0/{n}"


def reading_dependent(table: pd.DataFrame | None) -> list[str]:
    """The variants (choices) under which some reading's verdict differs from the main one."""
    if table is None or len(table) == 0:
        return []
    main = table[table.main.astype(bool)]
    if main.empty:
        return []
    base = main.verdict.iloc[0]
    alt = table[~table.main.astype(bool)]
    return list(dict.fromkeys(alt[alt.verdict != base].choice))


def dropped_parts(table: pd.DataFrame | None) -> dict[str, list[str]]:
    """``{part: [readings under which it was only reported]}`` from a readings table's
    ``reported`` column (parts joined by ``"; "``); the main reading is named ``main``."""
    if table is None or len(table) == 0 or "reported" not in table:
        return {}
    out: dict[str, list[str]] = {}
    for r in table.itertuples():
        text = "" if not isinstance(r.reported, str) else r.reported
        for part in filter(None, (x.strip() for x in text.split(";"))):
            out.setdefault(part, []).append("main" if bool(r.main) else str(r.reading))
    return out


def readings_cell(table: pd.DataFrame | None) -> str:
    """The summary's ``readings`` cell: ``–`` (no variant); ``same verdict under all N
    readings`` when every reading judged every part; ``<verdict> under N readings (part P
    reported only under R)`` when the verdict is the same but some part was dropped under some
    reading; or per changing choice the verdict per reading (``temperature: agrees (τ = 1) ·
    disagrees (τ = √d)``), followed by the dropped parts."""
    if table is None or len(table) == 0:
        return "–"
    dep = reading_dependent(table)
    dropped = dropped_parts(table)
    note = "; ".join(f"part {part} reported only under {', '.join(where)}"
                     for part, where in dropped.items())
    if not dep:
        if not dropped:
            return f"same verdict under all {len(table)} readings"
        return f"{table.verdict.iloc[0]} under {len(table)} readings ({note})"
    main = table[table.main.astype(bool)].iloc[0]
    parts = []
    for choice in dep:
        alt = table[(table.choice == choice) & ~table.main.astype(bool)]
        items = [f"{main.verdict} ({_reading_of(main, choice)})"]
        items += [f"{r.verdict} ({r.reading})" for r in alt.itertuples()]
        parts.append(f"{choice}: " + " · ".join(items))
    return "; ".join(parts) + (f" ({note})" if note else "")


def _reading_of(main_row, choice: str) -> str:
    """The main reading's label of `choice` from the main row's ``readings`` text
    (``"choice=label; ..."``)."""
    for item in str(main_row.reading).split("; "):
        name, _, label = item.partition("=")
        if name == choice:
            return label
    return "main"
