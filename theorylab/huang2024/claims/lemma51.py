"""Lemma 5.1 (RECONSTRUCTED, docs/papers/huang2024.md §4.5): the signs of the FP-correlation
gradients at initialisation, and the initial rate ratio of a local-area query.

The exact population gradient at Q⁰ = 0 (uniform attention) is computed with
``population-laplace`` (and, at P = 8, with ``population-brute`` and ``population-exact`` as a
cross-check) for configurations with Δ > 0 and Δ < 0, masked keys kept in or left out of the
softmax. The rates are r = −∂L/∂Φ (the per-step change of Φ divided by η), averaged over the
query patches of a kind (at Q⁰ = 0 with one cluster they are equal within a kind):

- local-area queries p: ``own_lq`` (own area), ``glob_lq`` (global area), ``other_lq`` (the
  other local areas);
- global-area queries: ``own_gq`` (the global area), ``other_gq`` (local areas).

The notes' reconstruction of Lemma 5.1: the gradient pulls the target (own-area) correlation
up and pushes the others down: r > 0 for ``own_*``, r < 0 for ``glob_lq``, ``other_lq`` and
``other_gq``. The initial rate ratio |r_glob_lq| / r_own_lq ≈ a_1²/a_j with a_m the uniform-
attention mass of the unmasked keys of area m: a_m = (1 − γ) C_m/P with masked keys kept
(the notes' §9 formula (1 − γ)(C1/P)²/(C/P)) and a_m = C_m/P when they are left out (DERIVED:
the same formula with attention over the unmasked keys only).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from theorylab.core.claims import Claim, ClaimResult, Threshold, threshold_values
from theorylab.core.claims.verdict import Verdict, combine

from ..config import PAPER_NAME
from ..engines import make_engine
from ._common import GAMMA, mae_config

__all__ = ["CLAIM", "RATIO_ORDER", "RATIO_MIN_P", "ENGINE_TOL", "PREDICTED_SIGNS", "THRESHOLDS",
           "judge",
           "verdict_signs", "verdict_ratio", "verdict_engines", "gradient_rates"]

#: Predicted sign of each rate (notes §4.5).
PREDICTED_SIGNS = {"own_lq": 1, "glob_lq": -1, "other_lq": -1, "own_gq": 1, "other_gq": -1}
#: The measured ratio must lie within the factor the leading order drops: a_1²/a_j leaves out
#: the factor (1 − a_1) of the exact gradient of the global correlation, so on each row the
#: ratio may differ from a_1²/a_j by up to (1 − a_1)^{−RATIO_ORDER} either way.
RATIO_ORDER = 1.0
#: The ratio is a leading-order statement in the area masses (a_j ≪ 1): it is checked on the
#: configurations with P at least this; the P = 8 one (a_j = 1/8 or 1/4) serves the engine
#: cross-check and the signs only.
RATIO_MIN_P = 64
#: The engines sum the same expectation in different ways (enumeration, exchangeable counts,
#: a Laplace integral with a trapezoid rule of error ~1e-13): relative agreement to 1e-8 is
#: far above their rounding and far below any sign or ratio question.
ENGINE_TOL = 1e-8

THRESHOLDS = (
    Threshold("RATIO_ORDER", RATIO_ORDER, "derived bound",
              "the leading order a_1²/a_j drops the factor (1 − a_1) of the exact gradient of "
              "the global correlation: a gap larger than that factor is not explained by it",
              role="|ln(ratio / (a_1²/a_j))| at most RATIO_ORDER·|ln(1 − a_1)| on each row"),
    Threshold("ENGINE_TOL", ENGINE_TOL, "derived bound",
              "three engines summing one expectation (enumeration, counts, a Laplace integral "
              "with trapezoid error ~1e−13) agree far above rounding",
              role="largest relative gradient difference (premise of the measurement)"),
)

#: (name, P, C1, C): a tiny one for the engine cross-check, Δ > 0 and Δ < 0 at P = 64 and at
#: P = 256 (the notes' §9 settings).
CONFIGS = [("tiny", 8, 4, 2), ("pos64", 64, 52, 3), ("neg64", 64, 16, 8),
           ("pos256", 256, 192, 4), ("neg256", 256, 32, 16)]
QUICK = ("tiny", "pos64", "neg64")


def gradient_rates(P: int, C1: int, C: int, mask_keys: bool,
                   engine: str) -> tuple[dict, np.ndarray]:
    """The five rates at Q⁰ = 0 (means over the query patches of a kind) and −∂L/∂Φ."""
    cfg = mae_config(P, C1, C, mask_keys=mask_keys, engine=engine).resolved()
    eng = make_engine(cfg)
    ev = eng.evaluate(eng.initial_params(), 0, need_grad=True, record=False)
    r = -ev.grads["Phi"]  # one cluster: feature index = area label
    lab = eng.structure.labels[0]
    N = int(lab.max()) + 1
    loc = lab > 0
    own = r[np.arange(P), lab]
    other_l = [r[p, m] for p in np.flatnonzero(loc) for m in range(1, N) if m != lab[p]]
    return {
        "own_lq": float(own[loc].mean()), "glob_lq": float(r[loc, 0].mean()),
        "other_lq": float(np.mean(other_l)) if other_l else math.nan,
        "own_gq": float(own[~loc].mean()), "other_gq": float(r[~loc, 1:].mean()),
    }, r


def verdict_signs(table: pd.DataFrame) -> Verdict:
    """Every measured rate has its predicted sign: ``agrees``; some does not: ``disagrees``
    (naming them); NaN rates (a coordinate that does not exist, e.g. no other local area) are
    skipped, and a table without a finite rate is ``inconclusive``. A rate that is exactly 0
    has no sign and counts as a disagreement."""
    t = table[np.isfinite(table.rate)]
    if len(t) == 0:
        return Verdict("inconclusive", ("signs: no finite rate",))
    bad = t[np.sign(t.rate) != t.predicted_sign]
    if len(bad):
        return Verdict("disagrees", tuple(
            f"signs: {r.config} (Δ={r.delta:+.3f}, masked keys {'in' if r.mask_keys else 'out'}"
            f"): {r.coordinate} = {r.rate:+.3g}, predicted {'+' if r.predicted_sign > 0 else '−'}"
            for r in bad.itertuples()))
    return Verdict("agrees", (f"signs: all {len(t)} rates have the predicted sign",))


def verdict_ratio(ratios: pd.DataFrame, order: float = RATIO_ORDER) -> Verdict:
    """|r_glob_lq|/r_own_lq within a factor (1 − a_1)^{−order} of a_1²/a_j (either way) on
    every row with P ≥ `RATIO_MIN_P` (1 − a_1 = ratio_lead_1_minus_a1 / ratio_pred):
    ``agrees``; outside on some: ``partial``; no such row, NaN or non-positive values:
    ``inconclusive``."""
    ratios = ratios[ratios.P >= RATIO_MIN_P]
    ok = np.isfinite(ratios.ratio) & np.isfinite(ratios.ratio_pred) & (ratios.ratio > 0) \
        & (ratios.ratio_pred > 0)
    if len(ratios) == 0 or not ok.all():
        return Verdict("inconclusive", ("ratio: NaN or non-positive rate ratio",))
    gap = np.abs(np.log(ratios.ratio / ratios.ratio_pred))
    allow = order * np.abs(np.log(ratios.ratio_lead_1_minus_a1 / ratios.ratio_pred))
    out = ratios[gap > allow]
    txt = ", ".join(f"{r.config}/{'in' if r.mask_keys else 'out'} {r.ratio:.3g} vs "
                    f"{r.ratio_pred:.3g} (allowed factor {math.exp(a):.2f})"
                    for r, a in zip(ratios.itertuples(), allow))
    if len(out):
        return Verdict("partial", (f"ratio (P ≥ {RATIO_MIN_P}): {txt}; {len(out)} of "
                                   f"{len(ratios)} outside the dropped factor 1/(1 − a_1)",))
    return Verdict("agrees", (f"ratio (P ≥ {RATIO_MIN_P}): {txt}, all within the dropped "
                              "factor 1/(1 − a_1)",))


def verdict_engines(engines: pd.DataFrame, tol: float = ENGINE_TOL) -> Verdict:
    """The engines agree (max relative difference ≤ `ENGINE_TOL`): ``agrees``; otherwise or
    empty/NaN: ``inconclusive`` (the measurement itself is in doubt)."""
    if len(engines) == 0 or not np.isfinite(engines.max_rel_diff).all():
        return Verdict("inconclusive", ("engines: no cross-check",))
    worst = float(engines.max_rel_diff.max())
    if worst > tol:
        return Verdict("inconclusive", (f"premise failed: engines: gradients differ by "
                                        f"{worst:.1e} (relative) > {tol:g}",))
    return Verdict("agrees", (f"engines: brute force, exact and laplace gradients agree to "
                              f"{worst:.1e}",))


def judge(tables: dict[str, pd.DataFrame], values=None) -> Verdict:
    """Signs (main table), ratio (``ratios``) and the engine cross-check (``engines``) with the
    declared thresholds (or `values`)."""
    th = threshold_values(THRESHOLDS, values)
    return combine([verdict_signs(tables["table"]),
                    verdict_ratio(tables["ratios"], th["RATIO_ORDER"]),
                    verdict_engines(tables["engines"], th["ENGINE_TOL"])])


def run(quick: bool) -> ClaimResult:
    rows, ratios, engines = [], [], []
    gamma = GAMMA
    for name, P, C1, C in CONFIGS:
        if quick and name not in QUICK:
            continue
        delta = 2 * math.log(C1) / math.log(P) - math.log(C) / math.log(P) - 1
        for mk in (True, False):
            rates, r_lap = gradient_rates(P, C1, C, mk, "population-laplace")
            if P <= 8:
                for other in ("population-brute", "population-exact"):
                    _, r_o = gradient_rates(P, C1, C, mk, other)
                    rel = float(np.abs(r_o - r_lap).max() / np.abs(r_lap).max())
                    engines.append({"config": name, "P": P, "mask_keys": mk,
                                    "engine": other, "max_rel_diff": rel})
            for coord, val in rates.items():
                rows.append({"config": name, "P": P, "C1": C1, "C": C, "delta": delta,
                             "mask_keys": mk, "coordinate": coord, "rate": val,
                             "predicted_sign": PREDICTED_SIGNS[coord],
                             "sign_ok": bool(np.sign(val) == PREDICTED_SIGNS[coord])
                             if np.isfinite(val) else math.nan})
            scale = (1 - gamma) if mk else 1.0
            a1, aj = scale * C1 / P, scale * C / P
            ratios.append({"config": name, "P": P, "C1": C1, "C": C, "delta": delta,
                           "mask_keys": mk, "ratio": -rates["glob_lq"] / rates["own_lq"],
                           "ratio_pred": a1 ** 2 / aj,
                           "ratio_lead_1_minus_a1": a1 ** 2 * (1 - a1) / aj,
                           "a1_sq_minus_aj_am": a1 ** 2 - 2 * aj})
    table, ratios, engines = pd.DataFrame(rows), pd.DataFrame(ratios), pd.DataFrame(engines)
    v = judge({"table": table, "ratios": ratios, "engines": engines})
    bad = table[(table.sign_ok == False)]  # noqa: E712 (NaN rows are neither)
    flip = ratios[ratios.a1_sq_minus_aj_am > 0]
    reading = [
        "Rates r = −∂L/∂Φ at Q⁰ = 0 (exact, population-laplace); per configuration and masking "
        "of keys: " + "; ".join(
            f"{c}/{'in' if mk else 'out'}: " + ", ".join(
                f"{r.coordinate} {r.rate:+.2e}" for r in g.itertuples())
            for (c, mk), g in table.groupby(["config", "mask_keys"], sort=False)) + ".",
        "Initial rate ratio |r_glob_lq|/r_own_lq against a_1²/a_j: " + ", ".join(
            f"{r.config}/{'in' if r.mask_keys else 'out'} {r.ratio:.3g} vs {r.ratio_pred:.3g}"
            for r in ratios.itertuples()) + ". With the factor (1 − a_1) of the exact gradient "
        "of the global correlation kept (DERIVED): " + ", ".join(
            f"{r.ratio_lead_1_minus_a1:.3g}" for r in ratios.itertuples()) + ".",
    ]
    if len(bad):
        reading.append(
            "Sign departures: " + ", ".join(f"{r.coordinate} at {r.config}/"
                                            f"{'in' if r.mask_keys else 'out'}"
                                            for r in bad.itertuples())
            + ". Leading order at uniform attention (DERIVED): a key of another local area m "
            "gets ∂ℓ/∂logit ∝ z_m² a_m − H with H ≈ Σ a² z² − a_j z_j², so its correlation "
            "rises when a_1² > a_j + a_m, i.e. when the global feature dominates the output (the "
            "Δ > 0 side); a_1² − a_j − a_m is positive for " + (", ".join(
                f"{r.config}/{'in' if r.mask_keys else 'out'}" for r in flip.itertuples())
                or "no configuration") + ".")
    headline = {"sign_departures": int(len(bad)),
                **{f"ratio {r.config}/{'in' if r.mask_keys else 'out'}":
                   f"{r.ratio:.3g} (pred {r.ratio_pred:.3g})" for r in ratios.itertuples()}}
    if len(engines):
        headline["engine max rel diff"] = float(engines.max_rel_diff.max())

    def figure(fig):
        ax = fig.add_subplot(1, 1, 1)
        lab = [f"{r.config}/{'in' if r.mask_keys else 'out'}" for r in ratios.itertuples()]
        x = np.arange(len(ratios))
        ax.bar(x - 0.2, ratios.ratio, 0.4, label="measured")
        ax.bar(x + 0.2, ratios.ratio_pred, 0.4, label="a_1²/a_j")
        ax.set_xticks(x, lab, rotation=45, fontsize=7)
        ax.set_yscale("log")
        ax.set_ylabel("|r_glob| / r_own (local query)")
        ax.legend(fontsize=7)

    return ClaimResult("lemma5.1", table, v, headline, reading,
                       extra={"ratios": ratios, "engines": engines}, figure=figure)


CLAIM = Claim(
    id="lemma5.1",
    paper=PAPER_NAME,
    title="Lemma 5.1 (FP-correlation gradients at initialisation)",
    label="RECONSTRUCTED",
    source="docs/papers/huang2024.md §4.5 (the lemma's name FOUND, its text not read) and §9 "
    "(the initial rate ratio)",
    statement="At Q⁰ = 0 the population gradient raises the FP correlation of a masked patch "
    "with its own area and lowers it with every other area; for a local-area patch the global "
    "correlation falls a_1²/a_j times faster than the own one grows.",
    measured="Exact −∂L/∂Φ at Q⁰ = 0 (population-laplace; brute force and exact engines at "
    "P = 8) for Δ > 0 and Δ < 0 configurations, masked keys in and out of the softmax.",
    predicted=f"Signs: own +, global (for local queries) −, other local areas −; ratio within "
    f"the dropped factor 1/(1 − a_1) of a_1²/a_j (P ≥ {RATIO_MIN_P}); engines agreeing to "
    f"{ENGINE_TOL:g}.",
    thresholds=THRESHOLDS,
    premises=("the three engines agree on the gradient (the measurement itself is sound)",),
    reconstructed="the signs and a_1²/a_j are the notes' reconstruction of the lemma (its text "
    "was not read): a different lemma would change what the sign part tests; the engine "
    "cross-check does not depend on it.",
    untested="Later steps (the lemma is read at initialisation only), several clusters.",
    run=run,
    judge=judge,
)
