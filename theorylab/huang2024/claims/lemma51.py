"""Lemma 5.1's rates at initialisation, our law (docs/papers/huang2024.md §4.5: the lemma's
name is FOUND, its text was not read; the law is DERIVED in the reconstructed model, a
derivation check): a masked local-area patch's FP correlation with its own area rises and the
one with the global area falls, at a ratio |r_glob|/r_own that grows as P^Δ, the information
gap Δ = 2κ_s − κ_c − 1 being the exponent of the global area's pull over the own area's.

Measured: the first GD step from Q⁰ = 0 of the reduced engine (exact at Q⁰ = 0, checked
against the exact engines by ``lemma5.1-rates`` and ``phases-reduction``) for both size
families at fixed Δ on P = n⁴ from 81 to 10⁸ (6 decades), masked keys in and out:
−dΦ_glob/dΦ_own = |r_glob|/r_own of local queries. Judged: the signs on every rung, and the
limit of the ratio's local exponent in units of Δ, extrapolated from three sub-ladders with
a + b/ln P and judged once settled, in a two-sided band against the neighbours 3/4 and 5/4.
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
    Settlement,
    Threshold,
    judge_settled,
    threshold_values,
)
from theorylab.core.claims.verdict import Verdict, combine

from ..config import PAPER_NAME
from ..predictions.asymptotics import sub_ladders
from ..setups import FAMILIES, GAMMA, family_sizes, first_step
from ._mae import N_SUB, ladder_decades, slope_row

__all__ = ["CLAIM", "THRESHOLDS", "PREDICTIONS", "COUNTERFACTUALS", "judge", "rate_ladder",
           "RATIO_NS"]

#: P = n⁴ of the ratio ladder (81 to 10⁸): only the first GD step is taken.
RATIO_NS = (*range(3, 17), 20, 25, 32, 40, 50, 64, 80, 100)

THRESHOLDS = (
    Threshold("RATIO_TOL", 0.1, "project choice",
              "below half the spacing 1/4 between the exponent Δ and its neighbours 3Δ/4 and "
              "5Δ/4 (in units of Δ)",
              role="half-width of the band of the ratio's exponent in units of Δ"),
    Threshold("MIN_DECADES", 2.5, "project choice",
              "an asymptotic statement is read on a ladder of at least 2.5 decades of P",
              role="premise: each family's ladder spans at least this many decades"),
)

PREDICTIONS = (
    Prediction("RATIO_EXP", 1.0, "shift",
               "limit of the exponent of P in |r_glob|/r_own at Q⁰ = 0, in units of Δ "
               "(ratio ∝ P^Δ)", "derived", check="proofs_checks/huang2024/check_rates.py",
               tolerance="RATIO_TOL",
               settlement=Settlement("a + b/ln x", "ratio = P^Δ·(1 − a_1)·(1 + cross terms), "
                                     "a_1 ∝ P^{κ_s − 1} the global area's mean attention: the "
                                     "slowly varying factor moves the local exponent by "
                                     "(1 − κ_s)a_1/(1 − a_1), read as b/ln P over the ladder",
                                     "P")),
)

COUNTERFACTUALS = (
    Counterfactual("ratio ∝ P^{3Δ/4}", "the global pull grows as P^{3Δ/4}", {"RATIO_EXP": 0.75}),
    Counterfactual("ratio ∝ P^{5Δ/4}", "the global pull grows as P^{5Δ/4}", {"RATIO_EXP": 1.25}),
    Counterfactual("ratio ∝ P^{Δ/2}", "the global pull grows as the square root of P^Δ",
                   {"RATIO_EXP": 0.5}),
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


def local_exponents(g: pd.DataFrame) -> dict:
    """The local exponents of the ratio against P per sub-ladder of one (family, masked keys)
    ladder, in units of its Δ, with the geometric middle ``x`` of each sub-ladder's P."""
    ls = slope_row("ratio", g.P, g.ratio, g.P)
    D = float(g.delta.mean())
    P = g.P.to_numpy(dtype=np.float64)
    return {"per_delta": [s / D for s in ls["slopes"]], "slopes": ls["slopes"],
            "sub_rungs": ls["sub_rungs"], "delta": D,
            "x": [float(math.sqrt(P[i].min() * P[i].max())) for i in sub_ladders(P, N_SUB)]}


def judge(tables: dict[str, pd.DataFrame], values=None) -> Verdict:
    """The signs of the own and global rates on every rung, and the limit of the ratio's
    exponent per (family, masked keys) in units of Δ, settled and in its two-sided band, with
    the declared values (or `values`)."""
    v = threshold_values((*THRESHOLDS, *PREDICTIONS), values)
    t = tables["table"]
    if len(t) == 0:
        return Verdict("inconclusive", ("no rung",))
    parts = []
    bad = t[~((t.dphi_own_1 > 0) & (t.dphi_glob_1 < 0))]
    parts.append(Verdict("disagrees" if len(bad) else "agrees", (
        f"signs: own rate > 0 and global rate < 0 on all {len(t)} rungs" if not len(bad) else
        "signs: " + "; ".join(f"{r.family} P={r.P:g} keys {'in' if r.masked_keys else 'out'}: "
                              f"dΦ_own {r.dphi_own_1:+.2e}, dΦ_glob {r.dphi_glob_1:+.2e}"
                              for r in bad.head(6).itertuples()),), ("signs",)))
    for (fam, mk), g in t.groupby(["family", "masked_keys"], sort=False):
        g = g.sort_values("P")
        label = f"|r_glob|/r_own vs P ({fam}, keys {'in' if mk else 'out'})"
        if ladder_decades(g.P) < v["MIN_DECADES"]:
            parts.append(Verdict("inconclusive", (f"premise failed: {label}: ladder shorter "
                                                  f"than {v['MIN_DECADES']:g} decades",)))
            continue
        e = local_exponents(g)
        w = judge_settled(PREDICTIONS[0], e["x"], e["per_delta"], v, COUNTERFACTUALS,
                          what=f"extrapolated exponent / Δ (Δ = {e['delta']:+.3f})")
        parts.append(Verdict(w.verdict, tuple(f"{label}: {r}" for r in w.reasons), (label,)))
    return combine(parts)


def run(quick: bool) -> ClaimResult:
    t = rate_ladder(quick)
    v = judge({"table": t})
    head, rows = {}, []
    for (fam, mk), g in t.groupby(["family", "masked_keys"], sort=False):
        e = local_exponents(g.sort_values("P"))
        head[f"ratio exponent / Δ, top ({fam}, keys {'in' if mk else 'out'})"] = \
            e["per_delta"][-1]
        for sl, pd_, x, (a, b) in zip(e["slopes"], e["per_delta"], e["x"], e["sub_rungs"]):
            rows.append({"family": fam, "masked_keys": mk, "from": a, "to": b, "middle": x,
                         "local_exponent": sl, "per_delta": pd_})
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
        "derived limit 1·Δ; exact first step, no seeds")

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
                       figure=figure, settings={"Q⁰": 0, "γ": GAMMA})


CLAIM = Claim(
    id="lemma5.1",
    paper=PAPER_NAME,
    figsize=(6.0, 4.0),
    title="Lemma 5.1's rates at initialisation, our law (the global pull grows as P^Δ)",
    label="RECONSTRUCTED",
    kind="derivation check",
    source="docs/papers/huang2024.md §4.5 (the lemma's name FOUND, its text not read; the law "
    "that Δ is the exponent of the rate ratio is DERIVED in the reconstructed model)",
    statement="In the reconstructed MAE model at Q⁰ = 0 a masked local-area patch's own FP "
    "correlation rises and its global one falls, at a ratio |r_glob|/r_own that grows as P^Δ.",
    measured="The first GD step from Q⁰ = 0 (reduced engine, exact there) for a Δ > 0 and a Δ < 0 "
    "family at fixed Δ on P = n⁴ from 81 to 10⁸, masked keys in and out.",
    predicted="Own rate > 0 and global rate < 0 on every rung; the ratio's exponent, in units of "
    "Δ, extrapolated with a + b/ln P, 1 ± RATIO_TOL (against 3/4 and 5/4).",
    thresholds=THRESHOLDS,
    predictions=PREDICTIONS,
    counterfactuals=COUNTERFACTUALS,
    premises=("a ladder of at least MIN_DECADES decades",),
    interval=IntervalMethod("extrapolation"),
    reconstructed="Δ's formula 2κ_s − κ_c − 1 was inferred from its admissible range and this "
    "very ratio (notes §1.3); the lemma's own text was not read.",
    untested="Later steps, several clusters; the sign of another local area's rate "
    "(lemma5.1-rates); the Phase I boundary Δ_b(P) against its finite-P formula.",
    settings={"Q⁰": 0, "γ": GAMMA},
    run=run,
    judge=judge,
)
