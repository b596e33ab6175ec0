"""CL's plateau against the reduced CL model (a derivation check: our leading-order reduction
of the reconstructed CL model, ``predictions.cl_plateau``, against the Monte Carlo engine on
the same model; evidence for the explanation of thm4.4's per-τ verdicts, not for the paper).

Per temperature (the variant shared with thm4.4, the same runs), per rung: where the reduced
model has a plateau (τ below its τ_c, derived per rung), the measured global attention settles
(drift below DRIFT_TOL) below 1 − ONE_TOL — the plateau exists, as derived — and its value
follows the derived one within a factor 1 + PRED_TOL, two-sided (on rungs inside the
derivation's premise: local correlations frozen, |φ_l| ≤ PHI_L_TOL); where it has none (τ
above τ_c), the measured attention ends above 1 − ONE_TOL (a rise still under way at the horizon is
``inconclusive``). The runs at τ = 0.2 and 0.3 sit on the two sides of τ_c ≈ 0.25, so the
readings check the derived τ_c against the Monte Carlo engine.
"""

from __future__ import annotations

import pandas as pd

from theorylab.core.claims import (
    Claim,
    ClaimResult,
    Counterfactual,
    IntervalMethod,
    Prediction,
    Threshold,
    judge_band,
    threshold_values,
)
from theorylab.core.claims.verdict import Verdict, combine

from ..config import PAPER_NAME
from ..setups import cl_measure as measure
from ..setups import cl_rung_rows as rung_rows
from ._cl_runs import VARIANTS
from .thm44 import COLUMNS

__all__ = ["CLAIM", "THRESHOLDS", "PREDICTIONS", "COUNTERFACTUALS", "judge"]

THRESHOLDS = (
    Threshold("PRED_TOL", 0.1, "derived bound",
              "size of the orders the derived plateau neglects, measured on the engine: the "
              "root of the engine's population gradient along the global correlation lies "
              "within 0.25 of the derived φ* (tests/huang2024/test_cl_predictions.py), and "
              "the clean global attention moves by ∂a/∂φ ≈ z̄ a(1 − a) ≈ 0.23 per unit of φ "
              "there: 0.25 × 0.23 ≈ 0.06, a tenth of a plateau near 0.6",
              role="the plateau follows the derived one when the interval of measured/derived "
              "lies within ×/÷(1 + PRED_TOL) of PLATEAU_FACTOR"),
    Threshold("PHI_L_TOL", 0.25, "project choice",
              "premise of the derivation: the local FP correlations stay frozen (φ_l = 0 in the "
              "reduction); 0.25 moves a local area's logit by at most e^{0.375} ≈ 1.45 in "
              "weight, about PRED_TOL in the global attention",
              role="a rung whose mean |φ_l| exceeds it is not compared with the plateau"),
    Threshold("DRIFT_TOL", 0.1, "project choice",
              "a plateau: no upward drift above 0.1 over the last half of the run",
              role="premise of a plateau comparison"),
    Threshold("ONE_TOL", 0.1, "project choice",
              "where the reduced model has no plateau the attention tends to 1: read as an end "
              "value above 0.9, a tenth below 1 like PRED_TOL",
              role="where the derivation has no plateau, the interval must lie above "
              "1 − ONE_TOL"),
)

PREDICTIONS = (
    Prediction("PLATEAU_FACTOR", 1.0, "factor",
               "measured plateau over the derived one, a*_glob (cl_plateau, leading order in P "
               "and 1/n)", "derived", check="proofs_checks/huang2024/check_cl_plateau.py",
               tolerance="PRED_TOL"),
)

COUNTERFACTUALS = (
    Counterfactual("plateau ×0.8", "the plateau lies a fifth below the derived one",
                   {"PLATEAU_FACTOR": 0.8}),
    Counterfactual("plateau ×1.25", "the plateau lies a quarter above the derived one (the "
                   "size of the bias of replacing the sum over the negatives by n × its mean, "
                   "near τ_c)", {"PLATEAU_FACTOR": 1.25}),
)


def judge(tables: dict[str, pd.DataFrame], values=None) -> Verdict:
    """Per rung: measured against the derived plateau (or against 1 where there is none),
    with the declared values (or `values`)."""
    v = threshold_values((*THRESHOLDS, *PREDICTIONS), values)
    t = tables["table"]
    rows = rung_rows(t)
    if len(rows) == 0 or (rows.seeds < 3).any():
        return Verdict("inconclusive", ("premise failed: need ≥ 3 seeds per rung",))
    tau = float(t[t.objective == "cl"].tau.iloc[0])
    parts = []
    one = 1 - v["ONE_TOL"]
    for r in rows.itertuples():
        name = f"P={r.P} (τ={tau:g}, τ_c={r.tau_c:.3f})"
        meas = f"{r.glob:.3f} [{r.glob_lo:.3f}, {r.glob_hi:.3f}]"
        settled = r.drift_hi < v["DRIFT_TOL"]
        if r.pred_exists:
            # existence: a settled plateau below 1 − ONE_TOL, as derived
            if r.glob_lo > one:
                parts.append(Verdict("disagrees", (
                    f"{name}: derived plateau {r.pred:.3f}, but the measured attention reaches "
                    f"{meas}, above {one:g}",)))
                continue
            if not (settled and r.glob_hi < one):
                parts.append(Verdict("inconclusive", (
                    f"{name}: derived plateau {r.pred:.3f}; measured {meas}, drift "
                    f"[{r.drift_lo:+.3f}, {r.drift_hi:+.3f}]: not a settled plateau below "
                    f"{one:g} yet",)))
                continue
            exist = f"{name}: a settled plateau below {one:g}, as derived"
            if r.phi_l > v["PHI_L_TOL"]:
                parts.append(Verdict("agrees", (
                    f"{exist}; its value {meas} not compared with {r.pred:.3f} (|φ_l| "
                    f"{r.phi_l:.2f} > {v['PHI_L_TOL']:g}: outside the derivation's premise)",)))
                continue
            w = judge_band(PREDICTIONS[0], (r.glob / r.pred, r.glob_lo / r.pred,
                                            r.glob_hi / r.pred), v, COUNTERFACTUALS,
                           what=f"measured/derived ({meas} / {r.pred:.3f})")
            parts.append(Verdict(w.verdict, tuple(f"{exist}; {x}" for x in w.reasons)))
        elif r.glob_lo > one:
            parts.append(Verdict("agrees", (
                f"{name}: no derived plateau; measured {meas} above {one:g}",)))
        elif r.drift_lo > 0:
            parts.append(Verdict("inconclusive", (
                f"{name}: no derived plateau; measured {meas}, still rising (drift "
                f"[{r.drift_lo:+.3f}, {r.drift_hi:+.3f}]) at the horizon",)))
        else:
            parts.append(Verdict("disagrees", (
                f"{name}: no derived plateau, but the measured attention settles at {meas} "
                f"below {one:g}",)))
    return combine(parts)


def run(quick: bool, readings: dict) -> ClaimResult:
    tau = float(readings["temperature"])
    table, _ = measure(quick, tau)
    table = table.reindex(columns=COLUMNS)
    v = judge({"table": table})
    rows = rung_rows(table)
    reading = [
        "Derived (reduced CL model, leading order in P and 1/n) against measured per P: "
        + "; ".join(f"P={r.P}: τ_c {r.tau_c:.3f}, derived "
                    + (f"plateau {r.pred:.3f}" if r.pred_exists else "no plateau")
                    + f", measured {r.glob:.3f} [{r.glob_lo:.3f}, {r.glob_hi:.3f}], drift "
                    f"{r.drift:+.3f}, |φ_l| {r.phi_l:.2f}" for r in rows.itertuples()) + ".",
    ]
    head = {f"measured − derived P={r.P}": float(r.dev) for r in rows.itertuples()}
    brief = (f"{v.verdict} at τ={tau:g}: derived " + ", ".join(
        (f"{r.pred:.2f}" if r.pred_exists else "none") for r in rows.itertuples())
             + " vs measured " + ", ".join(f"{r.glob:.2f}" for r in rows.itertuples())
             + f" (τ_c≈{rows.tau_c.mean():.3f}); {int(rows.seeds.min())} seeds each")
    return ClaimResult("thm4.4-plateau", table, v, head, reading, brief=brief,
                       settings={"Q⁰": 0, "negatives": 15, "steps": 200})


CLAIM = Claim(
    id="thm4.4-plateau",
    paper=PAPER_NAME,
    title="CL's plateau against the reduced CL model, per temperature (τ_c)",
    label="RECONSTRUCTED",
    kind="derivation check",
    source="docs/papers/huang2024.md §3.5 (the plateau and τ_c are DERIVED in the "
    "reconstructed CL model)",
    statement="CL's global attention settles at the derived plateau a*_glob where the reduced "
    "CL model has one (τ < τ_c ≈ 0.25) and rises towards 1 where it has none (τ > τ_c).",
    measured="The thm4.4 runs of one temperature: end value, drift and |φ_l| per rung against "
    "cl_plateau and cl_critical_temperature.",
    predicted="Measured/derived within ×/÷(1 + PRED_TOL) of 1 below τ_c (two-sided, against "
    "×0.8 and ×1.25); above 1 − ONE_TOL above τ_c.",
    thresholds=THRESHOLDS,
    predictions=PREDICTIONS,
    counterfactuals=COUNTERFACTUALS,
    interval=IntervalMethod("t", seeds=5),
    variants=VARIANTS,
    premises=("frozen local correlations (|φ_l| ≤ PHI_L_TOL) and a settled plateau for a "
              "plateau comparison",),
    seeds="5 Monte Carlo seeds per rung (3 quick); 95 % t-intervals over the seeds",
    reconstructed="the CL model is the notes' reconstruction; the plateau and τ_c are our "
    "leading-order derivation in it.",
    untested="n → ∞ and P → ∞ separately; the local correlations' long-time drift.",
    settings={"Q⁰": 0, "negatives": 15, "steps": 200},
    run=run,
    judge=judge,
)
