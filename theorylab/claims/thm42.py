"""Theorem 4.2 (RECONSTRUCTED, digest §4.6): GD on the empirical risk (E) with N = poly(d)
samples reaches patch association and a test error near the population one.

Empirical GD (every off-diagonal entry of A and v ∈ ℝ^d trained, v⁰ = α⁰ w*) against exact
population GD with the same step count, over a ladder of N at several d. The reference data
model is kept (D = 10, C = 2, Figure 4's sets, q = ln(100)/10, diagonal ln ln 100) and only d
varies, so that the population dynamics are the same at every d (with temperature 1 and v ∥ w*
they do not depend on d) and d enters only through the noise ξ ∈ ℝ^d.

``N_needed(d)``: the smallest N of the ladder at which, after ``steps`` GD steps, A performs
patch association (Definition 2.2) and |test error − population error| ≤ ``ERR_TOL`` = 0.02 (4
standard errors of a 5000-point test error near 0.14, so sampling alone rarely fails it).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from ..trainer import run_experiment
from ._base import Claim, ClaimResult
from ._common import REF_DIAG, reference_config

__all__ = ["CLAIM", "ERR_TOL"]

ERR_TOL = 0.02


def run(quick: bool) -> ClaimResult:
    steps = 3000
    d_list = [10] if quick else [10, 20, 40]
    N_list = [300, 3000] if quick else [300, 1000, 3000, 10000]
    n_test = 5000
    pop = run_experiment(reference_config(steps=steps, n_records=20), progress=False).trajectory
    pop_err = float(pop.error.iloc[-1])
    rows = []
    for d in d_list:
        for N in N_list:
            cfg = reference_config(engine="empirical", method="auto", steps=steps, n_train=N,
                                   n_test=n_test, n_records=8).replace(
                data={"d": d}, model={"diag": REF_DIAG})
            tr = run_experiment(cfg, progress=False).trajectory
            last = tr.iloc[-1]
            rows.append({
                "d": d, "N": N, "steps": steps, "test_error": float(last.error),
                "test_error_se": float(last.error_se), "pop_error": pop_err,
                "train_loss": float(last.train_loss), "test_loss": float(last.loss),
                "pop_loss": float(pop.loss.iloc[-1]),
                "gamma": float(last.gamma), "rho": float(last.rho),
                "sym_dev": float(last.sym_dev), "cos_v_wstar": float(last.cos_v_wstar),
                "patch_association": bool(last.patch_association),
                "ok": bool(last.patch_association)
                and abs(float(last.error) - pop_err) <= ERR_TOL,
            })
    table = pd.DataFrame(rows)
    need = []
    for d, g in table.groupby("d"):
        ok = g[g.ok]
        need.append({"d": d, "N_needed": float(ok.N.min()) if len(ok) else math.inf})
    need = pd.DataFrame(need)
    fin = need[np.isfinite(need.N_needed)]
    slope = math.nan
    if len(fin) >= 2 and fin.N_needed.nunique() > 1:
        slope = float(stats.linregress(np.log(fin.d), np.log(fin.N_needed)).slope)
    all_reach = bool(np.isfinite(need.N_needed).all())
    grows = bool(fin.N_needed.is_monotonic_increasing) if len(fin) else False
    verdict = "agrees" if all_reach and grows else ("partial" if len(fin) else "disagrees")
    small = table[table.N == table.N.min()]
    reading = [
        f"Population GD after {steps} steps: error {pop_err:.4f}. Empirical GD reaches patch "
        "association with a test error within 0.02 of it at N_needed = " + ", ".join(
            f"{r.N_needed:.0f} (d={r.d})" for r in need.itertuples()) + " on the ladder "
        f"{N_list}.",
        f"Log-log slope of N_needed against d: {slope:.2f} (the reconstructed statement says "
        "N = poly(d); a ladder with factor ~3 steps and few d values gives only a coarse "
        "exponent)." if np.isfinite(slope) else "Too few finite N_needed for a slope.",
        f"With the smallest N ({int(small.N.iloc[0])}) the training loss falls to "
        f"{small.train_loss.min():.3f}–{small.train_loss.max():.3f} while the test error is "
        f"{small.test_error.min():.3f}–{small.test_error.max():.3f}: the noise directions of v "
        "overfit and the off-diagonal of A loses the partition symmetry (sym_dev column), which "
        "is what breaks patch association.",
        "Only one seed per point, 3000 steps (phase II under way, not finished): the comparison "
        "is at equal step count, not at convergence.",
    ]
    headline = {"pop_error": pop_err, **{f"N_needed(d={r.d})": r.N_needed
                                         for r in need.itertuples()}, "slope": slope}

    def figure(fig):
        ax = fig.add_subplot(1, 1, 1)
        for d, g in table.groupby("d"):
            ax.errorbar(g.N, g.test_error, yerr=g.test_error_se, marker="o", label=f"d={d}")
        ax.axhline(pop_err, color="k", ls="--", label="population")
        ax.set_xscale("log")
        ax.set_xlabel("N (training samples)")
        ax.set_ylabel(f"test error after {steps} steps")
        ax.legend(fontsize=7)

    return ClaimResult("thm4.2", table, verdict, headline, reading, extra={"n_needed": need},
                       figure=figure)


CLAIM = Claim(
    id="thm4.2",
    title="Theorem 4.2 (realistic: GD on the empirical risk)",
    label="RECONSTRUCTED",
    source="digest §4.6 (name and Figure 4 FOUND; statement not read)",
    statement="With N = poly(d) samples, GD on (E) yields patch association and a small test "
    "error, like GD on (P).",
    measured="Test error (5000 fresh points), patch association and sym_dev after a fixed number "
    "of empirical GD steps, over N and d; population error at the same step.",
    predicted="Patch association and test error ≈ population error once N is large enough; the "
    "needed N grows polynomially with d.",
    run=run,
)
