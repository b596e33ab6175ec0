"""Run claims and write their pages and one summary per paper: the twin of
[`run_figures`][theorylab.core.figures.runner.run_figures] for claims.

The kernel knows no paper: the entry point hands it the claims (``"<paper>/<id>"`` → claim)
and the papers' titles.
"""

from __future__ import annotations

import sys
import time
import traceback
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from theorylab.core import atomic_io as _io
from theorylab.core.faults import check_stop, is_disk_full
from theorylab.core.markdown import typeset_formulas
from theorylab.core.missing import DataFileError, MissingDataError
from theorylab.core.provenance import provenance, provenance_line, refuse_committed

from .claim import KINDS, Claim, markdown_table
from .readings import can_fail_cell, readings_cell
from .report import headline_cell, robust_cell, sources_cell, write_result

__all__ = ["SUMMARY_COLUMNS", "run_checks", "summary_markdown"]

#: The columns of ``summary.csv`` (one row per claim).
SUMMARY_COLUMNS = ["paper", "kind", "claim", "label", "source", "verdict", "robust?",
                   "readings", "can fail?", "runtime_s", "cpu_s", "headline", "error"]


def run_checks(claims: Mapping[str, Claim], keys: Sequence[str] | None = None, *,
               titles: Mapping[str, str] | None = None, quick: bool = False,
               out: str | Path | None = "docs/results", figures: bool = True,
               variants: bool = True, progress: bool | None = None) -> pd.DataFrame:
    """Run the claims `keys` of `claims` (default: all, in order) and return the summary table
    (columns [`SUMMARY_COLUMNS`][], ``claim`` = ``"<paper>/<id>"``, grouped by kind).

    **Arguments:**

    - `claims`: ``"<paper>/<id>"`` → [`Claim`][theorylab.core.claims.Claim], in paper order.
    - `keys`: the claims to run (a subset of `claims`' keys).
    - `titles`: paper name → the paper's title, for the summary pages.
    - `quick`: reduced grids; a quick run into the committed ``docs/results`` is refused
      (``ValueError``).
    - `out`: output folder, one subfolder per paper (None: write nothing).
    - `figures`: draw each claim's PNG.
    - `variants`: run the alternative readings of each claim's variants (a full check runs
      all, a quick one the first of each); False: the main reading only.
    - `progress`: tqdm bar (default: when stderr is a terminal).

    A claim whose data are not on this machine is ``skipped``; one that raises is ``error``
    (its traceback is printed, or one line for a damaged data file, and the others go on).
    Ctrl-C and SIGTERM end the whole run (``KeyboardInterrupt`` propagates, an interrupted
    sweep too; the pages already written stay), and so does a full disk."""
    from tqdm.auto import tqdm

    keys = list(claims) if keys is None else list(keys)
    if quick and out is not None:  # a quick run never writes the committed results
        refuse_committed(out, "results", "quick")
    show = sys.stderr.isatty() if progress is None else progress
    made = provenance(quick)
    rows = []
    for key in tqdm(keys, desc="claims", disable=not show):
        check_stop()
        claim = claims[key]
        t0 = time.perf_counter()
        base = {"paper": claim.paper, "kind": claim.kind, "claim": key, "label": claim.label,
                "source": sources_cell(claim)}
        try:
            res = claim.check(quick=quick, variants=variants)
            if out is not None:
                write_result(claim, res, Path(out) / claim.paper, figures=figures, made=made)
            rows.append({**base, "verdict": res.verdict, "robust?": robust_cell(res),
                         "readings": readings_cell(res.readings),
                         "can fail?": can_fail_cell(claim.kind, res.verdict,
                                                    res.counterfactuals),
                         "runtime_s": res.runtime_s, "cpu_s": res.cpu_s,
                         "headline": headline_cell(claim, res),
                         "error": ""})
        except MissingDataError as err:  # not an error: this machine lacks the claim's data
            rows.append({**base, **_no_result("skipped", t0), "headline": err.reason})
        except Exception as err:  # report and go on: one failing claim must not hide the others
            if is_disk_full(err):  # but a full disk stops every claim: the command ends
                raise
            rows.append({**base, **_no_result("error", t0),
                         "error": f"{type(err).__name__}: {err}"})
            if isinstance(err, DataFileError):  # a damaged data file: its one line says all
                print(f"error: {key}: {err}", file=sys.stderr)
            else:
                traceback.print_exc()
    summary = _by_kind(pd.DataFrame(rows, columns=SUMMARY_COLUMNS), keys)
    if out is not None:
        mode = "quick" if quick else "full"
        for paper, part in summary.groupby("paper", sort=False):
            folder = Path(out) / str(paper)
            part = part.drop(columns=["paper"]).reset_index(drop=True)
            part, kept = _merge_summary(folder, part, mode, list(claims))
            _io.write_csv(folder / "summary.csv", part)
            title = (titles or {}).get(str(paper), str(paper))
            _io.atomic_write_text(folder / "summary.md",
                                  summary_markdown(part, title, mode, made, kept))
    return summary


def _no_result(verdict: str, t0: float) -> dict:
    """The summary cells of a claim that gave no result (``skipped`` or ``error``) after
    running since `t0`."""
    return {"verdict": verdict, "robust?": "–", "readings": "–", "can fail?": "–",
            "runtime_s": time.perf_counter() - t0, "headline": "", "error": ""}


def _by_kind(summary: pd.DataFrame, order: Sequence[str]) -> pd.DataFrame:
    """`summary` sorted by paper (first appearance), kind ([`KINDS`][] order), then claim
    order."""
    if summary.empty:
        return summary
    papers = list(dict.fromkeys(summary.paper))
    rank = {k: i for i, k in enumerate(order)}
    key = summary.apply(lambda r: (papers.index(r.paper),
                                   KINDS.index(r.kind) if r.kind in KINDS else len(KINDS),
                                   rank.get(r.claim, len(rank))), axis=1)
    return summary.iloc[sorted(range(len(summary)), key=lambda i: key.iloc[i])].reset_index(
        drop=True)


def summary_markdown(part: pd.DataFrame, title: str, mode: str, made: Mapping[str, str],
                     kept: Sequence[str] = ()) -> str:
    """The ``summary.md`` of one paper: one table per kind, claim ids linked to their pages,
    formulas typeset ([`theorylab.core.markdown.typeset_formulas`][])."""
    note = (f"Rows of {', '.join(kept)} are kept from an earlier {mode} run (not rerun this "
            "time); each claim's page records its own run.\n\n" if kept else "")
    text = (f"# Claim checks of {title}: summary ({mode} run, {part.runtime_s.sum():.0f} s)\n\n"
            f"Run: {provenance_line(made)}\n\n" + note
            + "Columns: `source` (the paper's sentence the check judges, or the source of its "
            "predictions: derived, heuristic), `robust?` (the verdict survives ×0.5 and ×2 of "
            "every declared threshold), `readings` (the verdict under each reading of the "
            "RECONSTRUCTED choices), `can fail?` (the declared wrong statements the check "
            "rejects on its data).\n")
    for kind in [*KINDS, *sorted(set(part.kind) - set(KINDS))]:
        rows = part[part.kind == kind]
        if rows.empty:
            continue
        shown = rows.drop(columns=["kind", "error"]).copy()
        shown["claim"] = [f"[{k}]({k.split('/', 1)[-1]}.md)" for k in shown.claim]
        text += f"\n## {kind}s\n\n" + markdown_table(shown, max_rows=len(shown)) + "\n"
    return typeset_formulas(text)


def _merge_summary(folder: Path, part: pd.DataFrame, mode: str,
                   order: list[str]) -> tuple[pd.DataFrame, list[str]]:
    """``part`` with the rows of the other claims of an existing summary of the same mode
    (full or quick) in `folder` kept, grouped by kind in claim order, so that checking one
    claim does not drop the others from the summary; also the keys of the kept rows. An
    unreadable summary, one of the other mode or one without a ``claim`` column is
    replaced."""
    try:
        head = (folder / "summary.md").read_text(encoding="utf-8").splitlines()[0]
        old = pd.read_csv(folder / "summary.csv", keep_default_na=False)
    except (OSError, IndexError, ValueError, pd.errors.ParserError):
        return part, []
    if f"({mode} run," not in head or "claim" not in old.columns:
        return part, []
    old = old[~old.claim.isin(part.claim) & old.claim.isin(order)]
    if old.empty:
        return part, []
    old = old.reindex(columns=part.columns)
    text = [c for c in ("source", "readings", "can fail?", "robust?") if c in old]
    old[text] = old[text].fillna("–")  # a summary written before these columns existed
    merged = pd.concat([part, old], ignore_index=True)
    merged = _by_kind(merged.assign(paper=""), order).drop(columns=["paper"])
    return merged.reset_index(drop=True), list(old.claim)
