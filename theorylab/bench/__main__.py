"""Command line of the benchmarks: ``python -m theorylab.bench [--targets | --sweep] ...``.

See [`theorylab.bench.empirical`][] (the size grid and batched sweeps) and
[`theorylab.bench.targets`][] (the speed targets T1–T7).
"""

from __future__ import annotations

import sys

from theorylab.bench import empirical
from theorylab.bench.empirical import (
    default_max_bytes,
    machine_line,
    run,
    run_choices,
    run_sweeps,
)
from theorylab.bench.targets import run_targets
from theorylab.core.atomic_io import write_csv
from theorylab.core.cli import ArgumentParser
from theorylab.core.threads import add_threads_argument, set_threads_from_args


def main(argv=None) -> int:
    p = ArgumentParser(prog="python -m theorylab.bench",
                       description=empirical.__doc__.split("\n")[0])
    p.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default cpu)")
    p.add_argument("--backend", default="torch", choices=("torch", "numpy"))
    p.add_argument("--dtypes", nargs="+", default=["float64", "float32"],
                   choices=("float64", "float32"))
    p.add_argument("--quick", action="store_true", help="D ∈ {16, 64}, d = 64, N ∈ {10³, 10⁴}")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--max-bytes", type=float, default=None,
                   help="skip cases whose data X (N·D·d values) takes more bytes (default: 40 %% "
                        "of the host's free memory, and on CUDA at most 70 %% of the device's)")
    p.add_argument("--max-seconds", type=float, default=20.0,
                   help="time guard per case: stop repeating after this many seconds, and skip "
                        "cases estimated to take longer per step")
    add_threads_argument(p)
    p.add_argument("--targets", action="store_true",
                   help="measure the speed targets T1–T7 instead of the size grid "
                        "(theorylab.bench.targets)")
    p.add_argument("--sweep", action="store_true",
                   help="time batched sweeps (K seeds × R learning rates in one step, "
                        "theorylab.run_sweep) against the same runs one by one")
    p.add_argument("--choices", action="store_true",
                   help="the empirical step with each read of X (einsum, blas, torch, "
                        "auto) and autograd at 1 and 2 threads, and the population steps with "
                        "flush-to-zero off and on, all timed interleaved (CPU, float64)")
    p.add_argument("--targets-size", default="auto", choices=("auto", "target", "cpu"),
                   help="with --targets: 'target' runs every target at its own size, 'cpu' the "
                        "GPU targets at small CPU sizes; 'auto' (default): 'target' on CUDA, "
                        "'cpu' on a CPU")
    p.add_argument("--out", help="also write the table as CSV")
    args = p.parse_args(argv)
    set_threads_from_args(p, args)
    if args.backend == "numpy" and args.device != "cpu":
        p.error("--backend numpy runs on cpu only")
    if args.device.startswith("cuda"):
        import torch

        if not torch.cuda.is_available():
            print("no CUDA device: torch.cuda.is_available() is False", file=sys.stderr)
            return 1
    if args.max_bytes is None:
        args.max_bytes = default_max_bytes(args.device)
    if args.targets:
        return _run_targets(args)
    if args.choices:
        run_choices(args)
        return 0
    if args.sweep:
        print(machine_line(args.device))
        run_sweeps(args)
        return 0
    run(args)
    return 0


def _run_targets(args) -> int:
    print(machine_line(args.device))
    df = run_targets(args)
    print()
    import pandas as pd

    with pd.option_context("display.max_colwidth", 80, "display.width", 250):
        print(df.drop(columns=["what"]).to_string(index=False,
                                                   float_format=lambda x: f"{x:.4g}"))
    if args.out:
        write_csv(args.out, df)
    return 0


if __name__ == "__main__":
    sys.exit(main())
