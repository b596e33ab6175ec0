"""One store of the networks trained on real images, for every paper's image experiments and
figures: a process memo in front of an optional folder of
[`theorylab.core.safecache`][] entries (``--cache DIR`` of ``check`` and ``figures``:
``DIR/vision/<name>.npz``).

A run is found by its **key** ([`run_key`][]): the settings it was computed from (with a
``what`` naming the kind of run), the identity of its images
([`image_data_identity`][theorylab.vision.imagedata.image_data_identity]: a digest of each
Fashion-MNIST file, or the digits stand-in), the library versions and the digest of the source
files that compute it ([`code_digest`][]: [`theorylab.core.provenance`][]'s digest of the
modules defining the given functions and of the modules they import from their own package),
so that a changed setting, data file, library or line of code never reads a stale run. Entries
are arrays and tables read without pickle: no file in a shared or copied cache can run code,
and a file that is not the entry of the key asked for (damaged, foreign, a stand-in renamed to
the real key, a pickle) is reported in one ``cache:`` line and the run computed again; a write
that fails (a full disk, a folder in the way) is one line and the computed run is used all the
same.
"""

from __future__ import annotations

import hashlib
import json
import sys
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any, TypeVar

from theorylab.core.provenance import REPO_ROOT, source_digest, source_files
from theorylab.core.safecache import CacheEntry, library_versions, read_entry, write_entry

from .imagedata import image_data_identity

__all__ = ["SUBFOLDER", "RunStore", "active_store", "clear_memo", "code_digest", "key_name",
           "remembered", "run_key"]

#: The store's folder inside a ``--cache`` folder.
SUBFOLDER = "vision"

T = TypeVar("T")
_MEMO: dict[str, Any] = {}


def clear_memo() -> None:
    """Forget the runs and images kept in this process (the next call reads the folder or
    computes)."""
    from .placed import clear_placed

    _MEMO.clear()
    clear_placed()


def code_digest(functions: Iterable, root: str | Path = REPO_ROOT) -> str:
    """The digest of the source that computes a run: the files under `root` of the modules
    defining `functions` and of the modules they import from their own package
    ([`source_files`][theorylab.core.provenance.source_files])."""
    return source_digest(source_files(functions, root), root)


def run_key(what: str, settings: Mapping[str, Any], *, stand_in: bool, code: str) -> dict:
    """What a stored run was computed from: `what` it is, its `settings`, the identity of the
    images it read (`stand_in`: a quick run that may use the digits), the library versions
    and the `code` digest ([`code_digest`][])."""
    return {"what": what, **settings, "data": image_data_identity(stand_in),
            "versions": library_versions(), "code": code}


def key_name(key: Mapping[str, Any]) -> str:
    """The file name of a key: the first 32 hex digits of a SHA-256 of its JSON (the key
    inside the file is checked again when it is read)."""
    text = json.dumps(key, sort_keys=True, default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:32]


class RunStore:
    """Runs kept as ``FOLDER/vision/<key_name>.npz``."""

    def __init__(self, folder: str | Path) -> None:
        self.folder = Path(folder)

    def path(self, key: Mapping[str, Any]) -> Path:
        return self.folder / SUBFOLDER / f"{key_name(key)}.npz"

    def get(self, key: Mapping[str, Any]) -> CacheEntry | None:
        """The entry of `key`, or None (a plain miss, or one ``cache:`` line on stderr)."""
        entry, why = read_entry(self.path(key), key)
        if why:
            print(f"cache: {why}; recomputed", file=sys.stderr)
        return entry

    def put(self, key: Mapping[str, Any], *, arrays: dict, tables: dict, meta: dict) -> None:
        path = self.path(key)
        try:
            write_entry(path, key, arrays=arrays, tables=tables, meta=meta)
        except (OSError, ValueError) as e:
            what = getattr(e, "strerror", None) or str(e)
            if isinstance(e, FileExistsError) or not path.parent.is_dir():
                what = f"{path.parent} is not a folder"
            print(f"cache: cannot write {path} ({what}); the result is used but not kept",
                  file=sys.stderr)


def active_store() -> RunStore | None:
    """The store of the ``--cache DIR`` block of ``check`` or ``figures`` being run (None
    outside one)."""
    from theorylab.core.sweep import active_cache

    folder = active_cache()
    return RunStore(folder) if folder is not None else None


def remembered(key: Mapping[str, Any], compute: Callable[[], T], *,
               encode: Callable[[T], tuple[dict, dict, dict]],
               decode: Callable[[CacheEntry], T],
               store: RunStore | None = None) -> tuple[T, bool]:
    """(the run of `key`, whether it was computed now): from the process memo, else from
    `store` (``decode`` of its entry; an entry that does not decode is a miss with one line),
    else ``compute()``, kept in the memo and put into `store` as ``encode(run)`` = (arrays,
    tables, meta)."""
    name = key_name(key)
    if name in _MEMO:
        return _MEMO[name], False
    run = None
    entry = store.get(key) if store is not None else None
    if entry is not None:
        try:
            run = decode(entry)
        except (KeyError, ValueError, TypeError, RuntimeError) as e:
            print(f"cache: {store.path(key)} is not a usable entry ({e}); recomputed",
                  file=sys.stderr)
    fresh = run is None
    if fresh:
        run = compute()
        if store is not None:
            arrays, tables, meta = encode(run)
            store.put(key, arrays=arrays, tables=tables, meta=meta)
    _MEMO[name] = run
    return run, fresh
