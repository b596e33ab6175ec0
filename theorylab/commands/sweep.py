"""``python -m theorylab sweep SPEC.toml --out DIR [--scheduler ADDRESS | --workers N]
[--slurm JOBS] [--shard i/n] [--dry-run] [--new-store] [--threads N] [--worker-timeout S]
[--set KEY=VALUE] [--tensorboard DIR]``.

Runs every point of the sweep spec not already in the store ``DIR`` (cache hits are skipped and
logged; failed points are recorded and retried on the next run) and writes
``DIR/results.parquet``. Default: a Dask ``LocalCluster`` with one single-threaded worker
process per usable core (the dashboard address is printed); ``--workers 0``: in this process,
no Dask; ``--scheduler tcp://HOST:PORT``: any running Dask scheduler; ``--slurm JOBS``: a
SLURM cluster of that many single-worker batch jobs through dask-jobqueue (docs/sweeps.md).
``--tensorboard DIR``: each point computed now logs its recorded rows live in TensorBoard's
event format, in its own subfolder of DIR (``theorylab.core.livelog``; points of type ``run``).
Exit status: 0 all points ok or diverged, 1 some failed or every Dask worker was gone for
``--worker-timeout`` seconds (the unfinished points and the command that resumes are
printed) or the disk is full (the points kept and the command that resumes are printed), 2 a
bad spec or argument, a store in use or no worker joining (one line ``error: <field>: ...``),
130 interrupted by SIGINT, 143 by SIGTERM (the finished points are kept; the unfinished ones
and the command that resumes are printed).
"""

from __future__ import annotations

import logging
import shlex
import sys

from theorylab.core.cli import ArgumentParser, folder_arguments, output_argument
from theorylab.core.faults import command, keeping, stop_code
from theorylab.core.sweep import (
    WORKER_TIMEOUT_S,
    SweepInterrupted,
    SweepStoppedError,
    parse_shard,
    run_sweep_spec,
    usable_cores,
)
from theorylab.core.sweep.runner import SLURM_WORKER_TIMEOUT_S
from theorylab.core.threads import add_threads_argument, threads_from_args

#: How many unfinished points a stopped sweep names (then a count).
LISTED = 10


def _again(argv: list[str]) -> str:
    return shlex.join([sys.executable, "-m", "theorylab", "sweep",
                       *(x for x in argv if x != "--new-store")])


def _stopped(e: SweepStoppedError | SweepInterrupted, argv: list[str]) -> int:
    n = len(e.unfinished)
    names = [f"{p.run_id} {p.labels}" for p in e.unfinished[:LISTED]]
    more = f" and {n - LISTED} more" if n > LISTED else ""
    what = "interrupted" if e.interrupted else f"error: {e}"
    print(f"{what}; {len(e.results)} of {len(e.results) + n} points done and kept, "
          f"{n} unfinished: "
          f"{'; '.join(names)}{more}. Resume with: {_again(argv)}", file=sys.stderr)
    return stop_code() if e.interrupted else 1


def _points_kept(out: str, argv: list[str]):
    def describe() -> str:
        from pathlib import Path

        points = Path(out) / "points"
        n = len(list(points.glob("*.parquet"))) if points.is_dir() else 0
        return f"{n} finished point file(s) in {out}; resume with: {_again(argv)}"
    return describe


@command("sweep")
def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    p = ArgumentParser(prog="theorylab sweep", description=(
        "Run every point of a sweep spec (TOML) that the store --out does not hold yet and "
        "write DIR/results.parquet (points already there are skipped, failed ones retried). "
        "By default on a local Dask cluster, one worker per core; --workers 0 runs in this "
        "process, --scheduler ADDRESS on a running Dask scheduler, --slurm JOBS on SLURM. "
        "--dry-run lists the points and runs nothing; --tensorboard DIR logs each computed "
        "point's recorded rows live for TensorBoard, one subfolder per point. Exit codes: 0 "
        "every point ok or diverged, 1 some failed or the workers were lost (the command "
        "that resumes is printed), 2 bad input (one line error: <field>: ...), 130 or 143 "
        "interrupted (the finished points are kept)."))
    p.add_argument("spec", help="sweep spec (TOML: base config, [sweep] axes, seeds, mode, keep)")
    folder_arguments(p, required=True, what="a store's",
                     help="store folder (points/, results.parquet): new, empty, or a store or "
                          "point cache theorylab wrote")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS", help="a running Dask scheduler")
    where.add_argument("--workers", type=int, metavar="N",
                       help="LocalCluster workers (default: one per usable core, at most that "
                            "many unless --oversubscribe; 0: in this process)")
    where.add_argument("--slurm", type=int, metavar="JOBS",
                       help="run on JOBS SLURM batch jobs through dask-jobqueue (optional "
                            "extra 'cluster'; queue and walltime from jobqueue.yaml)")
    p.add_argument("--slurm-memory", default="4GB", help="memory of each SLURM job (4GB)")
    p.add_argument("--oversubscribe", action="store_true",
                   help=f"start all --workers even beyond the {usable_cores()} usable cores")
    p.add_argument("--worker-timeout", type=float, metavar="S",
                   help=f"seconds to wait for a first Dask worker, and for one to come back "
                        f"when all are gone, before stopping with an error (default "
                        f"{WORKER_TIMEOUT_S:g}; with --slurm {SLURM_WORKER_TIMEOUT_S:g}; "
                        f"0: forever)")
    p.add_argument("--shard", metavar="i/n", help="run only every n-th point, starting at i")
    p.add_argument("--set", action="append", metavar="KEY=VALUE", dest="sets",
                   help="set a key of the base config (SECTION.KEY=VALUE, a TOML value; "
                        "repeatable), validated as in the spec, e.g. --set train.lr=0.05")
    p.add_argument("--dry-run", action="store_true", help="list the points and the cached ones")
    p.add_argument("--new-store", action="store_true",
                   help="discard a store made by another spec instead of refusing")
    output_argument(p, "--tensorboard", writes="folder", metavar="DIR",
                    help="log the recorded rows of each point computed now to its own "
                         "subfolder of DIR (named by its axis values and run id) in "
                         "TensorBoard's event format, while it runs; for sweeps of point type "
                         "run, and the tensorboard package is needed (pip install "
                         "'theorylab[tensorboard]')")
    p.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    p.add_argument("-v", "--verbose", action="store_true",
                   help="log each cache hit, and Dask's own log lines")
    add_threads_argument(p)
    a = p.parse_args(argv)
    if a.workers is not None and a.workers < 0:
        p.error(f"--workers: must be >= 0 (got {a.workers})")
    if a.slurm is not None and a.slurm < 1:
        p.error(f"--slurm: must be >= 1 jobs (got {a.slurm})")
    if a.worker_timeout is not None and not a.worker_timeout >= 0:
        p.error(f"--worker-timeout: must be >= 0 seconds (got {a.worker_timeout})")
    try:
        parse_shard(a.shard)
    except ValueError as e:
        p.error(f"--{e}")
    logging.basicConfig(level=logging.INFO if a.verbose else logging.WARNING,
                        format="%(message)s")
    try:
        with keeping(_points_kept(a.out, argv)):
            table = run_sweep_spec(a.spec, a.out, scheduler=a.scheduler, workers=a.workers,
                                   shard=a.shard, dry_run=a.dry_run, new_store=a.new_store,
                                   force=a.force,
                                   threads=threads_from_args(a), slurm=a.slurm or 0,
                                   slurm_memory=a.slurm_memory, oversubscribe=a.oversubscribe,
                                   worker_timeout=a.worker_timeout, verbose=a.verbose,
                                   sets=a.sets, tensorboard=a.tensorboard,
                                   progress=False if a.no_progress else None)
    except (SweepStoppedError, SweepInterrupted) as e:
        return _stopped(e, argv)
    except KeyboardInterrupt:  # before any point started (reading the spec, starting Dask)
        print(f"interrupted before any point ran. Rerun with: "
              f"{shlex.join([sys.executable, '-m', 'theorylab', 'sweep', *argv])}",
              file=sys.stderr)
        return stop_code()
    if a.dry_run:
        print(table.to_string(index=False, max_rows=60))
        return 0
    return 1 if (table.status == "failed").any() else 0


if __name__ == "__main__":
    sys.exit(main())
