"""Cache entries that cannot run code, each keyed and checked before it is used.

A cached result (a trained model's tables and attention maps, say) is one ``.npz`` file:

- ``__header__``: JSON (as bytes): the format [`FORMAT`][], the entry's **key** (what the
  result was computed from: a hash of its configuration, the identity of its data, the library
  versions, the source of the code) and free metadata;
- ``a/<name>``: arrays (numbers, booleans or text; never Python objects);
- ``t/<table>/<i>``: the columns of tables, with their names and dtypes in the header.

It is read with ``numpy.load(..., allow_pickle=False)``: a file holding pickled objects is
refused by numpy before anything in it is built, so no file in a cache, shared or copied, can
run code. [`read_entry`][] returns the entry only when its header's key equals the key
asked for; a foreign entry (another configuration, another data set, a stand-in renamed to the
real key), a damaged one or one of another format is a miss, with a one-line reason that the
caller reports once before computing the result again. No message ever suggests loading a file
in a way that could run code.
"""

from __future__ import annotations

import io
import json
import sys
import zipfile
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from . import atomic_io

__all__ = ["FORMAT", "CacheEntry", "library_versions", "load_error", "read_entry",
           "write_entry"]

#: The format of an entry (its header says it; another format is a miss).
FORMAT = "theorylab-cache/1"
_HEADER = "__header__"


@dataclass
class CacheEntry:
    """A cache entry: its ``key``, ``arrays`` (name → array), ``tables`` (name → DataFrame)
    and ``meta`` (JSON values)."""

    key: dict
    arrays: dict[str, np.ndarray] = field(default_factory=dict)
    tables: dict[str, pd.DataFrame] = field(default_factory=dict)
    meta: dict = field(default_factory=dict)


def library_versions() -> dict[str, str]:
    """The versions that change a computed number: Python, numpy, pandas, theorylab and, when
    it is imported, torch."""
    from theorylab.core import __version__

    out = {"python": sys.version.split()[0], "numpy": np.__version__,
           "pandas": pd.__version__, "theorylab": __version__}
    torch = sys.modules.get("torch")
    if torch is not None:
        out["torch"] = str(torch.__version__)
    return out


def load_error(err: BaseException) -> str:
    """A one-line description of why a file could not be loaded, never numpy's advice to load
    pickled data."""
    text = " ".join(str(err).split())
    if "pickle" in text.lower():
        return "it is not npz data (a pickle, text or another format: theorylab never unpickles)"
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def _plain(name: str, a: np.ndarray) -> np.ndarray:
    a = np.asarray(a)
    if a.dtype.kind not in "biufcUS":
        raise ValueError(f"{name}: a cache holds numbers, booleans and text only (got dtype "
                         f"{a.dtype})")
    return a


def write_entry(path: str | Path, key: Mapping[str, Any], *,
                arrays: Mapping[str, np.ndarray] | None = None,
                tables: Mapping[str, pd.DataFrame] | None = None,
                meta: Mapping[str, Any] | None = None) -> None:
    """Write an entry atomically (module docstring). Text columns of a table are stored as
    text (and read back with their dtype); ``ValueError`` for an array of Python objects."""
    members = {f"a/{name}": _plain(name, a) for name, a in (arrays or {}).items()}
    layout: dict[str, list] = {}
    for tname, df in (tables or {}).items():
        cols = []
        for i, col in enumerate(df.columns):
            s = df[col]
            kind = str(s.dtype)
            plain = (pd.api.types.is_numeric_dtype(s) or pd.api.types.is_bool_dtype(s))
            values = s.to_numpy() if plain else s.astype(str).to_numpy(dtype=str)
            members[f"t/{tname}/{i}"] = _plain(f"{tname}.{col}", values)
            cols.append([str(col), kind])
        layout[tname] = cols
    header = {"format": FORMAT, "key": dict(key), "tables": layout, "meta": dict(meta or {})}
    text = json.dumps(header, sort_keys=True, allow_nan=False, default=str)
    members[_HEADER] = np.frombuffer(text.encode(), dtype=np.uint8)
    buf = io.BytesIO()
    np.savez(buf, **members)
    atomic_io.atomic_write_bytes(path, buf.getvalue())


def read_entry(path: str | Path, key: Mapping[str, Any]) -> tuple[CacheEntry | None, str]:
    """``(entry, "")`` when ``path`` holds an entry of ``key``; else ``(None, why)``: ``why`` is
    ``""`` for a plain miss (no file) and one line for a file that is not used (damaged, of
    another format, another key: what differs). Nothing in the file is executed."""
    p = Path(path)
    if not p.exists() and not p.is_symlink():
        return None, ""
    if not p.is_file():
        return None, f"{p} is not a file"
    try:
        with open(p, "rb") as fh, np.load(fh, allow_pickle=False) as z:
            names = list(z.files)
            if _HEADER not in names:
                return None, f"{p} is not a theorylab cache entry (no header)"
            header = json.loads(bytes(z[_HEADER]).decode())
            if not isinstance(header, dict) or header.get("format") != FORMAT:
                got = header.get("format") if isinstance(header, dict) else None
                return None, f"{p} is of another format ({got!r}, not {FORMAT!r})"
            stored = header.get("key")
            want = json.loads(json.dumps(dict(key), sort_keys=True, default=str))
            if stored != want:
                return None, f"{p} is another computation's entry ({_differs(stored, want)})"
            arrays = {n[2:]: np.array(z[n]) for n in names if n.startswith("a/")}
            tables = {}
            for tname, cols in (header.get("tables") or {}).items():
                tables[tname] = pd.DataFrame({cname: pd.Series(np.array(z[f"t/{tname}/{i}"]),
                                                                dtype=kind)
                                              for i, (cname, kind) in enumerate(cols)})
    except (OSError, ValueError, EOFError, KeyError, TypeError, zipfile.BadZipFile,
            UnicodeDecodeError) as e:
        return None, f"{p} is not a readable cache entry ({load_error(e)})"
    return CacheEntry(stored, arrays, tables, header.get("meta") or {}), ""


def _differs(stored: Any, want: Mapping) -> str:
    if not isinstance(stored, dict):
        return "no key"
    names = sorted(k for k in set(stored) | set(want) if stored.get(k) != want.get(k))
    return f"differs in {', '.join(names)}" if names else "differs"
