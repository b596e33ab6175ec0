"""The entry points' argument parser: a bad flag ends like every other bad input, with one line
``error: <flag>: <what is wrong> (got ...)`` on stderr and exit code 2 (argparse's own error
prints the usage block first; ``--help`` still shows it).
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, NoReturn

__all__ = ["ArgumentParser", "command_name", "folder_arguments", "nonnegative_int", "one_line",
           "output_argument"]

#: The program name the next entry-point parser takes (set by [`command_name`][]).
_PROG: dict[str, str | None] = {"name": None}

_KINDS = {"int": "an integer", "float": "a number"}

#: argparse's error messages (``argument --x/-x: ...`` names the flag by its first spelling)
#: and their one-line forms, tried in order.
_FORMS = (
    (r"argument (\S+?)(?:/\S+)?: invalid choice: (.*) \(choose from (.*)\)",
     lambda flag, got, choices: f"{flag}: must be one of [{choices}] (got {got})"),
    (r"argument (\S+?)(?:/\S+)?: invalid (\w+) value: (.*)",
     lambda flag, kind, got: f"{flag}: must be {_KINDS.get(kind, kind)} (got {got})"),
    (r"argument (\S+?)(?:/\S+)?: expected (.*)",
     lambda flag, rest: f"{flag}: needs a value (expected {rest})"),
    (r"unrecognized arguments: (.*)",
     lambda got: f"{got.split(' ')[0]}: unknown argument (got {got!r}); see --help"),
    (r"the following arguments are required: (.*)", lambda names: f"{names}: required; see --help"),
    (r"argument (\S+?)(?:/\S+)?: (.*)", lambda flag, rest: f"{flag}: {rest}"),
)


def one_line(message: str) -> str:
    """argparse's error ``message`` as ``<flag>: <what is wrong> (got ...)``."""
    for pattern, form in _FORMS:
        m = re.fullmatch(pattern, message, re.S)
        if m:
            return form(*m.groups())
    return message


@contextmanager
def command_name(prog: str) -> Iterator[None]:
    """Within the block, every [`ArgumentParser`][] is called ``prog`` in its usage and help
    lines (the ``theorylab`` command runs ``python -m theorylab run``'s ``main`` as
    ``theorylab run``)."""
    before = _PROG["name"]
    _PROG["name"] = prog
    try:
        yield
    finally:
        _PROG["name"] = before


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose errors are one line ``error: <flag>: ...``
    (exit code 2); a message that already names its field (``"out: required"``) is kept."""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if _PROG["name"] is not None:
            kwargs["prog"] = _PROG["name"]
        super().__init__(*args, **kwargs)

    def error(self, message: str) -> NoReturn:
        text = " ".join(one_line(message).split())  # one line, whatever argparse wrapped
        print(f"error: {text}", file=sys.stderr)
        sys.exit(2)


def nonnegative_int(text: str) -> int:
    """argparse ``type=`` for counts where 0 has a meaning (threads, workers)."""
    try:
        n = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0 (got {text!r})") from None
    if n < 0:
        raise argparse.ArgumentTypeError(f"must be an integer >= 0 (got {n})")
    return n


def output_argument(parser: argparse.ArgumentParser | Any, *flags: str,
                    writes: str | tuple[str, ...], **kwargs: Any) -> argparse.Action:
    """Add a flag that names what a command writes, and tag it: ``writes`` is ``"folder"``,
    the suffix of the file (``".csv"``), or a tuple of these (a flag whose meaning depends on
    the command's mode). The command checks the value through the output
    gate ([`theorylab.core.folders`][]); the tag lets a test find every such flag of every
    command (``tests/test_output_gate.py``)."""
    action = parser.add_argument(*flags, **kwargs)
    action.writes = writes
    return action


def folder_arguments(parser: argparse.ArgumentParser, *, help: str, what: str,
                     **kwargs: Any) -> None:
    """``--out DIR`` (an output folder, tagged as in [`output_argument`][]) and ``--force``
    (write into a folder that theorylab did not write; its files named like ``what`` are
    replaced)."""
    output_argument(parser, "--out", writes="folder", help=help, **kwargs)
    parser.add_argument("--force", action="store_true",
                        help=f"write into an --out folder that theorylab did not write (its "
                             f"files named like {what} are replaced)")
