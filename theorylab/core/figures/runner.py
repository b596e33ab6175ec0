"""Render registered figures and keep `<out>/manifest.json` up to date."""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from theorylab.core.atomic_io import atomic_write_text
from theorylab.core.cost import cpu_seconds
from theorylab.core.faults import check_stop
from theorylab.core.figures.registry import (
    FigureContext,
    FigureResult,
    figure_theme,
    get_figure,
    list_figures,
    resolve_id,
    save_figure,
    stderr_is_tty,
)
from theorylab.core.folders import claim_folder
from theorylab.core.missing import MissingDataError
from theorylab.core.provenance import default_out, provenance

__all__ = ["MANIFEST_NAME", "read_manifest", "run_figures"]

MANIFEST_NAME = "manifest.json"
MANIFEST_KEYS = (
    "paper",
    "paper_figure",
    "title",
    "caption",
    "data_source",
    "settings",
    "headline",
    "device",
    "runtime_s",
    "cpu_s",
    "version",
    "quick",
    "seed",
    "files",
    "run",
    "commit",
    "date",
)
"""Keys of every manifest entry (`manifest["figures"][id]`): ``runtime_s`` is the figure's wall
time, ``cpu_s`` the CPU time of this process (and of its children that ended) while it was
made (what ``theorylab figures`` estimates the next run from)."""


def _jsonable(x: Any) -> Any:
    """Convert numpy / torch scalars, arrays, tuples and paths to plain JSON values."""
    if isinstance(x, dict):
        return {str(k): _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    if isinstance(x, Path):
        return str(x)
    if hasattr(x, "tolist"):  # numpy / torch scalar or array
        return _jsonable(x.tolist())
    if isinstance(x, float) and not math.isfinite(x):
        return None if math.isnan(x) else ("inf" if x > 0 else "-inf")
    if isinstance(x, (str, int, float, bool)) or x is None:
        return x
    return str(x)


def read_manifest(out: str | os.PathLike) -> dict:
    """The manifest under `out` (`{"figures": {}}` when absent); one-line
    ``ValueError("manifest: ...")`` when it cannot be read or is not a figure manifest."""
    path = Path(out) / MANIFEST_NAME
    if not path.exists():
        return {"figures": {}}
    try:
        with open(path, encoding="utf-8") as fh:
            manifest = json.load(fh)
    except (OSError, ValueError) as e:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        raise ValueError(f"manifest: {path} is not readable JSON ({type(e).__name__}: "
                         f"{' '.join(str(e).split())}); move it away to start a new one") from None
    if not isinstance(manifest, dict) or not isinstance(manifest.get("figures"), dict):
        raise ValueError(f"manifest: {path} is not a theorylab figure manifest (no 'figures' "
                         "mapping); move it away to start a new one")
    return manifest


def _write_manifest(out: Path, manifest: dict) -> None:
    text = json.dumps(manifest, indent=2, sort_keys=True, allow_nan=False) + "\n"
    atomic_write_text(out / MANIFEST_NAME, text)


def run_figures(
    ids: Sequence[str] | None = None,
    *,
    out: str | os.PathLike | None = None,
    quick: bool = False,
    device: str = "cpu",
    seed: int = 0,
    progress: bool | None = None,
) -> dict:
    """Render figures, save PDF + PNG, and merge their entries into `<out>/manifest.json`.

    **Arguments:**

    - `ids`: figure ids to render (default: all registered, sorted by id).
    - `out`: output folder (created if needed); default
      [`default_out`][theorylab.core.provenance.default_out]: the committed `figures` for a
      full run with seed 0 on the CPU, else a scratch folder under `runs/`.
    - `quick`: tiny settings for a fast smoke run.
    - `device`: `"cpu"` or `"cuda"` (torch device for the figures that train models).
    - `seed`: base seed passed to every figure.
    - `progress`: show tqdm bars (default: only when stderr is a TTY).

    **Returns:** the manifest (a dict, as written), plus ``"skipped"``: figure id → one-line
    reason for each figure whose data are not on this machine
    ([`MissingDataError`][theorylab.core.missing.MissingDataError]; not written, its entry is
    left as it was). Entries of figures not rendered in this call are kept from the existing
    manifest. The manifest is rewritten after each figure, so an interrupted run keeps the
    figures already done. Each entry records how it was made (``run``: full or quick,
    ``commit``, ``date``, ``version``; see [`theorylab.core.provenance`][]).
    """

    import matplotlib
    from tqdm.auto import tqdm

    if matplotlib.get_backend().lower() not in ("agg", "pdf", "svg", "cairo"):
        matplotlib.use("Agg")
    if isinstance(ids, str):
        raise ValueError(f"ids: must be a list of figure ids (got {ids!r})")
    known = {s.id for s in list_figures()}
    ids = [resolve_id(i) for i in ids] if ids else ids
    unknown = [i for i in ids or [] if i not in known]
    if unknown:
        raise ValueError(f"ids: unknown figure id (got {', '.join(map(repr, unknown))}); known "
                         f"ids: {', '.join(sorted(known)) or '(none)'}")
    specs = [get_figure(i) for i in ids] if ids else list_figures()
    if progress is None:
        progress = stderr_is_tty()
    if out is None:
        out = default_out("figures", quick=quick, custom=seed != 0 or device != "cpu")
    out = Path(out)
    read_manifest(out)  # a damaged manifest is refused before anything is rendered
    claim_folder(out, "figures")  # never a run folder, a store or results; marks a new one
    ctx = FigureContext(out=out, quick=quick, device=device, seed=seed, progress=progress)
    made = provenance(quick)
    manifest = read_manifest(out)
    skipped: dict[str, str] = {}
    bar = tqdm(specs, desc="figures", unit="fig", disable=not progress)
    for spec in bar:
        check_stop()
        bar.set_postfix_str(spec.id)
        t0, c0 = time.perf_counter(), cpu_seconds()
        with figure_theme():
            try:
                result = spec.func(ctx)
            except MissingDataError as err:
                skipped[spec.id] = err.reason
                continue
            if not isinstance(result, FigureResult):
                raise TypeError(f"figure {spec.id} returned {type(result).__name__}, "
                                "expected FigureResult")
            files = save_figure(result.figure, out, spec.id)
            for name, fig in result.extra.items():
                files += save_figure(fig, out, f"{spec.id}-{name}")
        runtime, cpu = time.perf_counter() - t0, cpu_seconds() - c0
        manifest = read_manifest(out)  # re-read: merge with anything written meanwhile
        manifest["figures"][spec.id] = _jsonable({
            **{k: getattr(spec, k) for k in ("paper", "paper_figure", "title", "caption")},
            "reading": list(result.reading),
            "data_source": result.data_source or spec.data_source,
            "settings": result.settings,
            "headline": result.headline,
            "device": device,
            "runtime_s": round(runtime, 2),
            "cpu_s": round(cpu, 2),
            "quick": quick,
            "seed": seed,
            "files": sorted(p.name for p in files),
            **made,  # how it was made: run, commit, date and version
        })
        _write_manifest(out, manifest)
    return {**manifest, "skipped": skipped}
