"""Theorem 4.2 (RECONSTRUCTED, notes §4.6): GD on the empirical risk (E) with N = poly(d)
samples reaches patch association and a test error near the population one.

Empirical GD (every off-diagonal entry of A and v ∈ ℝ^d trained, v⁰ = α⁰ w*) against exact
population GD with the same step count, over a ladder of N at several d. The reference data
model is kept (D = 10, C = 2, Figure 4's sets, q = ln(100)/10, diagonal ln ln 100) and only d
varies, so that the population dynamics are the same at every d (with temperature 1 and v ∥ w*
they do not depend on d) and d enters only through the noise ξ ∈ ℝ^d (σ² = 1/d).

Both runs use lr 0.5 for ``STEPS`` = 3000 steps: the population run is then past phase III (its
fair-coin error has settled at its final value; checked in the table), so the comparison is
made at convergence, not on the phase-I plateau. The population error compared is the fair-coin
one (the noise part of v breaks the empirical ties at random).

``N_needed(d)``: the smallest N of the ladder from which on (every larger N too) A performs
patch association with the margin ``train.pa_margin`` and |test error − population error| ≤
``ERR_TOL`` = 0.02 (≈ 4 standard errors of a 5000-point test error near 0.1). A ladder whose
smallest N already passes is extended downwards (censored below) down to ``N_FLOOR``.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from theorylab.core.claims import Claim, ClaimResult
from theorylab.core.claims.verdict import (
    MIN_FIT_POINTS,
    Verdict,
    ladder_threshold,
    loglog_fit,
    strictly_increasing,
)

from ..config import PAPER_NAME
from ..trainer import run_experiment
from ._common import REF_DIAG, reference_config

__all__ = ["CLAIM", "ERR_TOL", "verdict", "n_needed"]

ERR_TOL = 0.02
STEPS = 3000
LR = 0.5
N_FLOOR = 20
R2_MIN = 0.8


def n_needed(table: pd.DataFrame) -> pd.DataFrame:
    """Per d: N_needed and its censoring status ([`ladder_threshold`][]) from the (d, N, ok)
    rows, plus the excess |test − population| error at the smallest and largest N."""
    rows = []
    for d, g in table.sort_values("N").groupby("d"):
        val, status = ladder_threshold(g.N, g.ok)
        exc = (g.test_error - g.pop_error).abs()
        rows.append({"d": d, "N_needed": val, "status": status, "N_min": g.N.min(),
                     "N_max": g.N.max(), "excess_at_N_min": float(exc.iloc[0]),
                     "excess_at_N_max": float(exc.iloc[-1]),
                     "se_at_N_max": float(g.test_error_se.iloc[-1])})
    return pd.DataFrame(rows)


def verdict(need: pd.DataFrame) -> Verdict:
    """Verdict from the per-d table of [`n_needed`][].

    ``disagrees``: at some d the largest N neither passes nor brings the test error closer to
    the population error than the smallest N (no convergence of (E) to (P) in N).
    ``inconclusive``: fewer than 4 d with an uncensored N_needed, or N_needed flat or not
    monotone in d (the ladder does not resolve the d-dependence). ``agrees``: N_needed is
    finite at every d and strictly monotone in d with a power-law fit of r² ≥ 0.8 (N = poly(d)
    suffices; the exponent is reported, its sign included). ``partial``: monotone, poor fit."""
    if len(need) == 0:
        return Verdict("inconclusive", ("no d measured",))
    stuck = need[(need.status == "censored-above")
                 & (need.excess_at_N_max >= need.excess_at_N_min)]
    if len(stuck):
        return Verdict("disagrees", tuple(
            f"d={r.d:g}: up to N={r.N_max:g} the test error does not approach the population "
            f"error (excess {r.excess_at_N_min:.3f} at N={r.N_min:g}, {r.excess_at_N_max:.3f} at "
            f"N={r.N_max:g})" for r in stuck.itertuples()))
    cens = need[need.status != "ok"]
    fin = need[need.status == "ok"].sort_values("d")
    why = [f"d={r.d:g}: N_needed {r.status}" for r in cens.itertuples()]
    if len(fin) < MIN_FIT_POINTS:
        return Verdict("inconclusive", tuple(why) + (
            f"{len(fin)} d values with an uncensored N_needed (need {MIN_FIT_POINTS})",))
    inc, dec = strictly_increasing(fin.N_needed), strictly_increasing(-fin.N_needed)
    txt = ", ".join(f"{r.N_needed:g} (d={r.d:g})" for r in fin.itertuples())
    if cens.shape[0] or not (inc or dec):
        return Verdict("inconclusive", tuple(why) + (
            f"N_needed = {txt} is not strictly monotone in d",))
    fit = loglog_fit(fin.d, fin.N_needed)
    res = f"N_needed = {txt} ∝ d^{fit['slope']:.2f} (r² {fit['r2']:.2f})"
    return Verdict("agrees" if fit["r2"] >= R2_MIN else "partial", (res,))


def _ladder(quick: bool) -> list[int]:
    return [300, 2400] if quick else [150, 300, 600, 1200, 2400, 4800]


def _point(d: int, N: int, pop_err: float, pop_last) -> dict:
    cfg = reference_config(engine="empirical", method="auto", steps=STEPS, lr_v=LR, n_train=N,
                           n_test=5000, n_records=8).replace(data={"d": d},
                                                             model={"diag": REF_DIAG})
    last = run_experiment(cfg, progress=False).trajectory.iloc[-1]
    return {
        "d": d, "N": N, "steps": STEPS, "test_error": float(last.error),
        "test_error_se": float(last.error_se), "pop_error": pop_err,
        "train_loss": float(last.train_loss), "test_loss": float(last.loss),
        "pop_loss": float(pop_last.loss), "gamma": float(last.gamma), "rho": float(last.rho),
        "pa_gap": float(last.pa_gap), "sym_dev": float(last.sym_dev),
        "cos_v_wstar": float(last.cos_v_wstar),
        "patch_association": bool(last.patch_association),
        "ok": bool(last.patch_association) and abs(float(last.error) - pop_err) <= ERR_TOL,
    }


def run(quick: bool) -> ClaimResult:
    d_list = [10, 20] if quick else [5, 10, 20, 40]
    N_list = _ladder(quick)
    pop = run_experiment(reference_config(steps=STEPS, lr_v=LR, n_records=20),
                         progress=False).trajectory
    pop_last = pop.iloc[-1]
    pop_err = float(pop_last.error_fair)
    settled = int(pop.step[(pop.error_fair - pop_err).abs() > 1e-12].max() + 1) \
        if ((pop.error_fair - pop_err).abs() > 1e-12).any() else 0
    rows = [_point(d, N, pop_err, pop_last) for d in d_list for N in N_list]
    # extend the ladder downwards where its smallest rung already passes
    while True:
        table = pd.DataFrame(rows)
        need = n_needed(table)
        low = need[(need.status == "censored-below") & (need.N_min > N_FLOOR)]
        if not len(low):
            break
        for r in low.itertuples():
            rows.append(_point(int(r.d), max(N_FLOOR, int(r.N_min) // 2), pop_err, pop_last))
    table = table.sort_values(["d", "N"], ignore_index=True)
    v = judge({"n_needed": need})
    fin = need[np.isfinite(need.N_needed)]
    small = table[table.N == table.N.min()]
    reading = [
        f"Population GD (lr {LR}, {STEPS} steps): fair-coin error {pop_err:.4f}, settled from "
        f"the recorded step {settled} on (γ − ρ = {pop_last.gamma - pop_last.rho:.3f}): the "
        "comparison is made after phase III, not on the phase-I plateau.",
        "Empirical GD reaches patch association (margin) with a test error within "
        f"{ERR_TOL} of it from N_needed = " + ", ".join(
            f"{r.N_needed:g} (d={r.d:g}, {r.status})" for r in need.itertuples())
        + f" on the ladder {sorted(table.N.unique().tolist())}.",
        (f"Over the d with a finite N_needed, N_needed ranges {fin.N_needed.min():g}–"
         f"{fin.N_needed.max():g}." if len(fin) else "No d has a finite N_needed."),
        f"At the smallest N ({int(small.N.iloc[0])}) the training loss is "
        f"{small.train_loss.min():.3f}–{small.train_loss.max():.3f} and the test error "
        f"{small.test_error.min():.3f}–{small.test_error.max():.3f}, with sym_dev up to "
        f"{small.sym_dev.max():.2f}: with few samples the noise directions of v overfit and A "
        "loses the partition symmetry.",
        "σ² = 1/d (Assumption 2): a larger d spreads the same noise energy over more "
        "directions, so N_needed need not grow with d; the reconstructed statement only says "
        "that N = poly(d) suffices. One seed per point.",
    ]
    headline = {"pop_error_fair": pop_err, **{f"N_needed(d={r.d:g})": r.N_needed
                                              for r in need.itertuples()}}

    def figure(fig):
        ax = fig.add_subplot(1, 1, 1)
        for d, g in table.groupby("d"):
            ax.errorbar(g.N, g.test_error, yerr=g.test_error_se, marker="o", label=f"d={d}")
        ax.axhline(pop_err, color="k", ls="--", label="population (fair-coin ties)")
        ax.set_xscale("log")
        ax.set_xlabel("N (training samples)")
        ax.set_ylabel(f"test error after {STEPS} steps")
        ax.legend(fontsize=7)

    return ClaimResult("thm4.2", table, v, headline, reading, extra={"n_needed": need},
                       figure=figure)


def judge(tables: dict[str, pd.DataFrame]) -> Verdict:
    """[`verdict`][] on the written ``n_needed`` table."""
    return verdict(tables["n_needed"])


CLAIM = Claim(
    id="thm4.2",
    paper=PAPER_NAME,
    title="Theorem 4.2 (realistic: GD on the empirical risk)",
    label="RECONSTRUCTED",
    source="notes §4.6 (name and Figure 4 FOUND; statement not read)",
    statement="With N = poly(d) samples, GD on (E) yields patch association and a small test "
    "error, like GD on (P).",
    measured="Test error (5000 fresh points), patch association (margin) and sym_dev after "
    f"{STEPS} empirical GD steps (lr {LR}), over an N ladder at 4 values of d; population "
    "fair-coin error after the same steps (past phase III).",
    predicted="For every d a finite N_needed, strictly monotone in d with a power-law fit "
    "(N = poly(d) suffices); test error → population error as N grows.",
    run=run,
    judge=judge,
)
