"""The first paper's benchmarks (``python -m theorylab.bench``):

- [`theorylab.jelassi2022.bench.cases`][]: the engines and states that are timed, the plain
  torch-autograd baseline, the work counts of one empirical step;
- [`theorylab.jelassi2022.bench.empirical`][]: the empirical-step grid against autograd,
  batched sweeps against one-by-one runs, the implementation choices (``--choices``);
- [`theorylab.jelassi2022.bench.targets`][]: the speed targets (``--targets``).

``targets`` imports ``empirical`` and ``cases``; ``empirical`` imports ``cases``; timing,
device peaks and machine naming are the kernel's harness, [`theorylab.core.bench`][].
"""

from theorylab.jelassi2022.bench.cases import (
    STATE,
    AutogradBaseline,
    autograd_for,
    blas_read,
    empirical_config,
    engine_pass,
    grad_mismatch,
    make_empirical_engine,
    population_engine,
    step_bytes,
    step_flops,
)
from theorylab.jelassi2022.bench.empirical import (
    CHOICE_SIZES,
    bench_choices,
    bench_empirical,
    bench_flush,
    bench_sweep,
    machine_line,
    run,
    run_choices,
    run_sweeps,
)
from theorylab.jelassi2022.bench.targets import TARGETS, Target, run_targets, target_sizes

__all__ = [
    "CHOICE_SIZES",
    "STATE",
    "TARGETS",
    "AutogradBaseline",
    "Target",
    "autograd_for",
    "bench_choices",
    "bench_empirical",
    "bench_flush",
    "bench_sweep",
    "blas_read",
    "empirical_config",
    "engine_pass",
    "grad_mismatch",
    "machine_line",
    "make_empirical_engine",
    "population_engine",
    "run",
    "run_choices",
    "run_sweeps",
    "run_targets",
    "step_bytes",
    "step_flops",
    "target_sizes",
]
