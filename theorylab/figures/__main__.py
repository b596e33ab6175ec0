"""Command line: `python -m theorylab.figures [--list] [--only ID|PAPER ...] [--quick]
[--device D] [--out DIR] [--seed S] [--threads N]`.

Lists and renders the figures of every registered paper; `--only jelassi2022` renders all the
figures of that paper."""

from __future__ import annotations

import argparse
import sys
import textwrap
import time

from theorylab.figures import list_figures, run_figures


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="python -m theorylab.figures",
        description="Render the paper figures (PDF + PNG) and write <out>/manifest.json.",
    )
    p.add_argument("--list", action="store_true", help="list figure ids and exit")
    p.add_argument("--only", nargs="+", metavar="ID", help="render only these ids, or every "
                   "figure of a paper named here (other entries of an existing manifest are "
                   "kept)")
    p.add_argument("--quick", action="store_true",
                   help="tiny settings: exercise every code path in seconds")
    p.add_argument("--device", default="cpu", choices=("cpu", "cuda"),
                   help="torch device for figures that train models (default: cpu)")
    p.add_argument("--out", default="figures", help="output folder (default: figures/)")
    p.add_argument("--seed", type=int, default=0, help="base seed (default: 0)")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="torch intra-op CPU threads (default: torch's own default); the image "
                        "figures train with 1 thread regardless (tiny models)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    specs = list_figures()
    if args.list:
        width = max((len(s.id) for s in specs), default=0)
        for s in specs:
            line = f"{s.id:<{width}}  {s.paper}  [{s.paper_figure}] {s.title}"
            print(textwrap.shorten(line, width=160, placeholder=" ..."))
        return 0
    if args.threads is not None:
        import torch

        if args.threads < 1:
            print("error: --threads must be >= 1", file=sys.stderr)
            return 2
        torch.set_num_threads(args.threads)
    if args.device == "cuda":
        import torch

        if not torch.cuda.is_available():
            print("error: --device cuda given but CUDA is not available", file=sys.stderr)
            return 2
    known = {s.id for s in specs}
    papers = {s.paper for s in specs}
    unknown = [i for i in args.only or [] if i not in known and i not in papers]
    if unknown:
        print(f"error: unknown figure id(s) or paper(s): {', '.join(unknown)}; "
              f"see --list", file=sys.stderr)
        return 2
    if args.only:
        args.only = [s.id for s in specs if s.id in args.only or s.paper in args.only]
    t0 = time.perf_counter()
    manifest = run_figures(args.only, out=args.out, quick=args.quick, device=args.device,
                           seed=args.seed)
    done = args.only or [s.id for s in specs]
    for i in done:
        entry = manifest["figures"][i]
        print(f"{i}: {entry['runtime_s']:.1f} s -> {args.out}/{i}.pdf, .png")
    print(f"{len(done)} figure(s) in {time.perf_counter() - t0:.1f} s; "
          f"manifest: {args.out}/manifest.json")
    return 0


if __name__ == "__main__":
    sys.exit(main())
