"""Step speed of the second paper's engines (Huang et al. (2025), theorylab.huang2024).

1. The MAE loss and gradient of one Monte Carlo batch: the hand-derived numpy gradient
   (`mae_loss_grad`, what `population-montecarlo` and `empirical` run) against a plain torch
   autograd implementation of the same loss (`theorylab.huang2024.bench.autograd_batch_loss`),
   on the same batch, after checking that both give the same loss and gradients; interleaved
   timing, one thread.
2. One exact population step of `population-laplace` (the exact engine for any P) at
   P = 64, 256, 1024.

    python benchmarks/huang2024_step_speed.py [--quick]

Prints one table; the numbers in docs/performance.md come from this script (machine named there).
"""

from __future__ import annotations

import argparse
import statistics
import time

import numpy as np
import torch

from theorylab.huang2024 import DataConfig, ExperimentConfig, ModelConfig, TrainConfig
from theorylab.huang2024.bench import autograd_batch_loss
from theorylab.huang2024.data import sample_batch
from theorylab.huang2024.engines import make_engine
from theorylab.huang2024.model import mae_loss_grad


def config(P: int, C1: int, C: int, engine: str, B: int = 64) -> ExperimentConfig:
    return ExperimentConfig(DataConfig(P=P, C1=C1, C=C),
                            ModelConfig(mask="bernoulli", gamma=0.5),
                            TrainConfig(engine=engine, mc_samples=B, lr=2.0 * P, z_nodes=16))


def interleaved(fns: dict, repeats: int) -> dict[str, float]:
    """Median seconds of each function, the calls interleaved (after one warm-up each)."""
    times: dict[str, list[float]] = {k: [] for k in fns}
    for f in fns.values():
        f()
    for _ in range(repeats):
        for k, f in fns.items():
            t0 = time.perf_counter()
            f()
            times[k].append(time.perf_counter() - t0)
    return {k: statistics.median(v) for k, v in times.items()}


def batch_rows(sizes, B: int, repeats: int) -> list[dict]:
    rows = []
    for P, C1, C in sizes:
        cfg = config(P, C1, C, "population-montecarlo", B)
        st = cfg.data.make_structure()
        rng = np.random.default_rng(0)
        d = cfg.data
        batch = sample_batch(rng, st, B, law=d.z_law, L=d.L, U=d.U, values=d.z_values,
                             probs=d.z_probs, mask_kind="bernoulli", gamma=0.5, mask_size=0)
        Phi = 0.1 * rng.standard_normal((P, st.F))
        Ups = 0.1 * rng.standard_normal((P, P))
        a = mae_loss_grad(st, Phi, Ups, batch)
        b = autograd_batch_loss(st, Phi, Ups, batch)
        err = max(abs(a.loss - b.loss), np.abs(a.grad_Phi - b.grad_Phi).max(),
                  np.abs(a.grad_Ups - b.grad_Ups).max())
        args = (st, Phi, Ups, batch)
        t = interleaved({"numpy": lambda args=args: mae_loss_grad(*args),
                         "autograd": lambda args=args: autograd_batch_loss(*args)}, repeats)
        rows.append({"what": "MAE batch loss+grad", "P": P, "B": B,
                     "numpy_ms": 1e3 * t["numpy"], "autograd_ms": 1e3 * t["autograd"],
                     "ratio": t["autograd"] / t["numpy"], "max_abs_diff": err})
    return rows


def laplace_rows(sizes, repeats: int) -> list[dict]:
    rows = []
    for P, C1, C in sizes:
        eng = make_engine(config(P, C1, C, "population-laplace"))
        params = eng.initial_params()
        ev = eng.evaluate(params, 0, need_grad=True, record=False)
        params = eng.apply(params, ev.grads)  # a non-trivial state

        def step(eng=eng, params=params):
            e = eng.evaluate(params, 1, need_grad=True, record=False)
            eng.apply(params, e.grads)

        t = interleaved({"step": step}, repeats)["step"]
        rows.append({"what": "population-laplace step", "P": P, "step_s": t})
    return rows


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true")
    args = p.parse_args(argv)
    torch.set_num_threads(1)
    repeats = 3 if args.quick else 7
    batch_sizes = [(64, 48, 4)] if args.quick else [(64, 48, 4), (256, 192, 4)]
    lap_sizes = [(64, 48, 4)] if args.quick else [(64, 48, 4), (256, 192, 4), (1024, 768, 16)]
    import pandas as pd

    print(pd.DataFrame(batch_rows(batch_sizes, 64, repeats)).to_string(
        index=False, float_format=lambda x: f"{x:.4g}"))
    print(pd.DataFrame(laplace_rows(lap_sizes, repeats)).to_string(
        index=False, float_format=lambda x: f"{x:.4g}"))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
