"""The reduced population dynamics against the exact engine (a derivation check: our own
reduction of the reconstructed model against the same model's exact population GD; evidence
for the engine that thm4.1, thm4.1-eps and thm4.2 run on, not for the paper).

The ``population-reduced`` engine (`theorylab.huang2024.engines._reduced`) is exact at
Q⁰ = 0 and while the other areas' correlation φ_rest is 0; otherwise it neglects the rest's
fluctuation, of relative size √v (recorded as ``neglect``). Checked here:

1. on every rung where both run ([`engine_ladder`][theorylab.huang2024.setups.engine_ladder]:
   the Δ > 0 family on P = 16, 81, 256, 625 with masked keys in, 16, 81, 256 with them out;
   the Δ < 0 family, whose exact step costs far more, on P = 16, 81):
   the phase readings ([`phase_readings`][theorylab.huang2024.phases.phase_readings]) of
   ``population-laplace`` (exact sums at any P) and of the reduced engine with exact count
   sums: t_I, t_II (and T* with masked keys in) within STEP_TOL steps, Φ_glob(t_I) within
   END_TOL·|Φ_glob|·√v; the largest gaps along the whole run are reported;
2. the ladders' Gauss rule for the global area's count (24 nodes) against exact count sums on
   whole runs at P = 1296, 4096, 16384: the same readings and Φ within QUAD_TOL.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from theorylab.core import claims as cc
from theorylab.core.claims.verdict import Verdict, combine

from ..config import PAPER_NAME
from ..phases import read_phases
from ..setups import (
    COUNT_NODES,
    FAMILIES,
    engine_ladder,
    family_sizes,
    mae_config,
    mae_run,
)
from ._common import keys

__all__ = ["CLAIM", "THRESHOLDS", "PREDICTIONS", "COUNTERFACTUALS", "judge", "engine_rows",
           "quadrature_rows"]

THRESHOLDS = (
    cc.Threshold("END_TOL", 1.0, "derived bound",
                 "the neglected order with unit coefficient: |Φ_glob| times √v, the relative "
                 "standard deviation of the rest areas' share of the softmax denominator that the "
                 "reduction replaces by its mean",
                 role="|Φ_glob(t_I) − reduced| ≤ END_TOL·|Φ_glob|·√v on every rung"),
    cc.Threshold("STEP_TOL", 1.0, "project choice",
                 "one step: the resolution of a first-crossing step when the crossing lies within "
                 "the neglected order of its threshold",
                 role="|t_I|, |t_II|, |T*| engine − reduced at most STEP_TOL"),
    cc.Threshold("SCALE_TOL", 0.01, "derived bound",
                 "the relative order the reduction neglects on the overlap: the rest areas' "
                 "relative fluctuation √v reaches 0.011 there",
                 role="half-width (a factor 1 + SCALE_TOL) of the band of exact/reduced "
                 "Φ_glob(t_I) over the Phase I runs"),
    cc.Threshold("QUAD_TOL", 1e-9, "project choice",
                 "far below every tolerance of the claims (the smallest, END_TOL·|Φ|·√v, is "
                 "≥ 1e−5 on the ladder) and far above float64 rounding over a run",
                 role="largest |Φ| difference along a run, 24-node Gauss rule against exact sums"),
)

PREDICTIONS = (
    cc.Prediction("REDUCED_SCALE", 1.0, "factor",
                  "the exact engine's Φ_glob(t_I) over the reduced dynamics' (its range over the "
                  "Phase I runs of the overlap)", "derived",
                  check="proofs_checks/huang2024/check_reduced_dynamics.py",
                  tolerance="SCALE_TOL"),
)

COUNTERFACTUALS = (
    cc.Counterfactual("3 % below", "the reduction misses a term that lowers Φ_glob(t_I) by 3 % "
                      "(three times the neglected order)", {"REDUCED_SCALE": 1 / 1.03}),
    cc.Counterfactual("3 % above", "the reduction misses a term that raises Φ_glob(t_I) by 3 %",
                      {"REDUCED_SCALE": 1.03}),
)

READ = ("t_I", "t_II", "T_star", "phi_glob_end_I", "phase_I")


def _compare(a: pd.DataFrame, b: pd.DataFrame, cfg, columns) -> tuple[dict, dict, dict]:
    """The phase readings of two runs of one setting and the largest difference of each of
    `columns` along their common steps."""
    m = min(len(a), len(b))
    return read_phases(a, cfg), read_phases(b, cfg), {
        c: float(np.max(np.abs(a[c].to_numpy()[:m] - b[c].to_numpy()[:m]))) for c in columns}


def engine_rows(quick: bool) -> pd.DataFrame:
    """One row per (family, P, masked keys) of the overlap: the exact engine's readings, the
    reduced engine's (exact count sums, the same number of steps), the largest gaps of Φ and
    of the own-area attention along the run and the largest √v."""
    rows = []
    for mk in (True, False):
        for fam in FAMILIES:
            for P in engine_ladder(quick, mk, fam):
                C1, C = family_sizes(fam, P)
                red = mae_run(P, C1, C, mask_keys=mk, count_nodes=0)
                n = int(red.step.iloc[-1])
                eng = mae_run(P, C1, C, engine="population-laplace", mask_keys=mk, steps=n)
                cfg = mae_config(P, C1, C, mask_keys=mk)
                a, b, gap = _compare(eng, red, cfg, ("phi_glob_lq", "phi_own_lq", "attn_own_lq"))
                rows.append({"family": fam, "P": P, "C1": C1, "C": C, "delta": cfg.delta,
                             "masked_keys": mk, "steps": n,
                             **{f"{k}_engine": a[k] for k in READ},
                             **{f"{k}_reduced": b[k] for k in READ},
                             "gap_phi_glob": gap["phi_glob_lq"], "gap_phi_own": gap["phi_own_lq"],
                             "gap_attn_own": gap["attn_own_lq"],
                             "max_abs_phi": float(np.max(np.abs(red[["phi_glob_lq",
                                                                     "phi_own_lq"]].to_numpy()))),
                             "neglect": float(np.nanmax(red.neglect))})
    return pd.DataFrame(rows)


def quadrature_rows(quick: bool) -> pd.DataFrame:
    """Whole runs of the reduced engine with the Gauss rule and with exact count sums (the
    ladders' Δ > 0 family): readings of each and the largest Φ difference along the run."""
    rows = []
    for P in ((256,) if quick else (1296, 4096, 16384)):
        C1, C = family_sizes("pos", P)
        a, b, gap = _compare(mae_run(P, C1, C), mae_run(P, C1, C, count_nodes=0),
                             mae_config(P, C1, C), ("phi_glob_lq", "phi_own_lq", "phi_own_gq"))
        rows.append({"family": "pos", "P": P, "C1": C1, "C": C, "count_nodes": COUNT_NODES,
                     **{f"{k}_gauss": a[k] for k in READ}, **{f"{k}_exact": b[k] for k in READ},
                     "max_phi_diff": max(gap.values())})
    return pd.DataFrame(rows)


def _name(r) -> str:
    return f"{r.family} P={r.P:g} keys {keys(r.masked_keys)}"


def judge(tables: dict[str, pd.DataFrame], values=None) -> Verdict:
    """Engine against reduction on the overlap (phases, steps, end of Phase I) and the Gauss
    rule against exact sums, with the declared thresholds (or `values`)."""
    v = cc.threshold_values((*THRESHOLDS, *PREDICTIONS), values)
    t, q = tables["table"], tables["quadrature"]
    if len(t) == 0 or len(q) == 0:
        return Verdict("inconclusive", ("no overlap run",))
    parts = []
    bad = [f"{_name(r)}: Phase I {r.phase_I_engine} (engine) vs {r.phase_I_reduced} (reduced)"
           for r in t.itertuples() if bool(r.phase_I_engine) != bool(r.phase_I_reduced)]
    for k in ("t_I", "t_II", "T_star"):
        a, b = t[f"{k}_engine"], t[f"{k}_reduced"]
        both = np.isfinite(a) & np.isfinite(b)
        bad += [f"{_name(r)}: {k} {x:g} vs {y:g}" for r, x, y, ok in zip(t.itertuples(), a, b, both)
                if ok and abs(x - y) > v["STEP_TOL"]]
        bad += [f"{r.family} P={r.P:g}: {k} reached by one run only"
                for r, a1, b1 in zip(t.itertuples(), np.isfinite(a), np.isfinite(b))
                if a1 != b1 and not (k == "T_star" and not r.masked_keys)]
    ph = t[t.phase_I_engine.astype(bool) & np.isfinite(t.phi_glob_end_I_engine)]
    tol = np.maximum(v["END_TOL"] * ph.phi_glob_end_I_reduced.abs() * ph.neglect, 1e-9)
    gap = (ph.phi_glob_end_I_engine - ph.phi_glob_end_I_reduced).abs()
    ratio = (ph.phi_glob_end_I_engine / ph.phi_glob_end_I_reduced).to_numpy(float)
    if len(ratio):
        w = cc.judge_band(PREDICTIONS[0], (float(np.median(ratio)), float(ratio.min()),
                                           float(ratio.max())), v, COUNTERFACTUALS,
                          what=f"exact/reduced Φ_glob(t_I) over {len(ratio)} Phase I runs")
        parts.append(Verdict(w.verdict, tuple(f"scale: {x}" for x in w.reasons)))
    bad += [f"{_name(r)}: Φ_glob(t_I) {r.phi_glob_end_I_engine:.6f} vs "
            f"{r.phi_glob_end_I_reduced:.6f} (± {tl:.2g})"
            for r, g_, tl in zip(ph.itertuples(), gap, tol) if g_ > tl]
    if bad:
        parts.append(Verdict("disagrees", ("engine vs reduction: " + "; ".join(bad)
                                           + ": the reduction misses a term",)))
    else:
        parts.append(Verdict("agrees", (
            f"engine vs reduction on {len(t)} runs (P = {sorted(set(t.P))}, masked keys in and "
            f"out): Phase I alike, t_I, t_II, T* within {v['STEP_TOL']:g} step, Φ_glob(t_I) "
            f"within the neglected order (largest gap {float(gap.max()) if len(gap) else 0:.2g}, "
            f"largest tolerance {float(tol.max()) if len(tol) else 0:.2g})",)))
    qbad = [f"P={r.P:g}: {k} {a} vs {b}" for r in q.itertuples() for k in READ
            for a, b in [(getattr(r, k + "_gauss"), getattr(r, k + "_exact"))]
            if not (a == b or abs(a - b) <= v["QUAD_TOL"])]
    qbad += [f"P={r.P:g}: Φ differs by {r.max_phi_diff:.2g}" for r in q.itertuples()
             if not r.max_phi_diff <= v["QUAD_TOL"]]
    parts.append(Verdict("disagrees" if qbad else "agrees", (
        ("Gauss rule vs exact sums: " + "; ".join(qbad)) if qbad else
        f"Gauss rule ({int(q.count_nodes.iloc[0])} nodes) vs exact count sums on whole runs at "
        f"P = {list(q.P)}: same readings, Φ within {float(q.max_phi_diff.max()):.2g}",)))
    return combine(parts)


def run(quick: bool) -> cc.ClaimResult:
    t, q = engine_rows(quick), quadrature_rows(quick)
    v = judge({"table": t, "quadrature": q})
    reading = [
        "Largest gaps along the runs (engine − reduced): " + "; ".join(
            f"{_name(r)}: Φ_glob {r.gap_phi_glob:.1e}, Φ_own {r.gap_phi_own:.1e}, attention "
            f"{r.gap_attn_own:.1e} (√v ≤ {r.neglect:.1e}, |Φ| ≤ {r.max_abs_phi:.2f})"
            for r in t.itertuples()) + ".",
    ]
    head = {"largest Φ_glob gap along a run": float(t.gap_phi_glob.max()),
            "largest √v": float(t.neglect.max()),
            "Gauss vs exact, largest Φ difference": float(q.max_phi_diff.max())}
    brief = (f"{v.verdict}: reduced vs exact engine on P = {min(t.P):g}–{max(t.P):g}, keys in/out:"
             f" largest Φ gap {t.gap_phi_glob.max():.1e}; Gauss rule ≤ "
             f"{q.max_phi_diff.max():.0e}; no seeds")
    return cc.ClaimResult("phases-reduction", t, v, head, reading, brief=brief,
                          extra={"quadrature": q})


CLAIM = cc.Claim(
    **cc.declared(globals(), PAPER_NAME),
    id="phases-reduction",
    title="The reduced population dynamics against the exact engine (Theorems 4.1–4.2's runs)",
    label="RECONSTRUCTED",
    kind="derivation check",
    source="docs/papers/huang2024.md §4.5 (the reduction is DERIVED in the reconstructed model)",
    statement="The population-reduced engine, exact at Q⁰ = 0 and up to the rest areas' "
    "fluctuation √v afterwards, gives the exact engine's phase readings; its Gauss rule for "
    "large counts gives those of exact count sums.",
    measured="population-laplace and population-reduced (exact count sums) on P = 16, 81, 256, "
    "625 of the Δ > 0 family (masked keys in; to 256 with them out) and P = 16, 81 of the Δ < 0 "
    "family (its exact step costs 2.3 s at P = 256, 18 s at 625); the Gauss rule "
    "against exact sums on whole runs at P = 1296, 4096, 16384.",
    predicted="t_I, t_II, T* within STEP_TOL, Φ_glob(t_I) within END_TOL·|Φ|·√v on each rung and "
    "exact/reduced within ×/÷(1 + SCALE_TOL) (two-sided, against ±3 %); the Gauss rule's Φ "
    "within QUAD_TOL of the exact sums.",
    interval=cc.IntervalMethod("exact"),
    reconstructed="the model is the notes' reconstruction; this checks our reduction of it, not "
    "the paper.",
    untested="Several clusters, fixed-size masks and the 1/|ℳ| normalisation (the reduced "
    "engine refuses them).",
)
