"""``python -m theorylab.sweep SPEC.toml --out DIR [--scheduler ADDRESS | --workers N]
[--slurm JOBS] [--shard i/n] [--dry-run] [--new-store] [--threads N]``.

Runs every point of the sweep spec not already in the store ``DIR`` (cache hits are skipped and
logged; failed points are recorded and retried on the next run) and writes
``DIR/results.parquet``. Default: a Dask ``LocalCluster`` with one single-threaded worker
process per core (the dashboard address is printed); ``--workers 0``: in this process, no Dask;
``--scheduler tcp://HOST:PORT``: any running Dask scheduler; ``--slurm JOBS``: a SLURM cluster
of that many single-worker batch jobs through dask-jobqueue (docs/sweeps.md). Exit status:
0 all points ok or diverged, 1 some failed, 2 a bad spec or argument (one line
``error: <field>: ...``).
"""

from __future__ import annotations

import logging
import sys

from theorylab.core.cli import ArgumentParser
from theorylab.core.sweep import parse_shard, run_sweep_spec
from theorylab.core.threads import add_threads_argument, threads_from_args


def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(prog="python -m theorylab.sweep", description=__doc__.split("\n")[0])
    p.add_argument("spec", help="sweep spec (TOML: base config, [sweep] axes, seeds, mode, keep)")
    p.add_argument("--out", required=True, help="store folder (points/, results.parquet)")
    where = p.add_mutually_exclusive_group()
    where.add_argument("--scheduler", metavar="ADDRESS", help="a running Dask scheduler")
    where.add_argument("--workers", type=int, metavar="N",
                       help="LocalCluster workers (default: one per core; 0: in this process)")
    where.add_argument("--slurm", type=int, metavar="JOBS",
                       help="run on JOBS SLURM batch jobs through dask-jobqueue (optional "
                            "extra 'cluster'; queue and walltime from jobqueue.yaml)")
    p.add_argument("--slurm-memory", default="4GB", help="memory of each SLURM job (4GB)")
    p.add_argument("--shard", metavar="i/n", help="run only every n-th point, starting at i")
    p.add_argument("--dry-run", action="store_true", help="list the points and the cached ones")
    p.add_argument("--new-store", action="store_true",
                   help="discard a store made by another spec instead of refusing")
    p.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    p.add_argument("-v", "--verbose", action="store_true", help="log each cache hit")
    add_threads_argument(p)
    a = p.parse_args(argv)
    if a.workers is not None and a.workers < 0:
        p.error(f"--workers: must be >= 0 (got {a.workers})")
    if a.slurm is not None and a.slurm < 1:
        p.error(f"--slurm: must be >= 1 jobs (got {a.slurm})")
    try:
        parse_shard(a.shard)
    except ValueError as e:
        p.error(f"--{e}")
    logging.basicConfig(level=logging.INFO if a.verbose else logging.WARNING,
                        format="%(message)s")
    try:
        table = run_sweep_spec(a.spec, a.out, scheduler=a.scheduler, workers=a.workers,
                               shard=a.shard, dry_run=a.dry_run, new_store=a.new_store,
                               threads=threads_from_args(a), slurm=a.slurm or 0,
                               slurm_memory=a.slurm_memory,
                               progress=False if a.no_progress else None)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    if a.dry_run:
        print(table.to_string(index=False))
        return 0
    return 1 if (table.status == "failed").any() else 0


if __name__ == "__main__":
    sys.exit(main())
