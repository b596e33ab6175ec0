"""Theorem 4.4 (RECONSTRUCTED, docs/papers/huang2024.md §4.4 and §3): trained with the
contrastive objective, the one-layer ViT "concentrates on global feature-position correlations
and collapses to a single global pattern" (FOUND); the notes' quantitative reading is
attn_{p→global} → 1 − o(1) for every patch p; and, unlike MAE, it does not learn the local
areas.

**What "a single global pattern" means here, and what holds by construction.** From Q⁰ = 0
every query is a positional e_p and the mean pooling weighs the queries alike, so every row of
(Φ, Υ) gets the same CL gradient and the rows stay equal: every patch attends the same way at
every step, by construction (cl_plateau's module docstring). "Single" is therefore not tested.
What is tested is that this one pattern is *global* (it selects the global area: its
attention there rises from C1/P), *how far* (the paper: to 1; the reduced CL model: to a
plateau below 1 when τ < τ_c, to 1 above), and that MAE on the same data learns the local
areas instead.

Measured (``setups.cl_measure``, shared with the figure ``huang2024-cl-temperature``): CL
(``cl-montecarlo``, InfoNCE on two independently masked views, mean pooling, 15 negatives,
K = 4 clusters) on the ladder P ∈ {32, 64, 128} at Δ ≈ 0.25 (sizes from ``data.Delta``,
inside Thm 4.1's range),
5 Monte Carlo seeds per rung, 200 steps; the MAE arm on the same data run to convergence
(3 seeds). The temperature τ is a variant (0.1 main; 0.2, 0.3, 0.5, 1.0); each reading is
judged on its own runs, and the derived τ_c (≈ 0.25) says which readings should plateau.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from theorylab.core.claims import (
    Claim,
    ClaimResult,
    Counterfactual,
    Prediction,
    Threshold,
    format_interval,
    threshold_values,
)
from theorylab.core.claims.verdict import Verdict, combine

from ..config import PAPER_NAME
from ..setups import ATTN_TOL, BATCH, ETA_PER_P, NEGATIVES, K
from ..setups import CL_END_FRACTION as END_FRACTION
from ..setups import cl_measure as measure
from ..setups import cl_rung_rows as rung_rows
from ..setups import cl_settings as settings
from ._cl_runs import VARIANTS

__all__ = ["CLAIM", "THRESHOLDS", "PREDICTIONS", "COUNTERFACTUALS", "judge", "paired_rise"]

THRESHOLDS = (
    Threshold("ONE_TOL", 0.1, "project choice",
              "'tends to 1' read as an end value within 0.1 of 1 (attention ≥ 0.9) on the "
              "runs' horizon",
              role="the limit holds when the largest P's interval lies above GLOBAL_LIMIT − "
              "ONE_TOL; it fails when every P's interval lies below it and does not rise "
              "with P"),
    Threshold("DRIFT_TOL", 0.1, "project choice",
              "premise of a failed limit: a plateau, i.e. no upward drift above 0.1 over the "
              "last half of the run (the 95 % interval of 3–5 seeds is ±0.05 to ±0.1)",
              role="premise: a rung judged below the limit has its drift's interval below it"),
    Threshold("ATTN_TOL", ATTN_TOL, "project choice",
              "smallest attention difference that counts (setups.ATTN_TOL: ≈ 3 standard errors "
              "of an end-window mean)",
              role="a rise of global attention, a rise with P and the MAE − CL own-area gap "
              "count when their intervals clear it"),
)

PREDICTIONS = (
    Prediction("GLOBAL_LIMIT", 1.0, "factor",
               "the limit of CL's attention of a local query on the global area",
               "paper statement (reconstructed)"),
    Prediction("SELECT_SIGN", 1.0, "shift",
               "sign of the change of CL's global attention from its start C1/P (1: it rises)",
               "paper statement"),
    Prediction("CONTRAST_SIGN", 1.0, "shift",
               "sign of MAE's own-area attention minus CL's (1: MAE learns the local areas, CL "
               "does not)", "paper statement"),
)

COUNTERFACTUALS = (
    Counterfactual("no selection", "CL's global attention stays at its initial share",
                   {"SELECT_SIGN": 0.0}),
    Counterfactual("no contrast", "CL learns the local areas as MAE does",
                   {"CONTRAST_SIGN": 0.0}),
)


def _sign_ok(lo: float, hi: float, sign: float, tol: float) -> bool:
    """An interval [lo, hi] agrees with a predicted sign: > tol (sign 1), < −tol (−1), within
    ±tol (0)."""
    s = np.sign(sign)
    if s > 0:
        return lo > tol
    if s < 0:
        return hi < -tol
    return lo >= -tol and hi <= tol


def paired_rise(t: pd.DataFrame) -> tuple[float, float, float]:
    """The t-interval over seeds of CL's end global attention at the largest P less that at
    the smallest P (the same seeds)."""
    from theorylab.core.claims import t_interval

    cl = t[t.objective == "cl"].set_index(["P", "seed"]).end_glob_lq
    Ps = sorted(cl.index.get_level_values(0).unique())
    return t_interval((cl.loc[Ps[-1]] - cl.loc[Ps[0]]).dropna().to_numpy(float))


def judge(tables: dict[str, pd.DataFrame], values=None) -> Verdict:
    """Selection of the global area, the limit of its attention, and the contrast with the
    MAE arm, from the main table (one temperature), with the declared values (or `values`).

    - premises (else ``inconclusive``): ≥ 2 rungs of P, each with ≥ 3 CL seeds, finite;
    - selection: every rung's rise interval has the sign SELECT_SIGN beyond ATTN_TOL;
    - limit: ``agrees`` when the largest P's end interval lies above GLOBAL_LIMIT − ONE_TOL;
      ``disagrees`` when every rung's lies below it, no rung drifts up by DRIFT_TOL and the
      end value does not rise with P (the interval over seeds of largest − smallest P does not
      clear ATTN_TOL); else ``inconclusive``;
    - contrast: the MAE arm converged (its own-area attention moved by ≤ ATTN_TOL over the
      last fifth) and MAE − CL own-area attention has the sign CONTRAST_SIGN beyond ATTN_TOL
      at every rung; an unconverged MAE arm makes this part ``inconclusive``."""
    v = threshold_values((*THRESHOLDS, *PREDICTIONS), values)
    t = tables["table"]
    rows = rung_rows(t)
    if len(rows) < 2 or (rows.seeds < 3).any() or not rows.finite.all():
        return Verdict("inconclusive", ("premise failed: need CL runs at ≥ 2 values of P with "
                                        "≥ 3 finite seeds each",))
    tau = float(t[t.objective == "cl"].tau.iloc[0])
    n = int(rows.seeds.min())
    tol = v["ATTN_TOL"]
    parts = []
    sel = [r for r in rows.itertuples()
           if not _sign_ok(r.rise_lo, r.rise_hi, v["SELECT_SIGN"], tol)]
    parts.append(Verdict("disagrees" if sel else "agrees", (
        "selection: CL's global attention rose from its start by " + ", ".join(
            f"{format_interval(r.rise, r.rise_lo, r.rise_hi, n, '+.3f')} (P={r.P})"
            for r in rows.itertuples())
        + ("" if not sel else f": not of sign {v['SELECT_SIGN']:+g} beyond ±{tol:g}"),)))
    one = v["GLOBAL_LIMIT"] - v["ONE_TOL"]
    top = rows.iloc[-1]
    per = "; ".join(f"P={r.P}: {format_interval(r.glob, r.glob_lo, r.glob_hi, n, '.3f')}, "
                    f"drift {r.drift:+.3f} [{r.drift_lo:+.3f}, {r.drift_hi:+.3f}], derived "
                    + (f"plateau {r.pred:.3f}" if r.pred_exists else "no plateau (→ 1)")
                    + f", τ_c {r.tau_c:.3f}" for r in rows.itertuples())
    txt = f"limit at τ = {tau:g}: end global attention {per}"
    rise = paired_rise(t)
    rising = rise[1] > tol  # the interval of (largest P − smallest P) clears ATTN_TOL
    if top.glob_lo > one:
        parts.append(Verdict("agrees", (txt + f"; at P = {top.P} above {one:g}",)))
    elif (rows.glob_hi < one).all() and not rising and (rows.drift_hi < v["DRIFT_TOL"]).all():
        below = bool(rows.pred_exists.all()) and tau < float(rows.tau_c.min())
        parts.append(Verdict("disagrees", (
            txt + f"; below {one:g} at every P, not rising: " + (
                f"τ = {tau:g} < τ_c, and the reconstructed CL model (unnormalised InfoNCE, "
                "mean pooling, masked keys in the softmax) has a finite plateau there: the "
                "paper's → 1 is not reproduced under this reading of τ"
                if below else "the derived CL model has no plateau here: the runs or the "
                "derivation are in question, not only the theory"),)))
    else:
        parts.append(Verdict("inconclusive", (txt + f"; neither above {one:g} at the largest P "
                                              "nor a settled plateau below it",)))
    mae = rows[np.isfinite(rows.own_mae)]
    if len(mae) < len(rows):
        parts.append(Verdict("inconclusive", ("contrast: no MAE arm on some rung",)))
    elif (mae.mae_moved > tol).any():
        parts.append(Verdict("inconclusive", (
            "premise failed: contrast: the MAE arm has not converged (its own-area attention "
            "moved by " + ", ".join(f"{r.mae_moved:.3f} (P={r.P})" for r in mae.itertuples())
            + f" over the last fifth; at most {tol:g} counts as converged)",)))
    else:
        bad = [r for r in mae.itertuples()
               if not _sign_ok(r.mae_gap_lo, r.mae_gap_hi, v["CONTRAST_SIGN"], tol)]
        parts.append(Verdict("disagrees" if bad else "agrees", (
            "contrast: own-area attention of local queries, MAE (converged) vs CL: " + ", ".join(
                f"{r.own_mae:.3f} vs {r.own_cl:.3f} (P={r.P})" for r in mae.itertuples())
            + ("" if not bad else f": the gap is not of sign {v['CONTRAST_SIGN']:+g}"),)))
    return combine(parts)


COLUMNS = ["objective", "tau", "seed", "P", "C1", "C", "K", "delta", "rho", "negatives",
           "steps", "init_glob_lq", "init_own_lq", "end_glob_lq", "drift_glob_lq",
           "end_own_lq", "end_glob_gq", "end_phi_glob_lq", "end_phi_own_lq",
           "own_change_last_fifth", "pred_exists", "pred_glob", "pred_phi", "tau_c"]


def run(quick: bool, readings: dict) -> ClaimResult:
    tau = float(readings["temperature"])
    table, traj = measure(quick, tau)
    table = table.reindex(columns=COLUMNS)
    v = judge({"table": table})
    rows = rung_rows(table)
    st = settings(quick)
    reading = [
        f"CL (InfoNCE, τ = {tau:g}, {NEGATIVES} negatives, mean pooling, views by independent "
        f"Bernoulli(0.5) masks) on P ∈ {[r[0] for r in st['ladder']]} at Δ ≈ 0.25, K = {K}, "
        f"{st['steps']} GD steps with η = {ETA_PER_P:g}·P on fresh batches of {BATCH} images, "
        f"{len(st['seeds'])} seeds; MAE arm: population-montecarlo, step ×{K}, "
        f"{st['mae_steps']} steps, 3 seeds. Attention read on clean images, local-area "
        f"queries; end value = mean over the last {END_FRACTION:.0%} of the steps.",
        "Per P: " + "; ".join(
            f"P={r.P}: CL global {r.glob:.3f} [{r.glob_lo:.3f}, {r.glob_hi:.3f}] (derived "
            + (f"{r.pred:.3f}" if r.pred_exists else "no plateau") + f", τ_c {r.tau_c:.3f}), "
            f"CL own {r.own_cl:.3f}, MAE own {r.own_mae:.3f}" for r in rows.itertuples()) + ".",
        "A single pattern holds by construction from Q⁰ = 0 (equal rows of (Φ, Υ) at every "
        "step); the check reads whether that pattern is global, how far it goes, and the "
        "contrast with MAE.",
    ]
    head = {f"CL global attention P={r.P}": float(r.glob) for r in rows.itertuples()}
    head.update({f"derived τ_c P={r.P}": float(r.tau_c) for r in rows.itertuples()})
    brief = (f"{v.verdict} at τ={tau:g}: CL global attention " + ", ".join(
        f"{r.glob:.2f}" for r in rows.itertuples()) + f" at P={[r.P for r in rows.itertuples()]}"
             f" (τ_c≈{rows.tau_c.mean():.2f}); {len(st['seeds'])} seeds each")

    def figure(fig):
        axs = fig.subplots(1, 2)
        cl = traj[traj.objective == "cl"]
        mean = cl.groupby(["P", "step"]).attn_glob_lq.mean().reset_index()
        for (P, g), c in zip(mean.groupby("P"), ("C0", "C1", "C2", "C3")):
            axs[0].plot(g.step, g.attn_glob_lq, color=c, label=f"CL P={P}")
            r = rows[rows.P == P].iloc[0]
            axs[0].axhline(r.pred if r.pred_exists else 1.0, color=c, ls=":", lw=1)
        axs[0].axhline(1.0, color="k", lw=0.8)
        axs[0].set_xlabel("GD step")
        axs[0].set_ylabel(f"CL (τ = {tau:g}): attention on the global area")
        axs[0].legend(fontsize=7, title="dotted: derived plateau (1: none)", title_fontsize=7)
        axs[1].errorbar(rows.P, rows.glob, yerr=[rows.glob - rows.glob_lo,
                                                 rows.glob_hi - rows.glob],
                        fmt="o", label="CL global (95 % interval)")
        axs[1].plot(rows.P, np.where(rows.pred_exists, rows.pred, 1.0), "s--", mfc="none",
                    label="CL derived plateau")
        axs[1].plot(rows.P, rows.own_mae, "^:", label="MAE own-area (converged)")
        axs[1].plot(rows.P, rows.own_cl, "v:", label="CL own-area")
        axs[1].axhline(1.0, color="k", lw=0.8)
        axs[1].set_xscale("log")
        axs[1].set_ylim(0, 1.05)
        axs[1].set_xlabel("P")
        axs[1].legend(fontsize=7)

    return ClaimResult("thm4.4", table, v, head, reading, brief=brief,
                       extra={"trajectories": traj}, figure=figure)


CLAIM = Claim(
    id="thm4.4",
    paper=PAPER_NAME,
    figsize=(10.0, 4.0),
    title="Theorem 4.4 (CL collapses onto the global area)",
    label="RECONSTRUCTED",
    kind="theorem check",
    source="docs/papers/huang2024.md §4.4 (FOUND qualitatively: CL concentrates on global FP "
    "correlations and collapses to a single global pattern; MAE learns local ones) and §3 "
    "(the CL model, RECONSTRUCTED)",
    statement="Trained with the contrastive objective, every patch attends the global area, its "
    "attention there tending to 1, while MAE on the same data learns the local areas.",
    measured="CL on P ∈ {32, 64, 128} at Δ ≈ 0.25, 5 Monte Carlo seeds, 200 steps, per "
    "temperature τ; the MAE arm on the same data run to convergence (3 seeds).",
    predicted="The global attention rises from its start (selection), tends to GLOBAL_LIMIT = 1 "
    "(within ONE_TOL at the largest P), and MAE's own-area attention exceeds CL's.",
    thresholds=THRESHOLDS,
    predictions=PREDICTIONS,
    counterfactuals=COUNTERFACTUALS,
    variants=VARIANTS,
    premises=("≥ 2 rungs of P with ≥ 3 finite seeds each",
              "a failed limit only on a settled plateau (drift below DRIFT_TOL)",
              "the MAE arm converged, for the contrast"),
    seeds="5 Monte Carlo seeds per CL rung (3 quick), 3 for the MAE arm (sweep points); every "
    "comparison on 95 % t-intervals over the seeds",
    reconstructed="the CL model (InfoNCE with unnormalised dot products on masked views, mean "
    "pooling, masked keys in the softmax) and τ are reconstructions; its plateau below 1 for "
    "τ < τ_c comes from the finite optimal representation norm of this InfoNCE.",
    untested="Larger P and n, cropping views, other poolings and cluster counts, population "
    "(rather than Monte Carlo) GD, horizons past 200 steps.",
    run=run,
    judge=judge,
)
