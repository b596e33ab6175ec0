"""``python -m theorylab.check [--quick] [--only ID] [--out DIR]``: run the claim checks.

Prints one row per claim (id, label, verdict, runtime, headline numbers) and writes
``<out>/<id>.md``, ``<id>.csv`` (+ extra tables) and ``<id>.png`` for each, plus
``<out>/summary.csv`` and ``summary.md``. ``--quick`` uses reduced grids (CI, < 3 minutes on 2
cores). The exit status is 1 when a check raised, else 0 (a ``disagrees`` verdict is a
finding, not a crash; ``--strict`` makes it fail too).
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from pathlib import Path

import pandas as pd

from . import _io
from .claims import CLAIMS, markdown_table, write_result

__all__ = ["main", "run_checks"]


def run_checks(ids=None, *, quick: bool = False, out: str | Path | None = "docs/results",
               figures: bool = True, progress: bool | None = None) -> pd.DataFrame:
    """Run the claims `ids` (default: all) and return the summary table (one row per claim)."""
    from tqdm.auto import tqdm

    ids = list(CLAIMS) if not ids else list(ids)
    for i in ids:
        if i not in CLAIMS:
            raise KeyError(f"unknown claim {i!r}; known: {list(CLAIMS)}")
    show = sys.stderr.isatty() if progress is None else progress
    rows = []
    for cid in tqdm(ids, desc="claims", disable=not show):
        claim = CLAIMS[cid]
        t0 = time.perf_counter()
        try:
            res = claim.check(quick=quick)
            if out is not None:
                write_result(claim, res, out, figures=figures)
            head = "; ".join(f"{k}={_num(v)}" for k, v in res.headline.items())
            rows.append({"claim": cid, "label": claim.label, "kind": claim.kind,
                         "verdict": res.verdict,
                         "runtime_s": res.runtime_s, "headline": head, "error": ""})
        except Exception as err:  # report and go on: one failing claim must not hide the others
            rows.append({"claim": cid, "label": claim.label, "kind": claim.kind,
                         "verdict": "error",
                         "runtime_s": time.perf_counter() - t0, "headline": "",
                         "error": f"{type(err).__name__}: {err}"})
            traceback.print_exc()
    summary = pd.DataFrame(rows)
    if out is not None:
        _io.write_csv(Path(out) / "summary.csv", summary)
        mode = "quick" if quick else "full"
        text = (f"# Claim checks: summary ({mode} run, {summary.runtime_s.sum():.0f} s)\n\n"
                + markdown_table(summary.drop(columns=["error"])) + "\n")
        _io.atomic_write_text(Path(out) / "summary.md", text)
    return summary


def _num(v) -> str:
    return f"{v:.4g}" if isinstance(v, float) else str(v)


def main(argv=None) -> int:
    p = argparse.ArgumentParser(prog="python -m theorylab.check",
                                description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true", help="reduced grids (< 3 min on 2 cores)")
    p.add_argument("--only", action="append", metavar="ID",
                   help=f"run only this claim (repeatable); ids: {', '.join(CLAIMS)}")
    p.add_argument("--out", default="docs/results", help="output folder (default docs/results)")
    p.add_argument("--no-figures", action="store_true", help="skip the PNG figures")
    p.add_argument("--strict", action="store_true", help="exit 1 on a 'disagrees' verdict too")
    a = p.parse_args(argv)
    t0 = time.perf_counter()
    summary = run_checks(a.only, quick=a.quick, out=a.out, figures=not a.no_figures)
    with pd.option_context("display.max_colwidth", 120, "display.width", 200):
        print(summary.drop(columns=["error"]).to_string(index=False))
    print(f"total {time.perf_counter() - t0:.1f} s; results in {a.out}")
    failed = (summary.verdict == "error").any() or (
        a.strict and (summary.verdict == "disagrees").any())
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
