"""Theorem 4.1 (RECONSTRUCTED, notes §4.4–4.5): GD on the population risk (P) goes through
three phases and ends with patch association and a small error.

Every run is exact population GD with the exchangeable engine, every step kept
([`exact_path`][]). Phase times are read with absolute thresholds, so they do not depend on
the horizon:

- ``t_I``: first step with α ≥ [`ALPHA_GROWTH`][]·α⁰ (α has left its plateau by an order of
  magnitude), against the derived ``phase_i(cfg).time_to(ALPHA_GROWTH·α⁰)``;
- ``t_II``: first step with γ − ρ ≥ [`GAP_II`][] = 1 logit, against the derived
  t_I + GAP_II / r_II (the plateau's blow-up time plus the phase-II rate of
  ``phase_ii(cfg)``, linear growth from the GLM plateau);
- ``t_PA``: first step from which patch association with the margin ``train.pa_margin`` holds
  (min(a, γ) − ρ ≥ margin in logits) to the end of the run;
- ``t_III`` (reference run only): first step ≥ t_II from which the fair-coin error stays
  within [`ERR_TOL`][] of the fair-coin error of hard patch association.

Three one-factor ladders around the base point (D = 10, C = 2, d = 100, q = ln(100)/10, the
notes' §9 setting): d at fixed q and D (d enters the population dynamics only through the
frozen diagonal ln ln d, since q is held); q at fixed d and D; D at fixed q and d. The
in-regime rule is declared before any run: q ≤ [`Q_REGIME`][] (Assumption 2's q ≪ 1) and
q(D − C) > C (Assumption 2's "more spurious features than informative ones"). An in-regime run
that does not reach γ − ρ ≥ GAP_II within its horizon ([`HORIZON_FACTOR`][] × the derived
t_II) or ends anti-associated counts against the theorem as reconstructed (``disagrees``); a
measured phase time outside its tolerance counts against our derivation.

The boundary in q above which the reconstruction stops associating is located by bisection on
q at the base D and d (a run associates when γ − ρ reaches GAP_II within [`BOUNDARY_STEPS`][]
steps; it stops early at |γ − ρ| ≥ GAP_II) and reported beside the root of the derived
phase-II rate r_II(q), where γ − ρ stops growing at the GLM plateau.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import optimize

from theorylab.core.claims import Claim, ClaimResult, Threshold, threshold_values
from theorylab.core.claims.verdict import Verdict

from ..config import PAPER_NAME
from ..data import bayes_error
from ..phases import (
    ALPHA_GROWTH,
    ERR_TOL,
    GAP_II,
    absolute_phase_times,
    exact_path,
    pa_limit_error,
    phase_three,
    phase_times,
)
from ..predictions import phase_i, phase_ii
from ..setups import REF_Q, line_config, reference_config

__all__ = ["CLAIM", "phase_times", "pa_limit_error", "ERR_TOL", "ALPHA_GROWTH", "GAP_II",
           "TOL_I", "TOL_II", "Q_REGIME", "HORIZON_FACTOR", "BOUNDARY_STEPS", "THRESHOLDS",
           "judge", "verdict_phases", "verdict_runs", "in_regime", "readings",
           "predicted_times", "boundary_reading"]

#: relative tolerance on t_I: the neglected order of `time_to` is O(α⁰) = 0.01 at α⁰ = 0.01.
TOL_I = 0.02
#: factor tolerance on t_II: the derived rate is leading order in η_A/η_v (= 1 here).
TOL_II = 3.0
#: in-regime rule: q at most this (Assumption 2: q ≪ 1).
Q_REGIME = 0.5
#: horizon of a ladder run: this many derived t_II (or FALLBACK_STEPS when r_II ≤ 0).
HORIZON_FACTOR = 2.0
FALLBACK_STEPS = 20_000
#: horizon of a boundary run: it associates when γ − ρ reaches GAP_II within it.
BOUNDARY_STEPS = 30_000

THRESHOLDS = (
    Threshold("Q_REGIME", Q_REGIME, "project choice",
              "Assumption 2 gives q = poly(C)/D and says q ≪ 1; read as q at most one half "
              "(the notes' §9 setting, q = 0.46, is inside)",
              role="in-regime rule (with q(D − C) > C): runs with larger q are reported, not "
                   "judged"),
    Threshold("TOL_I", TOL_I, "derived bound",
              "the neglected order of the derived time to α = 10α⁰ is O(α⁰) = 0.01 at "
              "α⁰ = 0.01 (tests/jelassi2022/test_predictions.py), doubled",
              role="|t_I / derived − 1| at most it on every in-regime run"),
    Threshold("TOL_II", TOL_II, "project choice",
              "the derived t_II is leading order in η_A/η_v (= 1 on these runs, so O(1)) and "
              "in γ − ρ (= 1 at t_II, so O(1)): an order-of-magnitude prediction, a factor 3",
              role="t_II / derived within [1/TOL_II, TOL_II] on every in-regime run"),
    Threshold("ERR_TOL", ERR_TOL, "project choice",
              "half a percentage point of classification error, the resolution at which an "
              "error is called at its target (exact errors round at 1e−16)",
              role="reference run: final fair-coin error within it of the Bayes error"),
    Threshold("ALPHA_GROWTH", ALPHA_GROWTH, "project choice",
              "α has left its plateau: an order of magnitude above α⁰",
              role="defines t_I (α ≥ it × α⁰)", judged=False),
    Threshold("GAP_II", GAP_II, "project choice",
              "attention decided: γ − ρ = 1 logit puts the partner e ≈ 2.7 times above "
              "another set's patch", role="defines t_II (γ − ρ ≥ it)", judged=False),
    Threshold("HORIZON_FACTOR", HORIZON_FACTOR, "project choice",
              "a ladder run gets twice its derived t_II before a miss counts",
              role="horizon of a ladder run", judged=False),
)


def in_regime(q, D, C, q_regime: float = Q_REGIME):
    """The declared in-regime rule: q ≤ `q_regime` and q(D − C) > C (arrays or floats)."""
    q, D, C = np.asarray(q, float), np.asarray(D, float), np.asarray(C, float)
    return (q <= q_regime) & (q * (D - C) > C)


def predicted_times(cfg) -> dict[str, float]:
    """The derived phase times of `cfg`: ``t_I_pred`` (steps until α = ALPHA_GROWTH·α⁰),
    ``t_blowup`` (the plateau length), ``r_II`` (phase-II growth of γ − ρ per step),
    ``t_II_pred`` = t_blowup + GAP_II / r_II (∞ when r_II ≤ 0)."""
    cfg = cfg.resolved()
    p1, p2 = phase_i(cfg), phase_ii(cfg)
    t_ii = p1.t_I + GAP_II / p2.rate if p2.rate > 0 else math.inf
    return {"t_I_pred": float(p1.time_to(ALPHA_GROWTH * cfg.train.alpha0)),
            "t_blowup": p1.t_I, "r_II": p2.rate, "t_II_pred": t_ii,
            "alpha_star": p2.alpha_star}


def readings(cfg, path: pd.DataFrame) -> dict[str, float]:
    """The absolute phase readings of an [`exact_path`][] of `cfg` (see the module)."""
    cfg = cfg.resolved()
    step = path.step.to_numpy()
    gap = (path.gamma - path.rho).to_numpy()
    margin = (np.minimum(cfg.diag, path.gamma) - path.rho).to_numpy() / cfg.temperature
    off = np.flatnonzero(~(margin >= cfg.train.pa_margin))
    last_off = off[-1] if off.size else -1
    back = min(1000, len(gap) - 1)
    return {**absolute_phase_times(cfg, path),
            "t_PA": float(step[last_off + 1]) if last_off + 1 < len(step) else math.nan,
            "steps_run": float(step[-1]), "final_gap": float(gap[-1]),
            "final_drift": float((gap[-1] - gap[-1 - back]) / back * 1000) if back else 0.0,
            "min_pa_gap": float(margin[step >= 1].min()) if len(step) > 1 else math.nan}


def verdict_phases(ref: pd.Series, err_tol: float = ERR_TOL) -> Verdict:
    """The reference run (main table's row): t_I, t_II, t_III, pa_status, min_pa_gap,
    loss_end_I, final_loss, final_error_fair, bayes_error.

    ``inconclusive`` (premise: inside the horizon): a phase time or the error is NaN.
    ``disagrees``: phases out of order, the literal patch-association order violated at some
    t ≥ 1, patch association (margin) not held at the end, the loss not falling after phase I,
    or the final fair-coin error farther than `err_tol` from the Bayes error."""
    need = ["t_I", "t_II", "t_III", "final_error_fair", "bayes_error"]
    nan = [k for k in need if not np.isfinite(ref[k])]
    if nan:
        return Verdict("inconclusive", ("premise failed: inside the horizon: the reference run "
                                        "does not reach " + ", ".join(nan),))
    bad = []
    if not ref.t_I < ref.t_II <= ref.t_III:
        bad.append(f"phases out of order (t_I={ref.t_I:g}, t_II={ref.t_II:g}, "
                   f"t_III={ref.t_III:g})")
    if not ref.min_pa_gap > 0:
        bad.append(f"a row ranks another set's patch at least as high as its own at some t ≥ 1 "
                   f"(min pa_gap {ref.min_pa_gap:.2e})")
    if ref.pa_status != "ok":
        bad.append("patch association (margin) does not hold at the end")
    if not ref.final_loss < ref.loss_end_I:
        bad.append("the loss does not fall after phase I")
    gap = ref.final_error_fair - ref.bayes_error
    if not abs(gap) <= err_tol:
        bad.append(f"final fair-coin error {ref.final_error_fair:.4f} is {gap:+.4f} from the "
                   f"Bayes error {ref.bayes_error:.4f} (tolerance {err_tol:g})")
    if bad:
        return Verdict("disagrees", tuple("reference run (theorem as reconstructed): " + b
                                          for b in bad))
    return Verdict("agrees", (
        f"reference run: I < II ≤ III ({ref.t_I:g} < {ref.t_II:g} ≤ {ref.t_III:g}), patch "
        f"association (margin) from step {ref.t_PA:g} to the end, final fair-coin error "
        f"{ref.final_error_fair:.4f} within {abs(gap):.1e} of the Bayes error",))


def _ratio_range(x) -> str:
    x = np.asarray(x, float)
    return f"[{np.min(x):.3f}, {np.max(x):.3f}]" if x.size else "[]"


def verdict_runs(runs: pd.DataFrame, boundary: pd.DataFrame | None = None,
                 q_regime: float = Q_REGIME, tol_i: float = TOL_I,
                 tol_ii: float = TOL_II) -> Verdict:
    """The ladder runs (columns ladder, q, D, C, t_I, t_I_pred, t_II, t_II_pred, t_PA,
    final_gap, steps_run) and the boundary runs (q, D, C, t_II, final_gap, steps_run), judged
    with the in-regime rule.

    ``inconclusive`` (premise): a ladder has fewer than 2 in-regime runs. ``disagrees``: an
    in-regime run (ladder or boundary) ends anti-associated or does not reach γ − ρ ≥ GAP_II
    and patch association within its horizon (theorem as reconstructed); an in-regime t_I off
    its derived value by more than `tol_i` (relative), or t_II off by more than a factor
    `tol_ii` (our derivation against our engine). ``agrees`` otherwise, with the per-ladder
    ranges of measured / derived."""
    inr = runs[in_regime(runs.q, runs.D, runs.C, q_regime)]
    few = [lad for lad in sorted(set(runs.ladder)) if (inr.ladder == lad).sum() < 2]
    if len(runs) == 0 or few:
        return Verdict("inconclusive", (
            "premise failed: fewer than 2 in-regime runs on the ladder(s) "
            + (", ".join(few) or "d, q, D"),))
    bad, ok = [], []
    b_in = (boundary[in_regime(boundary.q, boundary.D, boundary.C, q_regime)]
            if boundary is not None and len(boundary) else None)
    for r in inr.itertuples():
        where = f"{r.ladder} ladder, d = {r.d:g}, q = {r.q:.3f}, D = {r.D:g}"
        if not (r.final_gap >= 0):
            bad.append(f"{where}: ends anti-associated (γ − ρ = {r.final_gap:.3f}) in regime "
                       "(theorem as reconstructed)")
        elif not (np.isfinite(r.t_II) and np.isfinite(r.t_PA)):
            bad.append(f"{where}: no patch association with γ − ρ ≥ {GAP_II:g} within "
                       f"{r.steps_run:g} steps (theorem as reconstructed)")
        if not abs(r.t_I / r.t_I_pred - 1) <= tol_i:
            bad.append(f"{where}: t_I = {r.t_I:g} vs derived {r.t_I_pred:.1f} (relative "
                       f"{r.t_I / r.t_I_pred - 1:+.3g}, tolerance {tol_i:g}; our derivation)")
        ratio = r.t_II / r.t_II_pred
        if np.isfinite(r.t_II) and not 1 / tol_ii <= ratio <= tol_ii:
            bad.append(f"{where}: t_II = {r.t_II:g} vs derived {r.t_II_pred:.0f} (ratio "
                       f"{ratio:.3f}, outside ×{tol_ii:g}; our derivation)")
    if b_in is not None:
        for r in b_in[~np.isfinite(b_in.t_II)].itertuples():
            bad.append(f"boundary run q = {r.q:.3f} (in regime) does not reach γ − ρ ≥ "
                       f"{GAP_II:g} within {r.steps_run:g} steps (ends at {r.final_gap:.3f}; "
                       "theorem as reconstructed)")
    for lad in sorted(set(inr.ladder)):
        g = inr[inr.ladder == lad]
        ok.append(f"{lad} ladder ({len(g)} in regime): t_I / derived in "
                  f"{_ratio_range(g.t_I / g.t_I_pred)}, t_II / derived in "
                  f"{_ratio_range(g.t_II / g.t_II_pred)}")
    if bad:
        return Verdict("disagrees", tuple(bad))
    return Verdict("agrees", tuple(ok))


def boundary_reading(boundary: pd.DataFrame, q_root: float) -> str:
    """The measured bracket of the association boundary in q (a run associates when it reaches
    γ − ρ ≥ GAP_II, column t_II finite; the others are listed with their final γ − ρ and its
    change over the last 1000 steps, column final_drift) and the derived root of r_II."""
    if boundary is None or not len(boundary):
        return (f"boundary: not measured in this mode; the derived phase-II rate r_II changes "
                f"sign at q = {q_root:.4f}")
    ok = np.isfinite(boundary.t_II.astype(float))
    pos, neg = boundary[ok], boundary[~ok]
    if not len(pos) or not len(neg) or pos.q.max() >= neg.q.min():
        return ("boundary: the boundary runs do not bracket a change of outcome "
                f"(derived root of r_II at q = {q_root:.4f})")
    lo, hi = pos.q.max(), neg.q.min()
    anti = neg[neg.final_gap <= -GAP_II]
    where = ("below" if q_root < lo else "above" if q_root > hi else
             "at the lower end of" if q_root == lo else "inside")
    return (f"finding: at D = {boundary.D.iloc[0]:g}, d = {boundary.d.iloc[0]:g} the exact "
            f"population GD reaches γ − ρ ≥ {GAP_II:g} for q ≤ {lo:.4f} (at step "
            f"{pos.t_II.max():g}) and not within {neg.steps_run.max():g} steps for q ≥ "
            f"{hi:.4f} (γ − ρ at the end, and its change over the last 1000 steps: " + ", ".join(
                f"{r.final_gap:.3f} ({r.final_drift:+.3f}) at q = {r.q:.4f}"
                for r in neg.itertuples()) + "; "
            + (f"≤ −{GAP_II:g}, anti-associated, from q = {anti.q.min():.4f}" if len(anti)
               else "none anti-associated by −GAP_II") + f"); the derived phase-II rate r_II "
            f"changes sign at q = {q_root:.4f}, {where} the bracket")


def judge(tables: dict[str, pd.DataFrame], values=None) -> Verdict:
    """The reference run, the ladder runs and the boundary runs with the declared thresholds
    (or `values`): ``disagrees`` if either part disagrees, ``inconclusive`` if a premise fails,
    ``agrees`` otherwise; the boundary finding is reported with the verdict."""
    th = threshold_values(THRESHOLDS, values)
    parts = [verdict_phases(tables["table"].iloc[0], th["ERR_TOL"]),
             verdict_runs(tables["runs"], tables.get("boundary"), th["Q_REGIME"], th["TOL_I"],
                          th["TOL_II"])]
    verdicts = {p.verdict for p in parts}
    v = ("disagrees" if "disagrees" in verdicts else
         "inconclusive" if "inconclusive" in verdicts else "agrees")
    reasons = tuple(r for p in parts for r in p.reasons)
    q_root = float(tables["table"].iloc[0].get("q_root", math.nan))
    return Verdict(v, reasons + (boundary_reading(tables.get("boundary"), q_root),))


#: the three one-factor ladders around the base point (full, quick): the varied values
D_LADDER = ((8, 12, 16, 20), (8,))
Q_LADDER = ((0.26, 0.3, 0.38, 0.6), (0.3,))
d_LADDER = ((30, 1000, 10**4, 10**5), (10**4,))
#: reference run horizon (full, quick)
REF_STEPS = (20_000, 7_000)


def _ladder_cfg(ladder: str, x) -> object:
    base = reference_config()
    if ladder == "d":
        return base.replace(data={"d": int(x)})
    if ladder == "q":
        return base.replace(data={"q": float(x)})
    return line_config(int(x), 2, 100, REF_Q)


def _ladder_run(ladder: str, x) -> dict:
    cfg = _ladder_cfg(ladder, x).resolved()
    pred = predicted_times(cfg)
    horizon = (int(math.ceil(HORIZON_FACTOR * pred["t_II_pred"]))
               if math.isfinite(pred["t_II_pred"]) else FALLBACK_STEPS)
    path = exact_path(cfg, horizon, stop_gap=GAP_II)
    return {"ladder": ladder, "d": cfg.data.d, "q": cfg.data.q, "D": cfg.data.D, "C": 2,
            "diag": cfg.diag, "horizon": horizon, **pred, **readings(cfg, path)}


def _r_ii_root(D: int = 10, d: int = 100) -> float:
    """The q at which the derived phase-II rate r_II changes sign (NaN without a bracket)."""
    def rate(q):
        cfg = reference_config().replace(data={"q": float(q), "d": d}) if D == 10 else \
            line_config(D, 2, d, q)
        return phase_ii(cfg.resolved()).rate
    lo, hi = REF_Q, 0.95
    if not rate(lo) > 0 > rate(hi):
        return math.nan
    return float(optimize.brentq(rate, lo, hi, xtol=1e-6))


def _boundary_run(q: float) -> dict:
    cfg = reference_config().replace(data={"q": float(q)}).resolved()
    path = exact_path(cfg, BOUNDARY_STEPS, stop_gap=GAP_II)
    return {"d": cfg.data.d, "q": float(q), "D": cfg.data.D, "C": 2,
            "r_II": phase_ii(cfg).rate, **readings(cfg, path)}


def _bisect(q_root: float, width: float = 0.1, n_bisect: int = 3) -> pd.DataFrame:
    """Runs at q_root and q_root + width (the interval moved up or down, twice at most, until
    the first associates and the second does not), then `n_bisect` bisections."""
    def assoc(row):
        return bool(np.isfinite(row["t_II"]))

    rows = [_boundary_run(q_root), _boundary_run(min(q_root + width, 0.99))]
    for _ in range(2):
        if assoc(rows[0]) and not assoc(rows[-1]):
            break
        if not assoc(rows[0]):
            rows.insert(0, _boundary_run(rows[0]["q"] - width))
        if assoc(rows[-1]):
            rows.append(_boundary_run(min(rows[-1]["q"] + width, 0.99)))
    out = pd.DataFrame(rows)
    for _ in range(n_bisect):
        ok = np.isfinite(out.t_II)
        pos, neg = out[ok], out[~ok]
        if not len(pos) or not len(neg) or pos.q.max() >= neg.q.min():
            break
        out = pd.concat([out, pd.DataFrame([_boundary_run((pos.q.max() + neg.q.min()) / 2)])],
                        ignore_index=True)
    return out.sort_values("q", ignore_index=True)


def run(quick: bool) -> ClaimResult:
    k = 1 if quick else 0
    cfg = reference_config().resolved()
    path = exact_path(cfg, REF_STEPS[k])
    ref = readings(cfg, path)
    pred = predicted_times(cfg)
    bayes = bayes_error(cfg.data)
    pa_fair, pa_err = pa_limit_error(cfg), pa_limit_error(cfg, fair=False)
    t3 = phase_three(path.step.to_numpy(), path.error_fair.to_numpy(), pa_fair, ref["t_II"])
    upto_I = path[path.step < ref["t_I"]] if np.isfinite(ref["t_I"]) else path
    end = path.iloc[-1]
    q_root = _r_ii_root()
    table = pd.DataFrame([{
        **ref, "t_III": t3, "pa_status": "ok" if np.isfinite(ref["t_PA"]) else "censored-above",
        **pred, "loss_end_I": float(upto_I.loss.iloc[-1]),
        "error_fair_end_I": float(upto_I.error_fair.iloc[-1]), "final_loss": float(end.loss),
        "final_error": float(end.error), "final_tie_mass": float(end.tie_mass),
        "final_error_fair": float(end.error_fair), "final_alpha": float(end.alpha),
        "final_gamma": float(end.gamma), "final_rho": float(end.rho),
        "pa_limit_error": pa_err, "pa_limit_error_fair": pa_fair, "bayes_error": bayes,
        "q_root": q_root}])

    # the base point of the ladders: the reference path cut where a ladder run stops
    cut = path[path.step <= ref["t_II"]] if np.isfinite(ref["t_II"]) else path
    base = {"d": cfg.data.d, "q": cfg.data.q, "D": cfg.data.D, "C": 2, "diag": cfg.diag,
            "horizon": REF_STEPS[k], **pred, **readings(cfg, cut)}
    rows = []
    for ladder, values in (("d", d_LADDER[k]), ("q", Q_LADDER[k]), ("D", D_LADDER[k])):
        rows.append({"ladder": ladder, **base})
        rows += [_ladder_run(ladder, x) for x in values]
    runs = pd.DataFrame(rows)
    runs["in_regime"] = in_regime(runs.q, runs.D, runs.C)
    runs["t_I_rel_err"] = runs.t_I / runs.t_I_pred - 1
    runs["t_II_ratio"] = runs.t_II / runs.t_II_pred
    runs = runs.sort_values(["ladder", "d", "q", "D"], ignore_index=True)
    boundary = (pd.DataFrame(columns=["d", "q", "D", "C", "r_II", "t_II", "final_gap",
                                      "steps_run"])
                if quick else _bisect(q_root))
    tables = {"table": table, "runs": runs, "boundary": boundary}
    v = judge(tables)

    t = table.iloc[0]
    half_tie = t.final_error - bayes - t.final_tie_mass / 2
    reading = [
        f"Reference run (notes §9 setting, {REF_STEPS[k]} exact GD steps): α reaches "
        f"{ALPHA_GROWTH:g}α⁰ at step {t.t_I:g} (derived {t.t_I_pred:.1f}, relative "
        f"{t.t_I / t.t_I_pred - 1:+.1e}); γ − ρ reaches {GAP_II:g} at {t.t_II:g} (derived "
        f"t_blowup + 1/r_II = {t.t_blowup:.0f} + {1 / t.r_II:.0f} = {t.t_II_pred:.0f}, ratio "
        f"{t.t_II / t.t_II_pred:.3f}); patch association (margin) from step {t.t_PA:g}; the "
        f"fair-coin error reaches the patch-association error at {t.t_III:g}.",
        f"Final fair-coin error {t.final_error_fair:.6f} (ties as errors {t.final_error:.6f}, "
        f"tie mass {t.final_tie_mass:.6f}); Bayes error {bayes:.6f}; ties-as-errors gap minus "
        f"half the tie mass: {half_tie:.1e}.",
    ]
    for lad, what in (("d", "d at q = ln(100)/10, D = 10 (only the diagonal ln ln d moves)"),
                      ("q", "q at d = 100, D = 10"),
                      ("D", "D at q = ln(100)/10, d = 100 (C = 2)")):
        g = runs[runs.ladder == lad]
        reading.append(f"Ladder {what}: " + "; ".join(
            f"{lad} = {getattr(r, lad):.4g}{'' if r.in_regime else ' (out of regime)'}: t_I "
            f"{r.t_I:g} vs {r.t_I_pred:.1f} ({r.t_I_rel_err:+.1e}), t_II {r.t_II:g} vs "
            f"{r.t_II_pred:.0f} (×{r.t_II_ratio:.2f}), final γ − ρ {r.final_gap:.2f}"
            for r in g.itertuples()) + ".")
    reading.append(boundary_reading(boundary, q_root) + ".")
    headline = {"t_I": t.t_I, "t_I_pred": round(t.t_I_pred, 1), "t_II": t.t_II,
                "t_II_pred": round(t.t_II_pred), "t_PA": t.t_PA,
                "t_II_ratio_range": _ratio_range(runs[runs.in_regime].t_II_ratio),
                "t_I_relerr_max": float(runs[runs.in_regime].t_I_rel_err.abs().max()),
                "q_root_r_II": round(q_root, 4)}
    if len(boundary):
        ok = np.isfinite(boundary.t_II)
        pos, neg = boundary[ok], boundary[~ok]
        headline["q_boundary"] = (f"[{pos.q.max():.4f}, {neg.q.min():.4f}]"
                                  if len(pos) and len(neg) else "not bracketed")

    def figure(fig):
        axs = fig.subplots(1, 3)
        s = path.step.clip(lower=1)
        for col in ("alpha", "gamma", "rho"):
            axs[0].plot(s, path[col], label=col)
        for tm, tp, c in ((t.t_I, t.t_I_pred, "C0"), (t.t_II, t.t_II_pred, "C3")):
            axs[0].axvline(tm, color=c, lw=0.8)
            if math.isfinite(tp):
                axs[0].axvline(tp, color=c, ls="--", lw=0.8)
        axs[0].set_xscale("log")
        axs[0].set_xlabel("GD step (solid: measured t_I, t_II; dashed: derived)")
        axs[0].legend(fontsize=7)
        for lad, mk in (("d", "o"), ("q", "s"), ("D", "^")):
            g = runs[runs.ladder == lad]
            axs[1].plot(g.t_II_pred, g.t_II, mk, label=f"t_II, {lad} ladder")
            axs[1].plot(g.t_I_pred, g.t_I, mk, mfc="none", label=f"t_I, {lad} ladder")
        lim = [runs.t_I_pred.min() / 2, runs[np.isfinite(runs.t_II_pred)].t_II_pred.max() * 2]
        axs[1].plot(lim, lim, "k:", lw=0.8)
        axs[1].fill_between(lim, np.array(lim) / TOL_II, np.array(lim) * TOL_II, color="grey",
                            alpha=0.15, label=f"×{TOL_II:g} band")
        axs[1].set_xscale("log")
        axs[1].set_yscale("log")
        axs[1].set_xlabel("derived phase time")
        axs[1].set_ylabel("measured phase time")
        axs[1].legend(fontsize=6)
        if len(boundary):
            axs[2].plot(boundary.q, boundary.final_gap, "o-",
                        label=f"γ − ρ at the end (stop at ±{GAP_II:g} or {BOUNDARY_STEPS} steps)")
        qq = runs[runs.ladder == "q"]
        axs[2].plot(qq.q, qq.final_gap, "s", label="q ladder (stops at γ − ρ = 1)")
        if math.isfinite(q_root):
            axs[2].axvline(q_root, color="k", ls="--", lw=0.8, label="derived r_II = 0")
        axs[2].axvline(Q_REGIME, color="grey", ls=":", lw=0.8, label="Q_REGIME")
        axs[2].axhline(0, color="grey", lw=0.5)
        axs[2].set_xlabel("q (D = 10, d = 100)")
        axs[2].legend(fontsize=6)

    # the trajectory table keeps ~300 log-spaced steps and the phase times (every step is
    # 20001 rows)
    keep = np.unique(np.r_[0, np.geomspace(1, len(path) - 1, 300).astype(int),
                           [int(x) for x in (t.t_I, t.t_II, t.t_PA, t.t_III) if np.isfinite(x)]])
    return ClaimResult("thm4.1", table, v, headline, reading,
                       extra={"runs": runs, "boundary": boundary,
                              "trajectory": path.iloc[keep].reset_index(drop=True)},
                       figure=figure)


CLAIM = Claim(
    id="thm4.1",
    paper=PAPER_NAME,
    figsize=(12.0, 3.6),
    title="Theorem 4.1 (idealized: GD on the population risk)",
    label="RECONSTRUCTED",
    source="notes §4.4–4.5: a seminar slide (S2) and the README (S3) describe three phases; "
    "the statement itself was not read",
    statement="After T = poly(d) steps of GD on (P), F performs patch association, the "
    "population loss is small and the model generalizes; the dynamics pass through phase I "
    "(α grows, A static), II (γ − ρ grows) and III (loss falls, error near its optimum).",
    measured="Exact GD (exchangeable engine, every step): t_I (α ≥ 10α⁰), t_II (γ − ρ ≥ 1), "
    "patch association (margin) on the reference run and on one-factor ladders in d (fixed q, "
    "D), q (fixed d, D) and D (fixed q, d); the q at which the run stops associating, by "
    "bisection.",
    predicted="In regime (q ≤ 0.5, q(D − C) > C): every run reaches γ − ρ ≥ 1 and patch "
    "association; t_I within 2 % of the derived time to 10α⁰ (phase_i) and t_II within ×3 of "
    "the derived t_blowup + 1/r_II (phase_i, phase_ii); the reference run's phases in order "
    "and its final fair-coin error within 0.005 of the Bayes error.",
    run=run,
    judge=judge,
    thresholds=THRESHOLDS,
    premises=("inside the horizon: the reference run reaches t_I, t_II and t_III",
              "each ladder has at least 2 in-regime runs"),
    reconstructed="the three-phase picture and its order (a slide and the README); the "
    "regime's q ≪ 1 read as q ≤ 0.5.",
    untested="T = poly(d): at population level d enters only through the frozen diagonal "
    "ln ln d (and q, held fixed on the d ladder), so a d dependence of the phase times is "
    "measured against the derived one, not against a power law; the constants of the theorem.",
)
