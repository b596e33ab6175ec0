"""The claim interface: one object per paper result, with a `check()` that returns a verdict.

Each claim carries its statement, the label of that statement (``FOUND`` when the statement was
read in the paper, ``RECONSTRUCTED`` when it was not; each paper's notes in ``docs/papers/``
say which is which), the measured quantities and the predicted behaviour.
`Claim.check(quick)` runs the measurement and returns a [`ClaimResult`][]: a tidy table, a
verdict, headline numbers and a plain-language reading.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from .robustness import Threshold, is_robust, sensitivity, threshold_values
from .verdict import VERDICTS, Verdict

__all__ = ["Claim", "ClaimResult", "VERDICTS", "KINDS", "lookup_claim", "markdown_table",
           "point_rows"]

#: What a check is. ``theorem check``: the measurement can contradict the (reconstructed)
#: statement (the judge has a ``disagrees`` branch the data can reach). ``sanity check``: it
#: verifies a construction or a reduction the theorem rests on, and the page names the part of
#: the statement it cannot test. ``engine check``: what it checks holds by construction of the
#: model or the data (a symmetry, an identity), so it can only fail through a bug of the
#: engines; it tests the code, not the paper.
KINDS = ("theorem check", "sanity check", "engine check")


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
    - `runtime_s`: wall time of the check.
    - `sensitivity`: one row per declared threshold (verdicts at ×0.5 and ×2, flip points;
      [`sensitivity`][theorylab.core.claims.robustness.sensitivity]), set by `Claim.check`.
    """

    claim_id: str
    table: pd.DataFrame
    verdict: str
    headline: dict[str, object]
    reading: list[str]
    extra: dict[str, pd.DataFrame] = field(default_factory=dict)
    figure: Callable | None = None
    runtime_s: float = math.nan
    quick: bool = False
    sensitivity: pd.DataFrame | None = None

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
            self.verdict = self.verdict.verdict
        if self.verdict not in VERDICTS:
            raise ValueError(f"verdict: must be one of {list(VERDICTS)} (got {self.verdict!r})")


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
      declared thresholds (``{name: value}``; None: the declared values); `run` calls it, the
      sensitivity re-judges with other values, and the tests call it on the CSVs a run wrote
      and on hand-made agreeing, disagreeing, censored and premise-failed tables.
    - `thresholds`: every number that can change the verdict ([`Threshold`][theorylab.core.
      claims.robustness.Threshold]), declared once; listed on the page with its flip points.
    - `premises`: what must hold for the experiment to test the statement (checked by the
      judge from the tables; a failed one gives ``inconclusive``).
    - `seeds`: how many seeds / draws the numbers rest on and how they are combined ("" for
      an exact, deterministic check).
    - `reconstructed`: for a check that rests on a RECONSTRUCTED formula, which part of the
      verdict does and what a wrong reconstruction would change (one line on the page).
    - `kind`: one of [`KINDS`][] (``"theorem check"`` by default).
    - `untested`: what of the statement the check cannot test (shown on the page).
    - `paper`: the paper's name (``"jelassi2022"``); [`key`][theorylab.core.claims.Claim.key]
      is ``"<paper>/<id>"``, the id the command line uses.
    - `figsize`: the size in inches of the result figure ``<id>.png``.
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

    @property
    def key(self) -> str:
        """``"<paper>/<id>"`` (the id alone for a claim without a paper)."""
        return f"{self.paper}/{self.id}" if self.paper else self.id

    def __post_init__(self) -> None:
        if self.label not in ("FOUND", "RECONSTRUCTED"):
            raise ValueError(f"label: must be FOUND or RECONSTRUCTED (got {self.label!r})")
        if self.kind not in KINDS:
            raise ValueError(f"kind: must be one of {list(KINDS)} (got {self.kind!r})")
        names = [t.name for t in self.thresholds]
        if len(set(names)) != len(names):
            raise ValueError(f"thresholds: names must be distinct (got {names})")

    def judged(self, tables: dict[str, pd.DataFrame], **values: float) -> Verdict:
        """The verdict on `tables` with some thresholds replaced (``REGIME_CUT=1.5``)."""
        return self.judge(tables, threshold_values(self.thresholds, values))

    def check(self, quick: bool = False) -> ClaimResult:
        """Run the measurement; ``quick`` uses a reduced grid (seconds instead of minutes)."""
        t0 = time.perf_counter()
        with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
            res = self.run(quick)
        res.runtime_s = time.perf_counter() - t0
        res.quick = quick
        if self.thresholds:
            with np.errstate(over="ignore", invalid="ignore", divide="ignore"):
                res.sensitivity = sensitivity(self.judge, res.tables, self.thresholds)
        return res


def point_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The rows a sweep point computed, without the status and provenance columns that
    ``theorylab.core.sweep.run_points`` adds (host, version, ...: not results)."""
    from theorylab.core.sweep.store import PROVENANCE_COLUMNS

    drop = {"status", "message", *PROVENANCE_COLUMNS}
    return table[[c for c in table.columns if c not in drop]].reset_index(drop=True)


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


def markdown_table(df: pd.DataFrame, max_rows: int = 60) -> str:
    """A GitHub markdown table of ``df`` (numbers to 5 significant digits); long tables are
    thinned to ``max_rows`` evenly spaced rows (the CSV beside it holds every row)."""
    if len(df) > max_rows:
        idx = np.unique(np.linspace(0, len(df) - 1, max_rows).round().astype(int))
        df = df.iloc[idx]
    cols = [str(c) for c in df.columns]
    lines = ["| " + " | ".join(cols) + " |", "|" + "|".join("---" for _ in cols) + "|"]
    for row in df.itertuples(index=False):
        lines.append("| " + " | ".join(_fmt(x) for x in row) + " |")
    return "\n".join(lines)
