"""Theorem 4.2 (RECONSTRUCTED quantitative form, docs/papers/huang2024.md §4.3 and §4.5): MAE
learns the FP correlations of every area; for a masked local-area patch and Δ > 0, GD first
decouples the global correlation (Phase I, ending near Φ_glob = −(Δ/2) ln P after ∝ P^{1−κ_c}/η
steps), then grows the own-area one (Phase II, ∝ P^{1−κ_c}/η steps up to polylog factors); for
Δ < 0 there is no Phase I; at T* the own correlation is Θ(log P) and the own-area attention
reaches its ceiling 1 − γ^{C−1} − O(ε).

Judged on the reduced population dynamics (``population-reduced``, validated against the exact
engine by the derivation check ``phases-reduction``) over two size families at fixed Δ and
κ_c on P = n⁴, 81 to 65536 (2.9 decades), read by
[`phase_readings`][theorylab.huang2024.phases.phase_readings], each statement as the local
slope on the top of three sub-ladders against the paper's leading order, within the neglected
orders: what a polylog(P) factor can add to the slope there ([`POLYLOG_POWER`]) or the declared
Θ tolerance, plus the drift of the slope between the top two sub-ladders. Phase I is read from
the first GD step on both families and near the boundary up to P = 10⁸.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from theorylab.core.claims import (
    Claim,
    ClaimResult,
    Counterfactual,
    Prediction,
    Threshold,
    threshold_values,
)
from theorylab.core.claims.verdict import Verdict, combine

from ..config import PAPER_NAME
from ..predictions.asymptotics import crossing_attention_exponent, polylog_allowance
from ..setups import EPS_REL, FAMILIES, POLYLOG_POWER
from ._mae import (
    SETTLE_THRESHOLD,
    VARIANTS,
    ladder_decades,
    lnlog_allowance,
    measure,
    slope_row,
    slope_verdict,
    x_axis,
)

__all__ = ["CLAIM", "THRESHOLDS", "PREDICTIONS", "COUNTERFACTUALS", "judge", "slopes",
           "verdict_phases", "KAPPA_C"]

#: κ_c of both families (the attention exponent −(1 − κ_c)/2 is declared for it).
KAPPA_C = FAMILIES["pos"].kappa_c

THRESHOLDS = (
    SETTLE_THRESHOLD,
    Threshold("POLYLOG_POWER", POLYLOG_POWER, "project choice",
              "'up to polylog(P) factors' read as one power of ln P (the ln P of the crossing "
              "value −(Δ/2) ln P): the slope allowance is what (ln P)^power adds over the top "
              "sub-ladder",
              role="allowance of the crossing and phase-length slopes"),
    Threshold("THETA_TOL", 0.5, "project choice",
              "a Θ(·) statement read as an exponent within ±0.5: half the distance to the "
              "nearest wrong exponent (0: bounded)",
              role="allowance of the exponents of Φ_own(T*) in ln P and of the attention gap "
              "at T* in ε"),
    Threshold("MIN_DECADES", 2.5, "project choice",
              "an asymptotic statement is read on a ladder of at least 2.5 decades of P",
              role="premise: each family's ladder spans at least this many decades"),
)

PREDICTIONS = (
    Prediction("CROSSING_SLOPE", -1.0, "shift",
               "local slope of Φ_glob(t_I)/(Δ/2) against ln P (Phase I ends at −(Δ/2) ln P)",
               "paper statement (reconstructed)"),
    Prediction("CROSSING_ATTN_EXP", crossing_attention_exponent(KAPPA_C), "shift",
               "exponent of P of the local queries' attention on the global area at t_I "
               "(attn_glob² ≈ C/P; −(1 − κ_c)/2 at κ_c = 1/4)",
               "paper statement (reconstructed)"),
    Prediction("PHASE_EXP", 1.0, "shift",
               "exponent of t_I (Δ > 0) and t_II against x = (P/C)/η (phase lengths "
               "∝ P^{1−κ_c}/η)", "paper statement (reconstructed)"),
    Prediction("PHI_OWN_EXP", 1.0, "shift",
               "exponent of ln P in Φ_own(T*) (Θ(log P))", "paper statement (reconstructed)"),
    Prediction("GAP_EXP", 1.0, "shift",
               "exponent of ε in the own-area attention's gap to 1 − γ^{C−1} at T* (O(ε))",
               "paper statement (reconstructed)"),
    Prediction("PHASE_I_SIGN", 1.0, "shift",
               "Phase I where sign·Δ > 0 (1: for Δ > 0 only; 0: nowhere)",
               "paper statement (reconstructed)"),
)

COUNTERFACTUALS = (
    Counterfactual("slope −1/2", "Phase I ends at −(Δ/4) ln P (the crossing slope −1/2)",
                   {"CROSSING_SLOPE": -0.5}),
    Counterfactual("no decoupling", "there is no Phase I: the global correlation never falls "
                   "faster than the own one grows, and the global attention does not fall",
                   {"PHASE_I_SIGN": 0.0, "CROSSING_ATTN_EXP": 0.0}),
    Counterfactual("exponent 1.3", "the phase lengths grow as ((P/C)/η)^1.3",
                   {"PHASE_EXP": 1.3}),
    Counterfactual("Φ_own bounded", "the own FP correlation at T* stays O(1)",
                   {"PHI_OWN_EXP": 0.0}),
    Counterfactual("attention short of its ceiling", "the own-area attention at T* stays a "
                   "fixed amount below 1 − γ^{C−1} as ε falls", {"GAP_EXP": 0.0}),
)


def verdict_phases(ladder: pd.DataFrame, boundary: pd.DataFrame, sign: float) -> Verdict:
    """Phase I (the first GD step lowers Φ_glob of local queries by more than it raises
    Φ_own) where sign·Δ > 0 and nowhere else, on every rung of both families and, near the
    boundary, on every Δ of the grid at the largest P of the boundary ladder (the theorem
    speaks of |Δ| = Ω(1): at finite P the boundary Δ_b(P) is off 0, reported). ``disagrees``
    naming the rungs where presence differs; ``inconclusive`` without runs of both signs."""
    grid = boundary[boundary.kind == "grid"]
    top = grid[grid.P == grid.P.max()] if len(grid) else grid
    rows = pd.concat([ladder[["family", "P", "delta", "phase_I"]].assign(where="ladder"),
                      top[["P", "delta", "phase_I"]].assign(family="grid", where="boundary")],
                     ignore_index=True)
    if not ((rows.delta > 0).any() and (rows.delta < 0).any()):
        return Verdict("inconclusive", ("phases: a sign of Δ has no run",))
    want = np.sign(sign) * rows.delta > 0
    bad = rows[rows.phase_I.astype(bool) != want]
    bnd = boundary[boundary.kind == "boundary"].sort_values("P")
    btxt = ", ".join(f"{r.delta:+.4f} (P={r.P:g})" for r in bnd.itertuples()
                     if math.isfinite(r.delta))
    if len(bad):
        return Verdict("disagrees", (
            "phases: Phase I " + "; ".join(
                f"{'present' if r.phase_I else 'absent'} at Δ={r.delta:+.3f}, P={r.P:g} "
                f"({r.where})" for r in bad.itertuples()) + f"; measured boundary Δ_b = {btxt}",))
    return Verdict("agrees", (
        f"phases: Phase I on all {int((rows.delta > 0).sum())} Δ > 0 runs and on none of the "
        f"{int((rows.delta < 0).sum())} Δ < 0 runs (families, and Δ = "
        + ", ".join(f"{d:+g}" for d in sorted(top.delta_target.unique())) + f" at "
        f"P = {top.P.max():g}); measured boundary Δ_b = {btxt}",))


def slopes(ladder: pd.DataFrame, eps: pd.DataFrame) -> list[dict]:
    """The local slopes the verdict reads (one dict per statement and family)."""
    out = []
    pos = ladder[ladder.family == "pos"].sort_values("P")
    out.append({**slope_row("crossing Φ", pos.P, pos.phi_glob_end_I / (pos.delta / 2), pos.P,
                            log_y=False), "family": "pos"})
    out.append({**slope_row("crossing attention", pos.P, pos.attn_glob_end_I, pos.P),
                "family": "pos"})
    out.append({**slope_row("t_I", x_axis(pos), pos.t_I, pos.P), "family": "pos"})
    for fam, g in ladder.groupby("family", sort=False):
        g = g.sort_values("P")
        out.append({**slope_row("t_II", x_axis(g), g.t_II, g.P), "family": fam})
        out.append({**slope_row("Φ_own(T*)", np.log(g.P), g.phi_own_T, g.P), "family": fam})
    for fam, g in eps.groupby("family", sort=False):
        g = g.sort_values("eps_rel", ascending=False)
        out.append({**slope_row("attention gap at T*", g.eps_rel, g.attn_gap_T,
                                1.0 / g.eps_rel), "family": fam})
    return out


def judge(tables: dict[str, pd.DataFrame], values=None) -> Verdict:
    """Phase I where Δ > 0 only, the crossing value (Φ and attention forms), the phase-length
    exponents, Φ_own(T*) = Θ(log P) and the own-area attention at T* against ε, from the
    ``table`` (ladder rungs), ``eps`` and ``boundary`` tables, with the declared thresholds
    and predictions (or `values`)."""
    v = threshold_values((*THRESHOLDS, *PREDICTIONS), values)
    lad, eps, bnd = tables["table"], tables["eps"], tables["boundary"]
    short = [f"{f}: {ladder_decades(g.P):.2f} decades" for f, g in lad.groupby("family")
             if ladder_decades(g.P) < v["MIN_DECADES"]]
    if short:
        return Verdict("inconclusive", ("premise failed: ladder shorter than "
                                        f"{v['MIN_DECADES']:g} decades ({'; '.join(short)})",))
    cens = lad[~np.isfinite(lad.t_II) | ~np.isfinite(lad.T_star) | ~np.isfinite(lad.t_I)]
    if len(cens):
        return Verdict("inconclusive", tuple(
            f"premise failed: inside the horizon: P={r.P:g} ({r.family}) did not reach t_I, "
            f"t_II or T*" for r in cens.itertuples()))
    parts = [verdict_phases(lad, bnd, v["PHASE_I_SIGN"])]
    k = v["POLYLOG_POWER"]
    settle = v["SETTLE_TOL"]
    for ls in slopes(lad, eps):
        top = ls["top_rungs"]
        name, fam = ls["name"], ls["family"]
        if name == "crossing Φ":
            d = float(lad[lad.family == "pos"].delta.mean())
            label, pred, allow = (f"crossing Φ_glob(t_I)/(Δ/2) vs ln P ({fam})",
                                  v["CROSSING_SLOPE"], lnlog_allowance(top, k) / d)
        elif name == "crossing attention":
            label, pred, allow = (f"crossing attention attn_glob(t_I) vs P ({fam})",
                                  v["CROSSING_ATTN_EXP"], lnlog_allowance(top, k) / 2)
        elif name in ("t_I", "t_II"):
            g = lad[(lad.family == fam) & lad.P.isin(top)]
            label, pred, allow = (f"{name} vs x ({fam})", v["PHASE_EXP"],
                                  polylog_allowance(g.P, x_axis(g), k))
        elif name == "Φ_own(T*)":
            label, pred, allow = f"Φ_own(T*) vs ln P ({fam})", v["PHI_OWN_EXP"], v["THETA_TOL"]
        else:
            label, pred, allow = (f"attention gap at T* vs ε ({fam})", v["GAP_EXP"],
                                  v["THETA_TOL"])
        parts.append(slope_verdict(label, ls, pred, allow, settle=settle))
    return combine(parts)


COLUMNS = ["family", "P", "C1", "C", "delta", "delta_target", "delta_rounding", "x_phase",
           "phase_I", "dphi_glob_1", "dphi_own_1", "t_I", "phi_glob_end_I", "attn_glob_end_I",
           "t_II", "T_star", "len_I", "len_II", "phi_own_T", "attn_own_T", "attn_own_max",
           "neglect", "loss_monotone", "coefficient_law", "masked_keys", "eta"]


def _slope_table(lad: pd.DataFrame, eps: pd.DataFrame) -> pd.DataFrame:
    rows = []
    for ls in slopes(lad, eps):
        for s, (a, b) in zip(ls["slopes"], ls["sub_rungs"]):
            rows.append({"statement": ls["name"], "family": ls["family"], "from": a, "to": b,
                         "local_slope": s})
    return pd.DataFrame(rows)


def run(quick: bool, readings: dict) -> ClaimResult:
    m = measure(quick, readings)
    lad = m["ladder"][COLUMNS]
    eps, bnd = m["eps"], m["boundary"]
    v = judge({"table": lad, "eps": eps, "boundary": bnd})
    st = _slope_table(lad, eps)
    pos = lad[lad.family == "pos"].sort_values("P")
    top = st.groupby(["statement", "family"], sort=False).local_slope.last()
    reading = [
        "Reduced population GD (population-reduced, 24-node Gauss rule for the global area's "
        f"count) from Q⁰ = 0, per-query step η_q = 2, both size families at fixed Δ "
        f"(Δ > 0: {FAMILIES['pos'].Delta:g}, Δ < 0: {FAMILIES['neg'].Delta:g}; κ_c = 1/4) on "
        f"P = n⁴ from {lad.P.min():g} to {lad.P.max():g}; realised Δ rounding at most "
        f"{lad.delta_rounding.abs().max():.4f}; T* at ε = {EPS_REL:g}(L⁰ − L*); readings: "
        f"coefficients {readings['coefficient_law']}, masked keys "
        f"{'in' if readings['masked_keys'] else 'out'}, η reading {readings['eta']}.",
        "Local slopes per sub-ladder (bottom → top): " + "; ".join(
            f"{stm} ({fam}): " + ", ".join(f"{r.local_slope:.3f} ({r['from']:g}–{r['to']:g})"
                                           for _, r in g.iterrows())
            for (stm, fam), g in st.groupby(["statement", "family"], sort=False)) + ".",
        "Φ_glob(t_I) + (Δ/2) ln P (offset of the crossing value, Δ > 0): " + ", ".join(
            f"{r.phi_glob_end_I + r.delta / 2 * math.log(r.P):.3f} (P={r.P:g})"
            for r in pos.itertuples()) + ".",
        "Own-area attention at T* against its ceiling 1 − γ^{C−1}: " + ", ".join(
            f"{r.attn_own_T:.3f}/{r.attn_own_max:.3f} (P={r.P:g}, {r.family})"
            for r in lad.itertuples()) + ".",
    ]
    headline = {f"top slope {s} ({f})": float(x) for (s, f), x in top.items()}
    brief = (f"{v.verdict}: exact reduced GD, P = {lad.P.min():g}–{lad.P.max():g}; crossing "
             f"slope {top.get(('crossing Φ', 'pos'), math.nan):.2f} (pred −1), t_II exponent "
             f"{top.get(('t_II', 'pos'), math.nan):.2f} (pred 1); no seeds")

    def figure(fig):
        axs = fig.subplots(1, 3)
        axs[0].plot(pos.P, pos.phi_glob_end_I / (pos.delta / 2), "o-", label="measured")
        axs[0].plot(pos.P, -np.log(pos.P), "k--", label="−ln P (leading order)")
        axs[0].set_xscale("log")
        axs[0].set_xlabel("P")
        axs[0].set_ylabel("Φ_glob(t_I)/(Δ/2)")
        axs[0].legend(fontsize=7)
        for fam, g in lad.groupby("family", sort=False):
            x = x_axis(g)
            axs[1].plot(x, g.t_II, "o-", label=f"t_II ({fam})")
            if fam == "pos":
                axs[1].plot(x, g.t_I, "s-", label="t_I (pos)")
        xs = np.sort(x_axis(lad))
        axs[1].plot(xs, xs * float(pos.t_II.iloc[-1]) / float(x_axis(pos)[-1]), "k--",
                    label="∝ x (leading order)")
        axs[1].set_xscale("log")
        axs[1].set_yscale("log")
        axs[1].set_xlabel("x = (P/C)/η")
        axs[1].legend(fontsize=7)
        for fam, g in eps.groupby("family", sort=False):
            axs[2].plot(g.eps_rel, g.attn_gap_T, "o-", label=f"gap at T* ({fam})")
        axs[2].plot(eps.eps_rel, eps.eps_rel, "k--", label="∝ ε")
        axs[2].set_xscale("log")
        axs[2].set_yscale("log")
        axs[2].set_xlabel("ε (relative)")
        axs[2].legend(fontsize=7)

    return ClaimResult("thm4.2", lad, v, headline, reading, brief=brief,
                       extra={"eps": eps, "boundary": bnd, "slopes": st}, figure=figure)


CLAIM = Claim(
    id="thm4.2",
    paper=PAPER_NAME,
    figsize=(12.0, 3.8),
    title="Theorem 4.2 (MAE learns FP correlations; two phases for Δ > 0)",
    label="RECONSTRUCTED",
    kind="theorem check",
    source="docs/papers/huang2024.md §4.3 and §4.5: the phase names are FOUND (table of "
    "contents, reviews), the crossing value, phase lengths and end values are the notes' "
    "reconstructed reading",
    statement="For a masked local-area patch and Δ > 0, GD first decouples the global FP "
    "correlation (Phase I, ending at Φ_glob ≈ −(Δ/2) ln P, i.e. attn_glob² ≈ C/P, after "
    "∝ P^{1−κ_c}/η steps), then grows the own-area one (Phase II, ∝ P^{1−κ_c}/η steps); for "
    "Δ < 0 there is no Phase I; at T* the own correlation is Θ(log P) and the own-area "
    "attention is 1 − γ^{C−1} − O(ε).",
    measured="Reduced population GD (population-reduced) on P = n⁴ from 81 to 65536 for a Δ > 0 "
    "and a Δ < 0 family at fixed Δ and κ_c; an ε ladder at P = 4096; the first GD step near "
    "Δ = 0 up to P = 10⁸: local slopes of the readings per sub-ladder.",
    predicted="The paper's leading orders (slope −1 of Φ_glob(t_I)/(Δ/2) in ln P, exponent "
    "−(1 − κ_c)/2 of attn_glob(t_I), exponent 1 of the phase lengths in (P/C)/η, exponent 1 of "
    "ln P in Φ_own(T*), exponent 1 of ε in the attention gap, Phase I iff Δ > 0), each within "
    "the polylog or Θ allowance plus the slope's drift between the top two sub-ladders.",
    thresholds=THRESHOLDS,
    predictions=PREDICTIONS,
    counterfactuals=COUNTERFACTUALS,
    variants=VARIANTS,
    premises=("a ladder of at least MIN_DECADES decades per family",
              "inside the horizon: every rung reaches t_I, t_II and T*"),
    reconstructed="the crossing value, the phase-length scale and the end values are the "
    "notes' reading of a theorem whose text was not read; the model (loss, masking, one "
    "trainable Q) is the notes' reconstruction. The coefficient law, the masked keys and the "
    "step-size convention are run as variants.",
    untested="Several clusters (K = 1 here), the bounds on Υ, the constants of the phase "
    "lengths.",
    run=run,
    judge=judge,
)
