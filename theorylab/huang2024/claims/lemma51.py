"""Lemma 5.1's rates at initialisation, our law (docs/papers/huang2024.md §4.5: the lemma's
name is FOUND, its text was not read; the law is DERIVED in the reconstructed model, a
derivation check): a masked local-area patch's FP correlation with its own area rises and the
one with the global area falls, at a ratio |r_glob|/r_own that grows as P^Δ, the information
gap Δ = 2κ_s − κ_c − 1 being the exponent of the global area's pull over the own area's.

Measured: the first GD step from Q⁰ = 0 of the reduced engine (exact at Q⁰ = 0, checked
against the exact engines by ``lemma5.1-rates`` and ``phases-reduction``) for both size
families at fixed Δ on P = n⁴ from 81 to 10⁸ (6 decades), masked keys in and out:
−dΦ_glob/dΦ_own = |r_glob|/r_own of local queries. Judged: the signs on every rung, and the
limit of the ratio's local exponent in units of Δ with the derived finite-P correction
removed (each sub-ladder's exponent less that of the leading-order ratio of the notes' §4.5 on
the same rungs, plus its limit Δ; what is left are the counts' fluctuations, relatively
O(P^{−κ_s}) and O(1/P), read as a + b/√P), judged once settled, in a two-sided band against
the neighbours 3/4 and 5/4. The Phase I boundary Δ_b(P) (the Δ above which the first step has
|r_glob| > r_own) is measured by bisection on the size lattice at the ladder's own P values and
judged against its derived finite-P formula (``predictions.rates.phase_one_boundary``): the
offset (Δ_b − formula)·ln P, the log of the ratio of the boundary constants, 0 ± BOUNDARY_TOL
against ±ln 2 (a factor 2 in the constant: the (1 − γ) of the masked shares dropped).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from theorylab.core import claims as cc
from theorylab.core.claims.verdict import Verdict, combine
from theorylab.core.figures.axes import style_axes

from ..config import PAPER_NAME
from ..predictions.asymptotics import law_corrected_slopes
from ..predictions.rates import ZMoments, local_query_leading, phase_one_boundary
from ..setups import FAMILIES, GAMMA, Z_LAWS, boundary_rung, family_sizes, first_step
from ._common import keys, labelled, per_group
from ._mae import ladder_decades, slope_row

__all__ = ["CLAIM", "THRESHOLDS", "PREDICTIONS", "COUNTERFACTUALS", "judge", "rate_ladder",
           "RATIO_NS"]

#: P = n⁴ of the ratio ladder (81 to 10⁸): only the first GD step is taken.
RATIO_NS = (*range(3, 17), 20, 25, 32, 40, 50, 64, 80, 100)

THRESHOLDS = (
    cc.Threshold("RATIO_TOL", 0.1, "project choice",
                 "below half the spacing 1/4 between the exponent Δ and its neighbours 3Δ/4 and "
                 "5Δ/4 (in units of Δ)",
                 role="half-width of the band of the ratio's exponent in units of Δ"),
    cc.Threshold("BOUNDARY_TOL", 0.25, "project choice",
                 "a quarter in the log of the boundary constant (Δ_b off by 0.25/ln P): below "
                 "half of ln 2 to the nearest wrong constant, and above the lattice's own "
                 "resolution (the bisection half-width times ln P, at most 0.2 at P = 81)",
                 role="half-width of the band of the Phase I boundary's offset "
                      "(Δ_b − formula)·ln P"),
    cc.Threshold("MIN_DECADES", 2.5, "project choice",
                 "an asymptotic statement is read on a ladder of at least 2.5 decades of P",
                 role="premise: each family's ladder spans at least this many decades"),
)

PREDICTIONS = (
    cc.Prediction("RATIO_EXP", 1.0, "shift",
                  "limit of the exponent of P in |r_glob|/r_own at Q⁰ = 0, in units of Δ "
                  "(ratio ∝ P^Δ)", "derived", check="proofs_checks/huang2024/check_rates.py",
                  tolerance="RATIO_TOL",
                  settlement=cc.Settlement("a + b/√x", "ratio = (leading-order ratio of the notes' "
                                           "§4.5)·(1 + O(P^{−κ_s}) + O(1/P)) (the counts' "
                                           "fluctuations about their means; κ_s ≥ 1/2 on both "
                                           "families), and the leading-order ratio's local "
                                           "exponent is removed: what is left moves as P^{−1/2} "
                                           "at most (predictions/rates.py local_query_leading)",
                                           "P")),
    cc.Prediction("BOUNDARY_Q", 0.0, "shift",
                  "(Δ_b − Δ_b,formula)·ln P at each P of the ladder: the log of the measured Phase "
                  "I boundary constant over the derived finite-P one (phase_one_boundary, leading "
                  "order at the actual P and C)", "derived",
                  check="proofs_checks/huang2024/check_boundaries.py", tolerance="BOUNDARY_TOL"),
)

COUNTERFACTUALS = (
    cc.Counterfactual("ratio ∝ P^{3Δ/4}", "the global pull grows as P^{3Δ/4}", {"RATIO_EXP": 0.75}),
    cc.Counterfactual("ratio ∝ P^{5Δ/4}", "the global pull grows as P^{5Δ/4}", {"RATIO_EXP": 1.25}),
    cc.Counterfactual("ratio ∝ P^{Δ/2}", "the global pull grows as the square root of P^Δ",
                      {"RATIO_EXP": 0.5}),
    cc.Counterfactual("boundary constant ×2", "Δ_b = formula + ln 2/ln P (the (1 − γ) of the "
                      "masked shares dropped from a_1²/a_j)", {"BOUNDARY_Q": math.log(2.0)}),
    cc.Counterfactual("boundary constant ÷2", "Δ_b = formula − ln 2/ln P",
                      {"BOUNDARY_Q": -math.log(2.0)}),
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


def _moments() -> ZMoments:
    """μ_1, μ_2, μ_3 of the main coefficient law (uniform on [L, U])."""
    L, U = float(Z_LAWS["uniform"]["L"]), float(Z_LAWS["uniform"]["U"])
    return ZMoments(*((U ** (k + 1) - L ** (k + 1)) / ((k + 1) * (U - L)) for k in (1, 2, 3)))


def leading_ratio(g: pd.DataFrame, mask_keys: bool) -> np.ndarray:
    """The leading-order |r_glob|/r_own of the notes' §4.5 (``local_query_leading``) at each
    rung's actual sizes."""
    mu = _moments()
    qs = (local_query_leading(float(r.P), float(r.C1), float(r.C), mu, gamma=GAMMA,
                              mask_keys=mask_keys) for r in g.itertuples())
    return np.array([-q["glob"] / q["own"] for q in qs])


def local_exponents(g: pd.DataFrame) -> dict:
    """The local exponents of the ratio against P per sub-ladder of one (family, masked keys)
    ladder, in units of its Δ: measured (``measured``), of the leading-order ratio (``law``)
    and with the law's correction removed (``per_delta``: measured − law + 1), with the
    geometric middle ``x`` of each sub-ladder's P."""
    ls = slope_row("ratio", g.P, g.ratio, g.P)
    D = float(g.delta.mean())
    law = slope_row("law", g.P, leading_ratio(g, bool(g.masked_keys.iloc[0])), g.P)["slopes"]
    meas = [s / D for s in ls["slopes"]]
    lawd = [s / D for s in law]
    return {"per_delta": list(law_corrected_slopes(meas, lawd, 1.0)), "measured": meas,
            "law": lawd, "slopes": ls["slopes"], "sub_rungs": ls["sub_rungs"], "delta": D,
            "x": ls["x"]}


def boundary_ladder(quick: bool) -> pd.DataFrame:
    """The Phase I boundary Δ_b measured (``setups.boundary_rung``: bisection on the size
    lattice, exact first steps) at the ratio ladder's P = n⁴, masked keys in and out, with the
    derived finite-P formula (``phase_one_boundary``) and the offset q = (Δ_b − formula)·ln P
    with its half-width (the bisection's, times ln P)."""
    ns = (3, 4, 6, 8, 12, 16, 25, 40) if quick else RATIO_NS
    mu = _moments()
    rows = []
    for mk in (True, False):
        for n in ns:
            P = n ** 4
            b = boundary_rung(P, mask_keys=mk)
            b = b[b.kind == "boundary"].iloc[0]
            f = phase_one_boundary(P, n, mu, gamma=GAMMA, mask_keys=mk)["delta_b"]
            rows.append({"masked_keys": mk, "P": P, "C": n, "delta_b": float(b.delta),
                         "halfwidth": float(b.delta_b_halfwidth), "formula": f,
                         "q": (float(b.delta) - f) * math.log(P),
                         "q_halfwidth": float(b.delta_b_halfwidth) * math.log(P)})
    return pd.DataFrame(rows)


def boundary_verdict(b: pd.DataFrame, values, label: str) -> Verdict:
    """The offset q of one masked-keys reading: its mean over the rungs, with the interval
    from the lowest q − half-width to the highest q + half-width, in the two-sided band of
    BOUNDARY_Q."""
    if not len(b) or not np.isfinite(b.q).all():
        return Verdict("inconclusive", (f"{label}: a rung without a measured boundary",))
    est = (float(b.q.mean()), float((b.q - b.q_halfwidth).min()),
           float((b.q + b.q_halfwidth).max()))
    return labelled(label, cc.judge_band(PREDICTIONS[1], est, values, COUNTERFACTUALS,
                                         what=f"offset (Δ_b − formula)·ln P over P = "
                                         f"{b.P.min():g}–{b.P.max():g}"))


def judge(tables: dict[str, pd.DataFrame], values=None) -> Verdict:
    """The signs of the own and global rates on every rung, and the limit of the ratio's
    exponent per (family, masked keys) in units of Δ, settled and in its two-sided band, with
    the declared values (or `values`)."""
    v = cc.threshold_values((*THRESHOLDS, *PREDICTIONS), values)
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
        label = f"|r_glob|/r_own vs P ({fam}, keys {keys(mk)})"
        if ladder_decades(g.P) < v["MIN_DECADES"]:
            parts.append(cc.premise_failed(f"{label}: ladder shorter "
                                           f"than {v['MIN_DECADES']:g} decades"))
            continue
        e = local_exponents(g)
        parts.append(labelled(label, cc.judge_settled(
            PREDICTIONS[0], e["x"], e["per_delta"], v, COUNTERFACTUALS,
            what=f"extrapolated exponent / Δ (Δ = {e['delta']:+.3f}), leading-order law removed")))
    bnd = tables.get("boundary")
    if bnd is None:
        parts.append(Verdict("inconclusive", ("Phase I boundary: not measured",)))
    else:
        for mk, b in bnd.groupby("masked_keys", sort=False):
            parts.append(boundary_verdict(b, v, f"Phase I boundary Δ_b (keys {keys(mk)})"))
    return combine(parts)


def run(quick: bool) -> cc.ClaimResult:
    t = rate_ladder(quick)
    bnd = boundary_ladder(quick)
    v = judge({"table": t, "boundary": bnd})
    head, rows = {}, []
    for (fam, mk), g in t.groupby(["family", "masked_keys"], sort=False):
        e = local_exponents(g.sort_values("P"))
        head[f"ratio exponent / Δ, top ({fam}, keys {keys(mk)})"] = e["measured"][-1]
        for sl, pd_, m, w, x, (a, b) in zip(e["slopes"], e["per_delta"], e["measured"],
                                            e["law"], e["x"], e["sub_rungs"]):
            rows.append({"family": fam, "masked_keys": mk, "from": a, "to": b, "middle": x,
                         "local_exponent": sl, "measured_per_delta": m, "law_per_delta": w,
                         "per_delta": pd_})
    fits = pd.DataFrame(rows)
    reading = [
        "Local exponent of |r_glob|/r_own against P, in units of Δ, per sub-ladder, measured "
        "/ leading-order law / measured with the law's correction removed: " + per_group(
            fits, lambda r: f"{r.measured_per_delta:.3f} / {r.law_per_delta:.3f} / "
            f"{r.per_delta:.4f} ({r['from']:g}–{r['to']:g})", ["family", "masked_keys"],
            lambda k: f"{k[0]} keys {keys(k[1])}", series=True) + ".",
        "Phase I boundary Δ_b measured (± bisection half-width) / derived finite-P formula, "
        "per P: " + per_group(bnd, lambda r: f"{r.delta_b:.4f}±{r.halfwidth:.1g} / "
                              f"{r.formula:.4f} (P={r.P:g})", "masked_keys",
                              lambda mk: f"keys {keys(mk)}") + ".",
        "Rate ratio at the largest P: " + ", ".join(
            f"{fam} keys {keys(mk)}: {g.sort_values('P').ratio.iloc[-1]:.4g} "
            f"(P={g.P.max():g})" for (fam, mk), g in t.groupby(["family", "masked_keys"],
                                                               sort=False)) + ".",
    ]
    brief = (f"{v.verdict}: |r_glob|/r_own ∝ P^(" + ", ".join(
        f"{x:.2f}" for x in head.values()) + ")·Δ raw, 1·Δ with the law removed, P = 81–10⁸; "
        "Δ_b vs its finite-P formula")

    def figure(fig):
        ax = fig.add_subplot(1, 1, 1)
        for (fam, mk), g in t.groupby(["family", "masked_keys"], sort=False):
            g = g.sort_values("P")
            ax.plot(g.P, g.ratio, "o-" if mk else "s--", ms=3, label=f"{fam}, keys {keys(mk)}")
            ax.plot(g.P, g.ratio.iloc[-1] * (g.P / g.P.iloc[-1]) ** g.delta.mean(), ":",
                    color="gray")
        ax.plot([], [], ":", color="gray", label="∝ P^Δ")
        style_axes(ax, "P", "|r_glob| / r_own at Q⁰ = 0", log="xy", legend=7)

    return cc.ClaimResult("lemma5.1", t, v, head, reading, brief=brief,
                          extra={"fits": fits, "boundary": bnd},
                          figure=figure, settings={"Q⁰": 0, "γ": GAMMA})


CLAIM = cc.Claim(
    **cc.declared(globals(), PAPER_NAME),
    id="lemma5.1",
    figsize=(6.0, 4.0),
    title="Lemma 5.1's rates at initialisation, our law (the global pull grows as P^Δ)",
    label="RECONSTRUCTED",
    kind="derivation check",
    source="docs/papers/huang2024.md §4.5 (the lemma's name FOUND, its text not read; the law "
    "that Δ is the exponent of the rate ratio is DERIVED in the reconstructed model)",
    statement="In the reconstructed MAE model at Q⁰ = 0 a masked local-area patch's own FP "
    "correlation rises and its global one falls, at a ratio |r_glob|/r_own that grows as P^Δ.",
    measured="The first GD step from Q⁰ = 0 (reduced engine, exact there) for a Δ > 0 and a Δ < 0 "
    "family at fixed Δ on P = n⁴ from 81 to 10⁸, masked keys in and out; the Phase I boundary "
    "by bisection on the size lattice at the same P.",
    predicted="Own rate > 0 and global rate < 0 on every rung; the ratio's exponent, in units of "
    "Δ, with the leading-order law's correction removed and extrapolated with a + b/√P, "
    "1 ± RATIO_TOL (against 3/4 and 5/4); the Phase I boundary at each P within "
    "BOUNDARY_TOL/ln P of its finite-P formula (against a factor 2 in its constant).",
    premises=("a ladder of at least MIN_DECADES decades",),
    interval=cc.IntervalMethod("extrapolation"),
    reconstructed="Δ's formula 2κ_s − κ_c − 1 was inferred from its admissible range and this "
    "very ratio (notes §1.3); the lemma's own text was not read.",
    untested="Later steps, several clusters; the sign of another local area's rate "
    "(lemma5.1-rates).",
    settings={"Q⁰": 0, "γ": GAMMA},
)
