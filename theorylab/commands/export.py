"""``theorylab export SOURCE [SOURCE ...] --out FILE.nc``: run folders (side by side, e.g.
gradient descent and gradient flow of one config) or a sweep store as one xarray dataset in a
netCDF file (``theorylab.analysis.export``; netCDF-3 through scipy).

Dimensions ``run`` × ``step`` (one run: ``step``), a ``time`` coordinate t = η·step, the
config (TOML text) and provenance (theorylab version, git revision, host, export time) as
attributes, each run's mode, folder and phase readings as coordinates. A run still going is
exported as far as it is written (its rows so far): run the command again for a fresher file.
Read it with ``xarray.open_dataset(FILE)``. An existing FILE is replaced only when theorylab
wrote it (its ``written_by`` attribute; else ``--force``); the committed folders and the own
files of a run or a store are refused. Exit codes: 0, 1 a full disk (one line naming FILE), 2
on bad input or a folder it may not write (one line ``error: <field>: ...``).
"""

from __future__ import annotations

import sys

from theorylab.core.cli import ArgumentParser, output_argument
from theorylab.core.faults import DISK_FULL, NOT_ALLOWED, command


@command("export")
def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(prog="theorylab export", description=(
        "Write run folders (side by side, e.g. gradient descent and the gradient flow of "
        "one config) or a sweep store as one xarray dataset into the netCDF file --out, with "
        "the config and provenance as attributes; read it with xarray.open_dataset. A run "
        "still going is exported as far as it is written. Exit codes: 0, 2 on bad input (one "
        "line error: <field>: ...)."))
    p.add_argument("source", nargs="+", help="run folders, or one sweep store")
    output_argument(p, "--out", writes=".nc", required=True, metavar="FILE",
                    help="the netCDF file to write (.nc)")
    p.add_argument("--force", action="store_true",
                   help="replace --out even when it is not a file theorylab wrote")
    args = p.parse_args(argv)
    from pathlib import Path

    from theorylab.analysis import export
    from theorylab.core.export import check_netcdf_out

    try:
        check_netcdf_out(args.out, force=args.force)
        seen: dict = {}
        for source in args.source:
            key = Path(source).resolve()
            if key in seen:
                raise ValueError(f"source: {source} is given twice (as {seen[key]} too); give "
                                 "each run folder once")
            seen[key] = source
        path = export(*args.source, out=args.out, force=args.force)
    except OSError as e:
        if e.errno in DISK_FULL or e.errno in NOT_ALLOWED:
            raise  # one line naming --out's file, exit 1 (theorylab.core.faults)
        print(f"error: source: {e.strerror} ({e.filename})", file=sys.stderr)
        return 2
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
