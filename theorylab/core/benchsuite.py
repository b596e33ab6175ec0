"""The GPU suite's runner: parts run one after another, each in its own process under its own
time limit, each writing one table; then a one-page summary of all of them.

A GPU may be lent for a few minutes only, so the suite is one call that leaves every number
behind even when a part fails or runs out of time: a part that ends badly is a line of the
summary (``failed``, ``timed out``, with the last line of its log) and the other parts still
run. The parts and their commands come from the caller (``theorylab bench --gpu-suite``: the
GPU-marked tests and every paper's [`BenchCase`][theorylab.core.bench.BenchCase]s); this module
only runs, times and reports them, and names no paper.

Files in the output folder: one ``<part>.csv`` per part, ``suite.csv`` (one row per part:
status, seconds, rows, file, device), ``summary.md`` and ``logs/<part>.log`` (each part's
output).
"""

from __future__ import annotations

import math
import os
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

from theorylab.core.atomic_io import atomic_write_text as write_text
from theorylab.core.atomic_io import write_csv

__all__ = ["SUITE_FILES", "SuitePart", "check_suite_out", "junit_rows", "run_suite"]

#: The files a suite writes directly into its folder (besides the parts' CSVs and logs/).
SUITE_FILES = ("summary.md", "suite.csv")


@dataclass(frozen=True)
class SuitePart:
    """One part: ``key`` (file stem of ``<key>.csv`` and ``logs/<key>.log``), a one-line
    ``what``, its time limit ``budget_s``, the ``argv`` that runs it (in ``cwd``; it writes
    ``<key>.csv`` itself, or ``after()`` makes it from what the process left), and
    ``summary(table) -> lines`` for the summary page."""

    key: str
    what: str
    budget_s: float
    argv: Sequence[str]
    cwd: str | None = None
    after: Callable[[], None] | None = None
    summary: Callable[[object], list[str]] | None = None


def check_suite_out(out: str | os.PathLike, *, force: bool = False,
                    create: bool = True) -> Path:
    """The suite's folder, claimed through the output gate
    ([`theorylab.core.folders.claim_folder`][], kind ``suite``): new, empty, or a previous
    suite's folder (its ``summary.md`` and CSVs are replaced); a folder theorylab did not write
    only with `force`, a committed folder or a folder of another kind never
    (``ValueError("--out: ...")``). With `create`, the folder is created and marked."""
    from theorylab.core.folders import claim_folder

    path = Path(out)
    if path.exists() and not path.is_dir():
        raise ValueError(f"--out: the GPU suite writes a folder; {str(path)!r} is a file")
    claim_folder(path, "suite", field="--out", force=force, create=create)
    return path


def _last_line(text: str) -> str:
    lines = [ln.strip() for ln in text.strip().splitlines() if ln.strip()]
    return lines[-1][:300] if lines else ""


def run_suite(parts: Sequence[SuitePart], out: Path, *, header: Sequence[str],
              total_s: float, log: Callable[[str], None] = print) -> list[dict]:
    """Run ``parts`` in order (each stopped at ``min(budget, time left of total_s)``), write
    ``suite.csv`` and ``summary.md`` (``header``: its first lines) into ``out``; returns the
    per-part rows."""
    import pandas as pd

    (out / "logs").mkdir(exist_ok=True)
    start = time.perf_counter()
    rows, sections = [], []
    for part in parts:
        left = total_s - (time.perf_counter() - start)
        limit = min(part.budget_s, left)
        csv = out / f"{part.key}.csv"
        if csv.exists():
            csv.unlink()  # a previous suite's table; never one that this run did not make
        row = {"part": part.key, "what": part.what, "limit_s": round(limit, 1)}
        logfile = out / "logs" / f"{part.key}.log"
        if limit < 5:
            row.update(status="skipped", seconds=0.0,
                       note=f"the suite's {total_s:.0f} s were spent")
        else:
            log(f"[{part.key}] {part.what} (limit {limit:.0f} s)")
            t0 = time.perf_counter()
            try:
                done = subprocess.run(list(part.argv), cwd=part.cwd, capture_output=True,
                                      text=True, timeout=limit)
                text = done.stdout + done.stderr
                status = "ok" if done.returncode == 0 else "failed"
                note = "" if status == "ok" else (f"exit {done.returncode}: "
                                                  f"{_last_line(text)}")
            except subprocess.TimeoutExpired as e:
                text = _text(e.stdout) + _text(e.stderr)
                status, note = "timed out", f"stopped after {limit:.0f} s"
            row["seconds"] = round(time.perf_counter() - t0, 1)
            write_text(logfile, text)
            if part.after is not None:
                try:
                    part.after()
                except Exception as err:  # a part's table that cannot be read is its note
                    note = f"{note}; no table: {err}".lstrip("; ")
            row.update(status=status, note=note)
        table = pd.read_csv(csv) if csv.exists() else None
        row["rows"] = 0 if table is None else len(table)
        row["file"] = csv.name if table is not None else ""
        if table is not None and "device" in table.columns and len(table):
            row["device"] = str(table["device"].iloc[0])
        rows.append(row)
        log(f"[{part.key}] {row['status']} in {row.get('seconds', 0):.0f} s"
            + (f": {row['note']}" if row.get("note") else ""))
        lines = []
        if table is not None and len(table):
            lines = part.summary(table) if part.summary is not None else []
            lines = lines or [f"{len(table)} rows"]
        sections.append(_section(part, row, lines))
    total = time.perf_counter() - start
    write_csv(out / "suite.csv", pd.DataFrame(rows))
    text = "\n".join([*header, "", f"Total: {total:.0f} s of the {total_s:.0f} s allowed.", "",
                      "| part | status | seconds | rows | table |", "|---|---|---|---|---|",
                      *(f"| {r['part']} | {r['status']} | {r.get('seconds', 0):.0f} | "
                        f"{r['rows']} | {r['file']} |" for r in rows), "", *sections])
    write_text(out / "summary.md", text + "\n")
    return rows


def _section(part: SuitePart, row: dict, lines: list[str]) -> str:
    head = f"## {part.key}: {row['status']}\n\n{part.what}."
    if row.get("note"):
        head += f" {row['note']}."
    body = "\n".join(f"- {ln}" for ln in lines)
    return head + ("\n\n" + body if body else "") + "\n"


def _text(x) -> str:
    if x is None:
        return ""
    return x.decode(errors="replace") if isinstance(x, bytes) else x


def junit_rows(path: Path, device: str) -> list[dict]:
    """One row per test case of a pytest JUnit XML file: test id, outcome (passed, failed,
    error, skipped) with the skip or failure message, seconds, device."""
    import xml.etree.ElementTree as ET

    rows = []
    for case in ET.parse(path).getroot().iter("testcase"):
        outcome, message = "passed", ""
        for tag in ("failure", "error", "skipped"):
            found = case.find(tag)
            if found is not None:
                outcome = {"failure": "failed"}.get(tag, tag)
                message = (found.get("message") or "")[:200]
                break
        seconds = float(case.get("time") or "nan")
        rows.append({"test": f"{case.get('classname')}::{case.get('name')}",
                     "outcome": outcome, "seconds": seconds if math.isfinite(seconds) else None,
                     "message": message, "device": device})
    return rows
