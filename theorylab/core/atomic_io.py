"""Atomic file output: write to a temporary file in the same folder, then ``os.replace``.

The temporary file is flushed and ``fsync``-ed before the rename, and the folder after it, so a
crash or a power cut leaves either the old file or the new one, never a torn one or a lost
rename. Files get the permissions of a plain ``open()`` under the user's umask
(``0o666 & ~umask``), not the 0600 of the temporary file. A killed write leaves at most a
``.<name>.XXXXXXXX.tmp`` file; while a write is under way its temporary file carries a kernel
lock (``flock``), so [`remove_stale_temporaries`][], which the folder's lock holder calls,
deletes only the temporaries of writes that died, and never a file the user named
``something.tmp``.
"""

from __future__ import annotations

import io
import json
import os
import re
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["atomic_write_bytes", "atomic_write_text", "write_csv", "write_npz", "write_json",
           "file_mode", "fsync_folder", "remove_stale_temporaries"]

#: The name of an atomic write's temporary file: ``.<name>.<8 characters of mkstemp>.tmp``.
_TEMPORARY = re.compile(r"^\.(?P<name>.+)\.[a-z0-9_]{8}\.tmp$")
#: A temporary file younger than this is left alone even when unlocked (the instant between
#: its creation and its lock).
_FRESH_S = 2.0


def file_mode() -> int:
    """``0o666`` minus the process's umask: the mode ``open()`` would give a new file."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def remove_stale_temporaries(folder: str | Path,
                             names: Iterable[str] | Callable[[str], bool] | None = None
                             ) -> list[Path]:
    """Delete the temporary files that killed atomic writes left in ``folder``: files named
    ``.<name>.XXXXXXXX.tmp`` whose ``<name>`` is one of ``names`` (or passes it, when it is a
    function; None: any name), that no write holds (their ``flock`` is free) and that are not
    brand new. Only the holder of the folder's lock should call this. Returns those deleted."""
    import fcntl

    allowed = None if names is None or callable(names) else set(names)

    def wanted(name: str) -> bool:
        if callable(names):
            return names(name)
        return allowed is None or name in allowed

    removed = []
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return removed
    now = time.time()
    for e in entries:
        m = _TEMPORARY.match(e.name)
        if not m or not wanted(m.group("name")):
            continue
        try:
            if not e.is_file(follow_symlinks=False) or now - e.stat().st_mtime < _FRESH_S:
                continue
            fd = os.open(e.path, os.O_RDONLY)
        except OSError:
            continue
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # a write under way holds it
            os.unlink(e.path)
            removed.append(Path(e.path))
        except OSError:
            pass
        finally:
            os.close(fd)
    return removed


def fsync_folder(folder: str | Path) -> None:
    """``fsync`` a folder, so that a rename or a new file in it survives a crash (a no-op where
    folders cannot be opened)."""
    try:
        fd = os.open(folder, os.O_RDONLY | getattr(os, "O_DIRECTORY", 0))
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:  # some file systems refuse fsync on a folder
        pass
    finally:
        os.close(fd)


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    import fcntl

    path = Path(path)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except OSError as e:
        raise OSError(e.errno, e.strerror, str(path)) from None
    try:
        with os.fdopen(fd, "wb") as f:
            fcntl.flock(f.fileno(), fcntl.LOCK_EX)  # "a write under way": see the module
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), file_mode())
            os.fsync(f.fileno())
            os.replace(tmp, path)  # before the close: the lock covers the whole write
        fsync_folder(path.parent)
    except BaseException as e:
        if os.path.exists(tmp):
            os.unlink(tmp)
        if isinstance(e, OSError) and e.errno is not None and e.filename != str(path):
            # the user's path, never the temporary file's name
            raise OSError(e.errno, e.strerror, str(path)) from None
        raise


def atomic_write_text(path: str | Path, text: str) -> None:
    atomic_write_bytes(path, text.encode())


def write_csv(path: str | Path, df: pd.DataFrame) -> None:
    atomic_write_text(path, df.to_csv(index=False, float_format="%.17g"))


def write_npz(path: str | Path, **arrays: np.ndarray) -> None:
    buf = io.BytesIO()
    np.savez(buf, **arrays)
    atomic_write_bytes(path, buf.getvalue())


def write_json(path: str | Path, obj) -> None:
    atomic_write_text(path, json.dumps(obj, indent=2, sort_keys=True, default=str) + "\n")
