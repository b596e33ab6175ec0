"""Theorem 4.4, the paper's sentences (docs/papers/huang2024.md §4.4, FOUND): trained with the
contrastive objective, the one-layer ViT "concentrates on global feature-position correlations
and collapses to a single global pattern", and CL-trained ViTs "favor predominantly global
features, even under mild imbalance".

**Operationalised.** "Predominantly global": a local query's attention on the global area
against its attention on its own (local) area at the end of CL training, as the contrast
s = (global − own)/(global + own) (1: only global, 0: balanced, −1: only local; MAE ends near
−1). The sentence is a lower bound: s ≥ 1/3 (global at least twice the own-area attention), on
every rung, read on the rung with the lowest interval, on the main ladder (Δ ≈ 0.25) and on a
ladder at mild imbalance (Δ ≈ 0.07–0.13). "Concentrates on global FP correlations": the global
attention rises from its start share C1/P (beyond ATTN_TOL on every rung), and MAE on the same
data learns the local areas instead (its s below 0). "A single global pattern": from Q⁰ = 0
every query is a positional e_p and the mean pooling weighs the queries alike, so every row of
(Φ, Υ) gets the same CL gradient and every patch attends alike at every step by construction
(cl_plateau's module docstring): reported, not judged.

Where CL's global attention settles (a plateau below 1 for τ below the derived τ_c, 1 above)
is our derivation, judged in ``thm4.4-plateau``; the notes' reading "attention → 1" is not the
paper's sentence.

Measured (``setups.cl_measure``, shared with the figure ``huang2024-cl-temperature``): CL
(``cl-montecarlo``, InfoNCE on two independently masked views, mean pooling, 15 negatives,
K = 4 clusters) on P ∈ {32, 64, 128} at Δ ≈ 0.25, 5 Monte Carlo seeds per rung, 200 steps;
the same at Δ ≈ 0.1 (``setups.cl_mild_measure``, 3 seeds); the MAE arm on the Δ ≈ 0.25 data run
to convergence (3 seeds). The temperature τ is a variant (0.1 main; 0.2, 0.3, 0.5, 1.0): the
sentence holds for the unknown τ only when it holds under every reading.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from theorylab.core.claims import (
    Claim,
    ClaimResult,
    Counterfactual,
    IntervalMethod,
    Prediction,
    Threshold,
    format_interval,
    judge_band,
    t_interval,
    threshold_values,
)
from theorylab.core.claims.verdict import Reported, Verdict, combine

from ..config import PAPER_NAME
from ..setups import ATTN_TOL, BATCH, CL_MILD_DELTA, CL_MILD_SEEDS, ETA_PER_P, NEGATIVES, K
from ..setups import CL_END_FRACTION as END_FRACTION
from ..setups import cl_measure as measure
from ..setups import cl_mild_measure as mild_measure
from ..setups import cl_rung_rows as rung_rows
from ..setups import cl_settings as settings
from ._cl_runs import VARIANTS

__all__ = ["CLAIM", "THRESHOLDS", "PREDICTIONS", "COUNTERFACTUALS", "judge", "contrast_rows",
           "PREF_QUOTE"]

#: The paper's sentence the preference is judged against (docs/papers/huang2024.md §4.4).
PREF_QUOTE = "favor predominantly global features, even under mild imbalance"

THRESHOLDS = (
    Threshold("PREF_TOL", 1 / 6, "project choice",
              "'predominantly global' read as a global attention at least twice the own-area "
              "one, s ≥ 1/3: the band's edge 1/2 − 1/6; balanced attention (s = 0) lies three "
              "half-widths below the band's centre",
              role="half-width of the band of the global-versus-own contrast s"),
    Threshold("ATTN_TOL", ATTN_TOL, "project choice",
              "smallest attention difference that counts (setups.ATTN_TOL: ≈ 3 standard errors "
              "of an end-window mean)",
              role="a rise of global attention from its start, and MAE's contrast below 0, "
              "count when their intervals clear it"),
)

PREDICTIONS = (
    Prediction("GLOBAL_PREF", 0.5, "shift",
               "the contrast s = (global − own)/(global + own) of a local query's attention "
               "at the end of CL training, on its lowest rung (lower bound: s ≥ 1/2 − PREF_TOL "
               "= 1/3)", "paper", quote=PREF_QUOTE, section="§4.4 Theorem 4.4",
               tolerance="PREF_TOL", sides="lower"),
)

COUNTERFACTUALS = (
    Counterfactual("balanced", "CL ends with the global and the own-area attention alike "
                   "(s = 0): no preference", {"GLOBAL_PREF": 0.0}),
    Counterfactual("local like MAE", "CL learns the local areas as MAE does (s = −0.9)",
                   {"GLOBAL_PREF": -0.9}),
)


def contrast_rows(t: pd.DataFrame, objective: str) -> pd.DataFrame:
    """Per P: the t-interval over seeds of s = (global − own)/(global + own) at the end, of
    the global attention's rise from its start, and the realised Δ, for one objective's rows
    (``cl``, ``cl-mild``, ``mae``)."""
    rows = []
    for P, g in t[t.objective == objective].groupby("P", sort=True):
        s = (g.end_glob_lq - g.end_own_lq) / (g.end_glob_lq + g.end_own_lq)
        m, lo, hi = t_interval(s.to_numpy(float))
        r, rlo, rhi = t_interval((g.end_glob_lq - g.init_glob_lq).to_numpy(float))
        rows.append({"objective": objective, "P": int(P), "delta": float(g.delta.mean()),
                     "seeds": int(g.seed.nunique()), "s": m, "s_lo": lo, "s_hi": hi,
                     "rise": r, "rise_lo": rlo, "rise_hi": rhi,
                     "finite": bool(np.isfinite(s).all())})
    return pd.DataFrame(rows, columns=["objective", "P", "delta", "seeds", "s", "s_lo", "s_hi",
                                       "rise", "rise_lo", "rise_hi", "finite"])


def _lowest(c: pd.DataFrame) -> tuple[float, float, float]:
    r = c.loc[c.s_lo.idxmin()]
    return float(r.s), float(r.s_lo), float(r.s_hi)


def judge(tables: dict[str, pd.DataFrame], values=None) -> Verdict:
    """The paper's sentences on the main table (one temperature; CL at Δ ≈ 0.25 and at mild
    imbalance, the MAE arm), with the declared values (or `values`).

    - premises (else ``inconclusive``): ≥ 2 rungs of P per CL ladder, each with ≥ 3 finite
      seeds;
    - predominantly global: the contrast s on the lowest rung of each CL ladder in the band of
      GLOBAL_PREF (a lower bound);
    - concentrates on the global area: CL's global attention rises from its start share beyond
      ATTN_TOL on every rung (both ladders), while the MAE arm (converged: its own-area
      attention moved by at most ATTN_TOL over the last fifth) has s below −ATTN_TOL;
    - a single pattern: the global query's and the local queries' global attention, reported
      (equal by construction from Q⁰ = 0)."""
    v = threshold_values((*THRESHOLDS, *PREDICTIONS), values)
    t = tables["table"]
    ladders = {"Δ ≈ 0.25": contrast_rows(t, "cl"), "mild imbalance": contrast_rows(t, "cl-mild")}
    bad = [k for k, c in ladders.items()
           if len(c) < 2 or (c.seeds < 3).any() or not c.finite.all()]
    if bad:
        return Verdict("inconclusive", ("premise failed: need CL runs at ≥ 2 values of P with "
                                        f"≥ 3 finite seeds each ({', '.join(bad)})",))
    tau = float(t[t.objective == "cl"].tau.iloc[0])
    tol = v["ATTN_TOL"]
    parts: list = []
    for name, c in ladders.items():
        label = f"predominantly global at τ = {tau:g} ({name})"
        w = judge_band(PREDICTIONS[0], _lowest(c), v, COUNTERFACTUALS,
                       what="s on the lowest rung")
        per = ", ".join(f"{r.s:.3f} [{r.s_lo:.3f}, {r.s_hi:.3f}] (P={r.P}, Δ={r.delta:.3f})"
                        for r in c.itertuples())
        parts.append(Verdict(w.verdict, tuple(f"{label}: {x}" for x in w.reasons)
                             + (f"{label}: s per rung {per}",), (label,)))
    rises = pd.concat(ladders.values(), ignore_index=True)
    flat = rises[~(rises.rise_lo > tol)]
    mae = contrast_rows(t, "mae")
    local = mae[~(mae.s_hi < -tol)] if len(mae) else mae
    txt = ("concentrates: CL's global attention rose from its start by " + ", ".join(
        f"{format_interval(r.rise, r.rise_lo, r.rise_hi, r.seeds, '+.3f')} (P={r.P}, "
        f"{r.objective})" for r in rises.itertuples()) + "; MAE's s " + ", ".join(
        f"{r.s:.3f} [{r.s_lo:.3f}, {r.s_hi:.3f}] (P={r.P})" for r in mae.itertuples()))
    moved = t[t.objective == "mae"].own_change_last_fifth.abs()
    if not len(mae):
        parts.append(Verdict("inconclusive", (txt + ": no MAE arm",), ("concentrates",)))
    elif (moved > tol).any():
        parts.append(Verdict("inconclusive", (
            txt + f": premise failed: the MAE arm has not converged (its own-area attention "
            f"moved by up to {moved.max():.3f} over the last fifth; at most {tol:g} counts)",),
            ("concentrates",)))
    elif len(flat) or len(local):
        parts.append(Verdict("disagrees", (txt + f": not beyond ±{tol:g} on "
                                           + ", ".join(f"P={r.P} ({r.objective})" for r in
                                                       pd.concat([flat, local]).itertuples()),),
                             ("concentrates",)))
    else:
        parts.append(Verdict("agrees", (txt,), ("concentrates",)))
    cl = t[t.objective.isin(["cl", "cl-mild"])]
    gap = float((cl.end_glob_gq - cl.end_glob_lq).abs().max()) if len(cl) else math.nan
    parts.append(Reported("a single pattern", (
        f"a single pattern: global and local queries' global attention differ by at most "
        f"{gap:.2g} (equal by construction from Q⁰ = 0)")))
    return combine(parts)


COLUMNS = ["objective", "tau", "seed", "P", "C1", "C", "K", "delta", "rho", "negatives",
           "steps", "init_glob_lq", "init_own_lq", "end_glob_lq", "drift_glob_lq",
           "end_own_lq", "end_glob_gq", "end_phi_glob_lq", "end_phi_own_lq",
           "own_change_last_fifth", "pred_exists", "pred_glob", "pred_phi", "tau_c"]


def run(quick: bool, readings: dict) -> ClaimResult:
    tau = float(readings["temperature"])
    table, traj = measure(quick, tau)
    table = pd.concat([table, mild_measure(quick, tau)], ignore_index=True).reindex(
        columns=COLUMNS)
    v = judge({"table": table})
    rows = rung_rows(table)
    st = settings(quick)
    con = {o: contrast_rows(table, o) for o in ("cl", "cl-mild", "mae")}
    reading = [
        f"CL (InfoNCE, τ = {tau:g}, {NEGATIVES} negatives, mean pooling, views by independent "
        f"Bernoulli(0.5) masks) on P ∈ {[r[0] for r in st['ladder']]} at Δ ≈ 0.25, K = {K}, "
        f"{st['steps']} GD steps with η = {ETA_PER_P:g}·P on fresh batches of {BATCH} images, "
        f"{len(st['seeds'])} seeds; the same at mild imbalance (target Δ = {CL_MILD_DELTA:g}), "
        f"{len(CL_MILD_SEEDS)} seeds; MAE arm: population-montecarlo, step ×{K}, "
        f"{st['mae_steps']} steps, 3 seeds. Attention read on clean images, local-area "
        f"queries; end value = mean over the last {END_FRACTION:.0%} of the steps.",
        "Contrast s = (global − own)/(global + own) per P: " + "; ".join(
            f"{o}: " + ", ".join(f"{r.s:.3f} [{r.s_lo:.3f}, {r.s_hi:.3f}] (P={r.P}, "
                                 f"Δ={r.delta:.3f})" for r in c.itertuples())
            for o, c in con.items()) + ".",
        "Where the global attention settles (reported here, judged in thm4.4-plateau): "
        + "; ".join(
            f"P={r.P}: CL global {r.glob:.3f} [{r.glob_lo:.3f}, {r.glob_hi:.3f}] (derived "
            + (f"plateau {r.pred:.3f}" if r.pred_exists else "no plateau") + f", τ_c "
            f"{r.tau_c:.3f}), CL own {r.own_cl:.3f}, MAE own {r.own_mae:.3f}"
            for r in rows.itertuples()) + ".",
        "A single pattern holds by construction from Q⁰ = 0 (equal rows of (Φ, Υ) at every "
        "step); the check reads whether that pattern is global, at both imbalances, and the "
        "contrast with MAE.",
    ]
    head = {f"lowest s, CL {o}": float(c.s.min()) for o, c in con.items() if len(c)}
    head.update({f"CL global attention P={r.P}": float(r.glob) for r in rows.itertuples()})
    head.update({f"derived τ_c P={r.P}": float(r.tau_c) for r in rows.itertuples()})
    brief = (f"{v.verdict} at τ={tau:g}: CL's global-vs-own contrast s ≥ "
             f"{con['cl'].s.min():.2f} (Δ≈0.25), {con['cl-mild'].s.min():.2f} (mild Δ), "
             f"MAE {con['mae'].s.max():.2f}; pred s ≥ 1/3; {len(st['seeds'])}/3 seeds")

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
                       extra={"trajectories": traj}, figure=figure, settings=_settings())


def _settings() -> dict:
    return {"Q⁰": 0, "negatives": NEGATIVES, "K": K, "Δ": 0.25, "mild Δ": CL_MILD_DELTA,
            "steps": 200}


CLAIM = Claim(
    id="thm4.4",
    paper=PAPER_NAME,
    figsize=(10.0, 4.0),
    title="Theorem 4.4 (CL favours the global area, even under mild imbalance)",
    label="FOUND",
    kind="theorem check",
    source="docs/papers/huang2024.md §4.4 (FOUND: CL \"concentrates on global feature-position "
    "correlations and collapses to a single global pattern\"; CL-trained ViTs \"favor "
    "predominantly global features, even under mild imbalance\") and §3 (the CL model, "
    "RECONSTRUCTED)",
    statement="Trained with the contrastive objective, the ViT \"concentrates on global "
    "feature-position correlations and collapses to a single global pattern\"; CL-trained "
    "ViTs \"favor predominantly global features, even under mild imbalance\".",
    measured="CL on P ∈ {32, 64, 128} at Δ ≈ 0.25 (5 Monte Carlo seeds) and at Δ ≈ 0.07–0.13 "
    "(3 seeds), 200 steps, per temperature τ; the MAE arm on the Δ ≈ 0.25 data run to "
    "convergence (3 seeds): the contrast s = (global − own)/(global + own) of a local query's "
    "attention at the end, and the global attention's rise from its start share.",
    predicted="s ≥ 1/3 (global at least twice the own-area attention) on every rung of both "
    "ladders; the global attention rises from its start; MAE's s below 0; under every reading "
    "of τ.",
    thresholds=THRESHOLDS,
    predictions=PREDICTIONS,
    counterfactuals=COUNTERFACTUALS,
    variants=VARIANTS,
    premises=("≥ 2 rungs of P with ≥ 3 finite seeds each, per CL ladder",
              "the MAE arm converged, for the contrast"),
    seeds="5 Monte Carlo seeds per CL rung at Δ ≈ 0.25 (3 quick), 3 at mild imbalance, 3 for "
    "the MAE arm (sweep points); every comparison on 95 % t-intervals over the seeds",
    interval=IntervalMethod("t", seeds=3),
    reconstructed="the CL model (InfoNCE with unnormalised dot products on masked views, mean "
    "pooling, masked keys in the softmax) and τ are reconstructions; τ is run as a variant, "
    "and the sentence holds for the unknown τ only when it holds under every reading.",
    untested="Larger P and n, cropping views, other poolings and cluster counts, population "
    "(rather than Monte Carlo) GD, horizons past 200 steps; \"a single pattern\" (by "
    "construction here).",
    settings=_settings(),
    run=run,
    judge=judge,
)
