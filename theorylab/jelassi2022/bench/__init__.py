"""The first paper's benchmarks, handed to ``theorylab bench`` and the GPU suite as
[`BENCH`][] (the ``Paper.bench`` hook):

- [`theorylab.jelassi2022.bench.cases`][]: the engines and states that are timed, the plain
  torch-autograd baseline, the work counts of one empirical step;
- [`theorylab.jelassi2022.bench.empirical`][]: the empirical-step grid against autograd,
  batched sweeps against one-by-one runs, the implementation choices (``--choices``);
- [`theorylab.jelassi2022.bench.targets`][]: the speed targets (``--targets``);
- [`theorylab.jelassi2022.bench.precision`][]: float32 against float64 (GPU suite).

``targets`` imports ``empirical`` and ``cases``; ``empirical`` imports ``cases``; timing,
device peaks and machine naming are the kernel's harness, [`theorylab.core.bench`][].
"""

from __future__ import annotations

from theorylab.core.bench import BenchCase, PaperBench, SuiteContext, given_flags, given_modes

from . import cases, empirical, precision, targets
from .cases import *  # noqa: F403  (re-exported: the timed engines, states, baseline, counts)
from .empirical import *  # noqa: F403  (re-exported: the grid, sweeps and choices)
from .precision import *  # noqa: F403  (re-exported: float32 against float64)
from .precision import float32_errors
from .targets import *  # noqa: F403  (re-exported: the speed targets)

__all__ = ["BENCH", "SUITE_CPU_SIZES", *cases.__all__, *empirical.__all__, *precision.__all__,
           *targets.__all__]


def _check(args) -> None:
    """This paper's flags (``theorylab bench``): one mode at a time; ``--sizes`` is not
    taken; ``--choices`` times the CPU step only."""
    modes = given_modes(args)
    if len(modes) > 1:
        raise ValueError(f"--{modes[1]}: one of --targets, --sweep, --choices at a time (got "
                         f"{', '.join('--' + m for m in modes)})")
    if args.sizes is not None:
        raise ValueError("--sizes: not taken by --paper jelassi2022 (it times a grid of "
                         "(D, d, N); --quick picks a smaller one)")
    if args.choices and args.device != "cpu":
        raise ValueError(f"--device: --choices times the CPU step only (got {args.device!r})")
    mode = modes[0] if modes else "grid"
    given = [flag for flag in given_flags(args) if flag not in _USED[mode]]
    if given:  # every flag is honoured by the mode or refused, never ignored
        what = f"--{mode}" if modes else "the size grid"
        raise ValueError(f"{given[0]}: not used by {what} (its flags: "
                         f"{', '.join(sorted(_USED[mode])) or 'none of those'}, --device, "
                         "--repeats, --max-seconds, --threads, --out)")


#: The optional flags each mode honours.
_USED = {"grid": {"--backend", "--dtypes", "--max-bytes", "--quick"},
         "sweep": {"--backend", "--dtypes", "--quick"},
         "choices": set(),
         "targets": {"--dtypes", "--max-bytes", "--targets-size"}}


def _run(args) -> int:
    from theorylab.core.atomic_io import write_csv
    from theorylab.core.bench import default_max_bytes

    if args.max_bytes is None:
        args.max_bytes = default_max_bytes(args.device)
    if args.targets:
        print(empirical.machine_line(args.device))
        df = targets.run_targets(args)
        print()
        import pandas as pd

        with pd.option_context("display.max_colwidth", 80, "display.width", 250):
            print(df.drop(columns=["what"]).to_string(index=False,
                                                      float_format=lambda x: f"{x:.4g}"))
        if args.out:
            write_csv(args.out, df)
    elif args.choices:
        empirical.run_choices(args)
    elif args.sweep:
        empirical.run_sweeps(args)
    else:
        empirical.run(args)
    return 0


#: The GPU suite's sizes of T1–T4 on a CPU: the same code paths in a few seconds each.
SUITE_CPU_SIZES = {
    "T1": (("N", 1_000), ("D", 64), ("d", 64)),
    "T2": (("N", 1_000), ("D", 64), ("d", 64)),
    "T3": (("D", 16), ("C", 4)),
    "T4": (("D", 256), ("M", 2_000)),
}


def _targets(ctx: SuiteContext):
    """The targets stated for a GPU (T1–T4) on the suite's device, float32 and float64: at
    their own sizes on CUDA, at [`SUITE_CPU_SIZES`][] otherwise."""
    import argparse

    from theorylab.core.bench import default_max_bytes

    args = argparse.Namespace(device=ctx.device, dtypes=["float32", "float64"],
                              targets_size="cpu" if ctx.cpu_sizes else "target",
                              repeats=ctx.repeats, max_seconds=ctx.max_seconds,
                              max_bytes=default_max_bytes(ctx.device))
    return targets.run_targets(args, gpu_only=True, cpu_sizes=SUITE_CPU_SIZES)


def _precision(ctx: SuiteContext):
    import pandas as pd

    return pd.DataFrame(float32_errors(ctx.device, ctx.cpu_sizes))


def _target_lines(df) -> list[str]:
    out = []
    for r in df.to_dict("records"):
        met = {True: "met", False: "NOT met"}.get(r["met"], "not judged")
        out.append(f"{r['target']} {r['dtype']} ({r['size']}): {r['measured']:.4g} {r['unit']} "
                   f"(target {r['threshold']}; {met})")
    return out


def _precision_lines(df) -> list[str]:
    return [f"{r['engine']} ({r['size']}): float32 loss rel. error {r['loss_rel_err']:.2g}, "
            f"gradient {r['grad_rel_err']:.2g}" for r in df.to_dict("records")]


def _suite() -> list[BenchCase]:
    return [
        BenchCase("targets", "speed targets T1–T4: empirical step against the memory-bandwidth "
                  "roofline (T1) and plain autograd (T2), exchangeable exact step at D = 64, "
                  "C = 4 (T3), Monte Carlo at D = 1024 with 10⁶ samples (T4)", _targets,
                  budget_s=240.0, summary=_target_lines),
        BenchCase("float32", "float32 against float64: the empirical and exchangeable "
                  "engines' loss and gradient", _precision, budget_s=120.0,
                  summary=_precision_lines),
    ]


#: What ``theorylab bench`` (the default paper) and the GPU suite time of this paper.
BENCH = PaperBench(run=_run, check=_check, suite=_suite)
