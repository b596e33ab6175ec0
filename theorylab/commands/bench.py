"""``theorylab bench``: time the engines of a paper, or run the GPU suite.

``theorylab bench [--paper NAME] ...`` runs the paper's own benchmark (its ``Paper.bench``
hook, a [`PaperBench`][theorylab.core.bench.PaperBench]); the default paper's is the empirical
step over a size grid, the speed targets (``--targets``), batched sweeps (``--sweep``) and the
implementation choices (``--choices``); the second paper's is the exact population step on
numpy, on torch and as plain autograd (``--sizes`` picks P).

``theorylab bench --gpu-suite --out DIR`` runs every GPU check in one call: the GPU-marked tests
and every paper's suite parts (speed targets, the engines against plain autograd, float32
against float64), each in its own process under its own time limit, within ``--suite-seconds``
(default 470 s: under 8 minutes with the start-up). It writes one CSV per part (a ``device``
column names the GPU), ``suite.csv`` and a one-page ``summary.md`` into DIR
(docs/performance.md). On CUDA (the default device when there is one) the parts run at their
own sizes; on a CPU (``--device cpu``, the default without CUDA) the same parts run at CPU
sizes, and the suite says in one line that the GPU parts need CUDA.

Every flag is checked before anything is measured, including that ``--out`` can be written and
is not a file other than a benchmark CSV (or, for the suite, a folder other than a suite's; a
user's file or folder only with ``--force``), and that a reduced run does not write the committed
docs/performance/: a bad value ends with one line ``error: <flag>: ...`` and exit code 2.
"""

from __future__ import annotations

import argparse
import math
import sys
from pathlib import Path

from theorylab.core.bench import (
    SuiteContext,
    check_csv_out,
    check_device,
    device_name,
    given_modes,
)
from theorylab.core.cli import ArgumentParser, output_argument
from theorylab.core.faults import command
from theorylab.core.provenance import refuse_committed
from theorylab.core.threads import add_threads_argument, set_threads_from_args
from theorylab.papers import DEFAULT_PAPER, PAPERS

#: The GPU suite's default total time (seconds): under 8 minutes with the start-up.
SUITE_SECONDS = 470.0
#: The GPU-marked tests' part: its time limit (seconds).
TESTS_BUDGET_S = 75.0
#: The line a suite run without CUDA prints and writes into its summary.
NO_CUDA = ("no CUDA here: the suite ran its parts at CPU sizes on the CPU; the GPU parts (the "
           "GPU-marked tests, the targets at their own sizes) need CUDA")


def _bench_papers() -> list[str]:
    return [name for name, paper in PAPERS.items() if paper.bench is not None]


def _parser() -> ArgumentParser:
    p = ArgumentParser(prog="theorylab bench",
                       description=(
        "Time a paper's engines (step speed against a baseline in the same run, with the "
        "machine named), or with --gpu-suite run every GPU check in one call into --out. "
        "Exit codes: 0, 1 when a part of the GPU suite did not pass, 2 on a bad flag (one line "
        "error: <flag>: ...)."))
    p.add_argument("--paper", default=DEFAULT_PAPER, choices=_bench_papers(),
                   help=f"whose engines to time (default {DEFAULT_PAPER})")
    p.add_argument("--device", default=None,
                   help="cpu, cuda or cuda:N (default cpu; with --gpu-suite cuda when there "
                        "is one)")
    p.add_argument("--backend", default=None, choices=("torch", "numpy"),
                   help="jelassi2022: the engines' backend (default torch)")
    p.add_argument("--dtypes", nargs="+", default=None, choices=("float64", "float32"),
                   help="jelassi2022: the dtypes timed (default float64 float32)")
    p.add_argument("--quick", action="store_true", help="smaller sizes")
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
                   help="jelassi2022: measure the speed targets instead of the size grid")
    p.add_argument("--sweep", action="store_true",
                   help="jelassi2022: time batched sweeps (K seeds × R learning rates in one "
                        "step) against the same runs one by one")
    p.add_argument("--choices", action="store_true",
                   help="jelassi2022: the empirical step with each read of X and autograd at 1 "
                        "and 2 threads, and the population steps with flush-to-zero off and on "
                        "(CPU, float64)")
    p.add_argument("--targets-size", default="auto", choices=("auto", "target", "cpu"),
                   help="with --targets: 'target' runs every target at its own size, 'cpu' the "
                        "GPU targets at small CPU sizes; 'auto' (default): 'target' on CUDA, "
                        "'cpu' on a CPU")
    p.add_argument("--sizes", type=int, nargs="+", default=None,
                   help="huang2024: the numbers of patches P (>= 8, checked by the engine's "
                        "validator with an estimate; default 64 256 576, --quick 16 64)")
    p.add_argument("--gpu-suite", action="store_true",
                   help="run the GPU suite into the folder --out (see the module help)")
    p.add_argument("--suite-seconds", type=float, default=SUITE_SECONDS,
                   help=f"with --gpu-suite: the total time (default {SUITE_SECONDS:.0f})")
    p.add_argument("--suite-part", default=None, help=argparse.SUPPRESS)
    p.add_argument("--cpu-sizes", action="store_true", help=argparse.SUPPRESS)
    output_argument(p, "--out", writes=(".csv", "folder"),
                    help="the table as CSV (a new file, or a benchmark CSV to replace); with "
                         "--gpu-suite a folder (new, empty, or a previous suite's); a reduced run "
                         "(--quick, --sizes, --repeats, --max-seconds, --max-bytes) never writes "
                         "the committed docs/performance/")
    p.add_argument("--force", action="store_true",
                   help="replace an --out CSV that theorylab did not write, or (--gpu-suite) "
                        "write into a folder that it did not write")
    return p


def _check(args) -> None:
    """Every flag, before anything is measured (``ValueError("--flag: ...")``)."""
    if args.repeats < 1:
        raise ValueError(f"--repeats: must be >= 1 (got {args.repeats})")
    if not (math.isfinite(args.max_seconds) and args.max_seconds > 0):
        raise ValueError(f"--max-seconds: must be a number > 0 (got {args.max_seconds})")
    if args.max_bytes is not None and not (math.isfinite(args.max_bytes) and args.max_bytes > 0):
        raise ValueError(f"--max-bytes: must be a number of bytes > 0 (got {args.max_bytes})")
    if args.gpu_suite or args.suite_part:
        _check_suite(args)
        _defaults(args)
        return
    if args.device is None:
        args.device = "cpu"
    if args.backend == "numpy" and args.device != "cpu":
        raise ValueError(f"--backend: numpy runs on cpu only (got --device {args.device})")
    check_device(args.device)
    PAPERS[args.paper].bench().check(args)  # sees which of --backend, --dtypes were given
    _defaults(args)
    if args.out is not None:
        reduced = _reduced(args)
        if reduced:
            refuse_committed(args.out, "performance", " ".join(reduced), field="--out")
        check_csv_out(args.out, force=args.force, committed="performance")


def _reduced(args) -> list[str]:
    """The flags that make this a reduced run (its table is not the committed one)."""
    p = _parser()
    return [flag for flag, on in (
        ("--quick", args.quick), ("--sizes", args.sizes is not None),
        ("--repeats", args.repeats != p.get_default("repeats")),
        ("--max-seconds", args.max_seconds != p.get_default("max_seconds")),
        ("--max-bytes", args.max_bytes is not None)) if on]


def _defaults(args) -> None:
    """The defaults of the flags a paper's check needs to see unset."""
    if args.backend is None:
        args.backend = "torch"
    if args.dtypes is None:
        args.dtypes = ["float64", "float32"]


def _check_suite(args) -> None:
    if args.gpu_suite and args.out is None:
        raise ValueError("--out: the GPU suite needs a folder for its tables (--out DIR)")
    used = given_modes(args)
    if used or args.sizes is not None:
        flag = f"--{used[0]}" if used else "--sizes"
        raise ValueError(f"{flag}: not taken with --gpu-suite (the suite runs fixed parts)")
    if not (math.isfinite(args.suite_seconds) and args.suite_seconds > 0):
        raise ValueError(f"--suite-seconds: must be a number > 0 (got {args.suite_seconds})")
    if args.device is None:
        import torch

        args.device = "cuda" if torch.cuda.is_available() else "cpu"
    check_device(args.device)
    if args.gpu_suite:
        from theorylab.core.benchsuite import check_suite_out

        check_suite_out(args.out, force=args.force, create=False)
    elif args.out is not None:  # a part of the suite: a CSV in the suite's folder
        check_csv_out(args.out, force=args.force)


@command("bench")
def main(argv=None) -> int:
    p = _parser()
    args = p.parse_args(argv)
    set_threads_from_args(p, args)
    _check(args)
    if args.suite_part:
        return _run_part(args)
    if args.gpu_suite:
        return _run_suite(args)
    return PAPERS[args.paper].bench().run(args)


# -- the GPU suite ------------------------------------------------------------------------------
def _cases() -> dict[str, tuple[str, object]]:
    """``"<paper>-<case>"`` → (paper, BenchCase), every paper's suite parts in paper order."""
    out = {}
    for name in _bench_papers():
        for case in PAPERS[name].bench().suite():
            out[f"{name}-{case.name}"] = (name, case)
    return out


def _run_part(args) -> int:
    """One part in this process (the suite starts one process per part): its table, with a
    ``device`` column naming the device, to ``--out``."""
    import pandas as pd

    from theorylab.core.bench import write_table

    cases = _cases()
    if args.suite_part not in cases:
        raise ValueError(f"--suite-part: unknown part {args.suite_part!r} (known: "
                         f"{', '.join(cases)})")
    _paper, case = cases[args.suite_part]
    ctx = SuiteContext(device=args.device, cpu_sizes=args.cpu_sizes,
                       max_seconds=args.max_seconds, repeats=args.repeats)
    table = pd.DataFrame(case.run(ctx))
    name = device_name(args.device)
    if "device" in table.columns:
        table["device"] = table["device"].map(lambda d: f"{d} ({name})")
    else:
        table.insert(0, "device", f"{args.device} ({name})")
    write_table(args.out, table)
    print(table.to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    return 0


def _tests_part(args, out: Path):
    """The GPU-marked tests (pytest -m gpu) of this checkout, their outcomes as a table; None
    when the tests are not here (an installed package without its repository)."""
    from theorylab.core.benchsuite import SuitePart, junit_rows

    root = Path(__file__).resolve().parents[2]
    tests = root / "tests"
    if not tests.is_dir():
        return None
    files = sorted(str(f.relative_to(root)) for f in tests.rglob("test_*.py")
                   if "mark.gpu" in f.read_text(encoding="utf-8", errors="replace"))
    xml = out / "logs" / "gpu-tests.xml"
    device = f"{args.device} ({device_name(args.device)})"

    def after() -> None:
        import pandas as pd

        from theorylab.core.atomic_io import write_csv

        if xml.exists():
            write_csv(out / "gpu-tests.csv", pd.DataFrame(junit_rows(xml, device)))

    def lines(table) -> list[str]:
        counts = table["outcome"].value_counts()
        out = [", ".join(f"{n} {k}" for k, n in counts.items())]
        bad = table[table["outcome"].isin(["failed", "error"])]
        return out + [f"not passed: {t}" for t in bad["test"].head(10)]

    argv = [sys.executable, "-m", "pytest", "-q", "-m", "gpu", "-p", "no:cacheprovider",
            "-o", "addopts=", "-o", "testpaths=", f"--junitxml={xml}", *files]
    return SuitePart("gpu-tests", f"the GPU-marked tests ({len(files)} files; pytest -m gpu)",
                     TESTS_BUDGET_S, argv, cwd=str(root), after=after, summary=lines)


def _run_suite(args) -> int:
    from theorylab.core.bench import machine_line
    from theorylab.core.benchsuite import SuitePart, check_suite_out, run_suite

    out = check_suite_out(args.out, force=args.force)
    cpu = not args.device.startswith("cuda")
    parts = []
    tests = _tests_part(args, out)
    if tests is not None:
        parts.append(tests)
    for key, (_paper, case) in _cases().items():
        argv = [sys.executable, "-m", "theorylab", "bench", "--suite-part", key, "--device",
                args.device, "--repeats", str(args.repeats), "--max-seconds",
                str(args.max_seconds), "--out", str(out / f"{key}.csv")]
        if args.threads is not None:
            argv += ["--threads", str(args.threads)]
        if cpu:
            argv.append("--cpu-sizes")
        parts.append(SuitePart(key, case.what, case.budget_s, argv, summary=case.summary))
    header = ["# GPU suite", "", machine_line(args.device).lstrip("# "), "",
              f"Command: theorylab bench --gpu-suite --device {args.device} --out {args.out}"]
    if cpu:
        print(NO_CUDA, flush=True)
        header += ["", NO_CUDA + "."]
    rows = run_suite(parts, out, header=header, total_s=args.suite_seconds,
                     log=lambda s: print(s, flush=True))
    print(f"wrote {out / 'summary.md'} and {sum(1 for r in rows if r['file'])} tables")
    return 0 if all(r["status"] == "ok" for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
