"""Step-speed benchmark of the empirical engine (problem (E) of Jelassi et al. (2022)).

``python -m theorylab.bench [--device cpu|cuda] [--quick] [--max-bytes B] [--out FILE.csv]``
``python -m theorylab.bench --targets [--device cpu|cuda]`` (the speed targets, see
[`theorylab.bench.targets`][])
``python -m theorylab.bench --sweep [--device cpu|cuda]`` (batched sweeps vs one by one)

For D ∈ {16, 64, 256, 1024}, d ∈ {64, 256}, N ∈ {10³, 10⁴, 10⁵} (skipping what does not fit
``--max-bytes`` or ``--max-seconds``) it prints, per dtype, the time of one full-batch GD step of
[`EmpiricalEngine`][theorylab.jelassi2022.engines.EmpiricalEngine] (median of ``--repeats``
after a warm-up, CUDA synchronised), the achieved bandwidth (X read twice per step: U = X·v and
∂L/∂v = Σ ∂L/∂U·X), the achieved FLOP rate (see [`step_flops`][]), the ratio against a plain
torch-autograd implementation of eq. (T) on the same data, device and dtype
([`AutogradBaseline`][]), and the peak memory (``torch.cuda.max_memory_allocated`` on CUDA; the
process peak RSS on CPU).

The device peak is reported next to the table: the nominal HBM bandwidth for known GPUs, and on
any device a memcpy bandwidth and a matmul FLOP rate measured in the same run.
"""

from __future__ import annotations

import math
import platform
import resource
import statistics
import sys
import time
from collections.abc import Callable

import numpy as np

from theorylab.core.atomic_io import write_csv

__all__ = [
    "AutogradBaseline",
    "time_call",
    "time_engine_step",
    "empirical_config",
    "make_empirical_engine",
    "step_flops",
    "step_bytes",
    "measure_peaks",
    "peak_bandwidth",
    "device_name",
    "bench_empirical",
    "bench_sweep",
    "interleaved_times",
    "read_once_seconds",
    "run",
    "run_sweeps",
]

#: nominal memory bandwidth (GB/s) of GPUs we may be lent, by a substring of the device name
GPU_PEAK_GBS = {"H100": 3350.0, "H200": 4800.0, "A100": 2039.0}


# -- timing -------------------------------------------------------------------------------------
def time_call(
    fn: Callable[[], object],
    sync: Callable[[], None] = lambda: None,
    *,
    warmup: int = 1,
    repeats: int = 5,
    max_seconds: float | None = None,
) -> list[float]:
    """Wall times (s) of ``fn()`` after ``warmup`` untimed calls, each followed by ``sync()``.

    With ``max_seconds``, stops repeating once the timed calls have used that much time (at
    least one timed call is always made)."""
    for _ in range(warmup):
        fn()
        sync()
    times: list[float] = []
    for _ in range(repeats):
        sync()
        t0 = time.perf_counter()
        fn()
        sync()
        times.append(time.perf_counter() - t0)
        if max_seconds is not None and sum(times) > max_seconds:
            break
    return times


def time_engine_step(engine, params, *, repeats: int = 5, max_seconds: float | None = 30.0):
    """Median wall time (s) of one GD step (``evaluate`` with gradients + ``apply``) of an engine,
    always from ``params`` (a diverging run would time NaNs), and the number of timed steps."""

    def step():
        ev = engine.evaluate(params, 0, need_grad=True, record=False)
        return engine.apply(params, ev.grads)

    times = time_call(step, engine.xp.synchronize, repeats=repeats, max_seconds=max_seconds)
    return statistics.median(times), len(times)


# -- configuration and engine -------------------------------------------------------------------
def empirical_config(
    D: int, d: int, N: int, *, C: int = 2, backend: str = "torch", device: str = "cpu",
    dtype: str = "float64", seed: int = 0, alpha0: float = 0.01, offdiag0: float = 0.0,
):
    """A resolved [`ExperimentConfig`][theorylab.jelassi2022.config.ExperimentConfig] for
    problem (E) with
    ``n_train = N``, ``n_test = 1`` and the default automatic chunks (``chunk_size = 0``: one
    chunk on a GPU when it fits, cache-sized chunks on a CPU)."""
    from theorylab.jelassi2022.config import DataConfig, ExperimentConfig, TrainConfig

    return ExperimentConfig(
        data=DataConfig(D=D, C=C, partition="random", d=d, q=0.2, seed=seed),
        train=TrainConfig(
            engine="empirical", backend=backend, device=device, dtype=dtype, n_train=N,
            n_test=1, chunk_size=0, seed=seed, alpha0=alpha0, offdiag0=offdiag0,
        ),
    ).resolved()


def make_empirical_engine(cfg, train=None):
    """The empirical engine of ``cfg`` (optionally on a given
    [`Sample`][theorylab.jelassi2022.data.Sample])."""
    from theorylab.core.backend import get_backend
    from theorylab.jelassi2022.data import make_wstar
    from theorylab.jelassi2022.engines import EmpiricalEngine

    t = cfg.train
    partition = cfg.data.make_partition()
    wstar = make_wstar(cfg.data)
    xp = get_backend(t.backend, t.dtype, t.device)
    return EmpiricalEngine(cfg, xp, partition, wstar, train=train)


class AutogradBaseline:
    """Plain torch-autograd GD on the empirical risk of eq. (T), the reference to beat.

    F(X_n) = Σ_i σ(κ·(S·U_n)_i), S = softmax(A/τ), U_n = X_n·v; loss = mean_n log(1 + e^{−y_n F});
    ``loss.backward()``; the diagonal of A is masked out of the gradient (Simplification 3.1).

    **Arguments:**

    - `X`: (N, D, d) tensor; `y`: (N,) labels ±1; `A0`: (D, D) and `v0`: (d,) initial values
      (numpy or torch; copied to X's device and dtype); `model`: the
      [`PositionalAttentionModel`][theorylab.jelassi2022.model.PositionalAttentionModel];
      `lr_A`, `lr_v`: learning rates.
    """

    def __init__(self, X, y, A0, v0, model, lr_A: float, lr_v: float) -> None:
        import torch

        self.torch = torch
        self.X = X
        self.y = torch.as_tensor(y).to(device=X.device, dtype=X.dtype)
        kw = {"device": X.device, "dtype": X.dtype}
        self.A = torch.as_tensor(np.asarray(A0) if not torch.is_tensor(A0) else A0).to(**kw)
        self.v = torch.as_tensor(np.asarray(v0) if not torch.is_tensor(v0) else v0).to(**kw)
        self.A.requires_grad_(True)
        self.v.requires_grad_(True)
        D = self.A.shape[0]
        self.mask = 1.0 - torch.eye(D, **kw)
        self.model = model
        self.lr_A, self.lr_v = lr_A, lr_v

    def loss(self):
        torch, m = self.torch, self.model
        S = torch.softmax(self.A / m.temperature, dim=1)
        U = self.X @ self.v  # (N, D)
        H = m.value_scale * (U @ S.T)  # H_ni = κ Σ_j S_ij U_nj
        F = m.activation(H).sum(dim=1)
        return torch.logaddexp(torch.zeros_like(F), -self.y * F).mean()  # exact logistic loss

    def grads(self):
        """(∂L/∂A with zero diagonal, ∂L/∂v) at the current parameters."""
        self.A.grad = None
        self.v.grad = None
        self.loss().backward()
        return self.A.grad * self.mask, self.v.grad

    def step(self):
        """One GD step from the current parameters; returns the new (A, v) and leaves the
        current ones unchanged (benchmarks time repeated steps from one state)."""
        gA, gv = self.grads()
        with self.torch.no_grad():
            return self.A - self.lr_A * gA, self.v - self.lr_v * gv


def autograd_for(engine, params) -> AutogradBaseline:
    """An [`AutogradBaseline`][] on the engine's training data, device and dtype, at ``params``."""
    import torch

    xp = engine.xp
    X = engine.X if torch.is_tensor(engine.X) else torch.from_numpy(engine.X)
    y = engine.y if torch.is_tensor(engine.y) else torch.from_numpy(np.asarray(engine.y))
    A, v = (xp.to_numpy(params["A"]), xp.to_numpy(params["v"]))
    return AutogradBaseline(X, y, A, v, engine.model, engine.lr_A, engine.lr_v)


def grad_mismatch(engine, params) -> float:
    """Largest relative difference max|g_engine − g_autograd| / max|g_autograd| over ∂A and ∂v."""
    base = autograd_for(engine, params)
    gA, gv = base.grads()
    ev = engine.evaluate(params, 0, need_grad=True, record=False)
    out = 0.0
    for mine, ref in ((ev.grads["A"], gA), (ev.grads["v"], gv)):
        a = np.asarray(engine.xp.to_numpy(mine), dtype=np.float64)
        b = ref.detach().cpu().double().numpy()
        out = max(out, float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300)))
    return out


# -- work counts --------------------------------------------------------------------------------
def step_flops(N: int, D: int, d: int, activation_degree: int = 3) -> float:
    """Floating-point operations of one empirical GD step (multiply and add counted apart).

    2NDd for U = X·v, 2NDd for ∂L/∂v = Σ ∂L/∂U·X, 6ND² for the three attention products
    (H = U·Sᵀ, ∂L/∂U = G·S, ∂L/∂S = Gᵀ·U), 4·degree·ND for σ and σ' by Horner, ~20ND for the
    loss, tie test and G; the O(D²) softmax and the O(d) update are neglected.
    """
    return 4.0 * N * D * d + 6.0 * N * D * D + (4.0 * activation_degree + 20.0) * N * D


def step_bytes(N: int, D: int, d: int, itemsize: int) -> float:
    """Bytes of X read by one step: X is read twice (U = X·v, then ∂L/∂v)."""
    return 2.0 * N * D * d * itemsize


# -- the device -----------------------------------------------------------------------------------
def device_name(device: str = "cpu") -> str:
    """The CPU model (lscpu / platform) or the CUDA device name."""
    if device.startswith("cuda"):
        import torch

        return torch.cuda.get_device_name(torch.device(device))
    name = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    name = line.split(":", 1)[1].strip()
                    break
    except OSError:  # pragma: no cover - non-Linux
        pass
    import os

    return f"{name or platform.processor() or platform.machine()} ({os.cpu_count()} logical CPUs)"


def measure_peaks(device: str = "cpu", dtype: str = "float64", *, n_bytes: float = 2e8,
                  n_matmul: int = 1024, repeats: int = 5) -> dict[str, float]:
    """Measured copy bandwidth (GB/s, bytes read + written) and matmul rate (GFLOP/s) on
    ``device`` in ``dtype``, in this run (the reference peaks of the table on CPU)."""
    import torch

    dt = getattr(torch, dtype)
    dev = torch.device(device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    n = int(n_bytes) // torch.empty((), dtype=dt).element_size()
    a = torch.ones(n, dtype=dt, device=dev)
    b = torch.empty_like(a)
    t = statistics.median(time_call(lambda: b.copy_(a), sync, repeats=repeats))
    copy_gbs = 2 * a.numel() * a.element_size() / t / 1e9
    a = b = None  # free the buffers before the matmul
    m = torch.randn(n_matmul, n_matmul, dtype=dt, device=dev)
    t = statistics.median(time_call(lambda: m @ m, sync, repeats=repeats))
    out = {"copy_GBs": copy_gbs, "matmul_GFLOPs": 2 * n_matmul**3 / t / 1e9}
    if dev.type == "cuda":
        name = torch.cuda.get_device_name(dev)
        out["nominal_GBs"] = next((v for k, v in GPU_PEAK_GBS.items() if k in name), math.nan)
    return out


def default_max_bytes(device: str = "cpu") -> float:
    """The largest X the benchmark generates by default: 40 % of the host's free memory (the
    sampler writes X in place, in its dtype) and, on CUDA, at most 70 % of the free device
    memory (X resident; the step's working set is a few length-D vectors per sample)."""
    from theorylab.core.backend import get_backend, host_free_bytes

    budget = 0.4 * host_free_bytes()
    if device.startswith("cuda"):
        budget = min(budget, 0.7 * get_backend("torch", "float32", device).free_bytes())
    return float(budget)


def peak_bandwidth(peaks: dict[str, float]) -> tuple[float, str]:
    """(GB/s, source) of the memory bandwidth to compare against: the nominal HBM bandwidth of
    a known GPU ([`GPU_PEAK_GBS`][]), else the copy rate measured by [`measure_peaks`][]."""
    bw = peaks.get("nominal_GBs", math.nan)
    if math.isfinite(bw):
        return bw, "nominal HBM"
    return peaks["copy_GBs"], "measured copy rate"


def _peak_memory_mb(device: str) -> float:
    if device.startswith("cuda"):
        import torch

        return torch.cuda.max_memory_allocated(torch.device(device)) / 2**20
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # KiB on Linux, bytes on macOS
    return rss / (2**20 if sys.platform == "darwin" else 2**10)


# -- the benchmark --------------------------------------------------------------------------------
SIZES_D = (16, 64, 256, 1024)
SIZES_d = (64, 256)
SIZES_N = (1_000, 10_000, 100_000)
QUICK = {"D": (16, 64), "d": (64,), "N": (1_000, 10_000)}


def interleaved_times(fns: dict[str, Callable[[], object]], sync: Callable[[], None] = lambda: None,
                      *, repeats: int = 5, max_seconds: float | None = None) -> dict[str, list]:
    """Wall times (s) of several callables timed *interleaved*: one untimed call of each, then
    ``repeats`` rounds of one call of each in turn (so that a change of load on a shared machine
    hits all of them alike; ratios of the medians are what the benchmarks report). With
    ``max_seconds``, stops after the round in which that much time was used."""
    for f in fns.values():
        f()
        sync()
    times: dict[str, list] = {k: [] for k in fns}
    used = 0.0
    for _ in range(repeats):
        for k, f in fns.items():
            sync()
            t0 = time.perf_counter()
            f()
            sync()
            dt = time.perf_counter() - t0
            times[k].append(dt)
            used += dt
        if max_seconds is not None and used > max_seconds:
            break
    return times


def read_once_seconds(N: int, D: int, d: int, itemsize: int, copy_gbs: float) -> float:
    """Time to read X (N·D·d values) once at the measured copy rate: N·D·d·itemsize bytes at
    ``copy_gbs`` GB/s (the copy rate counts bytes read + written, so this is a lower bound only
    if reading alone is not faster than copying; it is the bound the issue-15 targets use)."""
    return N * D * d * itemsize / (copy_gbs * 1e9)


def bench_empirical(
    D: int, d: int, N: int, *, backend: str = "torch", device: str = "cpu",
    dtype: str = "float64", repeats: int = 5, max_seconds: float = 30.0, autograd: bool = True,
    check: bool = True, copy_gbs: float | None = None,
) -> dict[str, object]:
    """One row: time per empirical step and per autograd step on the same data, timed
    interleaved ([`interleaved_times`][]; see module). With ``copy_gbs`` (the copy rate of
    [`measure_peaks`][]), also the time to read X once and the step's multiple of it."""
    import torch

    cfg = empirical_config(D, d, N, backend=backend, device=device, dtype=dtype, offdiag0=0.1)
    if device.startswith("cuda"):
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(torch.device(device))
    engine = make_empirical_engine(cfg)
    sync = engine.xp.synchronize
    itemsize = 4 if dtype == "float32" else 8
    row: dict[str, object] = {"backend": backend, "device": device, "dtype": dtype,
                              "D": D, "d": d, "N": N}
    params = engine.initial_params()
    if check:
        row["grad_rel_err"] = grad_mismatch(engine, params)

    def step():
        ev = engine.evaluate(params, 0, need_grad=True, record=False)
        return engine.apply(params, ev.grads)

    fns = {"engine": step}
    base = autograd_for(engine, params) if autograd else None
    if base is not None:
        fns["autograd"] = base.step
        if not device.startswith("cuda"):
            fns["blas_read"] = blas_read(engine, params)
    times = interleaved_times(fns, sync, repeats=repeats, max_seconds=max_seconds)
    t = statistics.median(times["engine"])
    row["repeats"] = len(times["engine"])
    row["pass"] = engine_pass(engine)
    row["step_ms"] = 1e3 * t
    row["GB/s"] = step_bytes(N, D, d, itemsize) / t / 1e9
    row["GFLOP/s"] = step_flops(N, D, d, engine.model.activation.degree) / t / 1e9
    if base is not None:
        ta = statistics.median(times["autograd"])
        row["autograd_ms"] = 1e3 * ta
        row["speedup_vs_autograd"] = ta / t
        if "blas_read" in times:
            tr = statistics.median(times["blas_read"])
            row["blas_read_ms"] = 1e3 * tr
            row["autograd_over_blas_read"] = ta / tr
        del base
    if copy_gbs:
        r1 = read_once_seconds(N, D, d, itemsize, copy_gbs)
        row["read_once_ms"] = 1e3 * r1
        row["x_read_once"] = t / r1
    row["peak_mem_MB"] = _peak_memory_mb(device)
    return row


def blas_read(engine, params) -> Callable[[], object]:
    """One read of the engine's X by torch's matrix–vector product, X viewed as (N·D, d) times v
    (zero-copy on a CPU). Timed next to autograd it bounds what any step can gain: a step must
    read all of X at least once (∂L/∂v = Xᵀ ∂L/∂U for a generic ∂L/∂U), so no step that reads
    X at this rate is more than ``autograd ÷ this`` faster than autograd."""
    import torch

    X = engine.X if torch.is_tensor(engine.X) else torch.from_numpy(engine.X)
    v = params["v"] if torch.is_tensor(params["v"]) else torch.from_numpy(np.asarray(params["v"]))
    X2 = X.reshape(-1, X.shape[-1])
    return lambda: torch.mv(X2, v)


def engine_pass(engine) -> str:
    """Which training pass the empirical engine ran: "fused", "two-pass", or "two-pass (fused
    not eligible)" (see [`theorylab.jelassi2022.engines.fused`][])."""
    from theorylab.jelassi2022.engines.fused import fused_eligible, pass_choices

    if not fused_eligible(engine.xp, engine.X, engine.streamed):
        return "two-pass (fused not eligible)"
    if engine.pass_impl != "auto":
        return engine.pass_impl
    X = engine.xp.to_numpy(engine.X)
    return pass_choices().cache.get(pass_choices().shape_class(X), "auto (not measured yet)")


def bench_sweep(
    K: int, R: int, D: int, d: int, N: int, *, backend: str = "torch", device: str = "cpu",
    dtype: str = "float64", repeats: int = 5, max_seconds: float = 30.0,
) -> dict[str, object]:
    """One row: a batched step of K seeds × R learning rates
    ([`BatchedEmpiricalEngine`][theorylab.jelassi2022.engines.BatchedEmpiricalEngine], what
    [`run_sweep`][theorylab.run_sweep] runs) against the same K·R steps run one by one with
    [`EmpiricalEngine`][theorylab.jelassi2022.engines.EmpiricalEngine] (each seed's engine timed
    once and counted R times: the R runs of a seed differ only in their learning rates)."""
    import dataclasses

    from theorylab.core.backend import get_backend
    from theorylab.jelassi2022.data import make_wstar
    from theorylab.jelassi2022.engines import BatchedEmpiricalEngine

    cfg = empirical_config(D, d, N, backend=backend, device=device, dtype=dtype, offdiag0=0.1)
    seeds = list(range(K))
    lrs = [(0.1 * (r + 1), 0.1 * (r + 1)) for r in range(R)]
    xp = get_backend(backend, dtype, device)
    row: dict[str, object] = {"backend": backend, "device": device, "dtype": dtype, "K": K,
                              "R": R, "D": D, "d": d, "N": N}

    def time_batched() -> float:  # the batch's data is freed before the one-by-one runs
        batched = BatchedEmpiricalEngine(cfg, xp, cfg.data.make_partition(),
                                         make_wstar(cfg.data), seeds, lrs)
        return time_engine_step(batched, batched.initial_params(), repeats=repeats,
                                max_seconds=max_seconds)[0]

    t_batched = time_batched()
    t_one = 0.0
    for seed in seeds:
        eng = make_empirical_engine(
            dataclasses.replace(cfg, train=dataclasses.replace(cfg.train, seed=seed)))
        t_one += R * time_engine_step(eng, eng.initial_params(), repeats=repeats,
                                      max_seconds=max_seconds)[0]
    row["batched_ms"] = 1e3 * t_batched
    row["one_by_one_ms"] = 1e3 * t_one
    row["ms_per_run_step"] = 1e3 * t_batched / (K * R)
    row["speedup"] = t_one / t_batched
    return row


SWEEP_CASES = ((1, 8), (4, 1), (4, 4), (8, 8))  # (K seeds, R learning-rate pairs)


def run_sweeps(args) -> list[dict[str, object]]:
    """The ``--sweep`` table: [`bench_sweep`][] for [`SWEEP_CASES`][] at D = d = 64."""

    N = 1_000 if args.quick else 5_000
    rows = []
    for dtype in args.dtypes:
        for K, R in SWEEP_CASES:
            row = bench_sweep(K, R, 64, 64, N, backend=args.backend, device=args.device,
                              dtype=dtype, repeats=args.repeats, max_seconds=args.max_seconds)
            rows.append(row)
            print(_fmt_row(row, ("dtype", "K", "R", "batched_ms", "one_by_one_ms", "speedup")),
                  flush=True)
    _print_and_save(rows, args.out)
    return rows


def run(args) -> list[dict[str, object]]:

    sizes = QUICK if args.quick else {"D": SIZES_D, "d": SIZES_d, "N": SIZES_N}
    device = args.device
    print(machine_line(device))
    peaks = {}
    for dtype in args.dtypes:
        peaks[dtype] = measure_peaks(device, dtype)
        print(f"# {dtype} peaks measured in this run: " +
              ", ".join(f"{k} = {v:.1f}" for k, v in peaks[dtype].items()))
    print("# %peak_BW: GB/s against the nominal memory bandwidth on known GPUs, else the copy "
          "rate above; %peak_FLOP: GFLOP/s against the matmul rate above")
    rows: list[dict[str, object]] = []
    est_rate = None  # bytes/s of the last case, to skip cases that would exceed the time guard
    for N in sorted(sizes["N"]):
        for D in sizes["D"]:
            for d in sizes["d"]:
                for dtype in args.dtypes:
                    base = {"backend": args.backend, "device": device, "dtype": dtype,
                            "D": D, "d": d, "N": N}
                    need = N * D * d * (4 if dtype == "float32" else 8)  # X, resident
                    if need > args.max_bytes:
                        note = f"skipped: X takes {need / 1e9:.1f} GB > --max-bytes"
                        rows.append({**base, "note": note})
                        continue
                    if est_rate and step_bytes(N, D, d, 8) / est_rate > args.max_seconds:
                        rows.append({**base, "note": "skipped: step would exceed --max-seconds"})
                        continue
                    row = bench_empirical(
                        D, d, N, backend=args.backend, device=device, dtype=dtype,
                        repeats=args.repeats, max_seconds=args.max_seconds,
                        check=(dtype == "float64"), copy_gbs=peaks[dtype]["copy_GBs"],
                    )
                    est_rate = row["GB/s"] * 1e9
                    bw, _ = peak_bandwidth(peaks[dtype])
                    row["%peak_BW"] = 100 * row["GB/s"] / bw
                    row["%peak_FLOP"] = 100 * row["GFLOP/s"] / peaks[dtype]["matmul_GFLOPs"]
                    rows.append(row)
                    print(_fmt_row(row), flush=True)
    _print_and_save(rows, args.out)
    return rows


def _print_and_save(rows, out: str | None) -> None:
    """Print the rows as one table (4 significant digits) and write them to ``out`` (CSV)."""
    import pandas as pd

    df = pd.DataFrame(rows)
    print()
    print(df.to_string(index=False, float_format=lambda x: f"{x:.4g}"))
    if out:
        write_csv(out, df)


def _fmt_row(row, keys=("dtype", "D", "d", "N", "step_ms", "GB/s", "GFLOP/s",
                         "speedup_vs_autograd")) -> str:
    return "  ".join(f"{k}={row[k]:.4g}" if isinstance(row.get(k), float) else f"{k}={row.get(k)}"
                     for k in keys)


def _threads() -> int:
    import torch

    return torch.get_num_threads()


def machine_line(device: str = "cpu") -> str:
    """``# device: <CPU model or GPU> ; threads ...; primitive ...; empirical pass ...; library
    versions`` — the header every benchmark table starts with, so that its numbers say where
    they come from."""
    import torch

    from theorylab.core.backend import default_primitive
    from theorylab.core.jit import numba_version
    from theorylab.core.threads import current_threads
    from theorylab.jelassi2022.engines.fused import default_pass

    th = current_threads()
    return (f"# device: {device_name(device)}; torch threads: {th['torch']}; BLAS threads: "
            f"{th['blas']}; primitive: {default_primitive()}; empirical pass: {default_pass()}; "
            f"torch {torch.__version__}, numpy {np.__version__}, numba {numba_version()}")


# -- implementation choices, flush-to-zero, threads, timed interleaved -----------------
ISSUE15_SIZES = ((10_000, 10, 100), (20_000, 16, 256), (4_000, 64, 64), (10_000, 64, 64))


def bench_choices(N: int, D: int, d: int, *, repeats: int = 5, max_seconds: float = 30.0,
                  threads: tuple[int, ...] = (1, 2), copy_gbs: float | None = None) -> dict:
    """One row: the empirical step (torch CPU backend, float64) with the two-pass training
    pass and each read of X pinned (einsum = the plain reference, blas, torch), the fused
    one-pass kernel (``fused``), and both choices ``auto``; plain autograd; one BLAS read of X
    ([`blas_read`][]); each at every thread count of ``threads`` (the fused pass and the pinned
    reads at the first only), all timed interleaved in one loop (medians, ms)."""
    from theorylab.core.threads import limit_threads
    from theorylab.jelassi2022.engines.fused import fused_eligible

    cfg = empirical_config(D, d, N, offdiag0=0.1)
    engine = make_empirical_engine(cfg)
    params = engine.initial_params()
    base = autograd_for(engine, params)

    def step(primitive: str, n: int, pass_impl: str = "two-pass"):
        def run():
            engine.xp.primitive = primitive
            engine.pass_impl = pass_impl
            with limit_threads(n):
                ev = engine.evaluate(params, 0, need_grad=True, record=False)
                engine.apply(params, ev.grads)
        return run

    def autograd(n: int):
        def run():
            with limit_threads(n):
                base.step()
        return run

    fns = {}
    for n in threads:
        for prim in ("einsum", "blas", "torch", "auto"):
            if n == threads[0] or prim == "auto":
                fns[f"{prim}_t{n}_ms"] = step(prim, n, "auto" if prim == "auto" else "two-pass")
        if n == threads[0] and fused_eligible(engine.xp, engine.X):
            fns[f"fused_t{n}_ms"] = step("auto", n, "fused")
        fns[f"autograd_t{n}_ms"] = autograd(n)
    fns["blas_read_ms"] = blas_read(engine, params)
    times = interleaved_times(fns, repeats=repeats, max_seconds=max_seconds)
    row: dict[str, object] = {"N": N, "D": D, "d": d}
    row.update({k: 1e3 * statistics.median(v) for k, v in times.items()})
    t1 = threads[0]
    row[f"auto_vs_einsum_t{t1}"] = row[f"einsum_t{t1}_ms"] / row[f"auto_t{t1}_ms"]
    row[f"speedup_vs_autograd_t{t1}"] = row[f"autograd_t{t1}_ms"] / row[f"auto_t{t1}_ms"]
    row["auto_pass"] = engine_pass(engine)
    row[f"autograd_t{t1}_over_blas_read"] = row[f"autograd_t{t1}_ms"] / row["blas_read_ms"]
    if copy_gbs:
        row["read_once_ms"] = 1e3 * read_once_seconds(N, D, d, 8, copy_gbs)
        row[f"auto_t{t1}_x_read_once"] = row[f"auto_t{t1}_ms"] / row["read_once_ms"]
    engine.xp.primitive = "auto"
    engine.pass_impl = "auto"
    return row


def bench_flush(*, repeats: int = 5, max_seconds: float = 30.0) -> list[dict]:
    """Rows: the Monte Carlo step at D = 32 (C = 4, 10⁵ fresh draws; aligned shortcut and
    general path) and the exchangeable step at D = 32 (C = 4) and D = 64 (C = 2), with
    flush-to-zero off and on, torch and numpy CPU backends, float64, timed
    interleaved; ns per draw or per histogram."""
    from theorylab.bench.targets import STATE, population_engine
    from theorylab.jelassi2022.observables import symmetric_A

    rows = []
    for backend in ("numpy", "torch"):
        M = 100_000
        mc = population_engine(32, 4, "montecarlo", backend=backend, mc_samples=M)
        A = mc.xp.asarray(symmetric_A(32, mc.partition, mc.diag, STATE["gamma"], STATE["rho"]))
        v = STATE["alpha"] * mc.wstar
        e = np.random.default_rng(0).standard_normal(v.shape)
        e -= (e @ mc.wstar) * mc.wstar
        e /= np.linalg.norm(e)
        states = {"aligned": {"A": A, "v": v}, "general": {"A": A, "v": v + 1e-9 * e}}
        cases = [("montecarlo D=32 C=4 " + k, mc, p, M) for k, p in states.items()]
        for D, C in ((32, 4), (64, 2)):
            ex = population_engine(D, C, "exchangeable", backend=backend)
            cases.append((f"exchangeable D={D} C={C}", ex, dict(STATE), ex.n_configs))
        fns = {}
        for name, eng, p, _ in cases:
            for flush in (False, True):
                def run(eng=eng, p=p, flush=flush):
                    eng.flush_denormals = flush
                    eng.apply(p, eng.evaluate(p, 0, need_grad=True, record=False).grads)
                fns[(name, flush)] = run
        times = interleaved_times(fns, repeats=repeats, max_seconds=max_seconds)
        for name, eng, _, n in cases:
            eng.flush_denormals = True
            off = statistics.median(times[(name, False)])
            on = statistics.median(times[(name, True)])
            rows.append({"backend": backend, "case": name, "units": n,
                         "ns_per_unit_ftz_off": 1e9 * off / n, "ns_per_unit_ftz_on": 1e9 * on / n,
                         "speedup": off / on})
    return rows


def run_choices(args) -> list[dict]:
    """``--choices``: [`bench_choices`][] at [`ISSUE15_SIZES`][] and [`bench_flush`][]."""
    print(machine_line("cpu"))
    peaks = measure_peaks("cpu", "float64")
    print(f"# float64 copy rate measured in this run: {peaks['copy_GBs']:.1f} GB/s "
          "(bytes read + written; one thread)")
    rows = []
    for N, D, d in ISSUE15_SIZES:
        row = bench_choices(N, D, d, repeats=args.repeats, max_seconds=args.max_seconds,
                            copy_gbs=peaks["copy_GBs"])
        rows.append({"table": "empirical", **row})
        print(_fmt_row(row, tuple(row)), flush=True)
    for row in bench_flush(repeats=args.repeats, max_seconds=args.max_seconds):
        rows.append({"table": "flush", **row})
        print(_fmt_row(row, tuple(row)), flush=True)
    import pandas as pd

    df = pd.DataFrame(rows)
    for _name, part in df.groupby("table", sort=False):  # one table each, without empty columns
        print()
        print(part.dropna(axis=1, how="all").drop(columns="table").to_string(
            index=False, float_format=lambda x: f"{x:.4g}"))
    if args.out:
        write_csv(args.out, df)
    return rows
