"""The claim interface: one object per paper result, with a `check()` that returns a verdict.

Each claim carries its statement, the label of that statement (``FOUND`` when the statement was
read in the paper, ``RECONSTRUCTED`` when it was not; each paper's notes in ``docs/papers/``
say which is which), the measured quantities and the predicted behaviour.
`Claim.check(quick)` runs the measurement and returns a [`ClaimResult`][]: a tidy table, a
verdict, headline numbers and a plain-language reading.
"""

from __future__ import annotations

import contextlib
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from ..config import check_choice
from ..cost import cpu_seconds
from ..provenance import PROVENANCE_COLUMNS
from .readings import (
    Counterfactual,
    Prediction,
    Variant,
    can_fail_cell,
    counterfactual_table,
    rejected_count,
    resolution,
)
from .robustness import IntervalMethod, Threshold, is_robust, sensitivity, threshold_values
from .verdict import VERDICTS, Verdict

__all__ = ["Claim", "ClaimResult", "KINDS", "DEVICES", "BRIEF_MAX", "HEADLINE_MAX",
           "active_device", "use_device", "lookup_claim", "markdown_table", "point_rows",
           "point_tables", "point_table", "DECLARED_NAMES", "declared"]

#: The devices a claim may run on (``check --device``; a claim lists its own in `devices`).
DEVICES = ("cpu", "cuda")
_DEVICE = {"device": "cpu"}


def active_device() -> str:
    """The device of the enclosing [`use_device`][] block (``check --device``): ``"cpu"``
    outside one."""
    return _DEVICE["device"]


@contextlib.contextmanager
def use_device(device: str):
    """Within the block, the claims that list `device` in their `devices` run on it
    (``ValueError("--device: ...")`` for a device not in [`DEVICES`][])."""
    check_choice("--device", device, DEVICES)
    old = _DEVICE["device"]
    _DEVICE["device"] = device
    try:
        yield
    finally:
        _DEVICE["device"] = old

#: What a check is, in the order the summaries group them.
#:
#: - ``theorem check``: compares the measurement with a statement of the paper (FOUND, or
#:   RECONSTRUCTED and labelled so), even when only its form is known (an order in P or d, a
#:   sign, the existence of a phase); it declares wrong statements it must reject
#:   (counterfactuals) and rejects at least one on its data. Evidence for or against the paper.
#: - ``derivation check``: the prediction is our own derivation or reduction of the same model,
#:   tested against the engine. Useful (it validates what other checks compare with), but not
#:   evidence for the paper.
#: - ``sanity check``: verifies a construction or a reduction the theorem rests on; the page
#:   names the part of the statement it cannot test.
#: - ``engine check``: what it checks holds by construction of the model or the data (a
#:   symmetry, an identity), so it can only fail through a bug of the engines; it tests the
#:   code, not the paper.
KINDS = ("theorem check", "derivation check", "sanity check", "engine check")

#: The longest summary headline a claim's `brief` may have (the marks FRAGILE, READING-DEPENDENT
#: and CANNOT FAIL go before it, within one screen line of about 200 characters).
BRIEF_MAX = 160
#: The longest headline cell of a summary row (marks and brief together).
HEADLINE_MAX = 200


@dataclass
class ClaimResult:
    """Outcome of one claim check.

    **Arguments:**

    - `claim_id`: the claim's stable id (e.g. ``"thm3.1"``).
    - `table`: tidy table of the measurement (one row per grid point / recorded step).
    - `verdict`: one of [`VERDICTS`][], or a [`Verdict`][theorylab.core.claims.verdict.Verdict] (its
      reasons are put first in `reading`).
    - `headline`: the few numbers the verdict rests on (name → value).
    - `reading`: plain-language lines: what the numbers say, and where they depart and why.
    - `extra`: further tables (name → DataFrame), written as ``<id>-<name>.csv``.
    - `figure`: ``fig -> None`` drawing into a matplotlib figure, or None.
    - `runtime_s`: wall time of the whole check (`Claim.check`: the measurement under every
      reading run, the judging, the sensitivity, counterfactuals and resolution): the one
      runtime the page, the summary and the command line report.
    - `cpu_s`: CPU time (user and system, this process and its ended children) of the same
      whole check: what the estimates of a later ``check`` read, since wall time depends on
      the machine's load.
    - `measure_s`: wall time of this result's measurement alone (`run`), the breakdown the
      verdict-per-reading table gives for each reading.
    - `sensitivity`: one row per declared threshold (verdicts at ×0.5 and ×2, flip points;
      [`sensitivity`][theorylab.core.claims.robustness.sensitivity]), set by `Claim.check`.
    - `brief`: the one-line summary headline (at most [`BRIEF_MAX`][] characters; names the
      seeds where the verdict rests on seeds). Empty: built from `headline`.
    - `counterfactuals`: the verdict under each declared counterfactual
      ([`counterfactual_table`][theorylab.core.claims.readings.counterfactual_table]), set by
      `Claim.check`.
    - `resolution`: each prediction's smallest change that turns the verdict into
      ``disagrees`` ([`resolution`][theorylab.core.claims.readings.resolution]), set by
      `Claim.check`.
    - `readings`: the verdict per reading of each declared variant (one row per reading, the
      main one first), set by `Claim.check`; `variant_results` holds the results behind it,
      keyed ``(choice, value)``.
    - `judged_parts`, `reported_parts`: the parts of the claim this result judged and those it
      only reported (taken from the [`Verdict`][theorylab.core.claims.verdict.Verdict] when
      one is given); the readings table counts them per reading.
    - `settings`: the settings the run used (name → value: the start of a parameter and its
      norm, q, τ, the horizons...); the page prints them, and
      [`settings_mismatches`][theorylab.core.claims.referee.settings_mismatches] compares them
      with the claim's declared `settings`.
    """

    claim_id: str
    table: pd.DataFrame
    verdict: str
    headline: dict[str, object]
    reading: list[str]
    extra: dict[str, pd.DataFrame] = field(default_factory=dict)
    figure: Callable | None = None
    runtime_s: float = math.nan
    cpu_s: float = math.nan
    measure_s: float = math.nan
    quick: bool = False
    sensitivity: pd.DataFrame | None = None
    brief: str = ""
    counterfactuals: pd.DataFrame | None = None
    resolution: pd.DataFrame | None = None
    readings: pd.DataFrame | None = None
    variant_results: dict = field(default_factory=dict)
    judged_parts: tuple[str, ...] = ()
    reported_parts: tuple[str, ...] = ()
    settings: dict[str, object] = field(default_factory=dict)

    @property
    def tables(self) -> dict[str, pd.DataFrame]:
        """The tables the judge reads: ``{"table": table, **extra}``."""
        return {"table": self.table, **self.extra}

    @property
    def robust(self) -> bool | None:
        """Whether the verdict survives ×0.5 and ×2 of every judged threshold (None: no
        judged threshold, or the sensitivity was not computed)."""
        return is_robust(self.sensitivity)

    def __post_init__(self) -> None:
        if isinstance(self.verdict, Verdict):
            self.reading = [f"Verdict `{self.verdict.verdict}`: " + "; ".join(
                self.verdict.reasons) + "." if self.verdict.reasons else
                f"Verdict `{self.verdict.verdict}`."] + list(self.reading)
            self.judged_parts = self.judged_parts or self.verdict.judged
            self.reported_parts = self.reported_parts or self.verdict.reported
            self.verdict = self.verdict.verdict
        check_choice("verdict", self.verdict, VERDICTS)
        self.brief = " ".join(str(self.brief).split())
        if len(self.brief) > BRIEF_MAX:
            raise ValueError(f"brief: at most {BRIEF_MAX} characters (got {len(self.brief)}: "
                             f"{self.brief[:60]!r}…); put the rest in headline")

    def short(self) -> str:
        """The `brief`, or the headline numbers ``name=value; ...`` cut to [`BRIEF_MAX`][]
        characters when no brief was given."""
        if self.brief:
            return self.brief
        return cut("; ".join(f"{k}={_num(v)}" for k, v in self.headline.items()), BRIEF_MAX)


def _num(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def cut(text: str, most: int) -> str:
    """`text`, or its first ``most − 1`` characters and ``…`` when it is longer."""
    return text if len(text) <= most else text[:most - 1].rstrip() + "…"


@dataclass(frozen=True)
class Claim:
    """A result of a paper and how theorylab checks it.

    **Arguments:**

    - `id`: stable id within its paper, also the file stem of ``docs/results/<paper>/<id>.md``.
    - `title`: e.g. ``"Theorem 3.1 (generalized linear models fail)"``.
    - `label`: ``"FOUND"`` or ``"RECONSTRUCTED"`` (the legend of the paper's notes).
    - `source`: where the statement comes from (section of the paper's notes, source ids).
    - `statement`: the statement as checked.
    - `measured`: what is measured.
    - `predicted`: the predicted behaviour the verdict tests.
    - `run`: ``run(quick: bool) -> ClaimResult`` (without runtime; `check` adds it).
    - `judge`: ``judge(tables, values=None) -> Verdict``, the claim's verdict as a pure
      function of its written tables (``{"table": main table, "<name>": extra table, ...}``,
      the same tables as ``<id>.csv`` and ``<id>-<name>.csv``) and of the values of its
      declared thresholds and predictions (``{name: value}``; None: the declared values);
      `run` calls it, the sensitivity, the counterfactuals and the resolution re-judge with
      other values, and the tests call it on the CSVs a run wrote and on hand-made agreeing,
      disagreeing, censored and premise-failed tables.
    - `thresholds`: every number that can change the verdict ([`Threshold`][theorylab.core.
      claims.robustness.Threshold]), declared once; listed on the page with its flip points.
    - `predictions`: the predicted numbers the judge reads from its ``values`` beside the
      thresholds ([`Prediction`][theorylab.core.claims.readings.Prediction]); the page gives
      each one's resolution.
    - `counterfactuals`: wrong statements the check must reject on its data
      ([`Counterfactual`][theorylab.core.claims.readings.Counterfactual]); a theorem check
      declares at least one.
    - `variants`: the RECONSTRUCTED choices that can change the verdict, each with its main
      reading and alternatives ([`Variant`][theorylab.core.claims.readings.Variant]). A claim
      with variants has ``run(quick, readings)``, `readings` mapping every variant's name to
      the value to use.
    - `premises`: what must hold for the experiment to test the statement (checked by the
      judge from the tables; a failed one gives ``inconclusive``).
    - `seeds`: how many seeds / draws the numbers rest on and how they are combined ("" for
      an exact, deterministic check).
    - `reconstructed`: for a check that rests on a RECONSTRUCTED formula, which part of the
      verdict does and what a wrong reconstruction would change (one line on the page).
    - `kind`: one of [`KINDS`][] (``"theorem check"`` by default).
    - `untested`: what of the statement the check cannot test (shown on the page).
    - `paper`: the paper's name (``"mypaper"``); [`key`][theorylab.core.claims.Claim.key]
      is ``"<paper>/<id>"``, the id the command line uses.
    - `figsize`: the size in inches of the result figure ``<id>.png``.
    - `settings`: the settings the code uses (name → value: the start of a parameter and its
      norm, q, τ, D, the horizons...), printed in the page's header; a result's own
      `settings` (what the run used) is compared with them.
    - `interval`: how the claim's intervals over seeds are made
      ([`IntervalMethod`][theorylab.core.claims.robustness.IntervalMethod]).
    - `devices`: the torch devices its `run` can use (``check --device``): ``("cpu",)`` by
      default; a claim that lists ``"cuda"`` reads [`active_device`][] in its `run` and says
      on its page which setting runs there.
    """

    id: str
    title: str
    label: str
    source: str
    statement: str
    measured: str
    predicted: str
    run: Callable[[bool], ClaimResult]
    judge: Callable[[dict[str, pd.DataFrame]], Verdict]
    kind: str = "theorem check"
    untested: str = ""
    paper: str = ""
    figsize: tuple[float, float] = (5.5, 3.8)
    thresholds: tuple[Threshold, ...] = ()
    premises: tuple[str, ...] = ()
    seeds: str = ""
    reconstructed: str = ""
    predictions: tuple[Prediction, ...] = ()
    counterfactuals: tuple[Counterfactual, ...] = ()
    variants: tuple[Variant, ...] = ()
    settings: dict[str, object] = field(default_factory=dict, hash=False)
    interval: IntervalMethod | None = None
    devices: tuple[str, ...] = ("cpu",)

    @property
    def key(self) -> str:
        """``"<paper>/<id>"`` (the id alone for a claim without a paper)."""
        return f"{self.paper}/{self.id}" if self.paper else self.id

    def __post_init__(self) -> None:
        if self.label not in ("FOUND", "RECONSTRUCTED"):
            raise ValueError(f"label: must be FOUND or RECONSTRUCTED (got {self.label!r})")
        check_choice("kind", self.kind, KINDS)
        names = [t.name for t in self.thresholds] + [p.name for p in self.predictions]
        if len(set(names)) != len(names):
            raise ValueError(f"thresholds: threshold and prediction names must be distinct "
                             f"(got {names})")
        for cf in self.counterfactuals:
            unknown = sorted(set(cf.values) - set(names))
            if unknown:
                raise ValueError(f"counterfactuals: {cf.name!r} overrides undeclared values "
                                 f"{unknown}; declared: {names}")
        declared = {t.name for t in self.thresholds}
        for p in self.predictions:
            if p.tolerance and p.tolerance not in declared:
                raise ValueError(f"predictions: {p.name}'s tolerance {p.tolerance!r} is not a "
                                 f"declared threshold; declared: {sorted(declared)}")
        choices = [v.name for v in self.variants]
        if len(set(choices)) != len(choices):
            raise ValueError(f"variants: names must be distinct (got {choices})")

    def values(self, **overrides: float) -> dict[str, float]:
        """``{name: value}`` of every declared threshold and prediction, with `overrides`."""
        return threshold_values((*self.thresholds, *self.predictions), overrides)

    def judged(self, tables: dict[str, pd.DataFrame], **values: float) -> Verdict:
        """The verdict on `tables` with some thresholds or predictions replaced
        (``REGIME_CUT=1.5``)."""
        return self.judge(tables, self.values(**values))

    def main_readings(self) -> dict[str, object]:
        """``{variant name: main reading's value}``."""
        return {v.name: v.main.value for v in self.variants}

    def check(self, quick: bool = False, readings: dict[str, object] | None = None, *,
              variants: bool = True) -> ClaimResult:
        """Run the measurement (``quick``: a reduced grid, seconds instead of minutes) and
        judge it: the verdict, its sensitivity to each threshold, the verdict under each
        counterfactual and each prediction's resolution. `readings` overrides some variants'
        values (default: the main readings). With `variants` (and readings left at the main
        ones) each alternative reading is then run and judged, one at a time around the main
        reading (a quick check runs only the first alternative of each variant); the table is
        the result's `readings`."""
        unknown = sorted(set(readings or {}) - {v.name for v in self.variants})
        if unknown:
            raise ValueError(f"readings: unknown variant(s) {unknown} of {self.key}; declared: "
                             f"{[v.name for v in self.variants]}")
        chosen = {**self.main_readings(), **(readings or {})}
        t0, c0 = time.perf_counter(), cpu_seconds()
        res = self._measure(quick, chosen, resolve=True)
        if variants and self.variants and not readings:
            res.readings = self._readings_table(quick, res)
        res.runtime_s = time.perf_counter() - t0  # the whole check: one runtime everywhere
        res.cpu_s = cpu_seconds() - c0
        return res

    def _measure(self, quick: bool, readings: dict[str, object], resolve: bool) -> ClaimResult:
        """One run under `readings`, judged (sensitivity and resolution only if `resolve`)."""
        t0 = time.perf_counter()
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            res = self.run(quick, readings) if self.variants else self.run(quick)
            res.measure_s = time.perf_counter() - t0
            res.quick = quick
            values = self.values()
            if self.thresholds and resolve:
                res.sensitivity = sensitivity(self.judge, res.tables, self.thresholds,
                                              fixed=values)
            if self.counterfactuals:
                res.counterfactuals = counterfactual_table(self.judge, res.tables, values,
                                                           self.counterfactuals)
            if self.predictions and resolve:
                res.resolution = resolution(self.judge, res.tables, values, self.predictions)
        return res

    def _readings_table(self, quick: bool, main: ClaimResult) -> pd.DataFrame:
        """The verdict per reading: the main readings' row, then one row per alternative."""
        mains = self.main_readings()
        rows = [self._reading_row("main", "; ".join(f"{v.name}={v.main.label}"
                                                     for v in self.variants),
                                  "", "", True, main)]
        for var in self.variants:
            for alt in var.alternatives[:1] if quick else var.alternatives:
                res = self._measure(quick, {**mains, var.name: alt.value}, resolve=False)
                main.variant_results[(var.name, alt.value)] = res
                rows.append(self._reading_row(var.name, alt.label, alt.value, alt.source,
                                              False, res))
        return pd.DataFrame(rows)

    def _reading_row(self, choice: str, label: str, value, source: str, is_main: bool,
                     res: ClaimResult) -> dict:
        reason = next((r for r in res.reading if r.startswith("Verdict `")), "")
        return {"choice": choice, "reading": label, "value": str(value), "source": source,
                "main": is_main, "verdict": res.verdict,
                "can_fail": can_fail_cell(self.kind, res.verdict, res.counterfactuals),
                "rejected": rejected_count(res.counterfactuals)[0],
                "brief": res.short(), "reason": reason[:400],
                "judged": "; ".join(res.judged_parts),
                "reported": "; ".join(res.reported_parts),
                "measure_s": res.measure_s}


def point_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The rows a sweep point computed, without the status and provenance columns that
    ``theorylab.core.sweep.run_points`` adds (host, version, ...: not results)."""
    drop = {"status", "message", *PROVENANCE_COLUMNS}
    return table[[c for c in table.columns if c not in drop]].reset_index(drop=True)


def point_tables(function: str, calls) -> list[pd.DataFrame]:
    """The rows ([`point_rows`][]) of `function` (``"module:name"``) at each keyword set of
    `calls`, one sweep point each, run together (in this process by default; on Dask and/or
    from a shared store with ``theorylab check --scheduler/--workers/--cache``)."""
    from ..sweep import call_point, run_points

    return [point_rows(t) for t in run_points([call_point(function, **kw) for kw in calls])]


def point_table(function: str, calls) -> pd.DataFrame:
    """[`point_tables`][] stacked in order into one table."""
    return pd.concat(point_tables(function, calls), ignore_index=True)


#: The names under which a claim module declares parts of its claim (the field: the name in
#: lower case).
DECLARED_NAMES = ("run", "judge", "THRESHOLDS", "PREDICTIONS", "COUNTERFACTUALS")


def declared(namespace, paper: str) -> dict:
    """`paper` and the fields of a [`Claim`][] that a claim module declares under
    [`DECLARED_NAMES`][] (those its ``globals()`` `namespace` defines), as keywords:
    ``Claim(**declared(globals(), PAPER_NAME), id=..., ...)``."""
    return {"paper": paper, **{n.lower(): namespace[n] for n in DECLARED_NAMES
                               if n in namespace}}


def lookup_claim(claims: dict[str, Claim], claim_id: str) -> Claim:
    """``claims[claim_id]``, or ``KeyError`` listing the known ids."""
    try:
        return claims[claim_id]
    except KeyError:
        raise KeyError(f"unknown claim {claim_id!r}; known: {list(claims)}") from None


def _fmt(x) -> str:
    if isinstance(x, (bool, np.bool_)):
        return "yes" if x else "no"
    if isinstance(x, (float, np.floating)):
        if math.isnan(x):
            return "–"
        if math.isinf(x):
            return "∞" if x > 0 else "−∞"
        if x != 0 and (abs(x) < 1e-3 or abs(x) >= 1e5):
            return f"{x:.3e}"
        return f"{x:.5g}"
    return str(x)


def markdown_table(df: pd.DataFrame, max_rows: int = 60, csv: str | None = None) -> str:
    """A GitHub markdown table of ``df`` (numbers to 5 significant digits). A table longer than
    ``max_rows`` is thinned to ``max_rows`` evenly spaced rows, said in a line under it that
    names the CSV file holding every row (`csv`)."""
    note = ""
    if len(df) > max_rows:
        idx = np.unique(np.linspace(0, len(df) - 1, max_rows).round().astype(int))
        note = (f"\n\n{len(idx)} of {len(df)} rows shown (evenly spaced); "
                + (f"the full table is `{csv}`." if csv else "the CSV beside it holds every row."))
        df = df.iloc[idx]
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(_cell(x) for x in row) + " |")
    return "\n".join(lines) + note


def _cell(x) -> str:
    """A table cell: the number formatted, `|` escaped and line breaks folded."""
    return " ".join(_fmt(x).replace("|", "\\|").split())
