"""Where the time of one Monte Carlo population step goes (the first paper's target T4:
D = 1024, 10⁶ fresh draws per step), kernel by kernel.

The step is the one `theorylab bench --targets` times for T4 (``evaluate(need_grad=True)`` +
``apply`` from the suite's fixed aligned state, fresh draws). It is run under
``torch.profiler`` after one warm-up; every kernel's device time is put in one of five groups
by its name (draws, matrix products, the activation and loss passes, reductions, copies) and
the groups are printed as shares of the step. Beside it, the same step is timed without the
profiler, and the draws alone (the engine's own generator loop, nothing computed on them), so
that "products vs the rest" is a measurement, not an estimate.

    python benchmarks/mc_profile.py --out DIR [--D 1024] [--M 1000000] [--dtype float64 float32]

Without CUDA it runs the same code on the CPU at the size given (the rehearsal: use
``--D 128 --M 4000``). Writes DIR/mc-profile.csv (groups) and DIR/mc-kernels.csv (the
kernels), the first line of each naming the machine;
neither may exist yet.
"""

from __future__ import annotations

import argparse
import re
import statistics
import time
from pathlib import Path

import pandas as pd
import torch

from theorylab.core.bench import machine_line
from theorylab.jelassi2022.bench.cases import STATE, population_engine
from theorylab.jelassi2022.observables import symmetric_A

#: kernel-name patterns of each group, tried in order (the first match wins)
GROUPS = (
    ("draws", r"philox|curand|random|uniform|normal|randint|bernoulli|distribution"),
    ("matrix products", r"gemm|matmul|\bmm\b|addmm|cutlass|sm\d+_xmma|ampere|hopper|cublas"),
    ("reductions", r"reduce|sum|max|min|norm|any|all"),
    ("copies", r"copy|memcpy|memset|fill|cat"),
    ("elementwise", r"."),
)


def group_of(name: str) -> str:
    low = name.lower()
    for group, pattern in GROUPS:
        if re.search(pattern, low):
            return group
    return "elementwise"


def _sync(device: str) -> None:
    if device == "cuda":
        torch.cuda.synchronize()


def profile(D: int, M: int, dtype: str, device: str, repeats: int) -> tuple[list, list]:
    eng = population_engine(D, 4, "montecarlo", device=device, dtype=dtype, mc_samples=M)
    A = symmetric_A(D, eng.partition, eng.diag, STATE["gamma"], STATE["rho"])
    params = {"A": eng.xp.asarray(A), "v": STATE["alpha"] * eng.wstar}
    state = {"step": 1}

    def step():
        state["step"] += 1
        ev = eng.evaluate(params, state["step"], need_grad=True, record=False)
        eng.apply(params, ev.grads)

    def draws_only():
        state["step"] += 1
        for c, y, _ in eng._draw(state["step"], with_z=False):
            del c, y

    def timed(fn):
        out = []
        for _ in range(repeats):
            _sync(device)
            t0 = time.perf_counter()
            fn()
            _sync(device)
            out.append(time.perf_counter() - t0)
        return statistics.median(out)

    step()
    draws_only()
    t_step, t_draws = timed(step), timed(draws_only)
    acts = [torch.profiler.ProfilerActivity.CPU]
    if device == "cuda":
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=acts) as prof:
        step()
        _sync(device)
    kernels = []
    for ev in prof.key_averages():
        if device == "cuda":  # the kernels themselves (an aten op's time would count twice)
            if ev.device_type != torch.autograd.DeviceType.CUDA:
                continue
            t = getattr(ev, "self_device_time_total", getattr(ev, "self_cuda_time_total", 0.0))
        else:
            t = ev.self_cpu_time_total
        t /= 1e6
        if t <= 0:
            continue
        kernels.append({"dtype": dtype, "kernel": ev.key[:120], "calls": ev.count,
                        "seconds": t, "group": group_of(ev.key)})
    kdf = pd.DataFrame(kernels)
    total = float(kdf.seconds.sum()) if len(kdf) else float("nan")
    rows = [{"dtype": dtype, "D": D, "M": M, "chunk": eng.chunk, "group": g,
             "seconds": float(s), "share": float(s) / total}
            for g, s in kdf.groupby("group").seconds.sum().sort_values(ascending=False).items()]
    rows += [{"dtype": dtype, "D": D, "M": M, "chunk": eng.chunk, "group": "(profiled total)",
              "seconds": total, "share": 1.0},
             {"dtype": dtype, "D": D, "M": M, "chunk": eng.chunk,
              "group": "(step, unprofiled median)", "seconds": t_step, "share": float("nan")},
             {"dtype": dtype, "D": D, "M": M, "chunk": eng.chunk,
              "group": "(draws alone, median)", "seconds": t_draws, "share": float("nan")}]
    return rows, kernels


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, required=True, help="Folder that receives the tables.")
    ap.add_argument("--D", type=int, default=1024, help="Number of patches D.")
    ap.add_argument("--M", type=int, default=1_000_000, help="Fresh draws per step.")
    ap.add_argument("--dtype", nargs="+", default=["float64", "float32"], help="Dtypes to run.")
    ap.add_argument("--repeats", type=int, default=5, help="Timed repeats (median).")
    args = ap.parse_args(argv)
    device = "cuda" if torch.cuda.is_available() else "cpu"
    args.out.mkdir(parents=True, exist_ok=True)
    names = ("mc-profile.csv", "mc-kernels.csv")
    for name in names:  # refused before anything is measured: never replaces a file
        if (args.out / name).exists():
            raise FileExistsError(f"--out: {args.out / name} exists (this script writes new "
                                  "files only)")
    groups, kernels = [], []
    for dt in args.dtype:
        g, k = profile(args.D, args.M, dt, device, args.repeats)
        groups += g
        kernels += k
        print(pd.DataFrame(g).to_string(index=False), flush=True)
    head = machine_line(device) + "\n"
    for name, rows in zip(names, (groups, kernels)):
        df = pd.DataFrame(rows)
        if name == "mc-kernels.csv":
            df = df.sort_values(["dtype", "seconds"], ascending=[True, False])
        with open(args.out / name, "x", encoding="utf-8") as f:
            f.write(head + df.to_csv(index=False))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
