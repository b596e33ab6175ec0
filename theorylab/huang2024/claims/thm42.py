"""Theorem 4.2, the paper's sentences (docs/papers/huang2024.md §4.3 and §4.5, FOUND): MAE
"learns diverse feature-position correlations across all areas, fostering locality-aware
attention", and, for a positive information gap, "Phase I: decoupling global FP correlations;
Phase II: growth of target local FP correlation".

Operationalised on the reduced population dynamics (``population-reduced``, validated against
the exact engine by the derivation check ``phases-reduction``) over two size families at fixed
Δ and κ_c on P = n⁴, 81 to 65536 (2.9 decades), read by
[`phase_readings`][theorylab.huang2024.phases.phase_readings]:

- locality-aware attention: a local query's attention on its own area at T* is a Θ(1) share
  (exponent 0 of P, settled with a + b/ln² P, two-sided band), against the uniform share
  C/P ∝ P^{−3/4}, in both families;
- the phases: on every Δ > 0 rung the first GD step decouples (Φ_glob of local queries falls
  faster than Φ_own grows), Φ_glob(t_I) < 0, and the own-area attention reaches its target
  after Phase I ends (t_I < t_II). The Δ < 0 rungs are reported.

Our laws of the same runs (the crossing value, the phase-length and Φ_own exponents, the
attention gap's ε exponent) are judged in the derivation check ``thm4.2-laws``.
"""

from __future__ import annotations

import math

import pandas as pd

from theorylab.core import claims as cc
from theorylab.core.claims.verdict import Reported, Verdict, combine
from theorylab.core.figures.axes import style_axes

from ..config import PAPER_NAME
from ..setups import EPS_REL, FAMILIES
from ._common import labelled
from ._mae import VARIANTS, ladder_premises, mae_settings, measure, readings_text, slope_row

__all__ = ["CLAIM", "THRESHOLDS", "PREDICTIONS", "COUNTERFACTUALS", "judge",
           "verdict_phases", "local_estimates", "LOCALITY_QUOTE", "PHASES_QUOTE"]

THRESHOLDS = (
    cc.Threshold("LOCALITY_TOL", 0.1, "project choice",
                 "below half the spacing 1/4 between exponent 0 (attention Θ(1) on the own area) "
                 "and its neighbours −1/4 (falling like P^{−1/4}) and +1/4 (still rising)",
                 role="half-width of the band of the own-area attention's exponent of P at T*"),
    cc.Threshold("MIN_DECADES", 2.5, "project choice",
                 "an asymptotic statement is read on a ladder of at least 2.5 decades of P (three "
                 "sub-ladders of more than 0.8 decade each)",
                 role="premise: each family's ladder spans at least this many decades"),
)

#: The paper's sentence on what MAE learns (docs/papers/huang2024.md §4.3, FOUND).
LOCALITY_QUOTE = ("learns diverse feature-position correlations across all areas, fostering "
                  "locality-aware attention")
#: The paper's sentence on the two phases (docs/papers/huang2024.md §4.5, FOUND).
PHASES_QUOTE = ("Phase I: decoupling global FP correlations; Phase II: growth of target local "
                "FP correlation")

PREDICTIONS = (
    cc.Prediction("LOCALITY_EXP", 0.0, "shift",
                  "limit of the exponent of P of a local query's attention on its own area at T* "
                  "(0: a Θ(1) share, against the uniform share C/P ∝ P^{−3/4})", "paper",
                  quote=LOCALITY_QUOTE, section="§4.3 Theorem 4.2", tolerance="LOCALITY_TOL",
                  settlement=cc.Settlement("a + b/ln² x", "the attention at T* tends to its level "
                                           "A as Φ_own grows like ln P: attn = A(1 − c/ln P), so "
                                           "ln attn = ln A − c/ln P + …, whose local slope against "
                                           "ln P is c/ln² P", "P")),
)

COUNTERFACTUALS = (
    cc.Counterfactual("own attention ∝ P^{−1/4}", "the own-area attention at T* falls like "
                      "P^{−1/4}: above the uniform share, not a Θ(1) local pattern",
                      {"LOCALITY_EXP": -0.25}),
    cc.Counterfactual("own attention ∝ P^{+1/4}", "the own-area attention at T* still rises like "
                      "P^{1/4} across the ladder (not yet concentrated at T*)",
                      {"LOCALITY_EXP": 0.25}),
    cc.Counterfactual("uniform share", "the own-area attention at T* stays at the uniform share "
                      "C/P ∝ P^{−3/4}", {"LOCALITY_EXP": -0.75}),
)


def verdict_phases(ladder: pd.DataFrame) -> Verdict:
    """The phase sentence on every Δ > 0 rung (the paper states it for a positive information
    gap): Phase I decouples (the first GD step lowers Φ_glob of local queries by more than it
    raises Φ_own, and Φ_glob(t_I) < 0), then Phase II grows the own-area correlation (t_I <
    t_II, the own-area attention reaching its target after the decoupling ends).
    ``disagrees`` naming the rungs where one fails; ``inconclusive`` without Δ > 0 rungs."""
    pos = ladder[ladder.delta > 0]
    if not len(pos):
        return Verdict("inconclusive", ("phases: no Δ > 0 rung",), ("phases",))
    ok = (pos.phase_I.astype(bool) & (pos.phi_glob_end_I < 0) & (pos.t_I < pos.t_II))
    bad = pos[~ok]
    if len(bad):
        return Verdict("disagrees", ("phases: " + "; ".join(
            f"P={r.P:g}: first step decouples {bool(r.phase_I)}, Φ_glob(t_I) = "
            f"{r.phi_glob_end_I:.3g}, t_I = {r.t_I:g}, t_II = {r.t_II:g}"
            for r in bad.itertuples()),), ("phases",))
    return Verdict("agrees", (
        f"phases: on all {len(pos)} Δ > 0 rungs the first step decouples, Φ_glob(t_I) < 0 "
        f"({pos.phi_glob_end_I.max():.3g} to {pos.phi_glob_end_I.min():.3g}) and t_I < t_II "
        f"(t_I/t_II {(pos.t_I / pos.t_II).min():.2f}–{(pos.t_I / pos.t_II).max():.2f})",),
        ("phases",))


def report_negative(ladder: pd.DataFrame) -> Reported:
    """The Δ < 0 rungs (the paper's phase sentence is used for a positive gap; no Phase I for
    Δ < 0 is the notes' reading): reported."""
    neg = ladder[ladder.delta < 0]
    return Reported("phases for Δ < 0", (
        f"Δ < 0: the first step decouples on {int(neg.phase_I.astype(bool).sum())} of "
        f"{len(neg)} rungs (reported: the paper's sentence speaks of a positive gap)"))


def local_estimates(ladder: pd.DataFrame) -> list[dict]:
    """Local slopes of ln attn_own(T*) against ln P per family (three sub-ladders), with the
    geometric middles of their P values."""
    out = []
    for fam, g in ladder.groupby("family", sort=False):
        g = g.sort_values("P")
        ls = slope_row("own-area attention at T*", g.P, g.attn_own_T, g.P)
        out.append({"family": fam, "slopes": list(ls["slopes"]), "sub_rungs": ls["sub_rungs"],
                    "x": ls["x"]})
    return out


def judge(tables: dict[str, pd.DataFrame], values=None) -> Verdict:
    """The locality sentence (the own-area attention's exponent of P at T*, settled, in its
    two-sided band, per family) and the phase sentence (every Δ > 0 rung), from the ``table``
    (ladder rungs), with the declared thresholds and predictions (or `values`)."""
    v = cc.threshold_values((*THRESHOLDS, *PREDICTIONS), values)
    lad = tables["table"]
    failed = ladder_premises(lad, v["MIN_DECADES"])
    if failed is not None:
        return failed
    parts: list = [verdict_phases(lad), report_negative(lad)]
    for e in local_estimates(lad):
        label = f"own-area attention at T* ({e['family']})"
        parts.append(labelled(label, cc.judge_settled(PREDICTIONS[0], e["x"], e["slopes"], v,
                                                      COUNTERFACTUALS)))
    return combine(parts)


COLUMNS = ["family", "P", "C1", "C", "delta", "delta_target", "delta_rounding", "x_phase",
           "phase_I", "dphi_glob_1", "dphi_own_1", "t_I", "phi_glob_end_I", "attn_glob_end_I",
           "t_II", "T_star", "len_I", "len_II", "phi_own_T", "attn_own_T", "attn_own_max",
           "neglect", "loss_monotone", "coefficient_law", "masked_keys", "eta"]


def run(quick: bool, readings: dict) -> cc.ClaimResult:
    m = measure(quick, readings)
    lad = m["ladder"][COLUMNS]
    v = judge({"table": lad})
    est = local_estimates(lad)
    reading = [
        "Reduced population GD (population-reduced) from Q⁰ = 0, per-query step η_q = 2, both "
        f"size families at fixed Δ (Δ > 0: {FAMILIES['pos'].Delta:g}, Δ < 0: "
        f"{FAMILIES['neg'].Delta:g}; κ_c = 1/4) on P = n⁴ from {lad.P.min():g} to "
        f"{lad.P.max():g}; T* at ε = {EPS_REL:g}(L⁰ − L*); {readings_text(readings)}.",
        "Own-area attention of local queries at T* against the uniform share C/P: " + ", ".join(
            f"{r.attn_own_T:.3f} vs {r.C / r.P:.2g} (P={r.P:g}, {r.family})"
            for r in lad.itertuples()) + ".",
        "Local slopes of ln attn_own(T*) against ln P per sub-ladder: " + "; ".join(
            f"{e['family']}: " + ", ".join(f"{s:.3f} ({a:g}–{b:g})" for s, (a, b) in
                                           zip(e["slopes"], e["sub_rungs"])) for e in est) + ".",
    ]
    top = {e["family"]: float(e["slopes"][-1]) for e in est if e["slopes"]}
    headline = {f"top slope of ln attn_own(T*) ({f})": x for f, x in top.items()}
    pos = lad[lad.family == "pos"]
    headline["Δ > 0 rungs with both phases"] = int(
        (pos.phase_I.astype(bool) & (pos.phi_glob_end_I < 0) & (pos.t_I < pos.t_II)).sum())
    brief = (f"{v.verdict}: own-area attention at T* Θ(1) (slope {top.get('pos', math.nan):.3f}"
             f", {top.get('neg', math.nan):.3f}); both phases on "
             f"{headline['Δ > 0 rungs with both phases']}/{len(pos)} Δ > 0 rungs; no seeds")

    def figure(fig):
        axs = fig.subplots(1, 2)
        for fam, g in lad.groupby("family", sort=False):
            g = g.sort_values("P")
            axs[0].plot(g.P, g.attn_own_T, "o-", label=f"own-area attention at T* ({fam})")
            axs[0].plot(g.P, g.C / g.P, ":", label=f"uniform share C/P ({fam})")
        style_axes(axs[0], "P", log="xy", legend=7)
        g = pos.sort_values("P")
        axs[1].plot(g.P, g.t_I, "s-", label="t_I (end of Phase I)")
        axs[1].plot(g.P, g.t_II, "o-", label="t_II (own attention at its target)")
        style_axes(axs[1], "P (Δ > 0)", log="xy", legend=7)

    return cc.ClaimResult("thm4.2", lad, v, headline, reading, brief=brief, figure=figure,
                          settings=mae_settings())


CLAIM = cc.Claim(
    **cc.declared(globals(), PAPER_NAME),
    id="thm4.2",
    figsize=(10.0, 3.8),
    title="Theorem 4.2 (MAE learns local FP correlations; two phases for Δ > 0)",
    label="FOUND",
    kind="theorem check",
    source="docs/papers/huang2024.md §4.3 (\"learns diverse feature-position correlations "
    "across all areas\", FOUND) and §4.5 (the phase names, FOUND)",
    statement="MAE \"learns diverse feature-position correlations across all areas, fostering "
    "locality-aware attention\"; for a positive information gap, \"Phase I: decoupling global "
    "FP correlations; Phase II: growth of target local FP correlation\".",
    measured="Reduced population GD (population-reduced) on P = n⁴ from 81 to 65536 for a Δ > 0 "
    "and a Δ < 0 family at fixed Δ and κ_c: a local query's attention on its own area at T* "
    "(its exponent of P, per sub-ladder, extrapolated), and per Δ > 0 rung whether the first "
    "step decouples, Φ_glob(t_I) < 0 and t_I < t_II.",
    predicted="Locality: the own-area attention at T* is a Θ(1) share (exponent 0 of P ± 0.1, "
    "against the uniform share's −3/4). Phases: both, in this order, on every Δ > 0 rung.",
    variants=VARIANTS,
    premises=("a ladder of at least MIN_DECADES decades per family",
              "inside the horizon: every rung reaches t_I, t_II and T*"),
    interval=cc.IntervalMethod("extrapolation"),
    reconstructed="the model (loss, masking, one trainable Q) is the notes' reconstruction; "
    "the coefficient law, the masked keys and the step-size convention are run as variants.",
    untested="The global query's attention on the global area (not in the ladder's readings); "
    "several clusters (K = 1 here); the diversity across queries is by construction in this "
    "model (each local query's own area is another area) and is not measured separately.",
    settings=mae_settings(),
)
