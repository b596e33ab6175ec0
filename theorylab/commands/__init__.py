"""The ``theorylab`` command: ``theorylab <command> [flags]``, one module of this room per
command, each with a ``main(argv)``.

=========  =========================================  ===============================
command    what it does                               module
=========  =========================================  ===============================
run        train one run config                       [`theorylab.commands.run`][]
check      judge the papers' claims                   [`theorylab.commands.check`][]
figures    render the papers' figures                 [`theorylab.commands.figures`][]
sweep      run a sweep spec into a store              [`theorylab.commands.sweep`][]
plot       plot a run folder or a sweep store         [`theorylab.commands.plot`][]
bench      time the engines; the GPU suite            [`theorylab.commands.bench`][]
config     print the run-config reference             [`theorylab.commands.config`][]
phases     phase readings of a run or a sweep         [`theorylab.commands.phases`][]
export     runs or a sweep as netCDF (xarray)         [`theorylab.commands.export`][]
=========  =========================================  ===============================

Each command takes the flags and gives the exit codes of its module (``theorylab <command>
--help``); ``theorylab --help`` lists the commands. Installed as a console script
(``[project.scripts]`` in ``pyproject.toml``); ``python -m theorylab`` is the same command, and so
are ``python -m theorylab.<command>`` (``python -m theorylab.figures``, ``python -m
theorylab.check``, ...: the thin modules ``theorylab/<command>.py``, [`run_as_module`][]) and
``python -m theorylab.commands.<command>``.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Sequence
from typing import NoReturn

from theorylab.core.cli import command_name
from theorylab.core.faults import command, deferred_signals

__all__ = ["COMMANDS", "main", "run_as_module"]

#: command → (module whose ``main(argv)`` runs it, one-line description)
COMMANDS: dict[str, tuple[str, str]] = {
    "run": ("theorylab.commands.run", "train one run config (TOML) into a run folder"),
    "check": ("theorylab.commands.check", "run the claim checks and write their verdicts"),
    "figures": ("theorylab.commands.figures", "render the paper figures (PDF + PNG)"),
    "sweep": ("theorylab.commands.sweep", "run a sweep spec into a store of points"),
    "plot": ("theorylab.commands.plot",
             "plot a run folder (trajectory) or a sweep store (phase diagram)"),
    "bench": ("theorylab.commands.bench",
              "time the engines (step speed, targets, sweeps; --gpu-suite)"),
    "config": ("theorylab.commands.config",
               "print (--out: write, --check: compare) the run-config reference"),
    "phases": ("theorylab.commands.phases",
               "the phase readings of a run folder or of every run of a sweep store"),
    "export": ("theorylab.commands.export",
               "run folders or a sweep as an xarray dataset in a netCDF file"),
}


def _usage() -> str:
    width = max(map(len, COMMANDS))
    lines = ["usage: theorylab <command> [flags]   (theorylab <command> --help for its flags)",
             "", "Numerical checks of deep-learning theory: one command per entry point.", "",
             "commands:"]
    lines += [f"  {name:<{width}}  {text}" for name, (_, text) in COMMANDS.items()]
    lines += ["", "options:", "  -h, --help     show this message and exit",
              "  --version      show the version and exit"]
    return "\n".join(lines)


@command("theorylab")
def main(argv: Sequence[str] | None = None) -> int:
    """Run ``theorylab <command> ...``; returns the command's exit code."""
    args = list(sys.argv[1:] if argv is None else argv)
    if not args:
        print(_usage(), file=sys.stderr)
        print("error: command: required (one of " + ", ".join(COMMANDS) + ")", file=sys.stderr)
        return 2
    first, rest = args[0], args[1:]
    if first in ("-h", "--help"):
        print(_usage())
        return 0
    if first == "--version":
        from theorylab.core import __version__

        print(f"theorylab {__version__}")
        return 0
    if first not in COMMANDS:
        print(f"error: command: unknown (got {first!r}); one of {', '.join(COMMANDS)}; see "
              "theorylab --help", file=sys.stderr)
        return 2
    with deferred_signals():  # its libraries' C extensions are never interrupted mid-import
        module = importlib.import_module(COMMANDS[first][0])
    with command_name(f"theorylab {first}"):
        try:
            code = module.main(rest)
        except SystemExit as stop:  # argparse's --help (0) and one-line errors (2)
            code = stop.code
    if code is None:
        return 0
    return code if isinstance(code, int) else 1


def run_as_module(name: str) -> NoReturn:
    """``python -m theorylab.<name> ARGS``: exit with ``theorylab <name> ARGS``'s exit code,
    ``ARGS`` being this process's arguments (the body of the thin modules
    ``theorylab/<name>.py``)."""
    sys.exit(main([name, *sys.argv[1:]]))


if __name__ == "__main__":
    sys.exit(main())
