"""Sweeps: grids of runs of any paper's configs on Dask, cached, resumable, one tidy table.

- [`spec`][theorylab.core.sweep.spec]: the TOML spec (base config, axes, seeds, zip/product,
  what to keep) and the points it expands to, each with a deterministic ``run_id`` (a hash of
  its resolved config, what is kept and [`RESULT_SCHEMA_VERSION`][]);
- [`store`][theorylab.core.sweep.store]: one Parquet file per point, written atomically, and
  the consolidated table;
- [`runner`][theorylab.core.sweep.runner]: in-process or Dask execution with single-threaded
  workers, cache hits skipped, failed points recorded.

[`run_sweep_spec`][] is the whole sweep (``python -m theorylab sweep`` and
``theorylab.sweep(...)``); [`run_points`][] is what the figures and claim checks call.
"""

from __future__ import annotations

import contextlib
import json
import time
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from .. import livelog
from ..cost import LONG_RUN_S
from ..folders import claim_folder
from .cost import SweepEstimate, estimate_points
from .runner import (
    WORKER_TIMEOUT_S,
    SweepInterrupted,
    SweepStoppedError,
    active_cache,
    compute_point,
    execute,
    open_client,
    run_points,
    usable_cores,
    use_executor,
)
from .spec import (
    RESULT_SCHEMA_VERSION,
    Point,
    SweepSpec,
    call_point,
    load_spec,
    run_point,
    spec_from_dict,
)
from .store import PROVENANCE_COLUMNS, Store, load_sweep

__all__ = ["PROVENANCE_COLUMNS", "RESULT_SCHEMA_VERSION", "WORKER_TIMEOUT_S", "Point", "Store",
           "SweepEstimate", "SweepInterrupted", "SweepSpec", "SweepStoppedError", "active_cache",
           "call_point", "compute_point", "estimate_points", "execute", "load_spec",
           "load_sweep", "open_client", "parse_shard", "run_point", "run_points",
           "run_sweep_spec", "spec_from_dict", "usable_cores", "use_executor"]


def parse_shard(text: str | None) -> tuple[int, int] | None:
    """``"i/n"`` (1 <= i <= n) → (i, n); ``ValueError("shard: ...")`` otherwise."""
    if text is None:
        return None
    try:
        i, n = (int(x) for x in str(text).split("/"))
    except ValueError:
        raise ValueError(f"shard: must be i/n with integers, e.g. 1/4 (got {text!r})") from None
    if not 1 <= i <= n:
        raise ValueError(f"shard: needs 1 <= i <= n (got {text!r})")
    return i, n


def run_sweep_spec(spec: SweepSpec | str | Path | dict, out: str | Path, *,
                   scheduler: str | None = None, workers: int | None = None, client=None,
                   shard: str | tuple[int, int] | None = None, dry_run: bool = False,
                   new_store: bool = False, force: bool = False, threads: int = 1,
                   progress: bool | None = None,
                   slurm: int = 0, slurm_memory: str = "4GB", oversubscribe: bool = False,
                   worker_timeout: float | None = None, verbose: bool = False,
                   sets: Sequence[str] | None = None, tensorboard: str | Path | None = None,
                   say: Callable[[str], None] = print) -> pd.DataFrame:
    """Run a sweep into the store ``out`` and return its consolidated table.

    **Arguments:** `spec` (a [`SweepSpec`][], a spec file or its tables; `sets`:
    ``SECTION.KEY=VALUE`` items set in a file's or tables' base config); `out` the store
    folder; where to run: `client` (a ``dask.distributed.Client``), else `scheduler` (an
    address), else `workers` (``None``: a ``LocalCluster`` with one single-threaded worker per
    usable core, and no more unless `oversubscribe`; ``0``: this process, no Dask); `shard`
    ``"i/n"``: only the points with index ≡ i − 1 (mod n); `dry_run`: list the points and how
    many are cached, compute nothing (returns the table of the points with ``cached``);
    `new_store`: discard a store made by another spec (refused otherwise; a spec with the same
    base that only adds points extends it; only its own point files are removed); `force`:
    write into a folder theorylab did not write (refused otherwise unless it is empty);
    `threads`: torch/BLAS threads per point; `slurm`: run on that many SLURM jobs through
    dask-jobqueue (the optional extra ``cluster``), each with `slurm_memory`;
    `worker_timeout`: seconds to wait for a Dask worker (see [`open_client`][]); `verbose`:
    Dask's own log lines too; `tensorboard`: a folder where each point computed now logs its
    recorded rows in TensorBoard's event format, one subfolder per point
    ([`runner.live_log_folder`][theorylab.core.sweep.runner.live_log_folder]; points of type
    ``run`` only; a folder theorylab did not write only with `force`).

    One sweep writes a store at a time (``sweep.lock``, a kernel lock); [`SweepInterrupted`][]
    when interrupted, [`SweepStoppedError`][] when every worker is gone (the finished points are
    stored and in ``results.parquet``).
    """
    if isinstance(spec, (str, Path)):
        spec = load_spec(spec, sets)
    elif isinstance(spec, dict):
        spec = spec_from_dict(spec, sets=sets)
    elif sets:
        raise ValueError("--set: a spec given as a SweepSpec is set in its base config already")
    shard = parse_shard(shard) if isinstance(shard, (str, type(None))) else shard
    if tensorboard is not None:
        if spec.point != "run":
            raise ValueError(f"tensorboard: a live log follows runs of the kernel's loop, one "
                             f"per point; a sweep of point type {spec.point!r} has none (use "
                             f"point = 'run')")
        livelog.writer_class()
        livelog.check_apart(tensorboard, out, "the store")
        livelog.check_folder(tensorboard, force=force)
    store = Store(out, readonly=dry_run)
    head = (f"{spec.n_points()} points ({spec.mode} of "
            f"{', '.join(spec.axis_names()) or 'no axes'}; point type {spec.point})")
    if dry_run:
        say(head)
    points = spec.points()
    index = range(len(points)) if shard is None else range(shard[0] - 1, len(points), shard[1])
    chosen = [points[i] for i in index]
    if dry_run:
        present = {f.stem for f in store.points_dir.glob("*.parquet")}  # none: no folder
        table = pd.DataFrame({"point": list(index), "run_id": [p.run_id for p in chosen]})
        for name in spec.axis_names():
            table[name] = [p.labels.get(name) for p in chosen]
        table["cached"] = table.run_id.isin(present)
        say(f"{len(chosen)} in this shard, {int(table.cached.sum())} with a point file "
            f"(checked when the sweep runs)")
        todo = [p for p, hit in zip(chosen, table.cached) if not hit]
        for line in estimate_points(todo).lines(_workers(workers, scheduler, slurm)):
            say(line)
        return table
    with store.lock(say=say, force=force):
        fingerprint = spec.fingerprint()
        run_ids = [p.run_id for p in points]
        store.check_spec(fingerprint, "", new_store, base_hash=spec.base_hash(), run_ids=run_ids,
                         say=say)
        store.write_manifest({"fingerprint": fingerprint, "base_hash": spec.base_hash(),
                              "source": spec.source, "n_points": len(points), "paper": spec.paper,
                              "mode": spec.mode, "axes": spec.axes, "seeds": spec.seeds,
                              "keep": spec.keep, "point": spec.point, "base": spec.base,
                              "labels": spec.axis_names(), "run_ids": run_ids,
                              "schema": RESULT_SCHEMA_VERSION})
        if tensorboard is not None:
            claim_folder(tensorboard, livelog.KIND, field="tensorboard", force=force)
        todo = [p for p in chosen if not store.done(p)]
        if todo:
            est = estimate_points(todo)
            if est.seconds > LONG_RUN_S:
                for line in est.lines(_workers(workers, scheduler, slurm)):
                    say(line)
        t0 = time.perf_counter()
        if all(store.done(p) for p in chosen):
            client, scheduler, workers, slurm = None, None, 0, 0  # all cached: no cluster to start
        opened = (contextlib.nullcontext(client)
                  if client is not None or workers == 0 and scheduler is None and not slurm
                  else open_client(scheduler, workers, slurm=slurm, slurm_memory=slurm_memory,
                                   say=say, oversubscribe=oversubscribe,
                                   worker_timeout=worker_timeout, verbose=verbose))
        try:
            with opened as c:
                res = execute(chosen, store, client=c, threads=threads, progress=progress,
                              say=say, worker_timeout=worker_timeout, live=tensorboard)
        except (SweepStoppedError, SweepInterrupted) as e:
            store.consolidate(points, e.results)
            raise
        table = store.consolidate(points, res)
        status = pd.Series([res[p.run_id].status.iloc[0] for p in chosen], dtype=object)
        say(f"sweep: {len(chosen)} points in {time.perf_counter() - t0:.1f} s "
            f"({json.dumps(status.value_counts().to_dict())}); table: "
            f"{store.root / 'results.parquet'}")
        return table



def _workers(workers: int | None, scheduler: str | None, slurm: int) -> int:
    """The workers a sweep's estimate divides by (1 where unknown: a scheduler's)."""
    if slurm:
        return slurm
    if scheduler is not None or workers == 0:
        return 1
    return workers if workers is not None else usable_cores()
