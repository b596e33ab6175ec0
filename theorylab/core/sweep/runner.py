"""Running the points of a sweep: in this process one by one, or on Dask (a ``LocalCluster`` of
single-threaded worker processes, or any running scheduler by address).

[`compute_point`][] is the task a worker runs: it pins torch and the BLAS pools to ``threads``
threads (``theorylab.core.threads.limit_threads``, 1 by default, so N workers do not
oversubscribe N cores), runs the point, and returns its table with status, message and
provenance; an exception never escapes it (a failed point is a row with status ``failed``).
The client writes each point to the store as it arrives, so a killed sweep keeps every finished
point and a rerun computes only the others.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import logging
import os
import socket
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Sequence
from pathlib import Path

import pandas as pd

from theorylab.core.faults import check_stop
from theorylab.core.threads import usable_cores

from .spec import Point, get_paper
from .store import Store

__all__ = ["SweepInterrupted", "SweepStoppedError", "WORKER_TIMEOUT_S", "active_cache",
           "compute_point", "execute", "open_client", "run_points", "slurm_cluster", "usable_cores",
           "use_executor"]

#: How long a sweep waits for a first Dask worker, and for a worker to come back once all
#: are gone, before it stops with an error (``--worker-timeout``; 0 waits forever). A SLURM
#: cluster waits for its jobs to leave the queue: [`SLURM_WORKER_TIMEOUT_S`][].
WORKER_TIMEOUT_S = 120.0
SLURM_WORKER_TIMEOUT_S = 3600.0


class SweepStoppedError(Exception):
    """The sweep stopped before all its points were done: every Dask worker gone for longer
    than the worker timeout (``interrupted`` False), or, as its subclass
    [`SweepInterrupted`][], SIGINT or SIGTERM. ``unfinished``: the points not computed;
    ``results``: run_id → table of those that were."""

    def __init__(self, message: str, unfinished, results, interrupted: bool) -> None:
        super().__init__(message)
        self.unfinished = list(unfinished)
        self.results = dict(results)
        self.interrupted = interrupted


class SweepInterrupted(KeyboardInterrupt):
    """A sweep stopped by SIGINT or SIGTERM: a ``KeyboardInterrupt`` (so that no
    ``except Exception`` of a caller swallows it: the whole command stops) with the attributes
    of [`SweepStoppedError`][] (``unfinished``, ``results``, ``interrupted = True``)."""

    def __init__(self, message: str, unfinished, results, interrupted: bool = True) -> None:
        super().__init__(message)
        self.unfinished = list(unfinished)
        self.results = dict(results)
        self.interrupted = True


def quiet_dask_logs(verbose: bool = False) -> None:
    """Dask's own log lines (scheduler and worker start/stop, ``killed by signal``) at
    ERROR, or INFO with ``verbose``; set in the environment too, so worker processes
    inherit it."""
    level = "info" if verbose else "error"
    os.environ["DASK_LOGGING__DISTRIBUTED"] = level
    import dask

    dask.config.set({"logging.distributed": level})
    for name in ("distributed", "dask_jobqueue"):
        logging.getLogger(name).setLevel(logging.INFO if verbose else logging.ERROR)

log = logging.getLogger("theorylab.sweep")
#: Seconds the client and the local cluster get to close (a stopped sweep never waits longer
#: for workers that do not answer).
CLOSE_TIMEOUT_S = 10


@functools.lru_cache(maxsize=1)
def git_revision() -> str:
    """``git rev-parse HEAD`` of the package's checkout ("" when it is not one)."""
    try:
        out = subprocess.run(["git", "rev-parse", "HEAD"], capture_output=True, text=True,
                             timeout=5, cwd=Path(__file__).resolve().parent)
        return out.stdout.strip() if out.returncode == 0 else ""
    except (OSError, subprocess.SubprocessError):
        return ""


def _keep(table: pd.DataFrame, keep, by: Sequence[str] = ()) -> pd.DataFrame:
    if keep == "trajectory" or len(table) == 0:
        return table
    if keep == "final":
        if by:
            return table.groupby(list(by), sort=False).tail(1).reset_index(drop=True)
        return table.iloc[[-1]].reset_index(drop=True)
    cols = [c for c in ("step", *by) if c in table.columns and c not in keep] + list(keep)
    return table[cols]


def _function(name: str) -> Callable:
    """The function ``"package.module:name"`` (imported here: a paper's code is reached by
    name, the kernel imports no paper)."""
    module, attr = name.split(":")
    return getattr(importlib.import_module(module), attr)


def with_readings(paper, cfg, trajectory: pd.DataFrame, kept: pd.DataFrame,
                  by: Sequence[str] = ()) -> tuple[pd.DataFrame, str]:
    """``kept`` with the paper's phase readings (``Paper.phase_readings``) of `trajectory` as
    columns (of each run of `trajectory` given by the columns `by`, on that run's rows), and
    "" or the error that stopped them (the rows are kept without readings then). A reading
    whose name is already a column of ``kept`` is not added."""
    hook = getattr(paper, "phase_readings", None)
    if hook is None or len(trajectory) == 0 or len(kept) == 0:
        return kept, ""
    kept, own = kept.copy(), set(kept.columns)
    try:
        if not by:
            for name, value in hook(trajectory, cfg).items():
                if name not in own:
                    kept[name] = value
            return kept, ""
        keys = list(by)
        rows = [{**dict(zip(keys, key if isinstance(key, tuple) else (key,))), **hook(g, cfg)}
                for key, g in trajectory.groupby(keys, sort=False)]
    except Exception as e:  # recorded beside the rows, never stops the point
        return kept, f"phase readings: {type(e).__name__}: {e}"
    readings = pd.DataFrame(rows)
    readings = readings[[c for c in readings.columns if c in keys or c not in own]]
    return kept.merge(readings, on=keys, how="left"), ""


def _run(point: Point) -> tuple[pd.DataFrame, str, str]:
    """The point's kept rows, its status and error text."""
    from theorylab.core.trainer import DivergenceError

    pl = point.payload
    if point.kind == "call":
        table = _function(pl["function"])(**pl["kwargs"])
        if not isinstance(table, pd.DataFrame):
            raise TypeError(f"{pl['function']} returned {type(table).__name__}, not a table")
        return table.reset_index(drop=True), "ok", ""
    paper = get_paper(pl["paper"])
    cfg = paper.config_from_tables(pl["config"])
    if point.kind == "batched":
        hook = paper.batched
        table = _function(pl["function"])(cfg, seeds=pl["seeds"],
                                          **{hook.field: pl[hook.field]}, progress=False)
        kept, note = with_readings(paper, cfg, table, _keep(table, pl["keep"], by=hook.by),
                                   by=hook.by)
        return kept, "ok", note
    try:
        rows, status, error = paper.run(cfg, progress=False).trajectory, "ok", ""
    except DivergenceError as e:  # the rows before the divergence are kept
        rows = getattr(e.result, "trajectory", None)
        rows = rows if isinstance(rows, pd.DataFrame) else pd.DataFrame()
        status, error = "diverged", str(e)
    kept, note = with_readings(paper, cfg, rows, _keep(rows, pl["keep"]))
    return kept, status, "; ".join(x for x in (error, note) if x)


def live_log_folder(root: str | Path, point: Point) -> Path:
    """The subfolder of the live-log folder ``root`` (``sweep --tensorboard``) that logs
    ``point``: its axis values and its run id, e.g. ``data.q=0.1_train.seed=0-<run id>``
    (the characters a file name may not hold, and any beyond 120, left out)."""
    import re

    text = "_".join(f"{k}={v}" for k, v in point.labels.items())
    text = re.sub(r"[^A-Za-z0-9._=+-]+", "_", text)[:120]
    return Path(root) / (f"{text}-{point.run_id}" if text else point.run_id)


def compute_point(point: Point, threads: int = 1, live: str | Path | None = None
                  ) -> pd.DataFrame:
    """Run one point with ``threads`` torch/BLAS threads; its table with ``status``, ``message``
    and provenance columns (never raises for a failing point). ``live``: a folder that logs
    the point's recorded rows in TensorBoard's format ([`theorylab.core.livelog`][])."""
    from theorylab.core import __version__
    from theorylab.core.livelog import live_log
    from theorylab.core.threads import limit_threads

    t0 = time.perf_counter()
    try:
        with limit_threads(threads), live_log(live):
            table, status, error = _run(point)
    except Exception as e:  # recorded, never stops the other points
        table, status = pd.DataFrame(), "failed"
        error = f"{type(e).__name__}: {e}"
        log.debug("point %s failed:\n%s", point.run_id, traceback.format_exc())
    train = point.payload.get("config", {}).get("train", {})
    meta = {"status": status, "message": error, "runtime_s": time.perf_counter() - t0,
            "host": socket.gethostname(), "device": str(train.get("device", "cpu")),
            "dtype": str(train.get("dtype", "float64")), "version": __version__,
            "git_rev": git_revision()}
    return table.assign(**meta) if len(table) else pd.DataFrame({k: [v] for k, v in meta.items()})


def slurm_cluster(jobs: int, memory: str = "4GB"):
    """A dask-jobqueue ``SLURMCluster`` of ``jobs`` batch jobs, each one single-threaded worker
    with ``memory``; queue, account and walltime come from dask-jobqueue's own configuration
    (``~/.config/dask/jobqueue.yaml``). dask-jobqueue is the optional extra ``cluster``."""
    try:
        from dask_jobqueue import SLURMCluster
    except ImportError:
        raise ValueError("slurm: dask-jobqueue is not installed; pip install "
                         "'theorylab[cluster]' (or pip install dask-jobqueue)") from None
    cluster = SLURMCluster(cores=1, processes=1, memory=memory)
    cluster.scale(jobs=jobs)
    return cluster


@contextlib.contextmanager
def _children_ignore_sigint():
    """Within the block, SIGINT is ignored, so that the processes started in it (the local
    cluster's nannies and workers, multiprocessing's resource tracker) inherit that: a Ctrl-C
    at the terminal, which signals the whole process group, then stops only this process,
    which closes the cluster itself, quietly, instead of every worker printing its own
    traceback."""
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread():
        yield
        return
    before = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, before)


@contextlib.contextmanager
def open_client(scheduler: str | None = None, workers: int | None = None, *, slurm: int = 0,
                slurm_memory: str = "4GB", say=print, oversubscribe: bool = False,
                worker_timeout: float | None = None, verbose: bool = False):
    """A Dask client: on the scheduler at ``scheduler`` (an address such as
    ``tcp://host:8786``), else on a SLURM cluster of ``slurm`` jobs ([`slurm_cluster`][]),
    else on a new ``LocalCluster`` of ``workers`` single-threaded worker processes (default and
    most: the [`usable_cores`][]; more with ``oversubscribe``). Prints the dashboard address,
    then waits up to ``worker_timeout`` seconds (default [`WORKER_TIMEOUT_S`][], SLURM
    [`SLURM_WORKER_TIMEOUT_S`][]; 0: forever) for a first worker: ``ValueError("workers: ...")``
    when none joins. Dask's log lines show only with ``verbose``."""
    from dask.distributed import Client, LocalCluster

    quiet_dask_logs(verbose)
    if worker_timeout is None:
        worker_timeout = SLURM_WORKER_TIMEOUT_S if slurm else WORKER_TIMEOUT_S
    if slurm:
        cluster = slurm_cluster(slurm, slurm_memory)
        client = Client(cluster)
        where = f"the SLURM cluster of {slurm} jobs"
    elif scheduler is not None:
        try:
            client = Client(scheduler, timeout=30)
        except OSError as e:
            raise ValueError(f"scheduler: cannot connect to {scheduler} ({e})") from None
        cluster = None
        where = f"the scheduler {scheduler}"
    else:
        cores = usable_cores()
        n = workers or cores
        if n > cores and not oversubscribe:
            say(f"sweep: --workers {n} capped at the {cores} usable cores (--oversubscribe "
                f"starts them all)")
            n = cores
        with _children_ignore_sigint():
            cluster = LocalCluster(n_workers=n, threads_per_worker=1, processes=True,
                                   dashboard_address=":0",
                                   # a worker's errors reach the sweep as failed points; its
                                   # log lines (a heartbeat to a scheduler closed by a Ctrl-C)
                                   # only with --verbose
                                   silence_logs=logging.INFO if verbose else logging.CRITICAL)
        client = Client(cluster)
        where = "the local cluster"
    try:
        link = getattr(client, "dashboard_link", None)
        if link:
            say(f"Dask dashboard: {link}")
        try:
            client.wait_for_workers(1, timeout=worker_timeout or None)
        except (TimeoutError, OSError):
            raise ValueError(f"workers: no Dask worker joined {where} within "
                             f"{worker_timeout:g} s (--worker-timeout); start workers "
                             f"(dask worker ADDRESS), or check the queue") from None
        client.theorylab_worker_timeout = worker_timeout
        client.theorylab_where = where
        yield client
    finally:
        if sys.exc_info()[0] is not None:  # stopped (Ctrl-C, an error): the workers' closing
            # connections log errors that are no news; the command says what was kept
            for name in ("distributed", "asyncio", "tornado"):
                logging.getLogger(name).setLevel(logging.CRITICAL)
        with contextlib.suppress(Exception):
            client.close(timeout=CLOSE_TIMEOUT_S)
        if cluster is not None:
            with contextlib.suppress(Exception):
                cluster.close(timeout=CLOSE_TIMEOUT_S)


def execute(points: Sequence[Point], store: Store | None, *, client=None, threads: int = 1,
            progress: bool | None = None, say: Callable[[str], None] = print,
            worker_timeout: float | None = None, live: str | Path | None = None
            ) -> dict[str, pd.DataFrame]:
    """Compute the points not in ``store`` (all when it is None) on ``client`` (None: in this
    process, one by one) and write each to the store as it finishes. Returns run_id → table of
    every point (cached ones read from the store). ``live``: a live-log folder (claimed by the
    caller) where each computed point logs its recorded rows, in its own subfolder
    ([`live_log_folder`][]).

    [`SweepInterrupted`][] on SIGINT or SIGTERM (``KeyboardInterrupt``), [`SweepStoppedError`][]
    when the client has had no worker for ``worker_timeout`` seconds (default: the one
    [`open_client`][] waited; 0: forever)."""
    from tqdm.auto import tqdm

    results: dict[str, pd.DataFrame] = {}
    todo: list[Point] = []
    seen = set()
    for p in points:
        if p.run_id in seen:
            continue
        seen.add(p.run_id)
        hit = store.cached(p) if store is not None else None
        if hit is not None:
            results[p.run_id] = hit
            log.info("cache hit: %s %s", p.run_id, p.labels)
        else:
            todo.append(p)
    for path, why in (store.mismatches.items() if store is not None else []):
        say(f"sweep: {path} {why}; recomputed")
    if store is not None:
        store.mismatches.clear()
    cached = len(results)
    if cached:
        say(f"sweep: {cached} of {len(seen)} points cached, {len(todo)} to compute")
    show = sys.stderr.isatty() if progress is None else progress
    bar = tqdm(total=len(seen), initial=cached, desc="points", disable=not show)
    counts = {"done": 0, "cached": cached, "failed": 0}

    def logged(p: Point) -> str | None:
        return None if live is None else str(live_log_folder(live, p))

    def finish(p: Point, table: pd.DataFrame) -> None:
        if store is not None:
            store.write(p, table)
        results[p.run_id] = table
        counts["done"] += 1
        if table.status.iloc[0] == "failed":
            counts["failed"] += 1
            say(f"sweep: point {p.run_id} {p.labels} failed: {table.message.iloc[0]}")
        bar.update(1)
        bar.set_postfix(counts, refresh=False)

    futures: dict = {}

    def stopped(message: str, interrupted: bool) -> SweepStoppedError | SweepInterrupted:
        if futures:
            with contextlib.suppress(Exception):
                client.cancel(list(futures))
        left = [p for p in todo if p.run_id not in results]
        kind = SweepInterrupted if interrupted else SweepStoppedError
        return kind(message, left, results, interrupted)

    try:
        if client is None:
            for p in todo:
                check_stop()
                finish(p, compute_point(p, threads, logged(p)))
        elif todo:
            from dask.distributed import as_completed

            if worker_timeout is None:
                worker_timeout = getattr(client, "theorylab_worker_timeout", WORKER_TIMEOUT_S)
            futures = {client.submit(compute_point, p, threads, logged(p),
                                     key=f"point-{p.run_id}", pure=False): p for p in todo}
            ac = as_completed(futures)
            alone_since, checked = None, time.monotonic()
            while not ac.is_empty():
                if ac.has_ready():
                    for fut in ac.next_batch(block=False):
                        finish(futures[fut], _result(fut))
                    alone_since = None
                    continue
                time.sleep(0.05)
                if time.monotonic() - checked < 1:
                    continue
                checked = time.monotonic()
                if _n_workers(client):
                    alone_since = None
                elif alone_since is None:
                    alone_since = checked
                elif worker_timeout and checked - alone_since > worker_timeout:
                    where = getattr(client, "theorylab_where", "the scheduler")
                    raise stopped(f"workers: {where} has had no Dask worker for "
                                  f"{worker_timeout:g} s (--worker-timeout)", False)
    except KeyboardInterrupt:
        raise stopped("interrupted", True) from None
    finally:
        bar.close()
    return results


def _result(fut) -> pd.DataFrame:
    try:
        return fut.result()
    except Exception as e:  # the worker died (killed, out of memory)
        return pd.DataFrame({"status": ["failed"], "message": [f"{type(e).__name__}: {e}"]})


def _n_workers(client) -> int:
    try:
        return len(client.scheduler_info().get("workers", {}))
    except Exception:  # the scheduler itself is gone: no worker either
        return 0


#: Where [`run_points`][] runs when its caller does not say: set by [`use_executor`][]
#: (``python -m theorylab check`` and ``python -m theorylab figures`` with ``--scheduler``,
#: ``--workers`` or ``--cache``).
_DEFAULTS: dict = {"cache": None, "client": None}


def active_cache() -> Path | None:
    """The store folder of the enclosing [`use_executor`][] block (``--cache DIR`` of the
    checks and figures), or None: other cached computations (a trained model's tables) keep
    their files beside the sweep points there."""
    cache = _DEFAULTS["cache"]
    return Path(cache) if cache is not None else None


@contextlib.contextmanager
def use_executor(*, cache: str | Path | None = None, scheduler: str | None = None,
                 workers: int = 0, say=print):
    """Within the block, [`run_points`][] calls without their own settings use the store
    ``cache`` and a Dask client on ``scheduler`` or on a LocalCluster of ``workers`` workers
    (opened once for the block; ``workers = 0`` and no scheduler: in this process)."""
    old = dict(_DEFAULTS)
    opened = (contextlib.nullcontext() if scheduler is None and not workers
              else open_client(scheduler, workers, say=say))
    try:
        with opened as client:
            _DEFAULTS.update(cache=cache, client=client)
            yield
    finally:
        _DEFAULTS.clear()
        _DEFAULTS.update(old)


def run_points(points: Sequence[Point], *, cache: str | Path | None = None,
               scheduler: str | None = None, workers: int = 0, client=None,
               threads: int = 1, progress: bool | None = False,
               say: Callable[[str], None] = print) -> list[pd.DataFrame]:
    """The tables of ``points`` in order: what the figures and claim checks call.

    Default: in this process, no store (the results are those of a plain loop), unless a
    [`use_executor`][] block says otherwise. ``cache``: a store folder shared between figures
    and checks (cached points are read, new ones written); ``scheduler`` / ``workers > 0`` /
    ``client``: run on Dask. A failed point raises ``RuntimeError`` naming it after all points
    are done (the others are stored)."""
    if cache is None:
        cache = _DEFAULTS["cache"]
    if client is None and scheduler is None and not workers:
        client = _DEFAULTS["client"]
    store = Store(cache) if cache is not None else None
    if store is not None and all(store.done(p) for p in points):
        client, scheduler, workers = None, None, 0  # all cached: no cluster to start
    opened = (contextlib.nullcontext(client) if client is not None or scheduler is None
              and not workers else open_client(scheduler, workers, say=say))
    with opened as c:
        res = execute(points, store, client=c, threads=threads, progress=progress, say=say)
    failed = [p for p in points if res[p.run_id].status.iloc[0] == "failed"]
    if failed:
        raise RuntimeError(f"{len(failed)} sweep point(s) failed, first {failed[0].labels}: "
                           f"{res[failed[0].run_id].message.iloc[0]}")
    return [res[p.run_id] for p in points]
