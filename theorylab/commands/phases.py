"""``theorylab phases RUN_OR_SWEEP [--csv FILE] [--json]``: the phase readings of a run folder
or of every run of a sweep store (``theorylab.analysis.phase_readings``).

Each paper has one reading of its phase times and end values (``Paper.phase_readings``; the
definitions: docs/reproducing.md, "Phase readings"): jelassi2022 ``t_I`` (α ≥ 10‖v⁰‖),
``t_II`` (γ − ρ ≥ 1), ``t_PA`` (patch association from then on), ``t_III`` (the error at
that of hard patch association); huang2024 ``t_I`` (end of Phase I), ``phi_glob_end_I``
(Φ_glob(t_I)), ``t_II``, ``T_star`` and the values at T*, with the realised ``Delta``. Times
are GD steps (a gradient-flow run's rows are at t = η·step: the same steps). A run still
going is read as far as it is written. Exit codes: 0, 2 on bad input (one line
``error: <field>: ...``).
"""

from __future__ import annotations

import sys

import pandas as pd

from theorylab.core.cli import ArgumentParser
from theorylab.core.faults import command


@command("phases")
def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(prog="theorylab phases", description=(
        "Print the paper's phase readings (the phase times and the values at their ends) of "
        "a run folder, or of every run of a sweep store, one row per run (definitions: "
        "docs/reproducing.md, \"Phase readings\"). A run still going is read as far as it is "
        "written. Exit codes: 0, 2 on bad input (one line error: <field>: ...)."))
    p.add_argument("source", help="a run folder (trajectory.csv, config.toml) or a sweep "
                                  "store (results.parquet)")
    p.add_argument("--csv", metavar="FILE", help="also write the table to FILE (CSV)")
    p.add_argument("--json", action="store_true", help="print JSON records instead of a table")
    args = p.parse_args(argv)
    from theorylab.analysis import phase_readings

    try:
        table = phase_readings(args.source)
        if args.csv:
            from theorylab.core.atomic_io import write_csv

            write_csv(args.csv, table)
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.json:
        print(table.to_json(orient="records", indent=1))
    elif len(table) == 1:
        row = table.iloc[0]
        width = max(map(len, table.columns))
        for name in table.columns:
            print(f"{name:<{width}}  {_text(row[name])}")
    else:
        with pd.option_context("display.width", 160, "display.max_columns", 40):
            print(table.to_string(index=False, max_rows=200))
    return 0


def _text(value) -> str:
    return f"{value:.6g}" if isinstance(value, float) else str(value)


if __name__ == "__main__":
    sys.exit(main())
