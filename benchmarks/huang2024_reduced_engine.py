"""Speed of the ``population-reduced`` engine (Huang et al. (2025), theorylab.huang2024) against
the reduced dynamics it replaces, in the same run.

For each P of the Δ > 0 size family (Δ = 0.65, κ_c = 1/4; ``setups.family_config``):

1. one full run to T* (the ladders' stopping rule, ε = 0.05(L⁰ − L*)) of the engine with the
   ladders' 24-node Gauss rule for the global area's count (``to_Tstar_s``);
2. one gradient evaluation of both query classes at the same state, timed interleaved
   (``core.bench.interleaved_times``): the engine with the Gauss rule, the engine with exact
   count sums (pmf cut at 1e−18 of its largest value), and the baseline, the reduced dynamics
   as theorylab computed them before this engine (exact binomial sums over every count, one
   numpy grid per gradient coordinate: ``baseline_gradient`` below, kept verbatim as the
   reference); ``ratio`` = baseline / engine per evaluation, and the baseline's time to T*
   projected from it (``baseline_to_Tstar_s``).

One thread (``OMP_NUM_THREADS=1``, torch threads 1); the machine line and the load average are
printed with the table.

    OMP_NUM_THREADS=1 python benchmarks/huang2024_reduced_engine.py [--quick] [--out CSV]
        [--backend torch --device cuda]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import time

import numpy as np

from theorylab.core.bench import interleaved_times, machine_line, print_and_save
from theorylab.huang2024.engines import make_engine
from theorylab.huang2024.engines._reduced import query_classes
from theorylab.huang2024.predictions.rates import count_law
from theorylab.huang2024.setups import EPS_REL, family_config, family_sizes, mae_run


def baseline_gradient(theta, qc, gamma: float, z_nodes, z_probs):
    """The reduced gradient of one query class as computed before the engine (exact binomial
    sums over the tracked and own counts, masked keys in; the speed baseline)."""
    phi_o, phi_t, phi_x, u_s, u_o, u_t, u_x = (float(v) for v in theta)
    no, pno = count_law(qc.c_own + 1, gamma=gamma)
    nt, pnt = count_law(qc.c_trk + 1, gamma=gamma)
    zn, zp = np.asarray(z_nodes, dtype=np.float64), np.asarray(z_probs, dtype=np.float64)
    NT = nt.astype(np.float64)[:, None, None, None]
    NO = no.astype(np.float64)[None, :, None, None]
    ZT = zn[None, None, :, None]
    ZO = zn[None, None, None, :]
    W = (pnt[:, None, None, None] * pno[None, :, None, None] * zp[None, None, :, None]
         * zp[None, None, None, :])
    e_t = NT * np.exp(ZT * phi_t + u_t)
    e_o = NO * np.exp(ZO * phi_o + u_o)
    m_t = (qc.c_trk - NT) * math.exp(u_t)
    m_o = (qc.c_own - NO) * math.exp(u_o)
    ezx = np.exp(zn * phi_x)
    n_x = qc.n_rest * qc.c_rest
    z_x = n_x * math.exp(u_x) * (gamma + (1 - gamma) * float(zp @ ezx))
    D = e_t + m_t + e_o + m_o + math.exp(u_s) + z_x
    en2 = qc.c_rest * (1 - gamma) * (gamma + qc.c_rest * (1 - gamma))
    q_x = qc.n_rest * en2 * float(zp @ (zn ** 2 * ezx ** 2)) * math.exp(2 * u_x)
    s_t, s_o = e_t / D, e_o / D
    dzx_phi = n_x * math.exp(u_x) * (1 - gamma) * float(zp @ (zn * ezx))
    dq_phi = qc.n_rest * en2 * float(zp @ (2 * zn ** 3 * ezx ** 2)) * math.exp(2 * u_x)
    moves = ((ZO * e_o, 0.0, ZO * e_o, 0.0), (ZT * e_t, ZT * e_t, 0.0, 0.0),
             (dzx_phi, 0.0, 0.0, dq_phi), (math.exp(u_s), 0.0, 0.0, 0.0),
             (e_o + m_o, 0.0, e_o, 0.0), (e_t + m_t, e_t, 0.0, 0.0), (z_x, 0.0, 0.0, 2 * q_x))
    g = np.empty(len(moves))
    for i, (dD, de_t, de_o, dq) in enumerate(moves):
        dl = (ZT ** 2 * s_t * (de_t - s_t * dD) / D + ZO ** 2 * (s_o - 1) * (de_o - s_o * dD) / D
              + dq / (2 * D ** 2) - q_x * dD / D ** 3)
        g[i] = float(np.sum(W * dl))
    return g


def row(P: int, backend: str, device: str, repeats: int) -> dict:
    C1, C = family_sizes("pos", P)
    t0 = time.perf_counter()
    tr = mae_run(P, C1, C)  # the ladder run: 24-node Gauss rule, to T*
    to_T = time.perf_counter() - t0
    steps = int(tr.step.iloc[-1])
    cfg = family_config("pos", P, engine="population-reduced").replace(
        train={"backend": backend, "device": device})
    engs = {"gauss24": make_engine(cfg),
            "exact": make_engine(cfg.replace(train={"count_nodes": 0}))}
    # a state in the middle of the run (Phase II): the engine's own after `steps // 2` steps
    eng = engs["gauss24"]
    p = eng.initial_params()
    for s in range(steps // 2):
        p = eng.apply(p, eng.evaluate(p, s, need_grad=True, record=False).grads)
    qcs = query_classes(P, C1, C)
    fns = {k: (lambda e=e: e.evaluate(p, 0, need_grad=True, record=False))
           for k, e in engs.items()}
    fns["baseline"] = lambda: [baseline_gradient(p.theta[k], qc, 0.5, eng.z, eng.pz)
                               for k, qc in qcs.items()]
    times = interleaved_times(fns, repeats=repeats, max_seconds=120.0)
    med = {k: statistics.median(v) for k, v in times.items()}
    return {"P": P, "C1": C1, "C": C, "backend": backend, "device": device,
            "steps_to_Tstar": steps, "to_Tstar_s": to_T,
            "eval_gauss24_ms": 1e3 * med["gauss24"], "eval_exact_ms": 1e3 * med["exact"],
            "eval_baseline_ms": 1e3 * med["baseline"],
            "ratio_baseline_vs_gauss24": med["baseline"] / med["gauss24"],
            "ratio_baseline_vs_exact": med["baseline"] / med["exact"],
            "baseline_to_Tstar_s": med["baseline"] * steps,
            "load_avg_1min": os.getloadavg()[0]}


def main(argv=None) -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="P = 1024 only")
    ap.add_argument("--out", default=None, help="CSV file for the table")
    ap.add_argument("--backend", default="numpy", choices=("numpy", "torch"))
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--repeats", type=int, default=3)
    a = ap.parse_args(argv)
    import torch

    torch.set_num_threads(1)
    print(machine_line(a.device, {"engine": "population-reduced", "ε": f"{EPS_REL:g}"}))
    Ps = (1024,) if a.quick else (1024, 4096, 16384)
    rows = [row(P, a.backend, a.device, a.repeats) for P in Ps]
    print_and_save(rows, a.out)


if __name__ == "__main__":
    main()
