"""Lemma 5.1 (FP correlations, informal; its text was not read, docs/papers/huang2024.md §4.5):
at initialisation, a masked local-area patch's FP correlation with its own area rises and the
one with the global area falls, at a ratio |r_glob|/r_own that grows as P^Δ: the information
gap Δ = 2κ_s − κ_c − 1 is the exponent of the global area's pull over the own area's
(the notes' reading, and the reason the theorems split at Δ = 0).

Measured: the first GD step from Q⁰ = 0 of the reduced engine (exact at Q⁰ = 0, checked
against the exact engines by ``lemma5.1-rates`` and ``phases-reduction``) for both size
families at fixed Δ on P = n⁴ from 81 to 10⁸ (6 decades), masked keys in and out:
−dΦ_glob/dΦ_own = |r_glob|/r_own of local queries. Judged: the signs on every rung, and the
ratio's local exponent on the top of three sub-ladders against Δ, within the ratio's
neglected order at the top (its slowly varying factor 1 − a_1, a_1 the global area's mean
attention, moves the exponent by (1 − κ_s)·a_1/(1 − a_1)) plus the drift.
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
from ..setups import FAMILIES, GAMMA, family_sizes, first_step
from ._mae import SETTLE_THRESHOLD, ladder_decades, slope_row, slope_verdict

__all__ = ["CLAIM", "THRESHOLDS", "PREDICTIONS", "COUNTERFACTUALS", "judge", "rate_ladder",
           "RATIO_NS"]

#: P = n⁴ of the ratio ladder (81 to 10⁸): only the first GD step is taken.
RATIO_NS = (*range(3, 17), 20, 25, 32, 40, 50, 64, 80, 100)

THRESHOLDS = (
    SETTLE_THRESHOLD,
    Threshold("MIN_DECADES", 2.5, "project choice",
              "an asymptotic statement is read on a ladder of at least 2.5 decades of P",
              role="premise: each family's ladder spans at least this many decades"),
)

PREDICTIONS = (
    Prediction("RATIO_EXP_FACTOR", 1.0, "factor",
               "exponent of P in |r_glob|/r_own at Q⁰ = 0, in units of Δ (ratio ∝ P^Δ)",
               "paper statement (reconstructed)"),
    Prediction("GLOBAL_SIGN", -1.0, "shift",
               "sign of the global correlation's rate of a masked local query at Q⁰ = 0 "
               "(−1: it falls; its own correlation's rate is +1)", "paper statement "
               "(reconstructed)"),
)

COUNTERFACTUALS = (
    Counterfactual("ratio ∝ P^{Δ/2}", "the global pull grows as the square root of P^Δ",
                   {"RATIO_EXP_FACTOR": 0.5}),
    Counterfactual("ratio ∝ P^{2Δ}", "the global pull grows as (P^Δ)²",
                   {"RATIO_EXP_FACTOR": 2.0}),
    Counterfactual("global rises", "the global correlation of a local query rises at Q⁰ = 0",
                   {"GLOBAL_SIGN": 1.0}),
)


def rate_ladder(quick: bool) -> pd.DataFrame:
    """The first GD step of both families, masked keys in and out, on P = n⁴ of
    ``RATIO_NS`` (quick: n = 3, 4, 6, 8, 12, 16, 25, 40)."""
    ns = (3, 4, 6, 8, 12, 16, 25, 40) if quick else RATIO_NS
    rows = []
    for mk in (True, False):
        for fam in FAMILIES:
            for n in ns:
                P = n ** 4
                r = first_step(P, *family_sizes(fam, P), mask_keys=mk)
                rows.append({"family": fam, "masked_keys": mk, "gamma": GAMMA, **r})
    return pd.DataFrame(rows)


def _a1(r) -> float:
    """The global area's mean attention of a local query at Q⁰ = 0."""
    return (1 - r.gamma) * r.C1 / r.P if r.masked_keys else r.C1 / (r.P - 1)


def judge(tables: dict[str, pd.DataFrame], values=None) -> Verdict:
    """The signs of the own and global rates on every rung, and the ratio's exponent per
    (family, masked keys) on the top sub-ladder, with the declared values (or `values`)."""
    v = threshold_values((*THRESHOLDS, *PREDICTIONS), values)
    t = tables["table"]
    if len(t) == 0:
        return Verdict("inconclusive", ("no rung",))
    parts = []
    s = np.sign(v["GLOBAL_SIGN"])
    bad = t[~((t.dphi_own_1 > 0) & (np.sign(t.dphi_glob_1) == s))]
    parts.append(Verdict("disagrees" if len(bad) else "agrees", (
        (f"signs: own rate > 0 and global rate {'<' if s < 0 else '>' if s > 0 else '='} 0 on "
         f"all {len(t)} rungs") if not len(bad) else
        "signs: " + "; ".join(f"{r.family} P={r.P:g} keys {'in' if r.masked_keys else 'out'}: "
                              f"dΦ_own {r.dphi_own_1:+.2e}, dΦ_glob {r.dphi_glob_1:+.2e}"
                              for r in bad.head(6).itertuples()),)))
    for (fam, mk), g in t.groupby(["family", "masked_keys"], sort=False):
        g = g.sort_values("P")
        if ladder_decades(g.P) < v["MIN_DECADES"]:
            parts.append(Verdict("inconclusive", (f"premise failed: {fam} ladder shorter than "
                                                  f"{v['MIN_DECADES']:g} decades",)))
            continue
        D = float(g.delta.mean())
        ls = slope_row("ratio", g.P, g.ratio, g.P)
        top = g[g.P.isin(ls["top_rungs"])].iloc[-1]
        ks = (1 + D + math.log(top.C) / math.log(top.P)) / 2
        a1 = _a1(top)
        allow = (1 - ks) * a1 / (1 - a1)
        parts.append(slope_verdict(f"|r_glob|/r_own vs P ({fam}, keys "
                                   f"{'in' if mk else 'out'}, Δ={D:+.3f})", ls,
                                   v["RATIO_EXP_FACTOR"] * D, allow, settle=v["SETTLE_TOL"]))
    return combine(parts)


def run(quick: bool) -> ClaimResult:
    t = rate_ladder(quick)
    v = judge({"table": t})
    head, rows = {}, []
    for (fam, mk), g in t.groupby(["family", "masked_keys"], sort=False):
        g = g.sort_values("P")
        ls = slope_row("ratio", g.P, g.ratio, g.P)
        D = float(g.delta.mean())
        head[f"ratio exponent / Δ, top ({fam}, keys {'in' if mk else 'out'})"] = ls["top"] / D
        for sl, (a, b) in zip(ls["slopes"], ls["sub_rungs"]):
            rows.append({"family": fam, "masked_keys": mk, "from": a, "to": b,
                         "local_exponent": sl, "per_delta": sl / D})
    fits = pd.DataFrame(rows)
    reading = [
        "Local exponent of |r_glob|/r_own against P, in units of Δ, per sub-ladder: " + "; ".join(
            f"{fam} keys {'in' if mk else 'out'}: " + ", ".join(
                f"{r.per_delta:.3f} ({r['from']:g}–{r['to']:g})" for _, r in g.iterrows())
            for (fam, mk), g in fits.groupby(["family", "masked_keys"], sort=False)) + ".",
        "Rate ratio at the largest P: " + ", ".join(
            f"{fam} keys {'in' if mk else 'out'}: {g.sort_values('P').ratio.iloc[-1]:.4g} "
            f"(P={g.P.max():g})" for (fam, mk), g in t.groupby(["family", "masked_keys"],
                                                               sort=False)) + ".",
    ]
    brief = (f"{v.verdict}: |r_glob|/r_own ∝ P^(" + ", ".join(
        f"{x:.2f}" for x in head.values()) + ")·Δ (pos/neg, keys in/out), P = 81–10⁸, "
        "pred 1·Δ; exact first step, no seeds")

    def figure(fig):
        ax = fig.add_subplot(1, 1, 1)
        for (fam, mk), g in t.groupby(["family", "masked_keys"], sort=False):
            g = g.sort_values("P")
            ax.plot(g.P, g.ratio, "o-" if mk else "s--", ms=3,
                    label=f"{fam}, keys {'in' if mk else 'out'}")
            ax.plot(g.P, g.ratio.iloc[-1] * (g.P / g.P.iloc[-1]) ** g.delta.mean(), ":",
                    color="gray")
        ax.plot([], [], ":", color="gray", label="∝ P^Δ")
        ax.set_xscale("log")
        ax.set_yscale("log")
        ax.set_xlabel("P")
        ax.set_ylabel("|r_glob| / r_own at Q⁰ = 0")
        ax.legend(fontsize=7)

    return ClaimResult("lemma5.1", t, v, head, reading, brief=brief, extra={"fits": fits},
                       figure=figure)


CLAIM = Claim(
    id="lemma5.1",
    paper=PAPER_NAME,
    figsize=(6.0, 4.0),
    title="Lemma 5.1 (FP correlations at initialisation: the global pull grows as P^Δ)",
    label="RECONSTRUCTED",
    kind="theorem check",
    source="docs/papers/huang2024.md §4.5 (the lemma's name FOUND, its text not read; the "
    "reading that Δ is the exponent of the rate ratio is the notes')",
    statement="At Q⁰ = 0 a masked local-area patch's own FP correlation rises and its global "
    "one falls, at a ratio |r_glob|/r_own that grows as P^Δ.",
    measured="The first GD step from Q⁰ = 0 (reduced engine, exact there) for a Δ > 0 and a Δ < 0 "
    "family at fixed Δ on P = n⁴ from 81 to 10⁸, masked keys in and out.",
    predicted="Own rate > 0 and global rate < 0 on every rung; the ratio's exponent on the top "
    "sub-ladder equals Δ within (1 − κ_s)·a_1/(1 − a_1) plus the drift.",
    thresholds=THRESHOLDS,
    predictions=PREDICTIONS,
    counterfactuals=COUNTERFACTUALS,
    premises=("a ladder of at least MIN_DECADES decades",),
    reconstructed="Δ's formula 2κ_s − κ_c − 1 was inferred from its admissible range and this "
    "very ratio (notes §1.3); the lemma's own text was not read.",
    untested="Later steps, several clusters; the sign of another local area's rate "
    "(lemma5.1-rates).",
    run=run,
    judge=judge,
)
