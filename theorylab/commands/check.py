"""``python -m theorylab check [--list] [--quick] [--only PAPER|PAPER/ID ...] [--out DIR]``.

Runs the claim checks of every registered paper (or of those selected with ``--only``: a paper
name runs all of its claims, ``jelassi2022/thm4.1`` one claim; a bare id such as ``thm4.1`` is
accepted when one paper has it). Prints one row per claim (id, verdict, runtime, headline
numbers; at most 100 columns) and writes ``<out>/<paper>/<id>.md``, ``<id>.csv`` (+ extra
tables) and ``<id>.png`` for each, plus ``<out>/<paper>/summary.csv`` and ``summary.md``.
``--quick`` uses reduced grids (CI, < 3 minutes on 2 cores). The grids of the scaling checks
run through the sweep (``theorylab.core.sweep``): in this process by default; ``--workers N``
/ ``--scheduler ADDRESS`` send them to Dask, ``--cache DIR`` reuses a store of points shared
with the figures. The exit status is 1 when a check raised, 2 for an unknown id,
else 0 (a ``disagrees`` verdict is a finding, not a crash; ``--strict`` makes it fail too).
Each claim runs under its main reading and then under each alternative reading of its
RECONSTRUCTED choices (a quick run: the first alternative of each; ``--main-reading-only``:
none); its page gives the verdict per reading, the declared wrong statements the check rejects
(counterfactuals) and the resolution of each prediction, and the summary groups the claims by
kind. A claim whose data are not on this machine is ``skipped`` (the summary gives the reason,
naming the package to install), which is not an error.

``--device cuda`` runs the selected claims on a GPU: only claims that declare it (today the
real-image claim ``huang2024/realvit-diversity``, at its GPU setting; its page says which);
any other selected claim, or a machine without CUDA, is refused with exit 2.

``--rejudge PAPER/ID`` runs nothing: it reads the tables a check wrote (``docs/results``, or
``--results DIR``) and judges them again (``theorylab.analysis.load_claim``), with declared
thresholds or predictions replaced (``--threshold NAME=VALUE``), the stored tables of another
reading of a RECONSTRUCTED choice (``--reading CHOICE=VALUE``; a reading never stored needs a
rerun, and is refused saying so) and under declared counterfactuals (``--counterfactual
NAME``); docs/reading-a-verdict.md, "Re-judging a stored verdict".

Before a run of more than a minute it prints an estimate: the recorded runtimes of its claims'
last run (``<out>/<paper>/summary.csv``; a full run without one there: the committed full
run's), their CPU seconds (``cpu_s``) where recorded, else their wall seconds, with the wall
range at the machine's load now (``theorylab.core.cost.recorded_estimate``).

A full run writes the committed ``docs/results``; a ``--quick`` run writes
``runs/quick/results`` unless ``--out`` is given, and is refused an ``--out`` inside
``docs/results``. Every page and summary records how it was made (full or quick, git commit,
UTC date, theorylab version).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from pathlib import Path

import pandas as pd

from theorylab.core.claims import DEVICES, Claim, use_device
from theorylab.core.claims.runner import run_checks as _run_checks
from theorylab.core.cli import ArgumentParser, folder_arguments
from theorylab.core.faults import command, keeping, written_since
from theorylab.core.folders import claim_folder
from theorylab.core.provenance import default_out, refuse_committed, refuse_foreign_committed
from theorylab.core.sweep.cli import add_executor_arguments, executor_from_args
from theorylab.core.threads import add_threads_argument, set_threads_from_args
from theorylab.core.trainer import check_out_folder
from theorylab.papers import PAPERS, paper_claims

__all__ = ["all_claims", "console_summary", "main", "resolve_claims", "run_checks"]


def all_claims() -> dict[str, Claim]:
    """``"<paper>/<id>"`` → claim, for every registered paper, in paper order."""
    out: dict[str, Claim] = {}
    for paper in PAPERS.values():
        for claim in paper_claims(paper).values():
            out[claim.key] = claim
    return out


def resolve_claims(selectors: Sequence[str] | None, *, field: str = "ids") -> list[str]:
    """The claim keys that ``selectors`` name (all when empty), in paper order.

    A selector is a paper name, a key ``paper/id``, or an id that exactly one paper has.
    Raises a one-line ``ValueError`` starting with ``field`` (the argument that holds the
    selectors) and naming the unknown selector and the known ids."""
    claims = all_claims()
    if not selectors:
        return list(claims)
    chosen: list[str] = []
    for sel in selectors:
        if sel in PAPERS:
            keys = [k for k, c in claims.items() if c.paper == sel]
        elif sel in claims:
            keys = [sel]
        else:
            keys = [k for k, c in claims.items() if c.id == sel]
            if len(keys) > 1:
                raise ValueError(f"{field}: ambiguous claim id (got {sel!r}); one of {keys}")
        if not keys:
            raise ValueError(f"{field}: unknown claim or paper (got {sel!r}); papers: "
                             f"{list(PAPERS)}; claims: {list(claims)}")
        chosen += [k for k in keys if k not in chosen]
    return [k for k in claims if k in chosen]


def run_checks(ids=None, *, quick: bool = False, out: str | Path | None = "docs/results",
               figures: bool = True, variants: bool = True,
               progress: bool | None = None) -> pd.DataFrame:
    """Run the claims `ids` of every registered paper (selectors as in [`resolve_claims`][];
    default: all) with the kernel's
    [`run_checks`][theorylab.core.claims.runner.run_checks] and return the summary table (one
    row per claim, ``claim`` = ``"<paper>/<id>"``, grouped by kind). A `quick` run into the
    committed ``docs/results`` is refused (``ValueError``); ``out=None`` writes nothing;
    ``variants=False`` runs the main reading of each claim only."""
    return _run_checks(all_claims(), resolve_claims(ids), titles={
        name: paper.title for name, paper in PAPERS.items()}, quick=quick, out=out,
        figures=figures, variants=variants, progress=progress)


#: the width of the summary printed by ``main``
CONSOLE_WIDTH = 100


def console_summary(summary: pd.DataFrame, width: int = CONSOLE_WIDTH) -> str:
    """The summary as a table of at most ``width`` columns: claim, verdict, runtime and the
    headline numbers (an error's message for a claim that raised), shortened to fit; the full
    table is ``summary.md`` beside the results."""
    rows = []
    for r in summary.to_dict("records"):
        head = str(r.get("headline") or "")
        if r.get("verdict") == "error" or not head:
            head = str(r.get("error") or head)
        rows.append([str(r.get("claim", "")), str(r.get("verdict", "")),
                     f"{float(r.get('runtime_s', float('nan'))):.1f} s", head])
    names = ["claim", "verdict", "runtime", "headline"]
    widths = [max([len(names[i])] + [len(row[i]) for row in rows]) for i in range(3)]
    room = max(width - sum(widths) - 2 * 3, 12)
    lines = []
    for row in [names, *rows]:
        head = " ".join(row[3].split())
        head = head if len(head) <= room else head[:room - 1].rstrip() + "…"
        cells = [row[0].ljust(widths[0]), row[1].ljust(widths[1]), row[2].rjust(widths[2]), head]
        lines.append("  ".join(cells).rstrip()[:width])
    return "\n".join(lines)


def _pairs(flag: str, items: Sequence[str], number: bool) -> dict:
    out = {}
    for item in items:
        name, eq, value = item.partition("=")
        if not eq or not name or not value:
            raise ValueError(f"{flag}: must be NAME=VALUE (got {item!r})")
        if number:
            try:
                value = float(value)
            except ValueError:
                raise ValueError(f"{flag}: {name} must be a number (got {value!r})") from None
        out[name] = value
    return out


def _rejudge(a) -> int:
    """``--rejudge PAPER/ID``: the stored tables judged again, with the given thresholds, the
    stored tables of another reading and the given counterfactuals; prints the stored and the
    new verdict with its reasons. Exit 0, or 2 on bad input (one line)."""
    from theorylab.analysis import load_claim

    if a.only or a.quick or a.device:
        raise ValueError("--rejudge: runs nothing; not with --only, --quick or --device")
    values = _pairs("--threshold", a.threshold, number=True)
    stored = load_claim(a.rejudge, a.results,
                        readings=_pairs("--reading", a.reading, number=False))
    declared = list(stored.claim.values())
    unknown = [k for k in values if k not in declared]
    if unknown:
        raise ValueError(f"--threshold: {stored.claim.key} declares no {unknown[0]!r}; "
                         f"declared: {declared}")
    verdict = stored.judge(**values)
    against = [(name, stored.counterfactual(name)) for name in a.counterfactual]
    claim = stored.claim
    away = {k: v for k, v in stored.readings.items() if v != claim.main_readings()[k]}
    print(f"{claim.key}: re-judged from {stored.folder} (tables: {', '.join(stored.tables)}); "
          "nothing rerun")
    if away:
        print("reading: " + ", ".join(f"{k}={v}" for k, v in away.items()))
    print(f"stored verdict: {stored.stored_verdict or 'not recorded'}")
    changed = ", ".join(f"{k}={v:g}" for k, v in values.items()) or "the declared values"
    print(f"verdict with {changed}: {verdict.verdict}")
    for reason in verdict.reasons:
        print(f"  {reason}")
    for name, v in against:
        rejected = v.verdict in ("disagrees", "partial")
        print(f"counterfactual {name!r}: {v.verdict} "
              f"({'rejected' if rejected else 'NOT rejected'})")
    return 0


def recorded_seconds(ids: Sequence[str], results: str | Path | None = None
                     ) -> tuple[float, int, str]:
    """``(seconds, claims, clock)``: what the claims `ids` (``"<paper>/<id>"``) took in the
    last run whose summaries are in `results` (default: the committed full run's,
    ``docs/results/<paper>/summary.csv``), and how many of them it holds: their CPU time
    (column ``cpu_s``; clock ``"cpu"``) where recorded, else their wall time (``runtime_s``;
    clock ``"wall"`` when any claim has only that)."""
    from theorylab.core.provenance import COMMITTED, REPO_ROOT

    root = Path(results) if results is not None else REPO_ROOT / COMMITTED["results"]
    total, found, clock = 0.0, 0, "cpu"
    for paper in sorted({i.split("/", 1)[0] for i in ids}):
        try:
            table = pd.read_csv(root / paper / "summary.csv")
        except (OSError, ValueError):
            continue
        if not {"claim", "runtime_s"} <= set(table.columns):
            continue
        rows = table[table.claim.isin(ids)]
        wall = pd.to_numeric(rows.runtime_s, errors="coerce")
        cpu = (pd.to_numeric(rows.cpu_s, errors="coerce") if "cpu_s" in rows.columns
               else pd.Series(float("nan"), index=rows.index))
        if cpu.isna().any():
            clock = "wall"
        seconds = cpu.fillna(wall).dropna()
        total, found = total + float(seconds.sum()), found + len(seconds)
    return total, found, clock


def _say_recorded_time(ids: Sequence[str], results: str | Path | None = None,
                       quick: bool = False) -> None:
    """Before a run of more than a minute: what its claims took last time (a quick run: in
    its own results folder, when one ran there; a full run: there, else in the committed
    full run), and the wall time that makes at the load now."""
    from theorylab.core.cost import cpu_seconds, recorded_estimate

    seconds, found, clock = recorded_seconds(ids, results) if results else (0.0, 0, "cpu")
    source = f"{results}/<paper>/summary.csv"
    if not found and not quick:
        seconds, found, clock = recorded_seconds(ids)
        source = "docs/results/<paper>/summary.csv, the committed full run"
    lines = recorded_estimate("claims", seconds, found=found, of=len(ids), clock=clock,
                              source=source, spent=cpu_seconds()) if found else []
    for line in lines:
        print(line, flush=True)


def _check_device(device: str, keys: Sequence[str]) -> None:
    """``ValueError("--device: ...")`` unless every claim of `keys` runs on `device` and,
    for ``cuda``, torch sees a CUDA device."""
    claims = all_claims()
    refused = [k for k in keys if device not in claims[k].devices]
    if refused:
        raise ValueError(f"--device: {device} runs only the claims that declare it; not "
                         f"{', '.join(refused[:5])}{' ...' if len(refused) > 5 else ''} "
                         "(select them with --only)")
    if device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise ValueError("--device: cuda asked for but torch.cuda.is_available() is False")


@command("check")
def main(argv=None) -> int:
    p = ArgumentParser(prog="theorylab check",
                                description=(
        "Run the claim checks of every paper (or of those --only names: a paper, or "
        "PAPER/ID for one claim), print one row per claim with its verdict, and write each "
        "claim's page, tables and plot and a summary per paper into --out (default: "
        "docs/results for a full run, runs/quick/results for --quick). With --rejudge "
        "PAPER/ID it runs nothing: it judges the tables a check stored again, with other "
        "thresholds, another stored reading or a counterfactual. A run of more than a "
        "minute first prints an estimate (CPU seconds, and the wall time alone and at the "
        "load now) from its claims' last recorded runtimes. Exit codes: 0 (a disagrees "
        "verdict is a finding; --strict makes it exit 1), 1 when a check raised, 2 on bad "
        "input or an unknown id."))
    p.add_argument("--list", action="store_true", help="list the papers and claim ids and exit")
    p.add_argument("--quick", action="store_true", help="reduced grids (< 3 min on 2 cores)")
    p.add_argument("--only", nargs="+", action="extend", metavar="ID",
                   help="run only these papers or claims (paper name, paper/id, or id)")
    folder_arguments(p, default=None, what="the pages",
                     help="output folder, one subfolder per paper (default docs/results for a "
                     "full run, runs/quick/results for --quick): new, empty or a results "
                     "folder theorylab wrote")
    p.add_argument("--no-figures", action="store_true", help="skip the PNG figures")
    p.add_argument("--strict", action="store_true", help="exit 1 on a 'disagrees' verdict too")
    p.add_argument("--device", choices=DEVICES, default=None,
                   help="run the selected claims on this torch device (default cpu); cuda "
                   "only for claims that declare it (huang2024/realvit-diversity, at its GPU "
                   "setting)")
    p.add_argument("--main-reading-only", action="store_true",
                   help="run each claim under its main reading only (skip the alternative "
                   "readings of its RECONSTRUCTED choices)")
    g = p.add_argument_group("re-judging stored tables (no rerun)")
    g.add_argument("--rejudge", metavar="PAPER/ID",
                   help="re-judge the tables a check wrote for this claim and exit; nothing "
                   "runs and nothing is written")
    g.add_argument("--results", metavar="DIR",
                   help="with --rejudge: the folder the check wrote (default docs/results)")
    g.add_argument("--threshold", action="append", default=[], metavar="NAME=VALUE",
                   help="with --rejudge: replace a declared threshold or prediction "
                   "(repeatable)")
    g.add_argument("--reading", action="append", default=[], metavar="CHOICE=VALUE",
                   help="with --rejudge: the tables of another reading of a RECONSTRUCTED "
                   "choice, where a full check stored them (else refused: it needs a rerun)")
    g.add_argument("--counterfactual", action="append", default=[], metavar="NAME",
                   help="with --rejudge: also the verdict under this declared wrong "
                   "statement (repeatable)")
    add_threads_argument(p)
    add_executor_arguments(p)
    a = p.parse_args(argv)
    set_threads_from_args(p, a)
    if a.rejudge is not None:
        return _rejudge(a)
    stray = [f for f, v in (("--results", a.results), ("--threshold", a.threshold),
                            ("--reading", a.reading), ("--counterfactual", a.counterfactual))
             if v]
    if stray:
        p.error(f"{stray[0]}: only with --rejudge PAPER/ID")
    if a.list:
        for key, claim in all_claims().items():
            print(f"{key:<28} {claim.label:<14} {claim.kind:<16} {claim.title}")
        return 0
    # refused before any claim runs
    _check_device(a.device or "cpu", resolve_claims(a.only, field="--only"))
    if a.out is None:
        a.out = default_out("results", quick=a.quick)
    elif a.quick:
        refuse_committed(a.out, "results", "--quick")
    refuse_foreign_committed(a.out, "results", what="theorylab check")
    check_out_folder(a.out)
    claim_folder(a.out, "results", field="--out", create=False, force=a.force)
    _say_recorded_time(resolve_claims(a.only), a.out, quick=a.quick)
    t0 = time.perf_counter()
    # a scheduler that cannot be reached, an unusable --cache: a ValueError, exit 2
    with keeping(written_since(a.out, time.time())), executor_from_args(a), \
            use_device(a.device or "cpu"):
        claim_folder(a.out, "results", field="--out", force=a.force)
        summary = run_checks(a.only, quick=a.quick, out=a.out, figures=not a.no_figures,
                             variants=not a.main_reading_only)
    print(console_summary(summary))
    print(f"total {time.perf_counter() - t0:.1f} s; details: {a.out}/<paper>/summary.md and "
          "one page per claim")
    skipped = summary[summary.verdict == "skipped"]
    if len(skipped):
        print(f"skipped {len(skipped)} claim(s), data not on this machine: "
              + "; ".join(f"{k}: {r}" for k, r in zip(skipped.claim, skipped.headline)))
    failed = (summary.verdict == "error").any() or (
        a.strict and (summary.verdict == "disagrees").any())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
