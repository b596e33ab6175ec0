"""``theorylab plot`` (``python -m theorylab plot``, ``python -m theorylab.plot``): a run
folder's trajectory, a sweep's phase diagram or kept trajectories, or a reading of a sweep
against one of its axes, as a PNG; the plots are
[`theorylab.analysis.plots`][] (``plot_run``, ``plot_sweep``, ``plot_reading``). Bad input:
one line ``error: <field>: ...`` on stderr, exit code 2."""

from __future__ import annotations

import sys
from pathlib import Path

from theorylab.analysis.labels import check_out
from theorylab.analysis.plots import plot_reading, plot_run, plot_sweep
from theorylab.analysis.runs import text
from theorylab.core.cli import ArgumentParser, output_argument
from theorylab.core.faults import command

__all__ = ["main"]


def _kind(path: Path) -> str:
    if path.is_dir():
        if (path / "trajectory.csv").is_file():
            return "run"
        if (path / "results.parquet").is_file():
            return "sweep"
    elif path.name == "trajectory.csv":
        return "run"
    elif path.suffix in (".parquet", ".csv") and path.is_file():
        return "sweep"
    raise ValueError(f"input: not a run folder (trajectory.csv), a sweep store "
                     f"(results.parquet) or a sweep table (got {text(path)!r})")


@command("plot")
def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(prog="theorylab plot", description=(
        "Plot a run folder (its trajectory, one panel per recorded quantity, the phase "
        "readings marked), a sweep store (the phase diagram of --value over the axes --x and "
        "--y, or the kept trajectories), or a sweep's --reading against --x (seed intervals, "
        "the fitted slope in the legend) into a PNG (default: RUN/trajectory.png, "
        "SWEEP/phase_diagram.png or SWEEP/READING-X.png). Exit codes: 0, 2 on bad input (one "
        "line error: <field>: ...)."))
    p.add_argument("input", help="a run folder (trajectory.csv), a sweep store "
                                 "(results.parquet) or a sweep table (.parquet, .csv)")
    output_argument(p, "--out", writes=".png", metavar="FILE",
                    help="the PNG to write (default: next to the input)")
    p.add_argument("--columns", nargs="+", metavar="COL",
                   help="run: the quantities to plot (default: every one that changes)")
    p.add_argument("--x", help="sweep: the axis across (default: the spec's first axis)")
    p.add_argument("--y", help="sweep: the axis up (default: the spec's second axis)")
    p.add_argument("--value", help="sweep: the column or phase reading shown (default: "
                                   "error_fair, error, test_error or loss, the first present)")
    p.add_argument("--reading", help="sweep: a phase reading (t_I, T_star, ...) or column "
                                     "drawn against --x, one point per setting with its seed "
                                     "interval and the fitted slope")
    p.add_argument("--log", action="store_true",
                   help="with --reading: logarithmic axes, the slope of a power law")
    p.add_argument("--force", action="store_true",
                   help="replace an existing --out file that this command did not write")
    a = p.parse_args(argv)
    path = Path(a.input)
    if a.out is not None:  # the output gate, before anything is read or drawn
        check_out(Path(a.out), default=False, force=a.force)
    kind = _kind(path)
    if kind == "run" and (a.x or a.y or a.value or a.reading or a.log):
        raise ValueError("--x/--y/--value/--reading/--log: for a sweep; a run takes "
                         "--columns")
    if kind == "sweep" and a.columns:
        raise ValueError("--columns: for a run; a sweep takes --x, --y and --value")
    if a.reading is not None and (a.y or a.value):
        raise ValueError("--reading: drawn against --x alone (no --y or --value)")
    if a.log and a.reading is None:
        raise ValueError("--log: only with --reading")
    if kind == "run":
        written = plot_run(path, out=a.out, columns=a.columns, force=a.force)
    elif a.reading is not None:
        if a.x is None:
            raise ValueError("--x: --reading needs the sweep axis to draw it against")
        written = plot_reading(path, a.reading, a.x, log=a.log, out=a.out, force=a.force)
    else:
        written = plot_sweep(path, out=a.out, x=a.x, y=a.y, value=a.value, force=a.force)
    print(f"wrote {text(written)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
