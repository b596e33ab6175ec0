"""How many threads the numerical libraries use: torch's intra-op pool and the BLAS/OpenMP pools
behind numpy and scipy (through threadpoolctl), set together from one number.

Every entry point takes ``--threads N`` (:func:`add_threads_argument`) and applies it with
:func:`set_threads`; workers of a sweep pin themselves to one thread each so that N workers do not
oversubscribe N cores. ``N = 0`` means "leave the libraries' own default".

The default of the entry points is :func:`default_threads`: the ``THEORYLAB_THREADS`` environment
variable when set, else 1 thread. One thread is the measured default on the shared 2-core machines
this project runs on: with 2 torch threads on a busy 2-core machine a step was 3–30× slower than
with 1 (``docs/performance.md``).

A count above the cores this process may use ([`usable_cores`][]) is capped at them, with one
line saying so (``--force-threads`` starts them all); above [`MAX_THREADS`][] it is refused (a
thread pool of 10⁵ threads ends in a ``MemoryError`` or a segmentation fault). A count from a
run config (``train.threads``) is capped the same way, silently ([`capped_threads`][]).
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import importlib.abc
import importlib.util
import os
import sys
from collections.abc import Iterator

from .cli import nonnegative_int

__all__ = [
    "MAX_THREADS",
    "THREADS_ENV",
    "add_threads_argument",
    "capped_threads",
    "set_threads_from_args",
    "current_threads",
    "default_threads",
    "limit_threads",
    "set_threads",
    "threads_from_args",
    "usable_cores",
]

THREADS_ENV = "THEORYLAB_THREADS"
#: The most threads a count may ask for (even with ``--force-threads``): far beyond any
#: machine's cores, far below what makes the thread pools fail.
MAX_THREADS = 1024


def _torch():
    """torch, imported with SIGINT and SIGTERM deferred to the end of its import
    ([`deferred_signals`][theorylab.core.faults.deferred_signals]): an interrupt in the middle
    of its initialisation can make the process abort at its exit."""
    from .faults import deferred_signals

    with deferred_signals():
        import torch
    return torch


def usable_cores() -> int:
    """The cores this process may run on (its CPU affinity; ``os.cpu_count()`` where the
    platform has none)."""
    try:
        return len(os.sched_getaffinity(0)) or 1
    except (AttributeError, OSError):  # pragma: no cover - not Linux
        return os.cpu_count() or 1


def capped_threads(n: int) -> int:
    """``n`` threads capped at the [`usable_cores`][] (0 stays 0: the libraries' default)."""
    return min(n, usable_cores()) if n > 0 else n


def default_threads() -> int:
    """``$THEORYLAB_THREADS`` when set (an integer >= 0), else 1."""
    raw = os.environ.get(THREADS_ENV, "").strip()
    if not raw:
        return 1
    try:
        n = int(raw)
    except ValueError:
        raise ValueError(f"{THREADS_ENV}: must be an integer >= 0 (got {raw!r})") from None
    if not 0 <= n <= MAX_THREADS:
        raise ValueError(f"{THREADS_ENV}: must be an integer in [0, {MAX_THREADS}] (got {n})")
    return n


def _check(n: int) -> int:
    if isinstance(n, bool) or not isinstance(n, int) or n < 0:
        raise ValueError(f"threads: must be an integer >= 0 (got {n!r})")
    if n > MAX_THREADS:
        raise ValueError(f"threads: must be <= {MAX_THREADS} (got {n})")
    return n


def current_threads() -> dict[str, int | None]:
    """The thread counts in force now: ``{"torch": ..., "blas": ...}`` (``blas`` is None when
    threadpoolctl finds no BLAS pool)."""
    torch = _torch()  # first: its own pools are then among those threadpoolctl finds
    from threadpoolctl import threadpool_info  # comes with scikit-learn

    counts = [p["num_threads"] for p in threadpool_info() if p.get("user_api") == "blas"]
    return {"torch": torch.get_num_threads(), "blas": max(counts) if counts else None}


_LIMITER = None  # the process-wide threadpoolctl limiter set by set_threads
#: the torch thread count [`set_threads`][] asked for before torch was imported
_PENDING: dict[str, int] = {}


def _torch_threads(n: int) -> None:
    """``torch.set_num_threads(n)`` now when torch is imported, else as soon as it is
    (importing torch takes seconds: a command that refuses a bad config never needs it)."""
    torch = sys.modules.get("torch")
    if torch is not None and hasattr(torch, "set_num_threads"):
        torch.set_num_threads(n)
        return
    _PENDING["torch"] = n
    if not any(isinstance(f, _TorchImportHook) for f in sys.meta_path):
        sys.meta_path.insert(0, _TorchImportHook())


class _TorchImportHook(importlib.abc.MetaPathFinder):
    """Sets torch's thread count pending from [`set_threads`][] once torch is imported (a
    finder that wraps the loader of the ``torch`` package, then leaves ``sys.meta_path``)."""

    def find_spec(self, name, path=None, target=None):
        if name != "torch":
            return None
        sys.meta_path.remove(self)
        spec = importlib.util.find_spec(name)
        if spec is None or spec.loader is None:
            return spec
        spec.loader = _ThreadsLoader(spec.loader)
        return spec


class _ThreadsLoader(importlib.abc.Loader):
    def __init__(self, loader):
        self._loader = loader

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module):
        from .faults import deferred_signals

        with deferred_signals():  # an interrupt mid-initialisation could abort the process
            self._loader.exec_module(module)
        n = _PENDING.pop("torch", None)
        if n is not None:
            module.set_num_threads(n)

    def __getattr__(self, name):  # is_package, get_code, get_source, ... of the real loader
        return getattr(self._loader, name)


def set_threads(n: int) -> None:
    """Use ``n`` threads in torch and in the BLAS/OpenMP pools for the rest of the process
    (``n = 0``: leave them as they are). torch is not imported for this: when it is not yet,
    its count is set the moment it is."""
    from threadpoolctl import threadpool_limits

    global _LIMITER
    if _check(n) == 0:
        return
    _torch_threads(n)
    _LIMITER = threadpool_limits(limits=n)


@contextlib.contextmanager
def limit_threads(n: int) -> Iterator[None]:
    """Within the block, torch and BLAS use ``n`` threads, capped at the usable cores (0:
    unchanged); restored after."""
    from threadpoolctl import threadpool_limits

    if _check(n) == 0:
        yield
        return
    n = capped_threads(n)
    torch = _torch()
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        with threadpool_limits(limits=n):
            yield
    finally:
        torch.set_num_threads(old)


def add_threads_argument(parser: argparse.ArgumentParser) -> None:
    """Add ``--threads N`` (default :func:`default_threads`; 0 = the libraries' default) and
    ``--force-threads``."""
    parser.add_argument(
        "--threads", type=nonnegative_int, default=None, metavar="N",
        help=f"threads for torch and BLAS (default ${THREADS_ENV} or 1; 0 = libraries' default;"
             f" at most the usable cores unless --force-threads, and at most {MAX_THREADS})")
    parser.add_argument("--force-threads", action="store_true",
                        help="use --threads N even beyond the usable cores")


def threads_from_args(args: argparse.Namespace, say=None) -> int:
    """The thread count an entry point should use: ``--threads`` if given, else the default;
    capped at the usable cores (said in one line on stderr) unless ``--force-threads``;
    ``ValueError("threads: ...")`` above [`MAX_THREADS`][]."""
    n = getattr(args, "threads", None)
    n = default_threads() if n is None else _check(n)
    cores = usable_cores()
    if n > cores and not getattr(args, "force_threads", False):
        say = say or functools.partial(print, file=sys.stderr)
        say(f"threads: {n} capped at the {cores} usable cores (--force-threads starts them all)")
        n = cores
    return n


def set_threads_from_args(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """[`set_threads`][] to [`threads_from_args`][]; a bad count ends the command through
    ``parser.error`` (exit 2, the message names ``--threads``). Returns the count set."""
    try:
        n = threads_from_args(args)
    except ValueError as err:
        parser.error(f"--threads: {str(err).removeprefix('threads: ')}")
    set_threads(n)
    return n
