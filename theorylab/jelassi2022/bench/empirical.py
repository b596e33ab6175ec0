"""Step-speed benchmarks of the first paper's engines: the empirical step over a size grid,
batched sweeps against one-by-one runs, and the implementation choices of the step.

``python -m theorylab bench [--device cpu|cuda] [--quick] [--max-bytes B] [--out FILE.csv]``
``python -m theorylab bench --sweep [--device cpu|cuda]`` (batched sweeps vs one by one)
``python -m theorylab bench --choices`` (each read of X, threads, flush-to-zero; CPU)
(``--targets``: [`theorylab.jelassi2022.bench.targets`][])

For D ∈ {16, 64, 256, 1024}, d ∈ {64, 256}, N ∈ {10³, 10⁴, 10⁵} (skipping what does not fit
``--max-bytes`` or ``--max-seconds``) it prints, per dtype, the time of one full-batch GD step of
[`EmpiricalEngine`][theorylab.jelassi2022.engines.EmpiricalEngine] (median of ``--repeats``
after a warm-up, CUDA synchronised), the achieved bandwidth (X read twice per step: U = X·v and
∂L/∂v = Σ ∂L/∂U·X), the achieved FLOP rate (see
[`step_flops`][theorylab.jelassi2022.bench.cases.step_flops]), the ratio against a plain
torch-autograd implementation of eq. (T) on the same data, device and dtype
([`AutogradBaseline`][theorylab.jelassi2022.bench.cases.AutogradBaseline]), and the peak memory
(``torch.cuda.max_memory_allocated`` on CUDA; the process peak RSS on CPU).

The device peak is reported next to the table: the nominal HBM bandwidth for known GPUs, and on
any device a memcpy bandwidth and a matmul FLOP rate measured in the same run
([`theorylab.core.bench`][], the harness).
"""

from __future__ import annotations

from theorylab.core.atomic_io import write_csv
from theorylab.core.bench import (
    engine_step,
    fmt_row,
    interleaved_medians,
    measure_peaks,
    peak_bandwidth,
    peak_memory_mb,
    print_and_save,
    read_once_seconds,
    time_engine_step,
)
from theorylab.core.bench import machine_line as _machine_line
from theorylab.jelassi2022.bench.cases import (
    STATE,
    autograd_for,
    blas_read,
    empirical_config,
    engine_pass,
    grad_mismatch,
    make_empirical_engine,
    mc_states,
    population_engine,
    step_bytes,
    step_flops,
)

__all__ = ["CHOICE_SIZES", "QUICK", "SWEEP_CASES", "bench_choices", "bench_empirical",
           "bench_flush", "bench_sweep", "machine_line", "run", "run_choices", "run_sweeps"]

#: the columns a grid row prints while it runs
ROW_KEYS = ("dtype", "D", "d", "N", "step_ms", "GB/s", "GFLOP/s", "speedup_vs_autograd")


def machine_line(device: str = "cpu") -> str:
    """The harness's [`machine_line`][theorylab.core.bench.machine_line] with the empirical
    training pass this machine runs by default (fused or two-pass)."""
    from theorylab.jelassi2022.engines.fused import default_pass

    return _machine_line(device, {"empirical pass": default_pass()})


# -- the benchmark --------------------------------------------------------------------------------
SIZES_D = (16, 64, 256, 1024)
SIZES_d = (64, 256)
SIZES_N = (1_000, 10_000, 100_000)
QUICK = {"D": (16, 64), "d": (64,), "N": (1_000, 10_000)}






def bench_empirical(
    D: int, d: int, N: int, *, backend: str = "torch", device: str = "cpu",
    dtype: str = "float64", repeats: int = 5, max_seconds: float = 30.0, autograd: bool = True,
    check: bool = True, copy_gbs: float | None = None,
) -> dict[str, object]:
    """One row: time per empirical step and per autograd step on the same data, timed
    interleaved ([`interleaved_medians`][]; see module). With ``copy_gbs`` (the copy rate of
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

    fns = {"engine": engine_step(engine, params)}
    base = autograd_for(engine, params) if autograd else None
    if base is not None:
        fns["autograd"] = base.step
        if not device.startswith("cuda"):
            fns["blas_read"] = blas_read(engine, params)
    med, row["repeats"] = interleaved_medians(fns, sync, repeats=repeats,
                                              max_seconds=max_seconds)
    t = med["engine"]
    row["pass"] = engine_pass(engine)
    row["step_ms"] = 1e3 * t
    row["GB/s"] = step_bytes(N, D, d, itemsize) / t / 1e9
    row["GFLOP/s"] = step_flops(N, D, d, engine.model.activation.degree) / t / 1e9
    if base is not None:
        ta = med["autograd"]
        row["autograd_ms"] = 1e3 * ta
        row["speedup_vs_autograd"] = ta / t
        if "blas_read" in med:
            tr = med["blas_read"]
            row["blas_read_ms"] = 1e3 * tr
            row["autograd_over_blas_read"] = ta / tr
        del base
    if copy_gbs:
        r1 = read_once_seconds(N, D, d, itemsize, copy_gbs)
        row["read_once_ms"] = 1e3 * r1
        row["x_read_once"] = t / r1
    row["peak_mem_MB"] = peak_memory_mb(device)
    return row



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
    """The ``--sweep`` table, after the machine line: [`bench_sweep`][] for [`SWEEP_CASES`][]
    at D = d = 64."""
    print(machine_line(args.device))
    N = 1_000 if args.quick else 5_000
    rows = []
    for dtype in args.dtypes:
        for K, R in SWEEP_CASES:
            row = bench_sweep(K, R, 64, 64, N, backend=args.backend, device=args.device,
                              dtype=dtype, repeats=args.repeats, max_seconds=args.max_seconds)
            rows.append(row)
            print(fmt_row(row, ("dtype", "K", "R", "batched_ms", "one_by_one_ms", "speedup")),
                  flush=True)
    print_and_save(rows, args.out)
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
                    print(fmt_row(row, ROW_KEYS), flush=True)
    print_and_save(rows, args.out)
    return rows






# -- implementation choices, flush-to-zero, threads, timed interleaved ---------------------------
CHOICE_SIZES = ((10_000, 10, 100), (20_000, 16, 256), (4_000, 64, 64), (10_000, 64, 64))


def bench_choices(N: int, D: int, d: int, *, repeats: int = 5, max_seconds: float = 30.0,
                  threads: tuple[int, ...] = (1, 2), copy_gbs: float | None = None) -> dict:
    """One row: the empirical step (torch CPU backend, float64) with the two-pass training
    pass and each read of X pinned (einsum, the plain contraction; blas; torch), the fused
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
            engine.primitive = primitive
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
    med, _ = interleaved_medians(fns, repeats=repeats, max_seconds=max_seconds)
    row: dict[str, object] = {"N": N, "D": D, "d": d}
    row.update({k: 1e3 * v for k, v in med.items()})
    t1 = threads[0]
    row[f"auto_vs_einsum_t{t1}"] = row[f"einsum_t{t1}_ms"] / row[f"auto_t{t1}_ms"]
    row[f"speedup_vs_autograd_t{t1}"] = row[f"autograd_t{t1}_ms"] / row[f"auto_t{t1}_ms"]
    row["auto_pass"] = engine_pass(engine)
    row[f"autograd_t{t1}_over_blas_read"] = row[f"autograd_t{t1}_ms"] / row["blas_read_ms"]
    if copy_gbs:
        row["read_once_ms"] = 1e3 * read_once_seconds(N, D, d, 8, copy_gbs)
        row[f"auto_t{t1}_x_read_once"] = row[f"auto_t{t1}_ms"] / row["read_once_ms"]
    engine.primitive = "auto"
    engine.pass_impl = "auto"
    return row


def bench_flush(*, repeats: int = 5, max_seconds: float = 30.0) -> list[dict]:
    """Rows: the Monte Carlo step at D = 32 (C = 4, 10⁵ fresh draws; aligned shortcut and
    general path) and the exchangeable step at D = 32 (C = 4) and D = 64 (C = 2), with
    flush-to-zero off and on, torch and numpy CPU backends, float64, timed
    interleaved; ns per draw or per histogram."""
    rows = []
    for backend in ("numpy", "torch"):
        M = 100_000
        mc = population_engine(32, 4, "montecarlo", backend=backend, mc_samples=M)
        cases = [("montecarlo D=32 C=4 " + k, mc, p, M) for k, p in mc_states(mc).items()]
        for D, C in ((32, 4), (64, 2)):
            ex = population_engine(D, C, "exchangeable", backend=backend)
            cases.append((f"exchangeable D={D} C={C}", ex, dict(STATE), ex.n_configs))
        fns = {}
        for name, eng, p, _ in cases:
            step = engine_step(eng, p)
            for flush in (False, True):
                def run(eng=eng, step=step, flush=flush):
                    eng.flush_denormals = flush
                    step()
                fns[(name, flush)] = run
        med, _ = interleaved_medians(fns, repeats=repeats, max_seconds=max_seconds)
        for name, eng, _, n in cases:
            eng.flush_denormals = True
            off, on = med[(name, False)], med[(name, True)]
            rows.append({"backend": backend, "case": name, "units": n,
                         "ns_per_unit_ftz_off": 1e9 * off / n, "ns_per_unit_ftz_on": 1e9 * on / n,
                         "speedup": off / on})
    return rows


def run_choices(args) -> list[dict]:
    """``--choices``: [`bench_choices`][] at [`CHOICE_SIZES`][] and [`bench_flush`][]."""
    print(machine_line("cpu"))
    peaks = measure_peaks("cpu", "float64")
    print(f"# float64 copy rate measured in this run: {peaks['copy_GBs']:.1f} GB/s "
          "(bytes read + written; one thread)")
    rows = []
    for N, D, d in CHOICE_SIZES:
        row = bench_choices(N, D, d, repeats=args.repeats, max_seconds=args.max_seconds,
                            copy_gbs=peaks["copy_GBs"])
        rows.append({"table": "empirical", "device": "cpu", **row})
        print(fmt_row(row, tuple(row)), flush=True)
    for row in bench_flush(repeats=args.repeats, max_seconds=args.max_seconds):
        rows.append({"table": "flush", "device": "cpu", **row})
        print(fmt_row(row, tuple(row)), flush=True)
    import pandas as pd

    df = pd.DataFrame(rows)
    for _name, part in df.groupby("table", sort=False):  # one table each, without empty columns
        print()
        print(part.dropna(axis=1, how="all").drop(columns="table").to_string(
            index=False, float_format=lambda x: f"{x:.4g}"))
    if args.out:
        write_csv(args.out, df)
    return rows
