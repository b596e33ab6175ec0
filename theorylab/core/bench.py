"""The benchmark harness: timing, device peaks, machine naming and the CSV output of
``theorylab bench``, for any paper's engines.

A paper's benchmarks (its ``bench`` room, handed over as a [`PaperBench`][] by the paper's
``Paper.bench`` hook) build engines and choose sizes; this module times them and says where the
numbers come from:

- [`PaperBench`][], [`BenchCase`][], [`SuiteContext`][]: what a paper hands to ``theorylab
  bench`` (its own run and flag checks) and to the GPU suite (its parts);
- [`time_call`][], [`interleaved_times`][], [`interleaved_medians`][] and
  [`time_engine_step`][]: wall times, CUDA synchronised ([`device_sync`][]; a step to time:
  [`engine_step`][]) (an engine is anything with ``evaluate``, ``apply`` and ``xp.synchronize``,
  [`theorylab.core.engine`][]);
- [`measure_peaks`][], [`peak_bandwidth`][], [`read_once_seconds`][]: the device's copy
  bandwidth and matmul rate measured in the same run, and nominal GPU bandwidths;
- [`device_name`][] and [`machine_line`][]: the header every table starts with;
- [`check_device`][], [`check_csv_out`][]: the command line's checks, made before anything is
  measured (a bad value ends as one line ``error: <flag>: ...``);
- [`print_and_save`][]: the table on screen and as CSV.
"""

from __future__ import annotations

import math
import os
import platform
import re
import resource
import statistics
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

__all__ = [
    "GPU_PEAK_GBS",
    "BenchCase",
    "PaperBench",
    "SuiteContext",
    "check_csv_out",
    "check_device",
    "default_max_bytes",
    "device_name",
    "device_sync",
    "empty_cache",
    "engine_step",
    "fmt_row",
    "given_flags",
    "given_modes",
    "interleaved_medians",
    "interleaved_times",
    "machine_line",
    "measure_peaks",
    "peak_bandwidth",
    "peak_memory_mb",
    "print_and_save",
    "read_once_seconds",
    "time_call",
    "time_engine_step",
]

#: nominal memory bandwidth (GB/s) of GPUs we may be lent, by a substring of the device name
GPU_PEAK_GBS = {"H100": 3350.0, "H200": 4800.0, "A100": 2039.0}


@dataclass(frozen=True)
class SuiteContext:
    """What a part of the GPU suite is told: the ``device`` it runs on, whether to use CPU
    sizes (``cpu_sizes``: no CUDA here, the same code paths at sizes a CPU runs in about a
    minute), the time guard of one timed case (``max_seconds``) and the timed repeats."""

    device: str
    cpu_sizes: bool
    max_seconds: float = 20.0
    repeats: int = 3


@dataclass(frozen=True)
class BenchCase:
    """One part of the GPU suite, contributed by a paper: a table of timings or errors.

    - `name`: file stem, unique within the paper (the table goes to ``<paper>-<name>.csv``).
    - `what`: one line for the summary page.
    - `run`: ``(SuiteContext) -> table`` (a pandas DataFrame, one row per measurement); the
      suite adds a ``device`` column naming the device when the table has none.
    - `budget_s`: the part's time limit in seconds (it runs in its own process and is
      stopped there).
    - `summary`: ``(table) -> lines`` for the summary page (default: the row count).
    """

    name: str
    what: str
    run: Callable[[SuiteContext], Any]
    budget_s: float = 60.0
    summary: Callable[[Any], list[str]] | None = None


@dataclass(frozen=True)
class PaperBench:
    """What ``theorylab bench --paper <name>`` and the GPU suite time of one paper.

    - `run`: ``(args) -> exit code``: the paper's benchmark under the command's parsed flags.
    - `check`: ``(args) -> None``: refuse flags the paper does not take, before anything is
      measured (a one-line ``ValueError("--flag: ...")``).
    - `suite`: ``() -> [BenchCase, ...]``: the paper's parts of the GPU suite.
    """

    run: Callable[[Any], int]
    check: Callable[[Any], None] = lambda args: None
    suite: Callable[[], Sequence[BenchCase]] = field(default=lambda: ())


def time_call(
    fn: Callable[[], object],
    sync: Callable[[], None] = lambda: None,
    *,
    warmup: int = 1,
    repeats: int = 5,
    max_seconds: float | None = None,
) -> list[float]:
    """Wall times (s) of ``fn()`` after ``warmup`` untimed calls, each followed by ``sync()``.

    With ``max_seconds``, stops repeating once the timed calls have used that much time (at
    least one timed call is always made)."""
    return interleaved_times({"fn": fn}, sync, warmup=warmup, repeats=repeats,
                             max_seconds=max_seconds)["fn"]


def engine_step(engine, params, step: int = 0) -> Callable[[], object]:
    """One GD step of an engine as a callable to time: ``evaluate`` at ``step`` with gradients,
    then ``apply``, always from ``params`` (a diverging run would time NaNs)."""
    return lambda: engine.apply(params, engine.evaluate(params, step, need_grad=True,
                                                        record=False).grads)


def device_sync(device: str) -> Callable[[], None]:
    """What waits for ``device``'s queued work: ``torch.cuda.synchronize`` on CUDA, else
    nothing."""
    if device.startswith("cuda"):
        import torch

        return torch.cuda.synchronize
    return lambda: None


def empty_cache(device: str) -> None:
    """Give the memory torch's CUDA allocator holds back to ``device`` (nothing on a CPU)."""
    if device.startswith("cuda"):
        import torch

        torch.cuda.empty_cache()


def time_engine_step(engine, params, *, repeats: int = 5, max_seconds: float | None = 30.0):
    """Median wall time (s) of one GD step ([`engine_step`][]) of an engine from ``params``,
    and the number of timed steps."""
    times = time_call(engine_step(engine, params), engine.xp.synchronize, repeats=repeats,
                      max_seconds=max_seconds)
    return statistics.median(times), len(times)


def interleaved_times(fns: dict[str, Callable[[], object]], sync: Callable[[], None] = lambda: None,
                      *, warmup: int = 1, repeats: int = 5, max_seconds: float | None = None
                      ) -> dict[str, list]:
    """Wall times (s) of several callables timed *interleaved*: ``warmup`` untimed rounds of
    one call of each, then ``repeats`` rounds of one call of each in turn (so that a change of
    load on a shared machine hits all of them alike; ratios of the medians are what the
    benchmarks report). With ``max_seconds``, stops after the round in which that much time
    was used."""
    for _ in range(warmup):
        for f in fns.values():
            f()
            sync()
    times: dict[str, list] = {k: [] for k in fns}
    used = 0.0
    for _ in range(repeats):
        for k, f in fns.items():
            sync()
            t0 = time.perf_counter()
            f()
            sync()
            dt = time.perf_counter() - t0
            times[k].append(dt)
            used += dt
        if max_seconds is not None and used > max_seconds:
            break
    return times


def interleaved_medians(fns: dict, sync: Callable[[], None] = lambda: None, *, repeats: int = 5,
                        max_seconds: float | None = None) -> tuple[dict, int]:
    """The median wall time (s) of each callable of [`interleaved_times`][], and the number of
    timed rounds."""
    times = interleaved_times(fns, sync, repeats=repeats, max_seconds=max_seconds)
    return {k: statistics.median(v) for k, v in times.items()}, len(next(iter(times.values())))


def device_name(device: str = "cpu") -> str:
    """The CPU model (lscpu / platform) or the CUDA device name."""
    if device.startswith("cuda"):
        import torch

        return torch.cuda.get_device_name(torch.device(device))
    name = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                    break
    except OSError:  # pragma: no cover - non-Linux
        pass
    return f"{name or platform.processor() or platform.machine()} ({os.cpu_count()} logical CPUs)"


def measure_peaks(device: str = "cpu", dtype: str = "float64", *, n_bytes: float = 2e8,
                  n_matmul: int = 1024, repeats: int = 5) -> dict[str, float]:
    """Measured copy bandwidth (GB/s, bytes read + written) and matmul rate (GFLOP/s) on
    ``device`` in ``dtype``, in this run (the reference peaks of the table on CPU)."""
    import torch

    dt = getattr(torch, dtype)
    dev = torch.device(device)
    sync = device_sync(device)
    n = int(n_bytes) // torch.empty((), dtype=dt).element_size()
    a = torch.ones(n, dtype=dt, device=dev)
    b = torch.empty_like(a)
    t = statistics.median(time_call(lambda: b.copy_(a), sync, repeats=repeats))
    copy_gbs = 2 * a.numel() * a.element_size() / t / 1e9
    a = b = None  # free the buffers before the matmul
    m = torch.randn(n_matmul, n_matmul, dtype=dt, device=dev)
    t = statistics.median(time_call(lambda: m @ m, sync, repeats=repeats))
    out = {"copy_GBs": copy_gbs, "matmul_GFLOPs": 2 * n_matmul**3 / t / 1e9}
    if dev.type == "cuda":
        name = torch.cuda.get_device_name(dev)
        out["nominal_GBs"] = next((v for k, v in GPU_PEAK_GBS.items() if k in name), math.nan)
    return out


def default_max_bytes(device: str = "cpu") -> float:
    """The largest X the benchmark generates by default: 40 % of the host's free memory (the
    sampler writes X in place, in its dtype) and, on CUDA, at most 70 % of the free device
    memory (X resident; the step's working set is a few length-D vectors per sample)."""
    from theorylab.core.backend import get_backend, host_free_bytes

    budget = 0.4 * host_free_bytes()
    if device.startswith("cuda"):
        budget = min(budget, 0.7 * get_backend("torch", "float32", device).free_bytes())
    return float(budget)


def peak_bandwidth(peaks: dict[str, float]) -> tuple[float, str]:
    """(GB/s, source) of the memory bandwidth to compare against: the nominal HBM bandwidth of
    a known GPU ([`GPU_PEAK_GBS`][]), else the copy rate measured by [`measure_peaks`][]."""
    bw = peaks.get("nominal_GBs", math.nan)
    if math.isfinite(bw):
        return bw, "nominal HBM"
    return peaks["copy_GBs"], "measured copy rate"


def peak_memory_mb(device: str) -> float:
    if device.startswith("cuda"):
        import torch

        return torch.cuda.max_memory_allocated(torch.device(device)) / 2**20
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return rss / (2**20 if sys.platform == "darwin" else 2**10)


def read_once_seconds(N: int, D: int, d: int, itemsize: int, copy_gbs: float) -> float:
    """Time to read X (N·D·d values) once at the measured copy rate: N·D·d·itemsize bytes at
    ``copy_gbs`` GB/s (the copy rate counts bytes read + written, so this is a lower bound only
    if reading alone is not faster than copying; it is the bound the read-once targets use)."""
    return N * D * d * itemsize / (copy_gbs * 1e9)


def print_and_save(rows, out: str | None) -> None:
    """Print the rows as one table (4 significant digits) and write them to ``out`` (CSV)."""
    import pandas as pd

    df = pd.DataFrame(rows)
    print()
    print(df.to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    if out:
        write_table(out, df)


def write_table(out: str | os.PathLike, df) -> None:
    """A benchmark table to ``out`` (checked by [`check_csv_out`][]) through the output gate."""
    from theorylab.core.folders import write_output

    write_output(out, df.to_csv(index=False, float_format="%.17g"), command=WRITER)


def fmt_row(row: dict, keys: Sequence[str]) -> str:
    """``key=value`` pairs of ``row`` on one line (floats to 4 significant digits)."""
    return "  ".join(f"{k}={row[k]:.4g}" if isinstance(row.get(k), float) else f"{k}={row.get(k)}"
                     for k in keys)


def machine_line(device: str = "cpu", extra: Mapping[str, str] | None = None) -> str:
    """``# device: <CPU model or GPU>; torch threads ...; BLAS threads ...; primitive ...;
    <extra>; library versions``: the header every benchmark table starts with, so that its
    numbers say where they come from (``extra``: a paper's own settings, name → value)."""
    import torch

    from theorylab.core.jit import numba_version
    from theorylab.core.primitives import default_primitive
    from theorylab.core.threads import current_threads

    th = current_threads()
    more = "".join(f"; {k}: {v}" for k, v in (extra or {}).items())
    return (f"# device: {device_name(device)}; torch threads: {th['torch']}; BLAS threads: "
            f"{th['blas']}; primitive: {default_primitive()}{more}; "
            f"torch {torch.__version__}, numpy {np.__version__}, numba {numba_version()}")


#: the column every benchmark CSV has; an existing file without it is not overwritten
CSV_MARK = "device"
#: The command named in the sidecar of a benchmark CSV.
WRITER = "theorylab bench"


def given_modes(args) -> list[str]:
    """The modes of a paper's benchmark given to ``theorylab bench`` (``targets``, ``sweep``,
    ``choices``), in that order."""
    return [f for f in ("targets", "sweep", "choices") if getattr(args, f, False)]


def given_flags(args) -> list[str]:
    """The optional flags of a paper's benchmark given to ``theorylab bench`` (``--backend``,
    ``--dtypes``, ``--max-bytes``, ``--quick``, ``--targets-size``): a paper honours each or
    refuses it, never ignores it."""
    return [flag for flag, on in (("--backend", args.backend is not None),
                                  ("--dtypes", args.dtypes is not None),
                                  ("--max-bytes", args.max_bytes is not None),
                                  ("--quick", args.quick),
                                  ("--targets-size", args.targets_size != "auto")) if on]


def check_device(device: str) -> str:
    """``device`` if it names a device that is here (``cpu``, ``cuda``, ``cuda:N``); otherwise
    ``ValueError("--device: ...")``."""
    if not re.fullmatch(r"cpu|cuda(:\d+)?", device):
        raise ValueError(f"--device: must be cpu, cuda or cuda:N (got {device!r})")
    if device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            raise ValueError(f"--device: no CUDA device here (torch.cuda.is_available() is "
                             f"False; got {device!r})")
        index = int(device.split(":")[1]) if ":" in device else 0
        if index >= torch.cuda.device_count():
            raise ValueError(f"--device: {torch.cuda.device_count()} CUDA device(s) here "
                             f"(got {device!r})")
    return device


def check_csv_out(path: str | os.PathLike, *, force: bool = False,
                  committed: str | None = None) -> Path:
    """Refuse an output CSV before anything is measured (``ValueError("--out: ...")``), through
    the output gate ([`theorylab.core.folders.check_output_file`][]): it must end in ``.csv``;
    an existing file must be a benchmark CSV (its header has the column [`CSV_MARK`][], or its
    sidecar names this command), never a file the user wrote (unless `force`); its folder is
    created if needed and must be writable; `committed` (``"performance"``): a full run may
    write the committed docs/performance/."""
    from theorylab.core.folders import check_output_file

    def ours(out: Path) -> bool:
        try:
            with out.open(encoding="utf-8") as f:
                header = f.readline().strip().split(",")
        except (OSError, UnicodeDecodeError):
            header = []
        return CSV_MARK in header

    return check_output_file(path, ".csv", command=WRITER, ours=ours, force=force,
                             field="--out", committed=committed, create_parent=True)
