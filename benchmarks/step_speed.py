"""Per-step times of the engines, compared in one run.

    python benchmarks/step_speed.py [--quick] [--out FILE.csv] [--threads 1]

Table 1: brute force (enumeration of 2·L·3^(D−C) configurations) against the exchangeable engine
(sums over histograms of count patterns) on the same partition-symmetric state, problem (P) of
Jelassi et al. (2022), numpy float64. Brute force is skipped above ``--brute-limit``
configurations; the two gradients are checked against each other where both run.

Table 2: the empirical engine (problem (E)) at N = 10⁴, D = 64, d = 64 on numpy, torch CPU (and
CUDA when present), float64 and float32, against a plain torch-autograd implementation of
eq. (T) on the same data, device and dtype ([`theorylab.bench.AutogradBaseline`][]). Before
timing, the autograd gradients must equal the engine's to 1e-10 (float64).

Times are medians of ``--repeats`` steps (evaluate with gradients + apply) after one warm-up
step, CUDA synchronised; the engine and autograd of table 2 are timed interleaved (one step of
each in turn, ``theorylab.bench.interleaved_times``). ``--threads`` defaults to 1
(``theorylab.core.threads``). Targets: exchangeable ≥ 100× faster than brute force at D = 12;
empirical ≥ 2× faster than autograd on CPU float64.
"""

from __future__ import annotations

import math
import os
import sys

import numpy as np
import pandas as pd

from theorylab.bench import bench_empirical, machine_line, time_engine_step
from theorylab.bench.targets import STATE, population_engine
from theorylab.core.atomic_io import write_csv
from theorylab.core.backend import host_free_bytes
from theorylab.core.cli import ArgumentParser
from theorylab.core.threads import add_threads_argument, set_threads, threads_from_args
from theorylab.jelassi2022.engines._exchangeable import count_patterns, n_histograms
from theorylab.jelassi2022.observables import symmetric_A

GRAD_TOL = 1e-10


def exchangeable_build_bytes(D: int, C: int) -> float:
    """Peak memory of ExchangeableEngine.__init__: the int8 table (P + 1 bytes per histogram),
    the float64 weights (8) and a block; measured 2.1 GB peak RSS for 77.6 M histograms with
    P = 15 (D = 64, C = 4), ~27 bytes per histogram; counted as (P + 1 + 8)·1.25 + 0.5 GB."""
    P = count_patterns(C).shape[0]
    return 1.25 * (P + 9) * n_histograms(D // C - 1, P) + 0.5e9


def brute_vs_exchangeable(cases, args) -> pd.DataFrame:
    rows = []
    for D, C in cases:
        L = D // C
        n_brute = 2 * L * 3 ** (D - C)
        P = count_patterns(C).shape[0]
        n_exch = n_histograms(L - 1, P)
        row = {"D": D, "C": C, "brute_configs": float(n_brute), "exch_histograms": n_exch}
        need = exchangeable_build_bytes(D, C)
        if need > args.exch_max_bytes:
            row["exch_ms"] = math.nan
            row["note"] = (f"exchangeable skipped: building {n_exch / 1e6:.1f}M histograms needs "
                           f"~{need / 1e9:.0f} GB > {args.exch_max_bytes / 1e9:.0f} GB allowed")
        else:
            ex = population_engine(D, C, "exchangeable", backend="numpy")
            t, _ = time_engine_step(ex, dict(STATE), repeats=args.repeats,
                                    max_seconds=args.max_seconds)
            row["exch_ms"] = 1e3 * t
        if n_brute > args.brute_limit:
            row["brute_ms"] = f"skipped ({n_brute:.3g} configs)"
        else:
            br = population_engine(D, C, "brute", backend="numpy")
            A = symmetric_A(D, br.partition, br.diag, STATE["gamma"], STATE["rho"])
            pb = {"A": br.xp.asarray(A), "alpha": STATE["alpha"]}
            # guard: the two exact engines give the same gradient on this state
            gb = br.evaluate(pb, 0, need_grad=True, record=False).grads
            ge = ex.evaluate(dict(STATE), 0, need_grad=True, record=False).grads
            gA, _ = ex.full_gradient(ge)
            err = max(np.max(np.abs(gA - gb["A"])) / np.max(np.abs(gb["A"])),
                      abs(ge["alpha"] - gb["alpha"]) / abs(gb["alpha"]))
            if not err < 1e-9:
                raise AssertionError(f"D={D}, C={C}: brute and exchangeable gradients differ "
                                     f"(relative {err:.2e})")
            row["grad_rel_err"] = err
            t, _ = time_engine_step(br, pb, repeats=args.repeats, max_seconds=args.max_seconds)
            row["brute_ms"] = 1e3 * t
            row["ratio_brute/exch"] = row["brute_ms"] / row["exch_ms"]
        rows.append(row)
        print(row, flush=True)
    return pd.DataFrame(rows)


def empirical_vs_autograd(args) -> pd.DataFrame:
    import torch

    runs = [("numpy", "cpu"), ("torch", "cpu")]
    if torch.cuda.is_available():
        runs.append(("torch", "cuda"))
    rows = []
    for backend, device in runs:
        for dtype in ("float64", "float32"):
            row = bench_empirical(
                64, 64, args.N, backend=backend, device=device, dtype=dtype,
                repeats=args.repeats, max_seconds=args.max_seconds, check=(dtype == "float64"),
            )
            if dtype == "float64" and not row["grad_rel_err"] <= GRAD_TOL:
                raise AssertionError(f"{backend}/{device}: autograd and engine gradients differ "
                                     f"(relative {row['grad_rel_err']:.2e} > {GRAD_TOL})")
            rows.append(row)
            print({k: row[k] for k in ("backend", "device", "dtype", "step_ms", "autograd_ms",
                                       "speedup_vs_autograd")}, flush=True)
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    p = ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--quick", action="store_true",
                   help="D ≤ 16 and C = 2 for the population engines, N = 2000 for the empirical")
    p.add_argument("--repeats", type=int, default=5)
    p.add_argument("--max-seconds", type=float, default=20.0,
                   help="stop repeating a case after this many timed seconds")
    p.add_argument("--brute-limit", type=float, default=2e6,
                   help="skip brute force above this many configurations 2·L·3^(D−C)")
    p.add_argument("--exch-max-bytes", type=float, default=None,
                   help="skip the exchangeable engine when building its tables needs more "
                        "(default: half of the free memory)")
    add_threads_argument(p)
    p.add_argument("--out", help="also write both tables to this CSV (one 'table' column)")
    args = p.parse_args(argv)
    if args.exch_max_bytes is None:
        args.exch_max_bytes = 0.5 * host_free_bytes()
    set_threads(threads_from_args(args))
    cases = [(8, 2), (10, 2), (12, 2), (16, 2)]
    if not args.quick:
        cases += [(32, 2), (64, 2), (16, 4), (64, 4)]
    args.N = 2000 if args.quick else 10_000
    print(f"{machine_line('cpu')}; load average {os.getloadavg()}; "
          f"python {sys.version.split()[0]}")
    t1 = brute_vs_exchangeable(cases, args)
    t2 = empirical_vs_autograd(args)
    fmt = {"float_format": lambda x: f"{x:.4g}", "index": False}
    print("\n## Brute force vs exchangeable engine (problem (P), numpy float64, ms per step)\n")
    print(t1.to_string(**fmt))
    print(f"\n## Empirical engine vs torch autograd (problem (E), N={args.N}, D=64, d=64)\n")
    print(t2.to_string(**fmt))
    print("\n## Targets")
    d12 = t1[(t1.D == 12) & (t1.C == 2)]
    if len(d12) and "ratio_brute/exch" in d12:
        r = float(d12["ratio_brute/exch"].iloc[0])
        print(f"exchangeable >= 100x faster than brute force at D=12: {r:.0f}x -> "
              f"{'MET' if r >= 100 else 'NOT MET'}")
    cpu64 = t2[(t2.device == "cpu") & (t2.dtype == "float64")]
    for _, r in cpu64.iterrows():
        s = r["speedup_vs_autograd"]
        print(f"empirical >= 2x faster than autograd, CPU float64, {r['backend']}: {s:.2f}x -> "
              f"{'MET' if s >= 2 else 'NOT MET'}")
    if args.out:
        write_csv(args.out, pd.concat([t1.assign(table="population"),
                                       t2.assign(table="empirical")]))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
