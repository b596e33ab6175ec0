"""Atomic file output: write to a temporary file in the same folder, then ``os.replace``.

Files get the permissions of a plain ``open()`` under the user's umask (``0o666 & ~umask``),
not the 0600 of the temporary file. A killed write leaves at most a ``.<name>.*.tmp`` file,
which [`remove_stale_temporaries`][] deletes.
"""

from __future__ import annotations

import io
import json
import os
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["atomic_write_bytes", "atomic_write_text", "write_csv", "write_npz", "write_json",
           "file_mode", "remove_stale_temporaries"]


def file_mode() -> int:
    """``0o666`` minus the process's umask: the mode ``open()`` would give a new file."""
    mask = os.umask(0)
    os.umask(mask)
    return 0o666 & ~mask


def remove_stale_temporaries(folder: str | Path) -> list[Path]:
    """Delete the temporary files that killed atomic writes left in ``folder``."""
    removed = []
    for p in Path(folder).glob(".*.tmp"):
        if p.is_file():
            p.unlink(missing_ok=True)
            removed.append(p)
    return removed


def atomic_write_bytes(path: str | Path, data: bytes) -> None:
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(data)
            f.flush()
            os.fchmod(f.fileno(), file_mode())
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
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
