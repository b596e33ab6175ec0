"""One writer at a time: a kernel lock (``flock``) on a lock file in the folder written.

The operating system holds the lock for the process and drops it when the process ends, however
it ends (killed, out of memory, a full disk): there is no stale lock to detect, take over or
remove, and no race between two processes that find one. The lock file itself stays (a file
without a holder is no lock); while held it says who holds it (pid, host, start time, command)
so that a refused writer can name the holder. On NFS, Linux emulates ``flock`` with the
server's byte-range locks, which also span hosts.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import shlex
import socket
import sys
from collections.abc import Iterator
from pathlib import Path

__all__ = ["folder_lock", "holder", "lock_held"]


def _info() -> dict:
    return {"pid": os.getpid(), "host": socket.gethostname(),
            "started": datetime.datetime.now(datetime.timezone.utc).isoformat(
                timespec="seconds"),
            "command": shlex.join([sys.executable, *sys.argv])}


def holder(lock_path: str | os.PathLike) -> dict:
    """What the lock file says of its holder (``pid``, ``host``, ``started``, ``command``;
    ``"?"`` for what cannot be read)."""
    try:
        info = json.loads(Path(lock_path).read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        info = {}
    info = info if isinstance(info, dict) else {}
    return {k: info.get(k, "?") for k in ("pid", "host", "started", "command")}


def lock_held(lock_path: str | os.PathLike) -> bool:
    """True when another open file description holds the lock of ``lock_path`` now (a probe:
    the lock is taken and released at once when free)."""
    import fcntl

    try:
        fd = os.open(lock_path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return True
    except OSError:
        return False
    finally:
        os.close(fd)
    return False


@contextlib.contextmanager
def folder_lock(lock_path: str | os.PathLike, *, what: str, field: str = "out"
                ) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``lock_path`` (created if needed) for the block, or raise
    ``ValueError("<field>: <folder> is in use by another <what>: pid ... on host ..., started
    ... (command); wait for it to end")`` at once when another process holds it."""
    import fcntl

    path = Path(lock_path)
    try:
        fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o644)
    except OSError as e:
        raise ValueError(f"{field}: cannot open the lock file {path} ({e.strerror})") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            other = holder(path)
            raise ValueError(
                f"{field}: {path.parent} is in use by another {what}: pid {other['pid']} on "
                f"host {other['host']}, started {other['started']} ({other['command']}); "
                f"wait for it to end") from None
        with contextlib.suppress(OSError):  # the holder's name is a courtesy (a full disk)
            text = json.dumps(_info()).encode()
            os.ftruncate(fd, 0)
            os.pwrite(fd, text, 0)
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # closing the descriptor releases the lock
