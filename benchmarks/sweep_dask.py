"""Sweeps on Dask: the same 64-point grid run one by one in one process and through
``theorylab.sweep`` with 2 local workers, in the same run; the per-point overhead of the
scheduler on tiny points; the cache-hit rerun; batched seeds x learning rates as one point
against one point per run.

``PYTHONPATH=. python benchmarks/sweep_dask.py [--steps 2000] [--out DIR]`` prints a markdown
table (docs/performance.md, "Sweeps on Dask"). Every point is exact population GD of
Jelassi et al. (2022) (exchangeable engine, D = 10, C = 2, d = 100) over 8 values of q and 8
partition seeds; the serial loop and the workers each use one torch/BLAS thread.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from pathlib import Path

import pandas as pd

from theorylab.core.sweep import (
    call_point,
    compute_point,
    run_points,
    run_sweep_spec,
    spec_from_dict,
)
from theorylab.core.threads import set_threads


def _spec(steps: int, n_q: int = 8, n_seeds: int = 8) -> dict:
    qs = [round(0.1 + 0.05 * i, 3) for i in range(n_q)]
    return {"base_config": {"data": {"D": 10, "C": 2, "d": 100},
                            "train": {"steps": steps, "n_records": 30}},
            "sweep": {"axes": {"data.q": qs, "data.seed": list(range(n_seeds))},
                      "keep": "final"}}


def _quiet(*_):
    pass


def _serial(points) -> float:
    t0 = time.perf_counter()
    for p in points:
        assert compute_point(p).status.iloc[0] != "failed"
    return time.perf_counter() - t0


def _timed_sweep(spec: dict, out: Path, workers: int) -> tuple[float, pd.DataFrame]:
    t0 = time.perf_counter()
    table = run_sweep_spec(spec, out, workers=workers, say=_quiet, progress=False)
    return time.perf_counter() - t0, table


def _batched(tmp: Path) -> dict:
    """8 seeds x 2 learning rates of empirical GD: one batched point vs 16 run points."""
    base = {"data": {"D": 10, "C": 2, "d": 100, "q": 0.3},
            "train": {"engine": "empirical", "steps": 200, "n_train": 1000, "n_test": 2000,
                      "n_records": 10}}
    sweep = {"axes": {"train.lr_v": [0.1, 0.2]}, "seeds": list(range(8)), "keep": "final"}
    one = spec_from_dict({"base_config": base, "sweep": {**sweep, "point": "batched"}}).points()
    many = spec_from_dict({"base_config": base, "sweep": sweep}).points()
    return {"batched": _serial(one), "per_run": _serial(many), "runs": len(many)}


def main(argv=None) -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=2000, help="GD steps per point (default 2000)")
    p.add_argument("--out", default=None, help="store folder (default: a temporary one)")
    a = p.parse_args(argv)
    set_threads(1)
    load0 = os.getloadavg()
    cpu = next((ln.split(":", 1)[1].strip() for ln in Path("/proc/cpuinfo").read_text()
                .splitlines() if ln.startswith("model name")), platform.processor())
    root = Path(a.out or tempfile.mkdtemp(prefix="sweep_dask_"))
    spec = _spec(a.steps)
    points = spec_from_dict(spec).points()
    n = len(points)
    t_serial = _serial(points)
    t_dask, table = _timed_sweep(spec, root / "grid", workers=2)
    assert (table.status == "ok").all()
    t_cache, _ = _timed_sweep(spec, root / "grid", workers=2)
    t_cache0, _ = _timed_sweep(spec, root / "grid", workers=0)
    runtime = float(table.runtime_s.sum())

    tiny = _spec(1)
    tiny_points = spec_from_dict(tiny).points()
    t_tiny_serial = _serial(tiny_points)
    from theorylab.core.sweep import open_client

    with open_client(workers=2, say=_quiet) as client:
        run_points(tiny_points, client=client, say=_quiet)  # warm-up: imports in the workers
        t0 = time.perf_counter()
        run_points(tiny_points, client=client, say=_quiet)
        t_tiny_dask = time.perf_counter() - t0
        t0 = time.perf_counter()
        run_points(points, client=client, say=_quiet)
        t_dask_warm = time.perf_counter() - t0
        # per-point cost of the machinery alone: points that only build a one-row table
        noop = [call_point("pandas:DataFrame", data={"x": [i]}) for i in range(200)]
        t0 = time.perf_counter()
        run_points(noop, client=client, say=_quiet)
        t_noop_dask = time.perf_counter() - t0
    t0 = time.perf_counter()
    run_points(noop, say=_quiet)
    t_noop_serial = time.perf_counter() - t0
    t0 = time.perf_counter()
    with open_client(workers=2, say=_quiet):
        pass
    t_start = time.perf_counter() - t0
    b = _batched(root)

    load1 = os.getloadavg()
    print(f"machine: 2-core shared VM ({cpu}); {n} points, {a.steps} steps each; "
          f"run in one process, interleaved; 1-min load average {load0[0]:.1f} at the start, "
          f"{load1[0]:.1f} at the end (other jobs share the cores)")
    print()
    print("| measurement | time |")
    print("|---|---|")
    print(f"| {n} points one by one, one process | {t_serial:.1f} s "
          f"({t_serial / n:.2f} s a point) |")
    print(f"| same grid, sweep on a new LocalCluster of 2 workers (start included) | "
          f"{t_dask:.1f} s (speed-up {t_serial / t_dask:.2f}x) |")
    print(f"| same grid, 2 workers already running | {t_dask_warm:.1f} s "
          f"(speed-up {t_serial / t_dask_warm:.2f}x) |")
    print(f"| sum of the points' own runtimes on the workers | {runtime:.1f} s "
          f"({runtime / t_serial:.2f}x the serial loop) |")
    print(f"| LocalCluster(2) start + close alone | {t_start:.1f} s |")
    print(f"| {n} tiny points (1 step): serial / 2 running workers | "
          f"{t_tiny_serial:.2f} s / {t_tiny_dask:.2f} s |")
    print(f"| {len(noop)} no-op points (a one-row table): 2 running workers / in-process | "
          f"{t_noop_dask:.2f} s / {t_noop_serial:.2f} s: {1e3 * t_noop_dask / len(noop):.1f} "
          f"ms / {1e3 * t_noop_serial / len(noop):.1f} ms a point |")
    print(f"| cache-hit rerun of the {n} points, LocalCluster / in-process | "
          f"{t_cache:.2f} s / {t_cache0:.2f} s |")
    print(f"| {b['runs']} empirical runs (8 seeds x 2 lr_v): one batched point / one point "
          f"per run | {b['batched']:.2f} s / {b['per_run']:.2f} s "
          f"({b['per_run'] / b['batched']:.2f}x) |")


if __name__ == "__main__":
    main()
