"""Command line: ``python -m theorylab.run CONFIG.toml --out DIR [--device cpu|cuda] ...``.

Writes ``DIR/trajectory.csv``, ``DIR/config.toml`` (resolved), ``DIR/final_state.npz`` (A, v, w*)
and ``DIR/checkpoint.npz``; prints a summary. Exit codes: 0 done, 2 invalid configuration,
3 the run diverged (the rows recorded so far are kept).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from .config import load_config
from .trainer import DivergenceError, run_experiment


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m theorylab.run", description=__doc__.split("\n")[0])
    p.add_argument("config", help="TOML file with [data], [model], [train]")
    p.add_argument("--out", required=True, help="output folder")
    p.add_argument("--device", choices=["cpu", "cuda"], help="override train.device")
    p.add_argument("--dtype", choices=["float64", "float32"], help="override train.dtype")
    p.add_argument("--backend", choices=["numpy", "torch"], help="override train.backend")
    p.add_argument("--steps", type=int, help="override train.steps")
    p.add_argument("--resume", action="store_true", help="continue from OUT/checkpoint.npz")
    p.add_argument("--no-progress", action="store_true", help="never show a progress bar")
    args = p.parse_args(argv)
    try:
        cfg = load_config(args.config)
        train = {}
        if args.device:
            train["device"] = args.device
            if args.device == "cuda" and not args.backend:
                train["backend"] = "torch"
        if args.dtype:
            train["dtype"] = args.dtype
        if args.backend:
            train["backend"] = args.backend
        if args.steps is not None:
            train["steps"] = args.steps
        if train:
            cfg = cfg.replace(train=train)
        res = run_experiment(
            cfg, out=Path(args.out), resume=args.resume,
            progress=False if args.no_progress else None,
        )
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    except DivergenceError as e:
        print(f"error: {e}; {len(e.result.trajectory)} recorded rows kept in {args.out}",
              file=sys.stderr)
        return 3
    print(res.summary())
    print(f"wrote {args.out}/trajectory.csv, config.toml, final_state.npz")
    return 0


if __name__ == "__main__":
    sys.exit(main())
