"""Command line of the benchmarks: ``python -m theorylab.bench [--targets | --sweep | --choices]
...`` (``theorylab bench``).

By default what is timed is the first paper's engines ([`theorylab.jelassi2022.bench`][]): the
empirical step over a size grid (default), the speed targets (``--targets``), batched sweeps
(``--sweep``) and the implementation choices (``--choices``). ``--paper huang2024`` times the
second paper's exact population step on numpy, on torch and as plain torch autograd
([`theorylab.huang2024.bench`][]; ``--sizes`` picks P, ``--device`` the torch device). Every
flag is checked before anything is measured, including that ``--out`` can be written and is
not a file other than a benchmark CSV: a bad value ends with one line ``error: <flag>: ...``
and exit code 2.
"""

from __future__ import annotations

import math
import sys

from theorylab.core.atomic_io import write_csv
from theorylab.core.bench import check_csv_out, check_device, default_max_bytes
from theorylab.core.cli import ArgumentParser
from theorylab.core.faults import command
from theorylab.core.provenance import refuse_foreign_committed
from theorylab.core.threads import add_threads_argument, set_threads_from_args


def _parser() -> ArgumentParser:
    p = ArgumentParser(prog="python -m theorylab.bench",
                       description="Step-speed benchmarks of the engines (the first paper's "
                                   "empirical and population steps)")
    p.add_argument("--device", default="cpu", help="cpu, cuda or cuda:N (default cpu)")
    p.add_argument("--backend", default=None, choices=("torch", "numpy"),
                   help="the first paper's engines: torch (default) or numpy")
    p.add_argument("--dtypes", nargs="+", default=None, choices=("float64", "float32"),
                   help="the first paper's engines: the dtypes timed (default float64 "
                        "float32)")
    p.add_argument("--quick", action="store_true", help="D ∈ {16, 64}, d = 64, N ∈ {10³, 10⁴}")
    p.add_argument("--repeats", type=int, default=5, help="timed steps per case (>= 1)")
    p.add_argument("--max-bytes", type=float, default=None,
                   help="skip cases whose data X (N·D·d values) takes more bytes (> 0; default: "
                        "40 %% of the host's free memory, and on CUDA at most 70 %% of the "
                        "device's)")
    p.add_argument("--max-seconds", type=float, default=20.0,
                   help="time guard per case (> 0): stop repeating after this many seconds, and "
                        "skip cases estimated to take longer per step")
    add_threads_argument(p)
    p.add_argument("--targets", action="store_true",
                   help="measure the speed targets instead of the size grid "
                        "(theorylab.jelassi2022.bench.targets)")
    p.add_argument("--sweep", action="store_true",
                   help="time batched sweeps (K seeds × R learning rates in one step, "
                        "theorylab.run_sweep) against the same runs one by one")
    p.add_argument("--choices", action="store_true",
                   help="the empirical step with each read of X (einsum, blas, torch, auto) and "
                        "autograd at 1 and 2 threads, and the population steps with "
                        "flush-to-zero off and on, all timed interleaved (CPU, float64)")
    p.add_argument("--targets-size", default="auto", choices=("auto", "target", "cpu"),
                   help="with --targets: 'target' runs every target at its own size, 'cpu' the "
                        "GPU targets at small CPU sizes; 'auto' (default): 'target' on CUDA, "
                        "'cpu' on a CPU")
    p.add_argument("--paper", default="jelassi2022", choices=("jelassi2022", "huang2024"),
                   help="whose engines to time (default jelassi2022); huang2024: the exact "
                        "population step (numpy, torch on --device, autograd), with --quick, "
                        "--sizes, --repeats, --max-seconds, --threads and --out")
    p.add_argument("--sizes", type=int, nargs="+", default=None,
                   help="with --paper huang2024: the numbers of patches P (>= 8; default "
                        "64 256 576, --quick 16 64)")
    p.add_argument("--out", help="also write the table as CSV (a new file, or a benchmark CSV "
                                 "to replace)")
    return p


#: The optional flags each mode of the first paper's benchmark honours.
_USED = {"grid": {"--backend", "--dtypes", "--max-bytes", "--quick"},
         "sweep": {"--backend", "--dtypes", "--quick"},
         "choices": set(),
         "targets": {"--dtypes", "--max-bytes", "--targets-size"}}


def _check(args) -> None:
    """Every flag, before anything is measured (``ValueError("--flag: ...")``)."""
    if args.repeats < 1:
        raise ValueError(f"--repeats: must be >= 1 (got {args.repeats})")
    if not (math.isfinite(args.max_seconds) and args.max_seconds > 0):
        raise ValueError(f"--max-seconds: must be a number > 0 (got {args.max_seconds})")
    if args.max_bytes is not None and not (math.isfinite(args.max_bytes) and args.max_bytes > 0):
        raise ValueError(f"--max-bytes: must be a number of bytes > 0 (got {args.max_bytes})")
    modes = [f for f in ("targets", "sweep", "choices") if getattr(args, f)]
    if len(modes) > 1:
        raise ValueError(f"--{modes[1]}: one of --targets, --sweep, --choices at a time (got "
                         f"{', '.join('--' + m for m in modes)})")
    if args.paper == "huang2024":
        if modes:
            raise ValueError(f"--paper: huang2024 times the exact population step only (got "
                             f"--{modes[0]})")
        unused = [flag for flag, given in (("--backend", args.backend is not None),
                                           ("--dtypes", args.dtypes is not None),
                                           ("--max-bytes", args.max_bytes is not None),
                                           ("--targets-size", args.targets_size != "auto"))
                  if given]
        if unused:
            raise ValueError(f"{unused[0]}: not used by --paper huang2024 (it times the exact "
                             "step in float64 on numpy, torch and autograd; its flags: "
                             "--quick, --sizes, --device, --repeats, --max-seconds, --threads, "
                             "--out)")
    elif args.sizes is not None:
        raise ValueError("--sizes: only used with --paper huang2024")
    else:  # the first paper: each mode's own flags; another one given is refused, not ignored
        mode = modes[0] if modes else "grid"
        used = _USED[mode]
        given = [flag for flag, on in (("--backend", args.backend is not None),
                                       ("--dtypes", args.dtypes is not None),
                                       ("--max-bytes", args.max_bytes is not None),
                                       ("--quick", args.quick),
                                       ("--targets-size", args.targets_size != "auto"))
                 if on and flag not in used]
        if given:
            what = f"--{mode}" if modes else "the size grid"
            raise ValueError(f"{given[0]}: not used by {what} (its flags: "
                             f"{', '.join(sorted(used))}, --device, --repeats, "
                             "--max-seconds, --threads, --out)")
    if args.backend is None:
        args.backend = "torch"
    if args.dtypes is None:
        args.dtypes = ["float64", "float32"]
    if args.backend == "numpy" and args.device != "cpu":
        raise ValueError(f"--backend: numpy runs on cpu only (got --device {args.device})")
    if args.choices and args.device != "cpu":
        raise ValueError(f"--device: --choices times the CPU step only (got {args.device!r})")
    check_device(args.device)
    if args.paper == "huang2024" and args.sizes is not None:
        from theorylab.huang2024.bench import check_sizes

        check_sizes(args.sizes, args.device)
    if args.out is not None:
        check_csv_out(args.out)
        refuse_foreign_committed(args.out, "performance", what="theorylab bench")


@command("bench")
def main(argv=None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    set_threads_from_args(p, args)
    try:
        _check(args)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if args.paper == "huang2024":
        from theorylab.huang2024.bench import run

        run(args)
        return 0
    from theorylab.jelassi2022.bench import empirical

    if args.max_bytes is None:
        args.max_bytes = default_max_bytes(args.device)
    if args.targets:
        return _run_targets(args)
    if args.choices:
        empirical.run_choices(args)
        return 0
    if args.sweep:
        print(empirical.machine_line(args.device))
        empirical.run_sweeps(args)
        return 0
    empirical.run(args)
    return 0


def _run_targets(args) -> int:
    from theorylab.jelassi2022.bench import empirical, targets

    print(empirical.machine_line(args.device))
    df = targets.run_targets(args)
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
