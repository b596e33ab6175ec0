"""The sweep store: one Parquet file per point, written atomically, plus one consolidated table.

Layout of a store folder ``DIR``::

    DIR/sweep.json            the spec's fingerprint (its points' run ids) and the spec itself
    DIR/points/<run_id>.parquet   one point: its kept rows, status, message and provenance
    DIR/results.parquet       the consolidated table (axes as columns), rebuilt after each run

A point file exists only once its point is finished (ok, diverged or failed); a killed sweep
leaves at most a temporary file, removed when the store is opened again. A folder used as a
shared point cache (``--cache DIR`` of the checks and figures) has only ``points/``.
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from theorylab.core import atomic_io
from theorylab.core.trainer import check_out_folder

from .spec import Point

__all__ = ["META_COLUMNS", "PROVENANCE_COLUMNS", "Store", "STATUSES", "load_sweep"]

#: status of a point: ok, diverged (the rows before the divergence are kept), failed (an
#: exception; ``message`` holds it; recomputed on the next run), pending (not computed yet).
STATUSES = ("ok", "diverged", "failed", "pending")
#: provenance written with every point.
PROVENANCE_COLUMNS = ("runtime_s", "host", "device", "dtype", "version", "git_rev")
META_COLUMNS = ("status", "message", *PROVENANCE_COLUMNS)


def _to_parquet_bytes(df: pd.DataFrame) -> bytes:
    buf = io.BytesIO()
    df.to_parquet(buf, index=False, engine="pyarrow")
    return buf.getvalue()


class Store:
    """A store folder (created on first write). ``ValueError("out: ...")`` for an unusable
    path."""

    def __init__(self, folder: str | Path) -> None:
        self.root = check_out_folder(folder)
        self.points_dir = self.root / "points"
        if self.points_dir.is_dir():
            atomic_io.remove_stale_temporaries(self.points_dir)

    # -- points ------------------------------------------------------------------------------
    def path(self, run_id: str) -> Path:
        return self.points_dir / f"{run_id}.parquet"

    def cached(self, run_id: str) -> pd.DataFrame | None:
        """The stored table of the point when its status is not ``failed`` (a cache hit), else
        None (not stored, failed, or a damaged file: recomputed)."""
        p = self.path(run_id)
        if not p.is_file():
            return None
        try:
            table = pd.read_parquet(p)
        except Exception:  # a damaged file is recomputed
            return None
        ok = len(table) > 0 and "status" in table and table.status.iloc[0] != "failed"
        return table if ok else None

    def done(self, run_id: str) -> bool:
        """True when the point is a cache hit (see [`cached`][])."""
        return self.cached(run_id) is not None

    def read(self, run_id: str) -> pd.DataFrame | None:
        p = self.path(run_id)
        return pd.read_parquet(p) if p.is_file() else None

    def write(self, run_id: str, table: pd.DataFrame) -> None:
        atomic_io.atomic_write_bytes(self.path(run_id), _to_parquet_bytes(table))

    # -- spec identity ---------------------------------------------------------------------------
    @property
    def manifest(self) -> Path:
        return self.root / "sweep.json"

    def check_spec(self, fingerprint: str, spec_text: str, new_store: bool) -> None:
        """Refuse a store made by another spec (unless ``new_store``: then its points and table
        are removed); record this spec otherwise."""
        if self.manifest.is_file() and not new_store:
            old = json.loads(self.manifest.read_text())
            if old.get("fingerprint") != fingerprint:
                raise ValueError(
                    f"out: the store {self.root} holds another sweep (spec "
                    f"{old.get('source') or '?'}, {old.get('n_points')} points); its points would "
                    f"not match this spec's. Use another --out, or --new-store to discard it")
        if new_store:
            for p in (self.points_dir.glob("*.parquet") if self.points_dir.is_dir() else []):
                p.unlink()
            (self.root / "results.parquet").unlink(missing_ok=True)

    def write_manifest(self, info: dict) -> None:
        atomic_io.write_json(self.manifest, info)

    # -- the table ---------------------------------------------------------------------------
    def consolidate(self, points: Sequence[Point],
                    known: Mapping[str, pd.DataFrame] | None = None) -> pd.DataFrame:
        """The table of ``points`` (spec order): ``point``, ``run_id``, the axes, then the
        stored columns; a point not computed yet is one row with status ``pending``.
        ``known``: tables already in memory (run_id → table), not read again."""
        parts = []
        for i, p in enumerate(points):
            t = (known or {}).get(p.run_id)
            t = self.read(p.run_id) if t is None else t
            if t is None:
                t = pd.DataFrame({"status": ["pending"], "message": [""]})
            parts.append(label(t, i, p))
        table = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame()
        if self.manifest.is_file():
            atomic_io.atomic_write_bytes(self.root / "results.parquet",
                                         _to_parquet_bytes(table))
        return table


def label(table: pd.DataFrame, index: int, point: Point) -> pd.DataFrame:
    """``table`` with ``point``, ``run_id`` and the point's axis values as first columns."""
    head = {"point": index, "run_id": point.run_id, **point.labels}
    rest = table.drop(columns=[c for c in head if c in table.columns])
    front = pd.DataFrame({k: [v] * len(rest) for k, v in head.items()}, index=rest.index)
    return pd.concat([front, rest], axis=1)


def load_sweep(folder: str | Path) -> pd.DataFrame:
    """The consolidated table of a sweep store (``ValueError("out: ...")`` when ``folder`` holds
    none)."""
    path = Path(folder) / "results.parquet"
    if not path.is_file():
        raise ValueError(f"out: {folder} holds no sweep table (results.parquet); run "
                         f"python -m theorylab.sweep SPEC --out {folder} first")
    return pd.read_parquet(path)
