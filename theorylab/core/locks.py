"""One writer at a time: a kernel lock (``flock``) on a lock file in the folder written.

The operating system holds the lock for the process and drops it when the process ends, however
it ends (killed, out of memory, a full disk): there is no stale lock to detect, take over or
remove, and no race between two processes that find one. The lock file itself stays (a file
without a holder is no lock); while held it says who holds it (pid, host, start time, command)
so that a refused writer can name the holder. On NFS, Linux emulates ``flock`` with the
server's byte-range locks, which also span hosts. A file system whose ``flock`` does not keep
a second locker out (some network or FUSE file systems accept every lock) is found when the lock
is taken: a second open of the lock file must be refused; where it is not, one line warns that
two writers of that folder are not kept apart there ([`flock_works`][]).
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

__all__ = ["flock_works", "folder_lock", "holder", "lock_held"]

#: The folders already warned about (one line per folder and process).
_WARNED: set[str] = set()


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


def flock_works(lock_path: str | os.PathLike) -> bool:
    """Whether the exclusive lock this process holds on ``lock_path`` keeps a second locker
    out: a second open of the file must be refused a shared lock (checked while the lock is
    held; the probe takes nothing when it works)."""
    return lock_held(lock_path)


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
        if not flock_works(path) and str(path.parent) not in _WARNED:
            _WARNED.add(str(path.parent))
            print(f"warning: {field}: the file system of {path.parent} does not keep a second "
                  f"locker out (flock accepted two at once): two {what}s writing there at "
                  "once are not kept apart; run one at a time", file=sys.stderr)
        try:
            yield
        finally:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
    finally:
        os.close(fd)  # closing the descriptor releases the lock
