"""Theorem 4.1 (RECONSTRUCTED, notes §4.4–4.5), the theorem check: population GD from a random
start learns patch association in the paper's regime, after a plateau of poly(d) steps, through
three phases in order.

Three statements of the paper are compared with the measurement (the shared tables of
`_thm41_data`; phase times of
[`theorylab.jelassi2022.phases`][]):

- **association in the regime q = poly(C)/D** (Assumption 2): the association boundary
  q*(D), above which population GD ends anti-associated, is located by bisection on a D ladder
  (C = 2, d = 100) with horizons of six derived phase-II times, an outcome decided by
  γ − ρ reaching ±1 (or |γ − ρ| ≥ 1/4 and still moving away from 0). The paper's regime lies
  on the associating side for large D when q*(D) decays more slowly than 1/D: the exponent k of
  q*(D) ∝ D^k, with an interval from the ends of the brackets, must lie above the declared
  floor ``Q_EXPONENT_FLOOR`` = −1;
- **T = poly(d)**: the phase-I threshold time t_I of random starts on a d ladder of two
  decades (8 seeds per d), its exponent in d with a seed bootstrap interval, must lie at or below
  the declared ceiling ``T_EXPONENT_MAX``; the local exponent over the top of the ladder must
  not exceed the whole ladder's by more than ``SETTLE`` (premise: a growing local slope, the
  mark of a super-polynomial time, cannot be told from a finite ladder);
- **three phases, association, generalization** (notes §4.4) on the reference setting (§9),
  from every seed of the start: t_I < t_II ≤ t_III, patch association with the margin held to
  the end of the run, the loss below its phase-I value, the final fair-coin error within
  ``ERR_TOL`` of the Bayes error. A reference point beyond the association boundary of its
  reading (the run anti-associates) is reported, not judged (premise).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

import theorylab.jelassi2022.claims._thm41_data as data
from theorylab.core.claims import (
    Claim,
    ClaimResult,
    Counterfactual,
    Prediction,
    Threshold,
    threshold_values,
)
from theorylab.core.claims.verdict import Verdict

from ..config import PAPER_NAME
from ..phases import ALPHA_GROWTH, ERR_TOL, GAP_II
from ..setups import BOUNDARY_D, ESCAPE_D, ESCAPE_SEEDS, REF_Q
from ._common import TEMPERATURE, V_START, exponent_interval

__all__ = ["CLAIM", "THRESHOLDS", "PREDICTIONS", "COUNTERFACTUALS", "judge", "verdict_boundary",
           "verdict_escape", "verdict_reference", "boundary_exponent", "escape_exponent",
           "reference_summary"]

SETTLE = 0.25
THRESHOLDS = (
    Threshold("ERR_TOL", ERR_TOL, "project choice",
              "half a percentage point of classification error, the resolution at which an "
              "error is called at its target (exact errors round at 1e−16)",
              role="reference runs: final fair-coin error within it of the Bayes error"),
    Threshold("SETTLE", SETTLE, "project choice",
              "a quarter of a power of d: the local exponent over the top two rungs of the d "
              "ladder may exceed the whole ladder's by this much before the ladder is called "
              "unsettled (a super-polynomial time shows as a growing local exponent)",
              role="premise of the T = poly(d) part"),
    Threshold("DECIDE_GAP", data.DECIDE_GAP, "project choice",
              "a quarter logit: a boundary run that has not reached γ − ρ = ±1 in six derived "
              "phase-II times counts as decided when |γ − ρ| is at least this and still grows",
              role="defines the outcome of a boundary run", judged=False),
    Threshold("ALPHA_GROWTH", ALPHA_GROWTH, "project choice",
              "α has left its plateau: an order of magnitude above ‖v⁰‖",
              role="defines t_I (α ≥ it × ‖v⁰‖)", judged=False),
    Threshold("GAP_II", GAP_II, "project choice",
              "attention decided: γ − ρ = 1 logit puts the partner e ≈ 2.7 times above "
              "another set's patch", role="defines t_II (γ − ρ ≥ it)", judged=False),
)
PREDICTIONS = (
    Prediction("Q_EXPONENT_FLOOR", -1.0, "shift",
               "q*(D) ∝ D^k with k above this: the regime q = poly(C)/D (k = −1) lies inside "
               "the associating side for large D", "paper statement (reconstructed)"),
    Prediction("T_EXPONENT_MAX", 3.0, "shift",
               "the phase-I time grows at most like d^k with k at most this (T = poly(d), read "
               "with a ceiling one power above the steepest derived scaling, d²)",
               "paper statement (reconstructed)"),
)
COUNTERFACTUALS = (
    Counterfactual("plateau independent of d",
                   "the phase-I time does not grow with d (T = O(1), exponent at most 0)",
                   {"T_EXPONENT_MAX": 0.0}),
    Counterfactual("plateau at most d^{1/4}",
                   "the phase-I time grows at most like d^{1/4}", {"T_EXPONENT_MAX": 0.25}),
    Counterfactual("boundary grows like √D",
                   "the associating side widens with D at least like D^{1/2} (q*(D) ≳ √D)",
                   {"Q_EXPONENT_FLOOR": 0.5}),
)


def boundary_brackets(boundary: pd.DataFrame) -> pd.DataFrame:
    """Per D: the bracket [q_lo, q_hi] of q*(D) (largest associating q below every
    anti-associating one, smallest anti-associating q; q_hi = 1 when none anti-associates up
    to the largest run), the runs and the undecided ones in between."""
    rows = []
    for D, g in boundary.groupby("D"):
        lo, hi = data._bracket(g)
        if math.isnan(hi) and np.isfinite(lo):
            hi = 1.0
        und = g[(g.outcome == "undecided") & (g.q > (lo if np.isfinite(lo) else -1))
                & (g.q < (hi if np.isfinite(hi) else 2))]
        rows.append({"D": D, "q_lo": lo, "q_hi": hi, "q_star": 0.5 * (lo + hi),
                     "runs": len(g), "undecided_inside": len(und),
                     "tau": float(g.tau.iloc[0])})
    return pd.DataFrame(rows, columns=["D", "q_lo", "q_hi", "q_star", "runs",
                                       "undecided_inside", "tau"])


def boundary_exponent(boundary: pd.DataFrame) -> dict[str, float]:
    """The exponent k of q*(D) ∝ D^k: the least-squares slope of log q* (bracket midpoints)
    on log D, and its range over every choice of a point in each bracket (the extremes sit at
    the brackets' ends)."""
    b = boundary_brackets(boundary)
    b = b[np.isfinite(b.q_lo) & np.isfinite(b.q_hi) & (b.q_lo > 0)]
    if len(b) < 2:
        return {"k": math.nan, "lo": math.nan, "hi": math.nan, "n": len(b)}
    x = np.log(b.D.to_numpy(float))
    cx = (x - x.mean()) / ((x - x.mean()) @ (x - x.mean()))
    lo_q, hi_q = np.log(b.q_lo.to_numpy()), np.log(b.q_hi.to_numpy())
    mid = np.log(b.q_star.to_numpy())
    k_lo = float(np.where(cx > 0, lo_q, hi_q) @ cx)
    k_hi = float(np.where(cx > 0, hi_q, lo_q) @ cx)
    return {"k": float(mid @ cx), "lo": k_lo, "hi": k_hi, "n": len(b)}


def escape_exponent(escape: pd.DataFrame, column: str = "t_I") -> dict[str, float]:
    """The exponent of `column` in d (mean log over seeds per d, least squares), its seed
    bootstrap interval, and the local exponent over the top two d."""
    k, lo, hi = data_exponent(escape, column)
    ds = np.sort(escape.d.unique())
    top = escape[escape.d.isin(ds[-2:])]
    k_top = data_exponent(top, column)[0] if len(ds) >= 2 else math.nan
    return {"k": k, "lo": lo, "hi": hi, "k_top": k_top, "n_d": len(ds)}


def data_exponent(escape: pd.DataFrame, column: str):
    return exponent_interval(escape.d, escape[column])


def verdict_boundary(boundary: pd.DataFrame, floor: float) -> Verdict:
    """Association in the regime: ``agrees`` when the exponent range of q*(D) lies above
    `floor`, ``disagrees`` when it lies at or below it, ``inconclusive`` across it or with
    fewer than 2 bracketed D."""
    e = boundary_exponent(boundary)
    br = boundary_brackets(boundary)
    txt = ", ".join(f"q*({r.D:g}) ∈ [{r.q_lo:.3f}, {r.q_hi:.3f}]" for r in br.itertuples())
    if e["n"] < 2:
        return Verdict("inconclusive", (f"premise failed: fewer than 2 D with a bracketed "
                                        f"association boundary ({txt})",))
    k = (f"q*(D) ∝ D^{e['k']:.2f}, range [{e['lo']:.2f}, {e['hi']:.2f}] over the brackets "
         f"({txt})")
    if e["lo"] > floor:
        return Verdict("agrees", (f"association boundary: {k}, above the floor {floor:g}: the "
                                  "regime q = poly(C)/D lies on the associating side for large "
                                  "D",))
    if e["hi"] <= floor:
        return Verdict("disagrees", (f"association boundary (theorem as reconstructed): {k}, "
                                     f"at or below the floor {floor:g}: the associating side "
                                     "shrinks at least like 1/D",))
    return Verdict("inconclusive", (f"association boundary: {k} straddles the floor "
                                    f"{floor:g}",))


def verdict_escape(escape: pd.DataFrame, ceiling: float, settle: float = SETTLE) -> Verdict:
    """T = poly(d): ``agrees`` when the exponent interval of t_I in d lies at or below
    `ceiling`, ``disagrees`` when it lies above; ``inconclusive`` when a run did not escape
    within its cap, the interval straddles the ceiling, or the local exponent at the top of the
    ladder exceeds the whole one by more than `settle`."""
    miss = escape[~np.isfinite(escape.t_I.astype(float))]
    if len(miss):
        return Verdict("inconclusive", (f"premise failed: {len(miss)} runs of the d ladder did "
                                        "not leave the plateau within their cap (3 × derived)",))
    e = escape_exponent(escape)
    if not np.isfinite(e["lo"]):
        return Verdict("inconclusive", ("premise failed: fewer than 2 values of d with 2 "
                                        "seeds",))
    k = (f"t_I ∝ d^{e['k']:.3f} [{e['lo']:.3f}, {e['hi']:.3f}] (d = {escape.d.min():g}–"
         f"{escape.d.max():g}, {escape.groupby('d').size().min()} seeds per d, 95 % bootstrap), "
         f"local exponent over the top two d {e['k_top']:.3f}")
    if e["k_top"] > e["k"] + settle:
        return Verdict("inconclusive", (f"premise failed: {k}: the local exponent grows along "
                                        "the ladder (not settled)",))
    if e["hi"] <= ceiling:
        return Verdict("agrees", (f"T = poly(d): {k}, at or below the ceiling {ceiling:g}",))
    if e["lo"] > ceiling:
        return Verdict("disagrees", (f"T = poly(d) (theorem as reconstructed): {k}, above the "
                                     f"ceiling {ceiling:g}",))
    return Verdict("inconclusive", (f"T = poly(d): {k} straddles the ceiling {ceiling:g}",))


def reference_summary(ref: pd.DataFrame) -> pd.DataFrame:
    """One row per reference run (the constant columns of the reference table)."""
    cols = [c for c in ref.columns if c not in ("step", "alpha", "beta", "gamma", "rho", "loss",
                                                  "error_fair", "tie_mass", "run")]
    return ref.groupby("seed", as_index=False).first()[cols]


def verdict_reference(table: pd.DataFrame, err_tol: float):
    """The reference runs (one row per seed): see the module. A run that ends anti-associated
    (its reference point lies beyond the boundary of this reading) is reported, not judged;
    when every run does, the part is not judged: ``(None, note)`` is returned and the judge
    combines the other parts; ``inconclusive`` when a judged run does not reach t_I, t_II,
    t_III."""
    if not len(table):
        return Verdict("inconclusive", ("no reference run",))
    anti = table[table.final_gap < 0]
    judged = table[table.final_gap >= 0]
    if len(anti) == len(table):
        return None, (
            f"reference point not judged: at q = {REF_Q:.3f}, D = 10 every run ends "
            f"anti-associated (γ − ρ = {anti.final_gap.min():.2f} to {anti.final_gap.max():.2f}):"
            " the point lies beyond the association boundary of this reading (q = poly(C)/D "
            "is judged on the boundary ladder), so the three phases are not judged there")
    nan = judged[~(np.isfinite(judged.t_I) & np.isfinite(judged.t_II)
                   & np.isfinite(judged.t_III))]
    if len(nan):
        return Verdict("inconclusive", (f"premise failed: inside the horizon: {len(nan)} "
                                        "reference runs do not reach t_I, t_II and t_III",))
    bad = []
    for r in judged.itertuples():
        who = f"reference run, seed {r.seed:g}"
        if not r.t_I < r.t_II <= r.t_III:
            bad.append(f"{who}: phases out of order (t_I={r.t_I:g}, t_II={r.t_II:g}, "
                       f"t_III={r.t_III:g})")
        if not np.isfinite(r.t_PA):
            bad.append(f"{who}: patch association (margin) does not hold at the end")
        if not r.final_loss < r.loss_end_I:
            bad.append(f"{who}: the loss does not fall after phase I")
        gap = r.final_error_fair - r.bayes_error
        if not abs(gap) <= err_tol:
            bad.append(f"{who}: final fair-coin error {r.final_error_fair:.4f} is {gap:+.4f} "
                       f"from the Bayes error {r.bayes_error:.4f} (tolerance {err_tol:g})")
    if bad:
        return Verdict("disagrees", tuple("theorem as reconstructed: " + b for b in bad))
    return Verdict("agrees", (
        f"reference runs ({len(judged)} starts): t_I < t_II ≤ t_III on each (t_I "
        f"{judged.t_I.min():g}–{judged.t_I.max():g}, t_II {judged.t_II.min():g}–"
        f"{judged.t_II.max():g}, t_III {judged.t_III.min():g}–{judged.t_III.max():g}), patch "
        f"association held from t_PA to the end, final fair-coin error within "
        f"{(judged.final_error_fair - judged.bayes_error).abs().max():.1e} of the Bayes error"
        + (f"; {len(anti)} runs end anti-associated (reported)" if len(anti) else ""),))


def judge(tables: dict[str, pd.DataFrame], values=None) -> Verdict:
    """The three parts on the written tables (``table``: reference runs; ``escape``;
    ``boundary``) with the declared thresholds and predictions (or `values`):
    ``disagrees`` if a part disagrees, else ``inconclusive`` if one is, else ``agrees``."""
    th = threshold_values((*THRESHOLDS, *PREDICTIONS), values)
    parts = [verdict_boundary(tables["boundary"], th["Q_EXPONENT_FLOOR"]),
             verdict_escape(tables["escape"], th["T_EXPONENT_MAX"], th["SETTLE"])]
    ref = verdict_reference(tables["table"], th["ERR_TOL"])
    note = ()
    if isinstance(ref, Verdict):
        parts.append(ref)
    else:
        note = (ref[1],)
    kinds = {p.verdict for p in parts}
    v = ("disagrees" if "disagrees" in kinds else "inconclusive" if "inconclusive" in kinds
         else "agrees")
    return Verdict(v, tuple(r for p in parts for r in p.reasons) + note)


def run(quick: bool, readings: dict) -> ClaimResult:
    tau, start = readings["temperature"], readings["v_start"]
    m = data.measure(quick, tau, start)
    ref = m["reference"]
    table = reference_summary(ref)
    esc, bnd = m["escape"], m["boundary"]
    tables = {"table": table, "escape": esc, "boundary": bnd}
    v = judge(tables)
    br = boundary_brackets(bnd)
    be, ee = boundary_exponent(bnd), escape_exponent(esc)
    at_ref = "associates" if (table.final_gap >= 0).all() else (
        "anti-associates" if (table.final_gap < 0).all() else "mixed")
    reading = [
        f"Reading: temperature {tau} (τ = {table.tau.iloc[0]:.3g} at d = 100), start of v "
        f"{start}. At the reference point (D = 10, q = {REF_Q:.3f}, d = 100) population GD "
        f"{at_ref} (final γ − ρ {table.final_gap.min():.2f} to {table.final_gap.max():.2f}).",
        "Association boundary (bisection, aligned start, exact engine): " + "; ".join(
            f"D = {r.D:g}: q* ∈ [{r.q_lo:.3f}, {r.q_hi:.3f}] ({r.runs} runs"
            + (f", {r.undecided_inside} undecided inside" if r.undecided_inside else "") + ")"
            for r in br.itertuples())
        + f". q*(D) ∝ D^{be['k']:.2f} (range [{be['lo']:.2f}, {be['hi']:.2f}]); q*(D)·D from "
        f"{(br.q_star * br.D).min():.2f} to {(br.q_star * br.D).max():.2f}: "
        + ("it grows with D, so q = poly(C)/D → 0 lies on the associating side."
           if be["lo"] > -1 else "it does not grow with D on this ladder."),
        f"Phase-I time from random starts (lr {esc.lr.iloc[0]:g}, {esc.groupby('d').size().min()}"
        f" seeds per d): t_I ∝ d^{ee['k']:.3f} [{ee['lo']:.3f}, {ee['hi']:.3f}] over d = "
        f"{esc.d.min():g}–{esc.d.max():g} (local exponent at the top {ee['k_top']:.3f}); median "
        "t_I per d: " + ", ".join(f"{d:g}: {g.t_I.median():.0f}" for d, g in esc.groupby("d"))
        + ".",
        "Reference runs: " + "; ".join(
            f"seed {r.seed:g} (α⁰ = {r.alpha0:.2e}): t_I {r.t_I:g}, t_II {r.t_II:g}, t_PA "
            f"{r.t_PA:g}, t_III {r.t_III:g}, final error {r.final_error_fair:.4f}, final "
            f"β/|α| {r.final_beta_over_alpha:.1e}, min literal PA gap {r.min_pa_gap:.1e}"
            for r in table.itertuples()) + f" (Bayes error {table.bayes_error.iloc[0]:.4f}).",
        "The literal order of Definition 2.2 at every t ≥ 1 (the slide's 'patch association "
        "for any time t') is reported, not judged: from a random start γ − ρ can dip below 0 "
        "by ~1e−9 logits in phase I (min literal PA gap above), far below any margin.",
    ]
    n_seed = len(table)
    brief = (f"q*(D) ∝ D^{be['k']:.2f} [{be['lo']:.2f}, {be['hi']:.2f}] (D {min(br.D):g}–"
             f"{max(br.D):g}); t_I ∝ d^{ee['k']:.2f} [{ee['lo']:.2f}, {ee['hi']:.2f}], "
             f"{esc.groupby('d').size().min()} seeds/d; ref {at_ref}, {n_seed} seeds")
    headline = {"q_star_exponent": f"{be['k']:.3f} [{be['lo']:.3f}, {be['hi']:.3f}]",
                **{f"q*(D={r.D:g})": f"[{r.q_lo:.3f}, {r.q_hi:.3f}]" for r in br.itertuples()},
                "escape_exponent": f"{ee['k']:.3f} [{ee['lo']:.3f}, {ee['hi']:.3f}]",
                "reference": at_ref}

    def figure(fig):
        axs = fig.subplots(1, 3)
        for s, g in ref.groupby("seed"):
            st = g.step.clip(lower=1)
            axs[0].plot(st, g.alpha, "C0", lw=0.8, label="α" if s == table.seed.iloc[0] else None)
            axs[0].plot(st, g.gamma - g.rho, "C3", lw=0.8,
                        label="γ − ρ" if s == table.seed.iloc[0] else None)
        for r in table.itertuples():
            for t, c in ((r.t_I, "C0"), (r.t_II, "C3"), (r.t_III, "k")):
                if np.isfinite(t):
                    axs[0].axvline(t, color=c, lw=0.4, ls=":")
        axs[0].set_xscale("log")
        axs[0].set_xlabel("GD step (dotted: t_I, t_II, t_III per seed)")
        axs[0].set_title(f"reference runs, τ={tau}, v⁰ {start}", fontsize=8)
        axs[0].legend(fontsize=7)
        for d, g in esc.groupby("d"):
            axs[1].plot(np.full(len(g), d), g.t_I, "o", color="C0", ms=3)
        ds = np.sort(esc.d.unique())
        med = [esc[esc.d == d].t_I.median() for d in ds]
        axs[1].plot(ds, med, "C0-", label=f"median; fit d^{ee['k']:.2f}")
        axs[1].set_xscale("log")
        axs[1].set_yscale("log")
        axs[1].set_xlabel("d")
        axs[1].set_ylabel("t_I (steps, lr 1)")
        axs[1].legend(fontsize=7)
        for r in bnd.itertuples():
            c = {"associates": "C2", "anti-associates": "C3"}.get(r.outcome, "grey")
            axs[2].plot(r.D, r.q, "o", color=c, ms=4)
        axs[2].fill_between(br.D, br.q_lo, br.q_hi.clip(upper=1), color="C1", alpha=0.3,
                            label="q*(D) bracket")
        DD = np.linspace(min(br.D), max(br.D), 50)
        axs[2].plot(DD, 4 / DD, "k:", label="q = C²/D")
        axs[2].set_xlabel("D (C = 2, d = 100)")
        axs[2].set_ylabel("q (green: associates, red: anti, grey: undecided)")
        axs[2].legend(fontsize=7)

    return ClaimResult("thm4.1", table, v, headline, reading,
                       extra={"escape": esc, "boundary": bnd, "brackets": br,
                              "trajectory": ref[["seed", "step", "alpha", "beta", "gamma", "rho",
                                                 "loss", "error_fair"]]},
                       figure=figure, brief=brief)


CLAIM = Claim(
    id="thm4.1",
    paper=PAPER_NAME,
    figsize=(13.0, 3.8),
    title="Theorem 4.1 (idealized: GD on the population risk)",
    label="RECONSTRUCTED",
    source="notes §4.4–4.5: a seminar slide (S2) and the README (S3) describe three phases; "
    "the statement itself was not read; 'from random initialization' is in the abstract (S1)",
    statement="From a random initialization, after T = poly(d) steps of GD on (P), in the regime "
    "q = poly(C)/D, F performs patch association, the population loss is small and the model "
    "generalizes; the dynamics pass through phase I (α grows, A static), II (γ − ρ grows) and "
    "III (error near its optimum).",
    measured="Reduced population GD (α, β, γ, ρ) from random starts: phase times of the "
    "reference setting (4 seeds), the phase-I time on a d ladder 10–1000 (8 seeds per d); the "
    "association boundary q*(D) by bisection on D = 8–32 (exact engine).",
    predicted="q*(D) decays more slowly than 1/D (exponent range above −1); the phase-I time "
    "grows at most like d³ (interval at or below 3, local exponent settled); on every seed of "
    "the reference setting t_I < t_II ≤ t_III, patch association held to the end, final "
    "fair-coin error within 0.005 of the Bayes error.",
    run=run,
    judge=judge,
    thresholds=THRESHOLDS,
    predictions=PREDICTIONS,
    counterfactuals=COUNTERFACTUALS,
    variants=(TEMPERATURE, V_START),
    premises=("the boundary is bracketed at ≥ 2 values of D",
              "every run of the d ladder leaves the plateau within its cap, and the local "
              "exponent at the top of the ladder is settled",
              "the reference point lies on the associating side of its reading, and the "
              "reference runs reach t_I, t_II and t_III"),
    seeds=f"reference: {len(data.REF_SEEDS)} random starts, judged one by one; d ladder: "
    f"{len(ESCAPE_SEEDS)} starts per d, exponent interval from a seed bootstrap; boundary: "
    "deterministic (exact engine), interval from the brackets",
    reconstructed="the three-phase picture (a slide and the README), the regime read as "
    "q = poly(C)/D → 0, T = poly(d) read with a ceiling d³; the start's norm 0.01 and the "
    "frozen diagonal ln ln d.",
    untested=f"D beyond {max(BOUNDARY_D)} and d beyond {max(ESCAPE_D)}; the constants of the "
    "theorem; C > 2.",
)
