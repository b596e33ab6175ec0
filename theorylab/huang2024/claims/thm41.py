"""Theorem 4.1, the paper's sentence (docs/papers/huang2024.md §4.2 and §2.5): for Δ ∈
[−0.5, −Ω(1)] ∪ [Ω(1), 1] and any 0 < ε < 1, GD on the reconstruction loss reaches a
"near-optimal reconstruction" (FOUND in the abstract), L_MAE(Q^{(T*)}) − L* ≤ ε. The theorem's
formula for T* breaks off in the text that was read, so T*'s growth is reported here, not
judged (our law for it is judged in the derivation check ``thm4.2-laws``, its ε-dependence in
``thm4.1-eps``).

Measured on the runs of thm4.2 (``population-reduced`` over P = n⁴ from 81 to 65536, both size
families at fixed Δ, one on each range of the statement; `claims._mae`) and on their ε ladder
at P = 4096 (ε from 0.2 to 10⁻⁴ relative to L⁰ − L*). Judged:

- convergence: every rung reaches L − L* ≤ EPS_REL (L⁰ − L*), and the ε-ladder runs reach every
  ε of the ladder, inside the horizon;
- near-optimal: the relative excess the ε-ladder runs end at, (L − L*)/(L⁰ − L*), is 0 within
  EXCESS_TOL on both sides: above it GD would stall short of the infimum L*, below it the loss
  would cross the computed infimum (L* wrong).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from theorylab.core import claims as cc
from theorylab.core.claims.verdict import Reported, Verdict, combine, strictly_increasing
from theorylab.core.figures.axes import style_axes

from ..config import PAPER_NAME
from ..setups import EPS_REL, mae_config, rung_summary
from ._common import labelled, per_group
from ._mae import (
    VARIANTS,
    ladder_decades,
    mae_settings,
    measure,
    readings_text,
    slope_row,
    x_axis,
)

__all__ = ["CLAIM", "THRESHOLDS", "PREDICTIONS", "COUNTERFACTUALS", "judge",
           "verdict_convergence", "report_growth"]

THRESHOLDS = (
    cc.Threshold("EXCESS_TOL", 0.002, "project choice",
                 "a fifth of a percent of the initial excess: twenty times the smallest ε the "
                 "ladder reaches (10⁻⁴), and below half the distance to a GD that stalls at half "
                 "a percent of it",
                 role="half-width of the band of the relative excess the runs end at"),
    cc.Threshold("MIN_DECADES", 2.5, "project choice",
                 "the convergence statement is read on a ladder of at least 2.5 decades of P",
                 role="premise: each family's ladder spans at least this many decades"),
    cc.Threshold("EPS_REL", EPS_REL, "project choice",
                 "ε relative to L⁰ − L* = Θ(1): 5 % is an absolute ε of about 0.01",
                 role="defines T* (first step with L − L* ≤ EPS_REL·(L⁰ − L*))", judged=False),
)

PREDICTIONS = (
    cc.Prediction("EXCESS_LIMIT", 0.0, "shift",
                  "the relative excess (L − L*)/(L⁰ − L*) the ε-ladder runs end at (0: the "
                  "infimum L* is reached to every ε of the ladder)", "paper",
                  quote="near-optimal reconstruction", section="§2.5 The optimum",
                  tolerance="EXCESS_TOL"),
)

COUNTERFACTUALS = (
    cc.Counterfactual("stalls at 0.5 %", "GD stalls with the excess at half a percent of its "
                      "start (a near-optimal but not optimal plateau)", {"EXCESS_LIMIT": 0.005}),
    cc.Counterfactual("below the infimum", "the loss falls half a percent of the initial excess "
                      "below the computed L* (the infimum is wrong)", {"EXCESS_LIMIT": -0.005}),
)


def verdict_convergence(table: pd.DataFrame) -> Verdict:
    """Every rung reaches ε (finite ``T_star``): ``agrees``; a rung that ends with the excess
    loss not below its start: ``disagrees``; another rung without T* (censored) or no rung:
    ``inconclusive``."""
    if len(table) == 0:
        return Verdict("inconclusive", ("convergence: no run",))
    cens = table[~np.isfinite(table.T_star)]
    stuck = cens[cens.final_rel_excess >= 1]
    if len(stuck):
        return Verdict("disagrees", tuple(
            f"convergence: P={r.P:g} (Δ={r.delta:+.3f}) ends {r.steps_run:g} steps with the "
            f"excess loss at {r.final_rel_excess:.3g} × its start" for r in stuck.itertuples()))
    if len(cens):
        return Verdict("inconclusive", tuple(
            f"premise failed: inside the horizon: P={r.P:g} (Δ={r.delta:+.3f}) did not reach "
            f"ε in {r.steps_run:g} steps" for r in cens.itertuples()))
    return Verdict("agrees", (f"convergence: all {len(table)} rungs reach L − L* ≤ "
                              f"{EPS_REL:g}(L⁰ − L*)",), ("convergence",))


def verdict_eps_convergence(eps: pd.DataFrame) -> Verdict:
    """Every ε of the ε ladder reached (finite ``T_star``) by each family's run: ``agrees``;
    otherwise ``inconclusive`` (censored) naming the ε."""
    if not len(eps):
        return Verdict("inconclusive", ("convergence: no ε ladder",), ("convergence",))
    cens = eps[~np.isfinite(eps.T_star)]
    if len(cens):
        return Verdict("inconclusive", tuple(
            f"premise failed: inside the horizon: {r.family} at ε = {r.eps_rel:g} did not "
            "reach T*" for r in cens.itertuples()), ("convergence",))
    return Verdict("agrees", (
        f"convergence: the ε ladder's runs (P = {eps.P.iloc[0]:g}) reach every ε down to "
        f"{eps.eps_rel.min():g}(L⁰ − L*)",), ("convergence",))


def growth_slopes(table: pd.DataFrame) -> dict[str, tuple[pd.DataFrame, dict]]:
    """Per family (in order): its rungs sorted by P and the local slopes of T* against
    x = (P/C)/η per sub-ladder (``_mae.slope_row``)."""
    return {fam: (g, slope_row("T*", x_axis(g), g.T_star, g.P)) for fam, g in
            ((f, g.sort_values("P")) for f, g in table.groupby("family", sort=False))}


def report_growth(table: pd.DataFrame) -> Reported:
    """T*'s growth with P per family (strictly increasing or not, its local exponents against
    x = (P/C)/η per sub-ladder): reported (the theorem's formula for T* was not read)."""
    out = []
    for fam, (g, ls) in growth_slopes(table).items():
        mono = ("strictly increasing" if strictly_increasing(g.T_star.to_numpy(dtype=float))
                else "not strictly increasing")
        out.append(f"{fam}: T* {mono} in P, local exponents against x "
                   + ", ".join(f"{s:.3f}" for s in ls["slopes"]))
    return Reported("T*'s growth", "T*'s growth (reported: the theorem's T* was not read): "
                    + "; ".join(out))


def judge(tables: dict[str, pd.DataFrame], values=None) -> Verdict:
    """Convergence on every rung and every ε, and the relative excess the ε-ladder runs end at
    in its two-sided band, from the ``table`` (ladder rungs) and ``eps`` tables, with the
    declared thresholds and prediction (or `values`); T*'s growth is reported."""
    v = cc.threshold_values((*THRESHOLDS, *PREDICTIONS), values)
    t, eps = tables["table"], tables["convergence"]
    short = [f"{f}: {ladder_decades(g.P):.2f}" for f, g in t.groupby("family")
             if ladder_decades(g.P) < v["MIN_DECADES"]]
    if short or not len(t):
        return cc.premise_failed(f"ladder shorter than "
                                 f"{v['MIN_DECADES']:g} decades ({'; '.join(short)})")
    parts = [verdict_convergence(t), verdict_eps_convergence(eps)]
    if any(p.verdict != "agrees" for p in parts):
        return combine(parts)
    ends = eps.groupby("family", sort=False).final_rel_excess.first()
    worst = float(ends.loc[ends.abs().idxmax()])
    w = cc.judge_band(PREDICTIONS[0], worst, v, COUNTERFACTUALS,
                      what="relative excess at the end of the ε-ladder runs (the farther from 0)")
    parts.append(labelled("near-optimal", w, "end values per family: " + ", ".join(
        f"{f} {x:.3g}" for f, x in ends.items())))
    parts.append(report_growth(t))
    return combine(parts)


COLUMNS = ["family", "P", "C1", "C", "delta", "delta_target", "delta_rounding", "x_phase",
           "steps_run", "T_star", "final_rel_excess", "t_II", "loss_monotone",
           "coefficient_law", "masked_keys", "eta"]


EPS_COLUMNS = ["family", "P", "C1", "C", "delta", "eps_rel", "T_star", "final_rel_excess",
               "coefficient_law", "masked_keys"]


#: Information gaps below the statement's ranges [−0.5, −Ω(1)] ∪ [Ω(1), 1], run at one P
#: (SMALL_DELTA_P; quick: 256) with κ_c = 1/4: reported, not judged (the statement says
#: nothing there).
SMALL_DELTAS = (-0.2, -0.1, -0.05, 0.05, 0.1, 0.2)
SMALL_DELTA_P = 4096
SMALL_DELTA_COLUMNS = ["P", "C1", "C", "delta_target", "delta", "steps_run", "T_star",
                       "converged", "final_rel_excess", "phase_I", "t_I"]


def small_delta_table(quick: bool, readings: dict) -> pd.DataFrame:
    """Reduced population GD at |Δ| below the statement's ranges (SMALL_DELTAS, the realised
    Δ on the size lattice): [`rung_summary`][theorylab.huang2024.setups.rung_summary] of one
    run each to T* or to its step budget, with whether it converged."""
    P = 256 if quick else SMALL_DELTA_P
    keys, z_law = bool(readings["masked_keys"]), str(readings["coefficient_law"])
    rows = []
    for D in SMALL_DELTAS:
        d = mae_config(P, Delta=D, kappa_c=0.25, engine="population-reduced").data
        rows.append(rung_summary(f"Δ={D:+g}", P, int(d.C1), int(d.C), mask_keys=keys,
                                 z_law=z_law).assign(delta_target=D))
    out = pd.concat(rows, ignore_index=True)
    out = out.assign(steps_run=out.steps_run.astype(int), converged=out.T_star.notna())
    return out[SMALL_DELTA_COLUMNS]


def _small_delta_line(sd: pd.DataFrame) -> str:
    return (f"Below the statement's ranges (reported, not judged), P = {int(sd.P.iloc[0])}: "
            + "; ".join(f"Δ = {r.delta:+.3f}: " + (f"T* = {r.T_star:g}" if r.converged else
                        f"not converged in {r.steps_run} steps (excess {r.final_rel_excess:.2g})")
                        + (f", Phase I to t_I = {r.t_I:g}" if r.phase_I else ", no Phase I")
                        for r in sd.itertuples()) + ".")


def run(quick: bool, readings: dict) -> cc.ClaimResult:
    m = measure(quick, readings)
    t = m["ladder"][COLUMNS]
    eps = m["eps"][EPS_COLUMNS]
    v = judge({"table": t, "convergence": eps})
    slopes = growth_slopes(t)
    head = {f"T* exponent vs x, top ({fam})": ls["top"] for fam, (_, ls) in slopes.items()}
    fits = pd.DataFrame([{"family": fam, "from": a, "to": b, "local_exponent": s}
                         for fam, (_, ls) in slopes.items()
                         for s, (a, b) in zip(ls["slopes"], ls["sub_rungs"])])
    reading = [
        f"Reduced population GD (population-reduced), per-query step η_q = 2, T* the first "
        f"step with L − L* ≤ {EPS_REL:g}(L⁰ − L*); {readings_text(readings)}.",
        "Local exponent of T* against x per sub-ladder: " + per_group(
            fits, lambda r: f"{r.local_exponent:.3f} (P {r['from']:g}–{r['to']:g})",
            series=True) + ".",
        "T* per rung: " + per_group(t, lambda r: f"{r.T_star:g} (P={r.P:g})") + ".",
        ("The population loss decreased at every step of every run." if t.loss_monotone.all()
         else f"The loss rose at some step in {int((~t.loss_monotone).sum())} runs."),
    ]
    small = small_delta_table(quick, readings)
    reading.append(_small_delta_line(small))
    ends = eps.groupby("family", sort=False).final_rel_excess.first()
    head.update({f"relative excess at the end of the ε ladder ({f})": float(x)
                 for f, x in ends.items()})
    brief = (f"{v.verdict}: all {len(t)} rungs reach ε = {EPS_REL:g}, the ε ladder down to "
             f"{eps.eps_rel.min():g} (excess {ends.abs().max():.2g}, pred 0 ± 0.002); T* ∝ "
             f"x^{head.get('T* exponent vs x, top (pos)', math.nan):.2f} reported; no seeds")

    def figure(fig):
        ax = fig.add_subplot(1, 1, 1)
        for fam, g in t.groupby("family", sort=False):
            g = g.sort_values("P")
            ax.plot(x_axis(g), g.T_star, "o-", label=f"T* ({fam})")
        x = np.sort(x_axis(t))
        ref = t.sort_values("P").iloc[-1]
        ax.plot(x, x * float(ref.T_star) / float(x_axis(t.sort_values("P").iloc[[-1]])[0]),
                "k--", label="∝ x (leading order)")
        style_axes(ax, "x = (P/C)/η", "T*", log="xy", legend=7)

    return cc.ClaimResult("thm4.1", t, v, head, reading, brief=brief,
                          extra={"fits": fits, "convergence": eps, "small-delta": small},
                          figure=figure,
                          settings=mae_settings())


CLAIM = cc.Claim(
    **cc.declared(globals(), PAPER_NAME),
    id="thm4.1",
    figsize=(6.0, 4.0),
    title="Theorem 4.1 (MAE training converges)",
    label="FOUND",
    kind="theorem check",
    source="docs/papers/huang2024.md §4.2 (the theorem's opening, FOUND) and §2.5 (its "
    "conclusion, \"near-optimal reconstruction\", FOUND in the abstract); T*'s formula was "
    "not read",
    statement="For Δ ∈ [−0.5, −Ω(1)] ∪ [Ω(1), 1] and any 0 < ε < 1, GD on the MAE loss reaches a "
    "\"near-optimal reconstruction\": L_MAE(Q^{(T*)}) − L* ≤ ε.",
    measured="Reduced population GD from Q⁰ = 0 over P = n⁴ from 81 to 65536 (2.9 decades) for a "
    "Δ > 0 and a Δ < 0 family at fixed Δ (one in each range of the statement): whether each run "
    "reaches ε = 0.05(L⁰ − L*); one run per family at P = 4096 down to ε = 10⁻⁴(L⁰ − L*) and "
    "the relative excess it ends at. T* and its local exponents against x = (P/C)/η, reported.",
    predicted="Every rung and every ε reached; the relative excess the ε-ladder runs end at is "
    "0 ± EXCESS_TOL (neither a plateau above L* nor a loss below it).",
    variants=VARIANTS,
    premises=("a ladder of at least MIN_DECADES decades per family",
              "inside the horizon: every run reaches ε before its step cap"),
    interval=cc.IntervalMethod("exact"),
    reconstructed="the model (loss, masking, one trainable Q) is the notes' reconstruction; the "
    "coefficient law, the masked keys and the step-size convention are run as variants.",
    untested="T*'s formula (not read; its growth is reported, our law for it is judged in "
    "thm4.2-laws), the conditions polylog(P) ≫ log(1/ε) and η ≪ poly(P), several clusters; "
    "|Δ| below the ranges of the statement (0.05–0.2) is run and reported, not judged.",
    settings=mae_settings(),
)
