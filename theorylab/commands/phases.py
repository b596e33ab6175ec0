"""``theorylab phases RUN_OR_SWEEP [--csv FILE] [--json]``: the phase readings of a run folder
or of every run of a sweep store (``theorylab.analysis.phase_readings``).

Each paper has one reading of its phase times and end values (``Paper.phase_readings``; the
definitions: docs/reproducing.md, "Phase readings"): jelassi2022 ``t_I`` (α ≥ 10‖v⁰‖),
``t_II`` (γ − ρ ≥ 1), ``t_PA`` (patch association from then on), ``t_III`` (the error at
that of hard patch association); huang2024 ``t_I`` (end of Phase I), ``phi_glob_end_I``
(Φ_glob(t_I)), ``t_II``, ``T_star`` and the values at T*, with the realised ``Delta``. Times
are GD steps (a gradient-flow run's rows are at t = η·step: the same steps). A run still
going is read as far as it is written. ``--csv FILE`` writes the table as CSV: a new file,
or one this command wrote (else ``--force``); never a file of a run or a store, nor a committed
folder. Exit codes: 0, 1 a full disk (one line naming FILE), 2 on bad input or a folder it may
not write (one line ``error: <field>: ...``).
"""

from __future__ import annotations

import sys

import pandas as pd

from theorylab.core.cli import ArgumentParser, output_argument
from theorylab.core.faults import command
from theorylab.core.folders import check_output_file, write_output

#: The writer named in the sidecar of a phase table (how the command knows its own CSV).
WRITER = "theorylab phases"


@command("phases")
def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(prog="theorylab phases", description=__doc__.split("\n")[0])
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
        table = phase_readings(args.source)
    except (ValueError, OSError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if csv is not None:
        write_output(csv, table.to_csv(index=False, float_format="%.17g"), command=WRITER)
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
