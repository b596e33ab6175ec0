"""Command line: `python -m theorylab figures [--list] [--only ID|PAPER ...] [--quick]
[--device D] [--out DIR] [--seed S] [--threads N] [--scheduler ADDRESS | --workers N]
[--cache DIR]`.

Lists and renders the figures of every registered paper; `--only jelassi2022` renders all the
figures of that paper. The phase diagram's grid runs through the sweep
(``theorylab.core.sweep``): in this process by default, on Dask with ``--workers N`` or
``--scheduler ADDRESS``, from a shared store of points with ``--cache DIR``.

A full run with default settings writes the committed ``figures/``; a ``--quick`` run writes
``runs/quick/figures`` and a run with another ``--seed`` or ``--device`` ``runs/custom/figures``
unless ``--out`` is given (an ``--out`` inside the committed folder is refused for those). A
figure whose data are not on this machine is skipped, with one line naming the package.

Before a run of more than a minute it prints an estimate from the figures' last runtimes in a
manifest (the one in ``--out``, else, for a full run, the committed ``figures/manifest.json``;
entries made with the same ``--quick``): their CPU seconds (``cpu_s``) where recorded, else
their wall seconds, with the wall range at the machine's load now
(``theorylab.core.cost.recorded_estimate``)."""

from __future__ import annotations

import sys
import textwrap
import time

from theorylab.core.cli import ArgumentParser, folder_arguments
from theorylab.core.faults import command, keeping, written_since
from theorylab.core.figures import list_figures, read_manifest, renamed_ids, run_figures
from theorylab.core.folders import claim_folder
from theorylab.core.provenance import default_out, refuse_committed, refuse_foreign_committed
from theorylab.core.sweep.cli import add_executor_arguments, executor_from_args
from theorylab.core.threads import add_threads_argument, set_threads, threads_from_args
from theorylab.core.trainer import check_out_folder
from theorylab.papers import load_all_figures


def _parser() -> ArgumentParser:
    p = ArgumentParser(
        prog="theorylab figures",
        description="Render the paper figures (PDF + PNG) and write <out>/manifest.json. A "
                    "run of more than a minute first prints an estimate (CPU seconds, and the "
                    "wall time alone and at the load now) from the figures' last recorded "
                    "runtimes.",
    )
    p.add_argument("--list", action="store_true", help="list figure ids and exit")
    p.add_argument("--only", nargs="+", metavar="ID", help="render only these ids, or every "
                   "figure of a paper named here (other entries of an existing manifest are "
                   "kept)")
    p.add_argument("--quick", action="store_true",
                   help="tiny settings: exercise every code path in seconds")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                   help="torch device for figures that train models (default: cpu)")
    folder_arguments(p, default=None, what="the figures",
                     help="output folder (default: figures/ for a full run with default "
                     "settings, runs/quick/figures for --quick, runs/custom/figures for another "
                     "--seed or --device): new, empty or a figures folder theorylab wrote")
    p.add_argument("--seed", type=int, default=0, help="base seed (default: 0)")
    add_threads_argument(p)  # the image figures train with 1 thread regardless (tiny models)
    add_executor_arguments(p)
    return p


def recorded_seconds(ids: list[str], manifest: dict, quick: bool) -> tuple[float, int, str]:
    """``(seconds, figures, clock)``: what the figures `ids` took when `manifest` recorded them
    (entries made with the same `quick` only), and how many it holds: their CPU time
    (``cpu_s``; clock ``"cpu"``) where recorded, else their wall time (``runtime_s``; clock
    ``"wall"`` when any figure has only that)."""
    total, found, clock = 0.0, 0, "cpu"
    for i in ids:
        entry = manifest.get("figures", {}).get(i)
        if not isinstance(entry, dict) or bool(entry.get("quick")) != quick:
            continue
        seconds = entry.get("cpu_s")
        if not isinstance(seconds, (int, float)):
            seconds, clock = entry.get("runtime_s"), "wall"
        if isinstance(seconds, (int, float)):
            total, found = total + float(seconds), found + 1
    return total, found, clock


def _say_estimate(ids: list[str], out, quick: bool) -> None:
    """Before a run of more than a minute: what its figures took last time, and the wall time
    that makes at the load now."""
    from theorylab.core.cost import cpu_seconds, recorded_estimate
    from theorylab.core.provenance import COMMITTED, REPO_ROOT

    seconds, found, clock = recorded_seconds(ids, read_manifest(out), quick)
    source = f"{out}/manifest.json"
    if not found and not quick:
        try:
            committed = read_manifest(REPO_ROOT / COMMITTED["figures"])
        except ValueError:  # a damaged committed manifest: no estimate, never a fault
            committed = {"figures": {}}
        seconds, found, clock = recorded_seconds(ids, committed, quick)
        source = "figures/manifest.json, the committed full run"
    if found:
        for line in recorded_estimate("figures", seconds, found=found, of=len(ids),
                                      clock=clock, source=source, spent=cpu_seconds()):
            print(line, flush=True)


@command("figures")
def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    load_all_figures()
    specs = list_figures()
    if args.list:
        width = max((len(s.id) for s in specs), default=0)
        for s in specs:
            line = f"{s.id:<{width}}  {s.paper}  [{s.paper_figure}] {s.title}"
            print(textwrap.shorten(line, width=160, placeholder=" ..."))
        return 0
    known = {s.id for s in specs}
    papers = {s.paper for s in specs}
    renamed = renamed_ids()
    for old in [i for i in args.only or [] if i in renamed]:
        print(f"note: figure {old!r} is now {renamed[old]!r} (the old id works until the next "
              "release)", file=sys.stderr)
    args.only = [renamed.get(i, i) for i in args.only] if args.only else args.only
    unknown = [i for i in args.only or [] if i not in known and i not in papers]
    # every argument is checked before anything is rendered or written
    if unknown:
        raise ValueError(f"--only: unknown figure id or paper (got "
                         f"{', '.join(map(repr, unknown))}); see --list")
    try:
        threads = threads_from_args(args)
    except ValueError as err:  # a bad $THEORYLAB_THREADS
        raise ValueError(f"--threads: {err}") from None
    if args.seed < 0:  # numpy's generators take seeds >= 0
        raise ValueError(f"--seed: must be >= 0 (got {args.seed})")
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            raise ValueError("--device: 'cuda' requested but CUDA is not available (got "
                             "'cuda')")
    custom = [f for f, on in (("--quick", args.quick), ("--seed", args.seed != 0),
                              ("--device", args.device != "cpu")) if on]
    if args.out is None:
        args.out = default_out("figures", quick=args.quick, custom=bool(custom))
    elif custom:
        refuse_committed(args.out, "figures", " ".join(custom))
    refuse_foreign_committed(args.out, "figures", what="theorylab figures")
    check_out_folder(args.out)
    claim_folder(args.out, "figures", field="--out", create=False, force=args.force)
    read_manifest(args.out)
    set_threads(threads)
    if args.only:
        args.only = [s.id for s in specs if s.id in args.only or s.paper in args.only]
    _say_estimate(args.only or [s.id for s in specs], args.out, args.quick)
    t0 = time.perf_counter()
    # a scheduler that cannot be reached, an unusable --cache: a ValueError, exit 2
    with keeping(written_since(args.out, time.time())), executor_from_args(args):
        claim_folder(args.out, "figures", field="--out", force=args.force)
        manifest = run_figures(args.only, out=args.out, quick=args.quick,
                               device=args.device, seed=args.seed)
    skipped = manifest.pop("skipped")
    done = [i for i in args.only or [s.id for s in specs] if i not in skipped]
    for i in done:
        entry = manifest["figures"][i]
        print(f"{i}: {entry['runtime_s']:.1f} s -> {args.out}/{i}.pdf, .png")
    print(f"{len(done)} figure(s) in {time.perf_counter() - t0:.1f} s; "
          f"manifest: {args.out}/manifest.json")
    if skipped:
        print(f"skipped {len(skipped)} figure(s), data not on this machine: "
              + "; ".join(sorted({f"{r}: {', '.join(i for i in skipped if skipped[i] == r)}"
                                  for r in skipped.values()})))
    return 0


if __name__ == "__main__":
    sys.exit(main())
