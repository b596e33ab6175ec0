"""Benchmarks of the engines: ``python -m theorylab.bench``.

- [`theorylab.bench.empirical`][]: timing helpers, the empirical-step grid against a plain
  torch-autograd baseline, batched sweeps against one-by-one runs, device peaks;
- [`theorylab.bench.targets`][]: the speed targets T1–T7;
- ``theorylab.bench.__main__``: the command line.

``targets`` imports ``empirical``; neither imports the command line.
"""

from theorylab.bench.empirical import (
    GPU_PEAK_GBS,
    AutogradBaseline,
    autograd_for,
    bench_choices,
    bench_empirical,
    bench_flush,
    bench_sweep,
    default_max_bytes,
    device_name,
    empirical_config,
    grad_mismatch,
    interleaved_times,
    machine_line,
    make_empirical_engine,
    measure_peaks,
    peak_bandwidth,
    read_once_seconds,
    step_bytes,
    step_flops,
    time_call,
    time_engine_step,
)
from theorylab.bench.targets import TARGETS, Target, population_engine, run_targets, target_sizes

__all__ = [
    "GPU_PEAK_GBS",
    "TARGETS",
    "AutogradBaseline",
    "Target",
    "autograd_for",
    "bench_choices",
    "bench_empirical",
    "bench_flush",
    "bench_sweep",
    "default_max_bytes",
    "device_name",
    "empirical_config",
    "grad_mismatch",
    "interleaved_times",
    "machine_line",
    "make_empirical_engine",
    "measure_peaks",
    "peak_bandwidth",
    "population_engine",
    "read_once_seconds",
    "run_targets",
    "step_bytes",
    "step_flops",
    "target_sizes",
    "time_call",
    "time_engine_step",
]
