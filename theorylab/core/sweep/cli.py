"""The flags that send the sweep grids of ``python -m theorylab check`` and
``python -m theorylab figures`` to Dask and to a shared store: ``--scheduler ADDRESS``,
``--workers N``, ``--cache DIR``."""

from __future__ import annotations

import argparse
import contextlib

from ..cli import nonnegative_int, output_argument
from ..folders import claim_folder
from .runner import use_executor
from .store import Store

__all__ = ["add_executor_arguments", "executor_from_args"]




def add_executor_arguments(parser: argparse.ArgumentParser) -> None:
    """``--scheduler ADDRESS | --workers N`` and ``--cache DIR``."""
    g = parser.add_mutually_exclusive_group()
    g.add_argument("--scheduler", metavar="ADDRESS",
                   help="run the sweep grids on this Dask scheduler (e.g. tcp://host:8786)")
    g.add_argument("--workers", type=nonnegative_int, default=0, metavar="N",
                   help="run the sweep grids on a local Dask cluster of N single-threaded "
                        "workers (default 0: in this process)")
    output_argument(parser, "--cache", writes="folder", metavar="DIR",
                        help="store of sweep points shared between checks and figures: cached "
                             "points are read, new ones written")


def executor_from_args(args: argparse.Namespace) -> contextlib.AbstractContextManager:
    """The [`use_executor`][theorylab.core.sweep.runner.use_executor] block the flags ask
    for (``ValueError("out: ...")`` for an unusable ``--cache``)."""
    if args.cache is not None:
        try:
            Store(args.cache)
            claim_folder(args.cache, "cache")  # claimed now: refused before any work
        except ValueError as e:
            raise ValueError(f"--cache: {str(e).removeprefix('out: ')}") from None
    return use_executor(cache=args.cache, scheduler=args.scheduler, workers=args.workers)
