"""Tables as xarray datasets and netCDF files (the scipy engine: netCDF-3, no binary library
beyond scipy).

[`runs_dataset`][] turns one or more run trajectories into one dataset with dimensions
``(run, step)`` (one run: ``step`` alone), a ``time`` coordinate where a clock is given (the
gradient flow's t = η·step), every numeric column a variable, every text column constant
within a run (the engine's name) and the columns given as ``labels`` (a sweep's axes and phase
readings) a coordinate along ``run``; [`write_netcdf`][] writes it atomically. Attributes
must be netCDF attributes (strings and numbers): nested values are written as JSON text,
booleans as integers.

netCDF-3 has neither 64-bit integers nor booleans: integer variables are written as 32-bit
(steps ≤ 10⁹ fit), booleans as 0/1 (``xarray`` reads them back as booleans where it wrote
them alone, as 0/1 floats where a run is missing rows of another).
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .folders import write_output

__all__ = ["RESERVED", "netcdf_attrs", "runs_dataset", "write_netcdf"]

#: Names scipy's netCDF writer keeps for itself (a global attribute of one of these names would
#: overwrite the writer's own state): such attributes get a ``theorylab_`` prefix.
RESERVED = ("dimensions", "filename", "fp", "maskandscale", "mode", "use_mmap", "variables",
            "version_byte")


def netcdf_attrs(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """`attrs` as netCDF attributes: strings and finite or non-finite numbers as they are,
    booleans as 0/1, ``None`` as "", anything else as JSON text; a name of [`RESERVED`][]
    gets the prefix ``theorylab_``."""
    out = {}
    for key, value in attrs.items():
        key = f"theorylab_{key}" if key in RESERVED else key
        if isinstance(value, bool):
            out[key] = int(value)
        elif value is None:
            out[key] = ""
        elif isinstance(value, (str, int, float, np.integer, np.floating)):
            out[key] = value
        else:
            out[key] = json.dumps(value, default=str, sort_keys=True)
    return out


def _constant_within(frame: pd.DataFrame, by: str, column: str) -> bool:
    return bool((frame.groupby(by, sort=False)[column].nunique(dropna=False) <= 1).all())


def runs_dataset(tables: Mapping[Any, pd.DataFrame], *, attrs: Mapping[str, Any] | None = None,
                 clocks: Mapping[Any, float] | None = None, run_attrs: Mapping[Any, Mapping]
                 | None = None, labels: Sequence[str] = (), dim: str = "run"):
    """One ``xarray.Dataset`` of several runs' trajectory tables.

    **Arguments:**

    - `tables`: run label → its table (a column ``step``; one row per recorded step). One
      table whose label is ``None`` gives a dataset over ``step`` alone.
    - `attrs`: the dataset's attributes (config, provenance; see [`netcdf_attrs`][]).
    - `clocks`: run label → η: a coordinate ``time`` = η·step (per run when they differ).
    - `run_attrs`: run label → {name: value}: coordinates along `dim` (a run's mode, its
      folder, its phase readings).
    - `labels`: columns constant within each run that label it (a sweep's axes, its phase
      readings): coordinates along `dim`; text columns constant within each run are too.
    - `dim`: the name of the runs' dimension.
    """
    import xarray as xr

    clocks = dict(clocks or {})
    run_attrs = {k: dict(v) for k, v in (run_attrs or {}).items()}
    single = list(tables) == [None]
    parts = []
    for label, table in tables.items():
        t = table.reset_index(drop=True).copy()
        if "step" not in t.columns:
            raise ValueError(f"table: no column 'step' (got {list(t.columns)[:8]})")
        if not single:
            t.insert(0, dim, str(label))
        parts.append(t)
    frame = pd.concat(parts, ignore_index=True)
    index = ["step"] if single else [dim, "step"]
    if frame.duplicated(index).any():
        raise ValueError(f"table: rows repeat a {' and '.join(index)} (one row per recorded "
                         "step of each run)")
    coords: dict[str, Any] = {}
    if not single:
        full = len(frame) == frame[dim].nunique() * frame["step"].nunique()
        for c in list(frame.columns):
            if c in index:
                continue
            if frame[c].dtype == bool and not full:
                frame[c] = frame[c].astype(np.float64)
            text = not pd.api.types.is_numeric_dtype(frame[c])
            if (c in labels or text) and _constant_within(frame, dim, c):
                coords[c] = frame.groupby(dim, sort=False)[c].first()
                frame = frame.drop(columns=c)
    else:
        for c in list(frame.columns):
            if c != "step" and not pd.api.types.is_numeric_dtype(frame[c]) \
                    and frame[c].nunique(dropna=False) <= 1:
                coords[c] = frame[c].iloc[0]
                frame = frame.drop(columns=c)
    for c in list(frame.columns):  # strings that change along a run: text variables
        if c not in index and (frame[c].dtype == object or str(frame[c].dtype) == "string"):
            frame[c] = frame[c].astype(str)
    ds = xr.Dataset.from_dataframe(frame.set_index(index))
    for name, value in coords.items():
        if single:
            ds.attrs[name] = value if isinstance(value, (str, int, float)) else str(value)
        else:
            values = value.reindex(ds[dim].values)
            if values.dtype == object:
                values = values.astype(str)
            ds = ds.assign_coords({name: (dim, values.to_numpy())})
    for label, extra in run_attrs.items():
        for name, value in extra.items():
            if single:
                ds.attrs[name] = value
                continue
            if name not in ds.coords:
                kind = str if isinstance(value, str) else float
                fill = "" if kind is str else math.nan
                ds = ds.assign_coords({name: (dim, np.full(ds.sizes[dim], fill, dtype=object
                                                           if kind is str else np.float64))})
            at = list(ds[dim].values).index(str(label))
            ds[name].values[at] = value if isinstance(value, str) else float(value)
    if clocks:
        etas = {str(k): float(v) for k, v in clocks.items()}
        if len(set(etas.values())) == 1:  # one clock (one run, or runs alike)
            ds = ds.assign_coords(time=("step", ds.step.values * next(iter(etas.values()))))
        else:
            eta = np.array([etas.get(str(r), math.nan) for r in ds[dim].values])
            ds = ds.assign_coords(time=((dim, "step"), eta[:, None] * ds.step.values[None, :]))
        ds["time"].attrs["meaning"] = "continuous time t = eta * step (the gradient flow's clock)"
    ds.attrs = netcdf_attrs({**ds.attrs, **(attrs or {})})
    for name in list(ds.coords):
        if ds[name].dtype == object:
            ds[name] = ds[name].astype(str)
    return ds


#: The global attribute that marks a netCDF file this module wrote (an existing file without
#: it is never replaced without ``force``).
WRITTEN_BY = ("written_by", "theorylab export")
#: The command named as the writer of a netCDF file.
WRITER = "theorylab export"


def written_by_export(path: str | Path) -> bool:
    """Whether `path` is a netCDF-3 file that [`write_netcdf`][] wrote: its header's global
    attribute ``written_by`` is exactly [`WRITTEN_BY`][] (the header is parsed; a file that
    merely mentions the text elsewhere is not ours)."""
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 20)
    except OSError:
        return False
    try:
        return _global_attrs(head).get(WRITTEN_BY[0]) == WRITTEN_BY[1]
    except (ValueError, IndexError, UnicodeDecodeError):
        return False


#: netCDF-3 header tags and the sizes of its value types (the classic format's spec).
_NC_DIMENSION, _NC_ATTRIBUTE, _NC_CHAR = 0x0A, 0x0C, 2
_NC_SIZES = {1: 1, 2: 1, 3: 2, 4: 4, 5: 4, 6: 8}


def _global_attrs(head: bytes) -> dict[str, object]:
    """The text global attributes of a netCDF-3 header (``ValueError`` for anything else)."""
    if head[:3] != b"CDF" or head[3:4] not in (b"\x01", b"\x02"):
        raise ValueError("not netCDF-3")
    pos = 8  # magic, numrecs

    def u32() -> int:
        nonlocal pos
        if pos + 4 > len(head):
            raise ValueError("header beyond the bytes read")
        value = int.from_bytes(head[pos:pos + 4], "big")
        pos += 4
        return value

    def padded(n: int) -> bytes:  # n bytes, then padding to a multiple of 4
        nonlocal pos
        text = head[pos:pos + n]
        pos += (n + 3) // 4 * 4
        return text
    tag, count = u32(), u32()
    if tag not in (0, _NC_DIMENSION) or count > 10_000:
        raise ValueError("bad dimension list")
    for _ in range(count):  # a dimension: its name and length
        padded(u32())
        u32()
    tag, count = u32(), u32()
    if tag not in (0, _NC_ATTRIBUTE) or count > 10_000:
        raise ValueError("bad attribute list")
    out: dict[str, object] = {}
    for _ in range(count):
        key = padded(u32()).decode("utf-8")
        kind, n = u32(), u32()
        if kind not in _NC_SIZES:
            raise ValueError("bad attribute type")
        value = padded(n * _NC_SIZES[kind])
        if kind == _NC_CHAR:
            out[key] = value.decode("utf-8")
    return out


def write_netcdf(ds, path: str | Path, *, force: bool = False) -> Path:
    """Write `ds` to `path` as netCDF-3 (scipy engine), atomically (a reader never sees a
    half-written file). An existing file is replaced only when this function wrote it
    ([`written_by_export`][]) or with `force`; the committed folders (figures/,
    docs/results/, docs/performance/) are refused by any spelling. Returns the path."""
    path = check_netcdf_out(path, force=force)
    ds = ds.copy()
    ds.attrs = {WRITTEN_BY[0]: WRITTEN_BY[1], **ds.attrs}
    data = ds.to_netcdf(None, engine="scipy")
    write_output(path, bytes(data), command=WRITER, mark=False)  # marked by its attribute
    return path


def check_netcdf_out(path: str | Path, *, force: bool = False, field: str = "out") -> Path:
    """`path` as a netCDF file [`write_netcdf`][] may write (the output gate,
    [`theorylab.core.folders.check_output_file`][]); ``ValueError("<field>: ...")``."""
    from .folders import check_output_file

    return check_output_file(path, ".nc", command=WRITER, ours=written_by_export, force=force,
                             field=field)
