"""``theorylab phases RUN_OR_SWEEP [--csv FILE] [--json]``: the phase readings of a run folder
or of every run of a sweep store (``theorylab.analysis.phase_readings``, the same table as
``theorylab.<paper>.phases.phase_readings``).

Each paper has one reading of its phase times and end values (``Paper.phase_readings``; the
definitions: docs/reproducing.md, "Phase readings"): jelassi2022 ``t_I`` (α ≥ 10‖v⁰‖),
``t_II`` (γ − ρ ≥ 1), ``t_PA`` (patch association from then on), ``t_III`` (the error at
that of hard patch association); huang2024 ``t_I`` (end of Phase I), ``phi_glob_end_I``
(Φ_glob(t_I)), ``t_II``, ``T_star`` and the values at T*, with the realised ``Delta``. Times
are GD steps (a gradient-flow run's rows are at t = η·step: the same steps). One run prints a
line per reading: its value, the recorded step it is taken at and the recording's resolution
there (the steps since the record before: the threshold was crossed in between),
``censored`` where the reading sits at the run's last recorded step or was not reached by it,
and why a missing reading is missing (a phase the run does not have, a config it needs). A
sweep prints one row per run, its axes and the values; ``--json`` and ``--csv`` give the
whole table, one row per run and reading. A run still going is read as far as it is
written. ``--csv FILE`` writes the table as CSV: a new file, or one this command wrote
(else ``--force``); never a file of a run or a store, nor a committed folder. Exit codes: 0,
1 a full disk (one line naming FILE), 2 on bad input or a folder it may not write (one line
``error: <field>: ...``).
"""

from __future__ import annotations

import sys

import pandas as pd

from theorylab.core.cli import ArgumentParser, output_argument
from theorylab.core.faults import command
from theorylab.core.folders import check_output_file, write_output
from theorylab.core.readings import READING_COLUMNS

#: The writer named in the sidecar of a phase table (how the command knows its own CSV).
WRITER = "theorylab phases"


@command("phases")
def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(prog="theorylab phases", description=(
        "Print the paper's phase readings (the phase times and the values at their ends) of "
        "a run folder, or of every run of a sweep store, one row per run (definitions: "
        "docs/reproducing.md, \"Phase readings\"). A run still going is read as far as it is "
        "written. Exit codes: 0, 2 on bad input (one line error: <field>: ...)."))
    p.add_argument("source", help="a run folder (trajectory.csv, config.toml) or a sweep "
                                  "store (results.parquet)")
    output_argument(p, "--csv", writes=".csv", metavar="FILE",
                    help="also write the table to FILE (CSV)")
    p.add_argument("--force", action="store_true",
                   help="with --csv: replace FILE even when this command did not write it")
    p.add_argument("--json", action="store_true", help="print JSON records instead of a table")
    args = p.parse_args(argv)
    from theorylab.analysis import phase_readings

    try:
        csv = None if args.csv is None else check_output_file(
            args.csv, ".csv", command=WRITER, force=args.force, field="--csv")
        source = _opened_sweep(args.source)
        table = phase_readings(args.source if source is None else source)
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if source is not None:
        _say_unfinished(source)
    if csv is not None:
        write_output(csv, table.to_csv(index=False, float_format="%.17g"), command=WRITER)
    if args.json:
        print(table.to_json(orient="records", indent=1))
    elif table["run"].nunique() <= 1:
        print("\n".join(_lines(table)))
    else:
        print(_wide(table))
    return 0


def _opened_sweep(source: str):
    """The sweep store at `source`, read once (None: `source` is not a sweep store)."""
    from pathlib import Path

    from theorylab.analysis import open_sweep

    return open_sweep(source) if (Path(source) / "results.parquet").is_file() else None


def _say_unfinished(sweep) -> None:
    """A sweep store with points not run yet: one line on stderr (they are left out)."""
    from theorylab.analysis import sweep_progress

    done, total = sweep_progress(sweep)
    if done < total:
        print(f"note: {done} of {total} points of {sweep.path} are finished; the other "
              f"{total - done} are left out (the sweep is running or was stopped)",
              file=sys.stderr)


def _lines(table: pd.DataFrame) -> list[str]:
    """One run: a line per reading (value, step and resolution, censored, reason)."""
    width = max(map(len, table.reading), default=0)
    out = []
    for r in table.itertuples(index=False):
        line = f"{r.reading:<{width}}  {r.value:.6g}" if r.value == r.value else \
            f"{r.reading:<{width}}  missing"
        if r.step == r.step:
            line += f"  (step {r.step:g}, resolution {r.resolution:g})"
        if r.censored:
            line += "  censored"
        if r.reason:
            line += f"  ({r.reason})"
        out.append(line)
    return out


def _wide(table: pd.DataFrame) -> str:
    """Several runs: one row per run (its axes and values), and a line counting the censored
    and missing readings."""
    front = [c for c in table.columns if c not in READING_COLUMNS]
    runs = table[front].drop_duplicates()
    runs = pd.MultiIndex.from_frame(runs) if len(front) > 1 else pd.Index(runs[front[0]])
    wide = table.set_index([*front, "reading"])["value"].unstack("reading")
    wide = wide.reindex(runs)[list(dict.fromkeys(table.reading))].reset_index()
    wide.columns.name = None
    censored = int(table.censored.sum())
    missing = int((table.reason != "").sum())
    with pd.option_context("display.width", 160, "display.max_columns", 40):
        text = wide.to_string(index=False, max_rows=200)
    return (f"{text}\n{censored} readings censored (at the last recorded step or not reached), "
            f"{missing} missing; --json or --csv: each reading's step, resolution and reason")


if __name__ == "__main__":
    sys.exit(main())
