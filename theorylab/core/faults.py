"""How every command ends on a fault: Ctrl-C, SIGTERM, a full disk, a folder it may not write.

[`command`][] wraps an entry point's ``main(argv)`` (every ``theorylab <command>``). Within it:

- **SIGINT and SIGTERM** both raise ``KeyboardInterrupt`` where the program is (so the code
  that keeps rows and checkpoints on an interrupt runs for either), and the command ends with
  one line on stderr, ``<command>: interrupted by SIGINT; kept: ...``, and the exit status
  128 + the signal's number (130 for SIGINT, 143 for SIGTERM; [`stop_code`][]). A command that
  says more (``run`` and ``sweep`` print the command that resumes) catches the interrupt itself
  and returns [`stop_code`][].
- **A full disk** (``ENOSPC``, ``EDQUOT``) ends with one line ``error: disk full: ...; kept:
  ...`` and exit status 1; a file or folder that may not be written or read (``EACCES``,
  ``EPERM``, ``EROFS``) with one line naming it and exit status 1. The path named is the
  user's (the atomic writes name their target, never their temporary file). A folder that is
  known not to be writable before anything is written is refused as bad input (exit 2) by the
  output gate, [`theorylab.core.folders`][].
- **Bad input** (a ``ValueError``: its message names the field, ``<field>: ...``) ends with
  one line ``error: <message>`` on stderr and exit status 2, never a traceback.
- **A closed output pipe** (``theorylab phases STORE | head -1``) ends quietly, with exit
  status 141 (128 + SIGPIPE), as a program killed by SIGPIPE does.
- **What was kept** is said by the describers that the command's code registered with
  [`keeping`][] (a run folder: its rows; a sweep store: its finished points; an output
  folder: the files written there since the command started, [`written_since`][]). Atomic
  writes never leave a half-written file under a real name, so what is listed is whole.

Nothing here knows a command or a paper: the entry points and the writers register what they
keep.
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path

__all__ = ["DISK_FULL", "NOT_ALLOWED", "check_stop", "command", "deferred_signals",
           "interrupt_by_hand", "is_disk_full", "keeping", "kept_line",
           "stop_code", "stop_name", "stop_signals", "written_since"]

#: errno values of a full disk or an exhausted quota.
DISK_FULL = frozenset({errno.ENOSPC, errno.EDQUOT})
#: errno values of a path the user may not write (or read).
NOT_ALLOWED = frozenset({errno.EACCES, errno.EPERM, errno.EROFS})

_STATE: dict = {"signum": None, "pending": False}
_KEPT: list[Callable[[], str | None]] = []
#: What the describers said as a fault passed through their blocks (innermost first).
_SAID: list[str] = []


def _on_signal(signum, frame) -> None:
    _STATE["signum"] = signum
    _STATE["pending"] = True
    raise KeyboardInterrupt


def check_stop() -> None:
    """Raise ``KeyboardInterrupt`` again when a stop signal arrived and its interrupt was
    swallowed on the way (Python only prints an exception raised in a finalizer or a callback
    and goes on): the loops of long work (training steps, claims, figures, sweep points) call
    it, so a Ctrl-C always stops the command."""
    if _STATE["pending"]:
        raise KeyboardInterrupt


def interrupt_by_hand() -> bool:
    """Whether a ``KeyboardInterrupt`` being handled now was raised by code (a plug-in's
    import), not by a signal: within [`deferred_signals`][] signals are only noted, and
    under [`stop_signals`][] a signal is recorded before its interrupt is raised."""
    handler = signal.getsignal(signal.SIGINT)
    if getattr(handler, "theorylab_deferring", False):
        return True
    return handler is _on_signal and not _STATE["pending"]


def stop_code() -> int:
    """The exit status of a command stopped by the last signal: 128 + its number (130 for
    SIGINT, which is also assumed when no signal was seen: a ``KeyboardInterrupt`` raised by
    hand). Calling it marks the interrupt as handled."""
    _STATE["pending"] = False
    return 128 + (_STATE["signum"] or signal.SIGINT)


def stop_name() -> str:
    """``"SIGINT"`` or ``"SIGTERM"``: the signal that stopped the command."""
    return signal.Signals(_STATE["signum"] or signal.SIGINT).name


@contextlib.contextmanager
def stop_signals() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM raise ``KeyboardInterrupt`` (the signal is kept for
    [`stop_code`][]); the previous handlers come back after it. Outside the main thread
    (where signals cannot be caught) the block changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    _STATE["signum"], _STATE["pending"] = None, False
    before = {s: signal.signal(s, _on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, handler in before.items():
            signal.signal(s, handler)


@contextlib.contextmanager
def deferred_signals() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM are noted, not raised; the first one noted is
    raised as ``KeyboardInterrupt`` when the block ends. For the imports of the numerical
    libraries: an interrupt in the middle of a C extension's initialisation (torch's) can leave
    the process to abort at its exit instead of ending cleanly. A signal that is ignored when
    the block starts stays ignored; outside the main thread the block changes nothing."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    noted: list[int] = []

    def note(signum, frame) -> None:
        noted.append(signum)

    note.theorylab_deferring = True  # a KeyboardInterrupt in the block is no signal's

    before = {s: signal.getsignal(s) for s in (signal.SIGINT, signal.SIGTERM)}
    for s, handler in before.items():
        if handler is not signal.SIG_IGN:
            signal.signal(s, note)
    try:
        yield
    finally:
        for s, handler in before.items():
            if handler is not signal.SIG_IGN:
                signal.signal(s, handler)
    if noted:
        handler = before[noted[0]]
        if callable(handler):
            handler(noted[0], None)  # ours raises KeyboardInterrupt (Python's default too)
        else:  # SIG_DFL: the signal's own default ending
            signal.raise_signal(noted[0])


@contextlib.contextmanager
def keeping(describe: Callable[[], str | None]) -> Iterator[None]:
    """Within the block, a command stopped by a fault says ``describe()`` (what is kept, e.g.
    ``"12 rows to step 400 in runs/a"``); it is called only then (as the fault leaves the
    block), and a describer that fails or returns nothing is left out."""
    _KEPT.append(describe)
    try:
        yield
    except BaseException:
        text = _call(describe)
        if text and text not in _SAID:
            _SAID.append(text)
        raise
    finally:
        with contextlib.suppress(ValueError):
            _KEPT.remove(describe)


def _call(describe: Callable[[], str | None]) -> str | None:
    try:
        text = describe()
    except Exception:  # a describer must never turn one fault into another
        return None
    return " ".join(str(text).split()) if text else None


def kept_line() -> str:
    """``"kept: A; B"`` from what the describers said as the fault left their blocks and from
    those registered now, or ``"nothing written"``."""
    parts = list(_SAID)
    for describe in reversed(_KEPT):
        text = _call(describe)
        if text and text not in parts:
            parts.append(text)
    return "kept: " + "; ".join(parts) if parts else "nothing written"


def written_since(folder: str | os.PathLike, since: float, *, listed: int = 4
                  ) -> Callable[[], str | None]:
    """A describer for [`keeping`][]: the files under ``folder`` modified since ``since``
    (``time.time()``), as ``"3 files under DIR (a.md, b.png, ...)"``; None when there are
    none."""
    root = Path(folder)

    def describe() -> str | None:
        names = []
        if not root.is_dir():
            return None
        for dirpath, _dirs, files in os.walk(root):
            for f in files:
                p = Path(dirpath, f)
                if (f.endswith(".tmp") or f.startswith(".theorylab")
                        or f.endswith(".theorylab.json")):
                    continue
                with contextlib.suppress(OSError):
                    if p.stat().st_mtime >= since:
                        names.append(str(p.relative_to(root)))
        if not names:
            return None
        names.sort()
        more = f", and {len(names) - listed} more" if len(names) > listed else ""
        return (f"{len(names)} file(s) written under {root} ({', '.join(names[:listed])}"
                f"{more})")

    return describe


def is_disk_full(err: BaseException) -> bool:
    """True for an ``OSError`` of a full disk or an exhausted quota."""
    return isinstance(err, OSError) and err.errno in DISK_FULL


def _where(err: OSError) -> str:
    name = err.filename
    if name is None:
        return ""
    second = f" -> {os.fsdecode(err.filename2)!r}" if err.filename2 else ""
    return f" ({os.fsdecode(name)!r}{second})"


_DEPTH = {"n": 0}


def command(name: str) -> Callable:
    """Decorator of an entry point's ``main(argv) -> int``: run it under [`stop_signals`][]
    and end every interrupt, full disk and refused path with one line and its exit status
    (module docstring). A ``main`` called inside another wrapped one (``theorylab run`` calls
    ``theorylab.run.main``) reports its own faults, under its own name; the signal handlers
    are installed once, by the outermost."""

    def wrap(main: Callable[..., int]) -> Callable[..., int]:
        @functools.wraps(main)
        def run(*args, **kwargs) -> int:
            outer = _DEPTH["n"] == 0
            _DEPTH["n"] += 1
            if outer:
                _SAID.clear()
            try:
                with stop_signals() if outer else contextlib.nullcontext():
                    return _ended(name, main, args, kwargs)
            finally:
                _DEPTH["n"] -= 1
                if outer:
                    _SAID.clear()

        return run

    return wrap


def _ended(name: str, main: Callable[..., int], args, kwargs) -> int:
    try:
        code = main(*args, **kwargs)
        sys.stdout.flush()  # a closed pipe shows here, not at the interpreter's exit
        if not _STATE["pending"]:
            return code
        raise KeyboardInterrupt  # a signal whose interrupt was swallowed on the way
    except BrokenPipeError:
        return _quiet_pipe()
    except ValueError as err:
        _say(f"error: {err}")
        return 2
    except KeyboardInterrupt:
        _say(f"{name}: interrupted by {stop_name()}; {kept_line()}")
        return stop_code()
    except OSError as err:
        if err.errno in DISK_FULL:
            _say(f"error: disk full: {err.strerror}{_where(err)}; {kept_line()}")
            return 1
        if err.errno in NOT_ALLOWED:
            _say(f"error: out: {err.strerror}{_where(err)}; {kept_line()}")
            return 1
        raise


#: The exit status of a command whose output pipe was closed (``| head``): 128 + SIGPIPE.
PIPE_CLOSED = 128 + 13


def _quiet_pipe() -> int:
    """The reader of stdout went away (``theorylab phases STORE | head -1``): end quietly, as
    a program killed by SIGPIPE does, with nothing more written to that pipe."""
    with contextlib.suppress(OSError, ValueError):
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())  # the exit's own flush then writes nowhere
        os.close(devnull)
    return PIPE_CLOSED


def _say(line: str) -> None:
    with contextlib.suppress(OSError, ValueError):  # stderr closed or itself on a full disk
        sys.stderr.flush()
        print(line, file=sys.stderr, flush=True)
