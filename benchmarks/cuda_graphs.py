"""k population GD steps of the second paper's exact MAE loss, replayed from one CUDA graph
against the same k steps launched eagerly.

A population step at small P is a few hundred tiny kernels: the GPU waits on the launches, not
on the arithmetic. A CUDA graph records the k steps once and replays them with one launch. The
step timed here is the loss of [`AutogradExactLoss`][theorylab.huang2024.bench.AutogradExactLoss]
(the exact population sum of `population-exact` written as one torch expression) with its
gradient by autograd and the GD update Φ ← Φ − η ∂L/∂Φ, Υ ← Υ − η ∂L/∂Υ in place on the device:
nothing crosses to the host between steps, which is what a graph needs. The problem is the
one `theorylab bench --paper huang2024` times (``bench_config(P)``).

Each row checks before it times: the eager trajectory equals the `population-exact` engine's
own k steps (float64, to rounding), and the replayed graph equals the eager trajectory. Times
are medians of interleaved repeats, each repeat k steps followed by a synchronisation.

    python benchmarks/cuda_graphs.py --out FILE.csv [--sizes 16 576] [--k 20] [--repeats 5]

Without CUDA it times the eager steps on the CPU and says that graphs need CUDA (the rehearsal
of the GPU call). The table's first line names the machine.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time

import numpy as np
import pandas as pd
import torch

from theorylab.core.bench import device_name, interleaved_times, machine_line
from theorylab.huang2024.bench import AutogradExactLoss, bench_config
from theorylab.huang2024.engines import ExactEngine


def _engine_steps(engine: ExactEngine, k: int):
    """Φ, Υ after k steps of the engine itself (the reference trajectory) and the start."""
    start = params = engine.initial_params()
    for step in range(k):
        params = engine.apply(params, engine.evaluate(params, step, need_grad=True,
                                                      record=False).grads)
    return start, params


def measure(P: int, device: str, k: int, repeats: int) -> dict:
    cfg = bench_config(P, "torch", device)
    engine = ExactEngine(cfg, cfg.data.make_structure())
    base = AutogradExactLoss(engine, device)
    lr = float(cfg.train.lr)
    start, ref = _engine_steps(engine, k)

    def tensors():
        return [torch.tensor(np.asarray(a), dtype=torch.float64, device=device,
                             requires_grad=True) for a in (start.Phi, start.Ups)]

    def gd(Phi, Ups):
        gP, gU = torch.autograd.grad(base.loss(Phi, Ups), (Phi, Ups))
        with torch.no_grad():
            Phi.sub_(lr * gP)
            Ups.sub_(lr * gU)

    def reset(Phi, Ups):
        with torch.no_grad():
            Phi.copy_(torch.as_tensor(np.asarray(start.Phi), device=device))
            Ups.copy_(torch.as_tensor(np.asarray(start.Ups), device=device))

    cuda = device.startswith("cuda")
    sync = torch.cuda.synchronize if cuda else (lambda: None)

    eager = tensors()
    for _ in range(k):
        gd(*eager)
    sync()
    ref_diff = max(float(np.abs(eager[0].detach().cpu().numpy() - ref.Phi).max()),
                   float(np.abs(eager[1].detach().cpu().numpy() - ref.Ups).max()))

    def run_eager():
        reset(*eager)
        for _ in range(k):
            gd(*eager)
        sync()

    row = {"device": f"{device} ({device_name(device)})", "P": P, "k": k,
           "kernels_note": "", "engine_vs_eager_max_abs": ref_diff}
    fns = {"eager": run_eager}
    graph = None
    if cuda:
        static = tensors()
        side = torch.cuda.Stream()
        side.wait_stream(torch.cuda.current_stream())
        with torch.cuda.stream(side):  # warm-up on a side stream, as capture requires
            for _ in range(3):
                gd(*static)
        torch.cuda.current_stream().wait_stream(side)
        reset(*static)
        graph = torch.cuda.CUDAGraph()
        t0 = time.perf_counter()
        try:
            with torch.cuda.graph(graph):
                for _ in range(k):
                    gd(*static)
            sync()
            row["capture_s"] = time.perf_counter() - t0
        except Exception as err:  # a step that cannot be captured is the row's note
            row["kernels_note"] = f"capture failed: {type(err).__name__}: {err}"[:300]
            graph = None
        if graph is not None:
            reset(*static)
            graph.replay()
            sync()
            row["graph_vs_eager_max_abs"] = max(
                float((static[0] - eager[0]).detach().abs().max()),
                float((static[1] - eager[1]).detach().abs().max()))

            def run_graph():
                reset(*static)
                graph.replay()
                sync()

            fns["graph"] = run_graph
    else:
        row["kernels_note"] = "CUDA graphs need CUDA: eager steps only"
    times = interleaved_times(fns, sync, repeats=repeats)
    row["eager_s_per_step"] = statistics.median(times["eager"]) / k
    if "graph" in times:
        row["graph_s_per_step"] = statistics.median(times["graph"]) / k
        row["speedup"] = row["eager_s_per_step"] / row["graph_s_per_step"]
    return row


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description="k population GD steps of the second paper's exact "
                                "MAE loss from one CUDA graph against eager launches; one CSV.")
    p.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu",
                   help="cuda or cpu (default: cuda when available).")
    p.add_argument("--sizes", type=int, nargs="+", default=[16, 576],
                   help="values of P (one small, one large by default).")
    p.add_argument("--k", type=int, default=20, help="GD steps per graph (default 20).")
    p.add_argument("--repeats", type=int, default=5, help="timed repeats (default 5).")
    p.add_argument("--out", required=True, help="the CSV to write (a new file).")
    args = p.parse_args(argv)
    rows = []
    for P in args.sizes:
        try:
            rows.append(measure(P, args.device, args.k, args.repeats))
        except (RuntimeError, ValueError, MemoryError) as err:
            rows.append({"device": args.device, "P": P, "k": args.k,
                         "kernels_note": f"not measured: {str(err).splitlines()[0][:200]}"})
        print(pd.DataFrame(rows[-1:]).to_string(index=False), flush=True)
    table = pd.DataFrame(rows)
    with open(args.out, "x", encoding="utf-8") as f:
        f.write(machine_line(args.device) + "\n")
        table.to_csv(f, index=False)
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
