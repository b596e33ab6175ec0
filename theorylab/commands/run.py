"""Command line: ``python -m theorylab run CONFIG.toml --out DIR [--device cpu|cuda] ...``.

The config's ``[experiment] paper = "<name>"`` says whose engines run it (default
``jelassi2022``, so a config without the key runs as the first paper's; ``--list``
shows the papers). Writes ``DIR/trajectory.csv``, ``DIR/config.toml`` (resolved),
``DIR/final_state.npz`` and ``DIR/checkpoint.npz``; prints a summary. Exit codes: 0 done,
1 the disk is full (the rows so far are kept; the message gives the command that resumes), 2
invalid configuration or output folder (one line ``error: <field>: ...``), 3 the run diverged
(the rows recorded so far are kept), 130 interrupted by SIGINT and 143 by SIGTERM (the rows so
far and a checkpoint are kept; the message gives the command that resumes, with every flag
that was given).

Before a run predicted to take longer than a minute, an estimate (steps, seconds on this
machine, memory; from a measured per-step cost, ``theorylab.core.cost``) is printed to stderr;
``--dry-run`` prints it and runs nothing (no ``--out`` needed). ``--flow`` runs the gradient
flow of the config instead of gradient descent (``train.mode = "flow"``). ``--tensorboard DIR``
also logs each recorded row, as it is recorded, in TensorBoard's event format
([`theorylab.core.livelog`][]; the optional extra ``theorylab[tensorboard]``).
"""

from __future__ import annotations

import shlex
import sys

from theorylab.core.cli import ArgumentParser, folder_arguments, output_argument
from theorylab.core.config import apply_sets, check_run_steps, paper_of, read_toml
from theorylab.core.cost import LONG_RUN_S, estimate
from theorylab.core.faults import command, keeping, stop_code
from theorylab.core.folders import claim_folder
from theorylab.core.livelog import check_apart, live_log
from theorylab.core.threads import add_threads_argument, set_threads_from_args
from theorylab.core.trainer import DivergenceError, Interrupted, check_out_folder
from theorylab.papers import DEFAULT_PAPER, PAPERS


def _resume_command(args) -> str:
    """The command that continues this run: the same config, folder and flags, with
    ``--resume``."""
    dashed = args.config.startswith("-")  # a name argparse would take for a flag: after "--"
    out = [f"--out={args.out}"] if args.out.startswith("-") else ["--out", args.out]
    again = [sys.executable, "-m", "theorylab", "run", *([] if dashed else [args.config]), *out,
             "--resume"]
    for flag in ("steps", "device", "dtype", "backend", "threads"):
        value = getattr(args, flag, None)
        if value is not None:
            again += [f"--{flag}", str(value)]
    for item in getattr(args, "sets", None) or ():
        again += ["--set", item]
    if args.tensorboard is not None:
        again.append(f"--tensorboard={args.tensorboard}")
    again += [flag for flag, on in (("--no-progress", args.no_progress), ("--flow", args.flow))
              if on]
    return shlex.join(again + (["--", args.config] if dashed else []))


def _say_if_long(paper, cfg) -> None:
    """Print the estimate of the run (stderr) when it is predicted longer than LONG_RUN_S. A
    run that will be refused (it does not fit in memory, or its estimate cannot be made) gets
    no estimate: the run itself reports what is wrong, in one line."""
    try:
        est = estimate(paper.cost(cfg), budget_s=0.3)
    except (ValueError, MemoryError, OverflowError):
        return
    if est.seconds > LONG_RUN_S:
        print(est, file=sys.stderr)


@command("run")
def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(
        prog="theorylab run", description=(
            "Train one run config (a TOML file; its [experiment] paper says whose engines run "
            "it, default jelassi2022) into the folder --out: trajectory.csv, the resolved "
            "config.toml, final_state.npz and a checkpoint. --dry-run prints the run's "
            "estimate (steps, seconds on this machine, memory) and runs nothing; --flow runs "
            "the config's gradient flow instead of gradient descent; --tensorboard DIR also "
            "logs the recorded rows live for TensorBoard. Exit codes: 0 done, 1 "
            "disk full, 2 bad input (one line error: <field>: ...), 3 the run diverged (its "
            "rows are kept), 130 or 143 interrupted (the rows and a checkpoint are kept)."),
        epilog="Every config key (type, default, allowed values, meaning, paper reference): "
               "docs/config.md (theorylab config prints it).")
    p.add_argument("config", nargs="?",
                   help="TOML file ([experiment] paper, then the paper's sections)")
    p.add_argument("--list", action="store_true", help="list the papers and exit")
    folder_arguments(p, what="a run's", help="output folder (required with a config): new, "
                     "empty, or a run folder of the same paper")
    p.add_argument("--device", choices=["cpu", "cuda"], help="override train.device")
    p.add_argument("--dtype", choices=["float64", "float32"], help="override train.dtype")
    p.add_argument("--backend", choices=["numpy", "torch"], help="override train.backend")
    p.add_argument("--steps", type=int, help="override train.steps")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", dest="sets",
                   help="set a config key (SECTION.KEY=VALUE, a TOML value; repeatable), "
                        "validated as in the file, e.g. --set train.lr=0.05")
    p.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint.npz")
    p.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    p.add_argument("--flow", action="store_true",
                   help="run the gradient flow of the config (train.mode = 'flow')")
    p.add_argument("--dry-run", action="store_true",
                   help="print the estimate (steps, seconds on this machine, memory) and exit")
    output_argument(p, "--tensorboard", writes="folder", metavar="DIR",
                    help="also log each recorded row (the numbers of trajectory.csv, at its "
                         "steps) to DIR in TensorBoard's event format while the run runs, for "
                         "tensorboard --logdir DIR; DIR is new, empty or a log folder theorylab "
                         "wrote (another folder only with --force), and the tensorboard "
                         "package is needed (pip install 'theorylab[tensorboard]')")
    add_threads_argument(p)
    args = p.parse_args(argv)
    set_threads_from_args(p, args)
    if args.list:
        for name, paper in PAPERS.items():
            default = " (default)" if name == DEFAULT_PAPER else ""
            print(f"{name}{default}: {paper.title}; notes: {paper.notes_path()}")
        return 0
    if not args.config:
        p.error("config: required (a TOML file, or --list)")
    if args.out is None and not args.dry_run:
        p.error("out: required (--out DIR, the run folder)")
    try:
        out = check_out_folder(args.out) if args.out is not None else None
        check_apart(args.tensorboard, out, "the run folder")
        tables = apply_sets(read_toml(args.config), args.sets)
        paper = PAPERS[paper_of(tables, tuple(PAPERS), DEFAULT_PAPER)]
        cfg = paper.config_from_tables(tables)
        cfg = paper.override(cfg, {"device": args.device, "dtype": args.dtype,
                                   "backend": args.backend, "steps": args.steps})
        if args.flow:
            cfg = cfg.replace(train={"mode": "flow"})
        check_run_steps(cfg.train.steps)  # before an estimate of nothing, too
        if paper.cost is not None and args.dry_run:
            print(estimate(paper.cost(cfg), budget_s=1.0))
            return 0
        if paper.cost is not None and not args.resume:
            _say_if_long(paper, cfg)
        elif args.dry_run:
            print(f"error: paper: {paper.name} has no cost model", file=sys.stderr)
            return 2
        with live_log(args.tensorboard, force=args.force):  # checked before anything is written
            if args.force:  # the run's own claim refuses a folder theorylab did not write
                claim_folder(out, "run", paper=paper.name, force=True)
            with keeping(lambda: f"resume with: {_resume_command(args)}"):
                res = paper.run(cfg, out=out, resume=args.resume,
                                progress=False if args.no_progress else None)
    except DivergenceError as e:
        print(f"error: {e}; {len(e.result.trajectory)} recorded rows kept in {args.out}",
              file=sys.stderr)
        return 3
    except Interrupted as e:
        print(f"interrupted at step {e.step}; the rows so far and a checkpoint are in "
              f"{args.out}. Resume with: {_resume_command(args)}", file=sys.stderr)
        return stop_code()
    except KeyboardInterrupt:  # before the run started (its estimate)
        print("interrupted before the run started; nothing was written", file=sys.stderr)
        return stop_code()
    print(res.summary())
    print(f"wrote {args.out}/trajectory.csv, config.toml, final_state.npz")
    return 0


if __name__ == "__main__":
    sys.exit(main())
