"""The sweep store: one Parquet file per point, written atomically, plus one consolidated table.

Layout of a store folder ``DIR``::

    DIR/sweep.json            the spec, its fingerprint, base hash and its points' run ids
    DIR/sweep.lock            the writer's kernel lock (flock); held: pid, host, start, command
    DIR/.theorylab.json       the folder's marker: a sweep store (or a point cache)
    DIR/points/<run_id>.parquet   one point: its kept rows, status, message and provenance
    DIR/results.parquet       the consolidated table (axes as columns), rebuilt after each run

A point file exists only once its point is finished (ok, diverged or failed); a killed sweep
leaves at most a temporary file, removed by the next sweep that takes the store's lock (a
reader, such as ``sweep --dry-run`` or ``check --cache``, never removes anything, so it cannot
break a sweep that writes beside it). Each point file
carries its run id and config hash in its Parquet metadata (``theorylab.run_id``,
``theorylab.config_hash``); a file whose metadata does not match the point it is read for (a
file of another run renamed, or one without them) is not a cache hit: it is reported and the
point recomputed. A folder used as a shared point cache (``--cache DIR`` of the checks and
figures) has only ``points/``.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq

from theorylab.core import atomic_io
from theorylab.core.folders import MARKER, claim_folder
from theorylab.core.locks import folder_lock
from theorylab.core.provenance import PROVENANCE_COLUMNS, refuse_foreign_committed
from theorylab.core.trainer import check_out_folder

from .spec import Point

__all__ = ["META_COLUMNS", "PROVENANCE_COLUMNS", "SWEEP_COLUMNS", "Store", "STATUSES",
           "check_sweep_table", "load_sweep", "read_point_file"]

#: The columns every sweep table has (its readers refuse a table without them).
SWEEP_COLUMNS = ("point", "run_id", "status")

#: status of a point: ok, diverged (the rows before the divergence are kept), failed (an
#: exception; ``message`` holds it; recomputed on the next run), pending (not computed yet).
STATUSES = ("ok", "diverged", "failed", "pending")
META_COLUMNS = ("status", "message", *PROVENANCE_COLUMNS)


RUN_ID_KEY = b"theorylab.run_id"
CONFIG_HASH_KEY = b"theorylab.config_hash"


def _to_parquet_bytes(df: pd.DataFrame, meta: Mapping[bytes, bytes] | None = None) -> bytes:
    table = pa.Table.from_pandas(df, preserve_index=False)
    if meta:
        table = table.replace_schema_metadata({**(table.schema.metadata or {}), **meta})
    buf = io.BytesIO()
    pq.write_table(table, buf)
    return buf.getvalue()


def read_point_file(path: str | Path) -> tuple[pd.DataFrame, str, str]:
    """A point file's table, run id and config hash ("" for a file without them)."""
    table = pq.read_table(path)
    meta = table.schema.metadata or {}
    return (table.to_pandas(), meta.get(RUN_ID_KEY, b"").decode(),
            meta.get(CONFIG_HASH_KEY, b"").decode())


def _own_point_file(path: Path) -> bool:
    """Whether ``path`` is a point file a store wrote: its Parquet metadata names the run id
    that is its name."""
    try:
        meta = pq.read_schema(path).metadata or {}
    except Exception:  # not a Parquet file: not ours
        return False
    return meta.get(RUN_ID_KEY, b"").decode(errors="replace") == path.name[:-len(".parquet")]


def _own_table(path: Path) -> bool:
    """Whether ``path`` is a store's consolidated table (its ``run_id`` and ``status``
    columns)."""
    try:
        names = set(pq.read_schema(path).names)
    except Exception:
        return False
    return {"run_id", "status"} <= names


def _stored(p: Path, run_id: str, want: str = "") -> tuple[pd.DataFrame | None, str]:
    """The table of the point file ``p`` when it is run ``run_id``'s (of config hash ``want``
    when given), else None and what is wrong with the file ("" when there is none)."""
    if not p.is_file():
        return None, ""
    try:
        table, rid, chash = read_point_file(p)
    except Exception as e:  # a damaged file
        return None, f"is unreadable ({type(e).__name__})"
    if rid != run_id or (want and chash != want):
        what = (f"holds run {rid} (config hash {chash[:12]})" if rid else
                "carries no run id or config hash")
        return None, f"{what}, not run {run_id} (config hash {want[:12]})"
    return table, ""


def _read_point(points_dir: Path, run_id: str) -> pd.DataFrame:
    """The table of the point file of ``run_id``, or one ``pending`` row when there is none
    that is the run's (missing, damaged, another run's)."""
    table, _ = _stored(points_dir / f"{run_id}.parquet", run_id)
    return pd.DataFrame({"status": ["pending"], "message": [""]}) if table is None else table


def _read_manifest(path: Path) -> dict | None:
    if not path.is_file():
        return None
    try:
        old = json.loads(path.read_text())
    except (OSError, UnicodeDecodeError, ValueError) as e:
        why = (f"{e.msg} at line {e.lineno} column {e.colno}"
               if isinstance(e, json.JSONDecodeError) else type(e).__name__)
        raise ValueError(f"out: {path} is damaged ({why}); restore it, or rerun with "
                         f"--new-store to discard the store") from None
    if not isinstance(old, dict) or "fingerprint" not in old:
        raise ValueError(f"out: {path} is not a sweep manifest (no fingerprint); restore it, "
                         f"or rerun with --new-store to discard the store")
    return old


class Store:
    """A store folder (created on first write). ``ValueError("out: ...")`` for an unusable
    path. Opening a store reads nothing and changes nothing: ``readonly`` stores (``sweep
    --dry-run``, a table's reader) are not even required to be writable."""

    def __init__(self, folder: str | Path, *, readonly: bool = False) -> None:
        if readonly:
            self.root = Path(folder)
        else:
            self.root = check_out_folder(folder)
            refuse_foreign_committed(self.root, None, what="a sweep store", field="out")
        self.points_dir = self.root / "points"
        if self.points_dir.exists() and not self.points_dir.is_dir():
            raise ValueError(f"out: {self.points_dir} is a file, not the folder of a store's "
                             f"points; use another --out, or move that file away")
        #: point files that were not the point they were read for (path, what was wrong);
        #: the runner reports them and recomputes their points.
        self.mismatches: dict[Path, str] = {}

    # -- points ------------------------------------------------------------------------------
    def path(self, run_id: str) -> Path:
        return self.points_dir / f"{run_id}.parquet"

    def cached(self, point: Point | str) -> pd.DataFrame | None:
        """The stored table of ``point`` (a [`Point`][], or a bare run id: then only the run id
        is checked) when its status is not ``failed`` and its metadata names this run id and
        config hash (a cache hit); else None: not stored, failed, damaged, or another run's
        file (recorded in ``mismatches``), recomputed."""
        run_id, want = (point, "") if isinstance(point, str) else (point.run_id,
                                                                    point.config_hash)
        table, why = _stored(self.path(run_id), run_id, want)
        if why:  # a damaged file or another run's is recomputed
            self.mismatches[self.path(run_id)] = why
        ok = table is not None and len(table) > 0 and "status" in table
        return table if ok and table.status.iloc[0] != "failed" else None

    def done(self, point: Point | str) -> bool:
        """True when the point is a cache hit (see [`cached`][])."""
        return self.cached(point) is not None

    def write(self, point: Point, table: pd.DataFrame) -> None:
        """The point's file, atomically, with its run id and config hash as metadata."""
        if not (self.root / MARKER).is_file():  # a point cache's first point (a sweep marks first)
            claim_folder(self.root, "cache")
        meta = {RUN_ID_KEY: point.run_id.encode(), CONFIG_HASH_KEY: point.config_hash.encode()}
        atomic_io.atomic_write_bytes(self.path(point.run_id), _to_parquet_bytes(table, meta))

    # -- one writer at a time ------------------------------------------------------------------
    @property
    def lock_path(self) -> Path:
        return self.root / "sweep.lock"

    @contextlib.contextmanager
    def lock(self, say=print, kind: str = "sweep", force: bool = False):
        """Hold the store's kernel lock (``flock`` on ``sweep.lock``) for the block, or raise
        ``ValueError("out: ...")`` naming the process that holds it (pid, host, start time,
        command). A lock dies with its process, so there is no stale lock to take over. The
        holder first checks the folder is a store (its marker: ``kind``), then removes the
        temporaries that killed writes left. ``force``: claim a folder theorylab did not
        write ([`claim_folder`][theorylab.core.folders.claim_folder])."""
        claim_folder(self.root, kind, force=force)
        with folder_lock(self.lock_path, what="sweep"):
            if self.points_dir.is_dir():
                atomic_io.remove_stale_temporaries(self.points_dir,
                                                   lambda n: n.endswith(".parquet"))
            atomic_io.remove_stale_temporaries(self.root, ("sweep.json", "results.parquet"))
            yield

    # -- spec identity ---------------------------------------------------------------------------
    @property
    def manifest(self) -> Path:
        return self.root / "sweep.json"

    def read_manifest(self) -> dict | None:
        """``sweep.json`` (None when absent); ``ValueError("out: ...")`` naming it when it is not
        a sweep manifest."""
        return _read_manifest(self.manifest)

    def check_spec(self, fingerprint: str, spec_text: str, new_store: bool, *,
                   base_hash: str = "", run_ids: Sequence[str] = (), say=print) -> None:
        """Refuse a store made by another spec (unless ``new_store``: then its points and table
        are removed). A spec with the same ``base_hash`` whose ``run_ids`` include every point
        of the store's spec extends the store (its points stay cache hits)."""
        old = None if new_store else self.read_manifest()
        if old is not None and old.get("fingerprint") != fingerprint:
            olds = old.get("run_ids")
            extends = (base_hash and old.get("base_hash") == base_hash
                       and isinstance(olds, list) and set(olds) <= set(run_ids))
            if not extends:
                raise ValueError(
                    f"out: the store {self.root} holds another sweep (spec "
                    f"{old.get('source') or '?'}, {old.get('n_points')} points); its points would "
                    f"not match this spec's. Use another --out, or --new-store to discard it "
                    f"(a spec with the same base that only adds points extends the store)")
            say(f"sweep: this spec extends the store {self.root}: its {len(olds)} points "
                f"are kept, {len(set(run_ids)) - len(set(olds))} added")
        if new_store:  # only the store's own point files: a file without its run id stays
            for p in (self.points_dir.glob("*.parquet") if self.points_dir.is_dir() else []):
                if _own_point_file(p):
                    p.unlink()
            results = self.root / "results.parquet"
            if results.is_file() and _own_table(results):
                results.unlink()

    def write_manifest(self, info: dict) -> None:
        atomic_io.write_json(self.manifest, info)

    # -- the table ---------------------------------------------------------------------------
    def consolidate(self, points: Sequence[Point],
                    known: Mapping[str, pd.DataFrame] | None = None) -> pd.DataFrame:
        """The table of ``points`` (spec order): ``point``, ``run_id``, the axes, then the
        stored columns; a point not computed yet is one row with status ``pending``.
        ``known``: tables already in memory (run_id → table), not read again."""
        known = known or {}
        parts = [label(known[p.run_id] if known.get(p.run_id) is not None
                       else _read_point(self.points_dir, p.run_id), i, p)
                 for i, p in enumerate(points)]
        table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
        if self.manifest.is_file():
            atomic_io.atomic_write_bytes(self.root / "results.parquet",
                                         _to_parquet_bytes(table))
        return table


def label(table: pd.DataFrame, index: int, point: Point) -> pd.DataFrame:
    """``table`` with ``point``, ``run_id`` and the point's axis values as first columns."""
    return _with_head(table, {"point": index, "run_id": point.run_id, **point.labels})


def _with_head(table: pd.DataFrame, head: Mapping) -> pd.DataFrame:
    rest = table.drop(columns=[c for c in head if c in table.columns])
    front = pd.DataFrame({k: [v] * len(rest) for k, v in head.items()}, index=rest.index)
    return pd.concat([front, rest], axis=1)


def check_sweep_table(table: pd.DataFrame, folder: str | Path) -> pd.DataFrame:
    """`table` when it has the [`SWEEP_COLUMNS`][], else ``ValueError("sweep: ...")`` naming
    the store's ``results.parquet``."""
    missing = [c for c in SWEEP_COLUMNS if c not in table.columns]
    if missing:
        raise ValueError(f"sweep: {Path(folder) / 'results.parquet'} is not a sweep table (no "
                         f"column {', '.join(map(repr, missing))})")
    return table


def load_sweep(folder: str | Path) -> pd.DataFrame:
    """The consolidated table of a sweep store, checked against its point files
    (``ValueError("out: ...")`` when ``folder`` holds none).

    ``results.parquet`` is returned as it is when every point it lists has its file, none
    changed after it was written; otherwise the table is rebuilt from the point files (a point
    whose file is missing or is not its run's is ``pending``)."""
    path = Path(folder) / "results.parquet"
    if not path.is_file():
        raise ValueError(f"out: {folder} holds no sweep table (results.parquet); run "
                         f"python -m theorylab sweep SPEC --out {folder} first")
    manifest = _read_manifest(Path(folder) / "sweep.json") or {}
    table = pd.read_parquet(path)
    if len(table) == 0 or "run_id" not in table or "point" not in table:
        return table
    points_dir = Path(folder) / "points"
    written = path.stat().st_mtime_ns
    files = {}
    if points_dir.is_dir():
        with os.scandir(points_dir) as it:
            for e in it:
                if e.name.endswith(".parquet"):
                    st = e.stat()
                    files[e.name[:-len(".parquet")]] = max(st.st_mtime_ns, st.st_ctime_ns)
    heads = table.drop_duplicates("point")
    stored = heads.status != "pending"
    fresh = all(files.get(r, written + 1) <= written for r in heads.run_id[stored])
    fresh = fresh and not any(r in files for r in heads.run_id[~stored])
    if fresh:
        return table
    labels = manifest.get("labels")
    if not isinstance(labels, list):  # a store of an older manifest: the axis-named columns
        labels = [c for c in table.columns if "." in c]
    parts = [_with_head(_read_point(points_dir, h.run_id), {"point": h.point, "run_id": h.run_id,
                                                            **{c: h[c] for c in labels if c in h}})
             for _, h in heads.iterrows()]
    return pd.concat(parts, ignore_index=True)
