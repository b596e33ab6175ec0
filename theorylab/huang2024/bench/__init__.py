"""The second paper's benchmarks, handed to ``theorylab bench`` and the GPU suite as
[`BENCH`][] (the ``Paper.bench`` hook):

- [`theorylab.huang2024.bench.baselines`][]: plain torch-autograd twins of the engines' losses;
- [`theorylab.huang2024.bench.cases`][]: the exact and Laplace steps on the kernel's backends
  against them (``theorylab bench --paper huang2024``: the exact step).

Timing, device peaks and machine naming are the kernel's harness, [`theorylab.core.bench`][].
"""

from __future__ import annotations

import math

from theorylab.core.bench import (
    BenchCase,
    PaperBench,
    SuiteContext,
    empty_cache,
    given_flags,
    given_modes,
)

from .baselines import AutogradExactLoss, AutogradLaplace, autograd_batch_loss
from .cases import (
    QUICK_SIZES,
    SIZES,
    bench_config,
    bench_exact,
    bench_laplace,
    bench_reduced,
    check_sizes,
    laplace_config,
    run,
)

__all__ = ["BENCH", "QUICK_SIZES", "SIZES", "SUITE_SIZES", "AutogradExactLoss",
           "AutogradLaplace", "autograd_batch_loss", "bench_config", "bench_exact",
           "bench_laplace", "bench_reduced", "check_sizes", "laplace_config", "run"]

#: P of the GPU suite's parts: (on CUDA, at CPU sizes)
SUITE_SIZES = {"exact": ((64, 256, 576, 1024), (8, 16)),
               "laplace": ((256, 1024, 4096), (64, 256)),
               "reduced": ((1024, 4096, 16384), (256, 1024))}


def _check(args) -> None:
    modes = given_modes(args)
    if modes:
        raise ValueError(f"--paper: huang2024 times the exact population step only (got "
                         f"--{modes[0]})")
    unused = [flag for flag in given_flags(args) if flag != "--quick"]
    if unused:  # every flag is honoured or refused, never ignored
        raise ValueError(f"{unused[0]}: not used by --paper huang2024 (it times the exact step "
                         "in float64 on numpy, torch and autograd; its flags: --quick, --sizes, "
                         "--device, --repeats, --max-seconds, --threads, --out)")
    if args.sizes is not None:
        check_sizes(args.sizes, args.device)


def _run(args) -> int:
    run(args)
    return 0


def _part(part: str, bench, numpy: bool = False):
    """The suite's run of a part: one row per P of [`SUITE_SIZES`][] by ``bench(P, device,
    ...)`` (`numpy`: `bench` times the numpy engine too, at CPU sizes only); a P that does not
    fit (refused up front, or out of device memory) is a row with a note, and the larger ones
    are not tried."""
    def run(ctx: SuiteContext):
        import pandas as pd

        rows = []
        for P in SUITE_SIZES[part][1 if ctx.cpu_sizes else 0]:
            try:
                rows.append(bench(P, ctx.device, repeats=ctx.repeats,
                                  max_seconds=ctx.max_seconds,
                                  **({"numpy": ctx.cpu_sizes} if numpy else {})))
            except (ValueError, MemoryError, RuntimeError) as err:  # torch's OOM: RuntimeError
                rows.append({"device": ctx.device, "P": P,
                             "note": f"not measured: {str(err).splitlines()[0][:200]}"})
                break
            finally:
                empty_cache(ctx.device)
        return pd.DataFrame(rows)
    return run


def _lines(engine_col: str, diff_cols: tuple[str, ...], baseline_col: str = "autograd_s",
           baseline: str = "autograd"):
    """The summary lines of a part: per P the engine's seconds per step against the baseline's
    (`baseline_col`, named `baseline`), their ratio and the largest difference in `diff_cols`."""
    def lines(df) -> list[str]:
        out = []
        for r in df.to_dict("records"):
            if isinstance(r.get("note"), str):
                out.append(f"P = {r['P']}: {r['note']}")
                continue
            diff = max(r[c] for c in diff_cols if c in r and not math.isnan(r[c]))
            out.append(f"P = {r['P']}: {r[engine_col]:.4g} s/step against {baseline} "
                       f"{r[baseline_col]:.4g} s ({r[baseline_col] / r[engine_col]:.3g}x); "
                       f"largest difference {diff:.2g}")
        return out
    return lines


def _suite() -> list[BenchCase]:
    return [
        BenchCase("exact", "population-exact step (torch on the device, float64) against "
                  "plain autograd of the same sum", _part("exact", bench_exact, numpy=True),
                  budget_s=150.0,
                  summary=_lines("torch_s", ("torch_vs_numpy", "autograd_vs_numpy",
                                             "autograd_vs_torch"))),
        BenchCase("laplace", "population-laplace step (torch on the device, float64) against "
                  "its t-integral differentiated by autograd", _part("laplace", bench_laplace),
                  budget_s=90.0, summary=_lines("engine_s", ("autograd_vs_engine",))),
        BenchCase("reduced", "population-reduced step (torch on the device, float64, exact "
                  "count sums) against its numpy backend on the CPU",
                  _part("reduced", bench_reduced), budget_s=60.0,
                  summary=_lines("engine_s", ("torch_vs_numpy",), "numpy_s",
                                     "numpy on the CPU")),
    ]


#: What ``theorylab bench --paper huang2024`` and the GPU suite time of this paper.
BENCH = PaperBench(run=_run, check=_check, suite=_suite)
