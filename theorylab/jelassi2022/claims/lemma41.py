r"""Lemmas 4.1–4.2 (RECONSTRUCTED, notes §4.3), the theorem check: along GD on (P), v becomes
parallel to w* (the part of v orthogonal to w* shrinks), so that the dynamics reduce to
(α, γ, ρ).

From a random start the reduction cannot hold at step 0 (v⁰ is almost orthogonal to w*: β⁰/|α⁰|
is of order √d). The statement read for a random start is that β/|α| shrinks along population
GD. Two measurements (`_lemma_data` and the
reference runs of Theorem 4.1):

- **the full model** (v ∈ ℝ^d, A ∈ ℝ^{D×D}, Monte Carlo population gradients): from the
  aligned reference state after phase I with an orthogonal part β⁰ = 0.1 added in a random
  direction, the slope of log(β/|α|) per GD step over ``SEEDS`` seeds, judged on its
  t-interval: its sign against the predicted sign ``ALIGN_SIGN`` (−1: it shrinks);
- **the reference runs from random starts** (reduced engine, reported): β/|α| at the start, at
  t_I and at the end.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

import theorylab.jelassi2022.claims._lemma_data as data
from theorylab.core.claims import (
    Claim,
    ClaimResult,
    Counterfactual,
    Prediction,
    Threshold,
    format_interval,
    point_rows,
    t_interval,
    threshold_values,
)
from theorylab.core.claims.verdict import Verdict
from theorylab.core.sweep import call_point, run_points

from ..config import PAPER_NAME
from ._common import TEMPERATURE

__all__ = ["CLAIM", "THRESHOLDS", "PREDICTIONS", "COUNTERFACTUALS", "judge", "verdict_alignment",
           "alignment_table", "sign_name"]

THRESHOLDS = (
    Threshold("TAIL", 0.025, "project choice",
              "the one-sided error probability of each end of the slope's t-interval (2.5 %: "
              "the usual two-sided 95 % interval, a statistical convention)",
              role="the slope's interval (level 1 − 2·TAIL), whose side of 0 decides"),
)
PREDICTIONS = (
    Prediction("ALIGN_SIGN", -1.0, "shift",
               "sign of the slope of log(β/|α|) along population GD: −1 (v turns towards w*), "
               "0 (v keeps its angle), +1 (v turns away); a value within ½ of 0 reads as 0",
               "paper statement (reconstructed)"),
)
COUNTERFACTUALS = (
    Counterfactual("v keeps its angle", "the orthogonal part of v neither shrinks nor grows "
                   "relative to α (v keeps its random direction)", {"ALIGN_SIGN": 0.0}),
    Counterfactual("v turns away", "the orthogonal part of v grows relative to α",
                   {"ALIGN_SIGN": 1.0}),
)


def sign_name(s: float) -> str:
    """The statement of a sign value: ≤ −½ shrinks, ≥ ½ grows, otherwise keeps its angle."""
    return "shrinks" if s <= -0.5 else "grows" if s >= 0.5 else "keeps its angle"


def verdict_alignment(table: pd.DataFrame, sign: float, level: float = 0.95) -> Verdict:
    """The t-interval of the slope of log(β/|α|) over seeds against the predicted `sign`
    (see [`sign_name`][]): ``agrees`` when the interval lies on the predicted side (or, for
    "keeps its angle", contains 0), ``disagrees`` when it lies strictly on the other side (or
    excludes 0), ``inconclusive`` otherwise or with fewer than 3 seeds."""
    s = table.slope.to_numpy(float)
    s = s[np.isfinite(s)]
    if s.size < 3:
        return Verdict("inconclusive", (f"premise failed: {s.size} seeds with a slope (need 3)",))
    m, lo, hi = t_interval(s, level)
    txt = (f"slope of log(β/|α|) per step {format_interval(m, lo, hi, s.size, '.3g')} "
           f"({level:.0%} t-interval); predicted: β/|α| {sign_name(sign)}")
    want = sign_name(sign)
    if want == "shrinks":
        ok, bad = hi < 0, lo >= 0
    elif want == "grows":
        ok, bad = lo > 0, hi <= 0
    else:
        ok, bad = lo <= 0 <= hi, hi < 0 or lo > 0
    if ok:
        return Verdict("agrees", (txt,))
    if bad:
        return Verdict("disagrees", (txt + " (theorem as reconstructed)",))
    return Verdict("inconclusive", (txt + ": the interval is not on one side of 0",))


def judge(tables: dict[str, pd.DataFrame], values=None) -> Verdict:
    """[`verdict_alignment`][] on the written main table with the declared prediction (or
    `values`)."""
    th = threshold_values((*THRESHOLDS, *PREDICTIONS), values)
    tail = min(max(th["TAIL"], 1e-9), 0.5)
    return verdict_alignment(tables["table"], th["ALIGN_SIGN"], 1 - 2 * tail)


_MEMO: dict = {}


def alignment_table(quick: bool, temperature: str) -> pd.DataFrame:
    """The measured and derived slopes of every seed (one sweep point each; memoised per
    process: the derivation check reads the same table)."""
    key = (bool(quick), temperature)
    if key not in _MEMO:
        _, _, seeds = data.SETTINGS[bool(quick)]
        parts = run_points([call_point(f"{data.__name__}:alignment_point",
                                       temperature=temperature, seed=int(s), quick=bool(quick))
                            for s in seeds])
        _MEMO[key] = pd.concat([point_rows(p) for p in parts], ignore_index=True)
    return _MEMO[key]


def _reference_ratios(quick: bool, temperature: str) -> pd.DataFrame:
    from ..setups import REF_Q
    from ._thm41_data import reference_table

    ref = reference_table(quick, temperature, "random", REF_Q)
    rows = []
    for seed, g in ref.groupby("seed"):
        g = g.sort_values("step")
        t_I = g.t_I.iloc[0]
        at = g[g.step >= t_I].iloc[0] if np.isfinite(t_I) else g.iloc[-1]
        rows.append({"seed": seed, "ratio_start": abs(g.beta.iloc[0] / g.alpha.iloc[0]),
                     "ratio_at_t_I": abs(at.beta / at.alpha),
                     "ratio_end": abs(g.beta.iloc[-1] / g.alpha.iloc[-1]),
                     "steps": float(g.step.iloc[-1])})
    return pd.DataFrame(rows)


def run(quick: bool, readings: dict) -> ClaimResult:
    tau = readings["temperature"]
    table = alignment_table(quick, tau)
    refr = _reference_ratios(quick, tau)
    v = judge({"table": table})
    m, lo, hi = t_interval(table.slope)
    r0 = table.iloc[0]
    reading = [
        f"Full model (Monte Carlo population GD, {int(r0.mc_samples)} draws per step, lr "
        f"{data.LR:g}, temperature {tau}) from the reference state at step {r0.start_step:g} "
        f"(α = {r0.alpha_start:.3f}, γ − ρ = {r0.gamma_start - r0.rho_start:.3f}) with "
        f"β⁰ = {data.BETA0:g} in a random direction ⊥ w*: after {int(r0.steps)} steps β/|α| "
        f"goes from {r0.ratio_start:.4f} to {table.ratio_end.min():.4f}–"
        f"{table.ratio_end.max():.4f}; slope of log(β/|α|) "
        f"{format_interval(m, lo, hi, len(table), '.4g')} per step (the reduction's "
        f"{table.slope_derived.mean():.4g}).",
        "Reference runs from random starts (reduced engine, lr 0.1): β/|α| " + "; ".join(
            f"seed {r.seed:g}: {r.ratio_start:.3g} at the start, {r.ratio_at_t_I:.2g} at t_I, "
            f"{r.ratio_end:.1e} after {r.steps:g} steps" for r in refr.itertuples())
        + ": v turns towards w* during the escape (α grows, β does not) and after it (β decays "
        "at the rate (κσ)²E[L₂] per unit of learning rate, positive once α has escaped).",
        "From an aligned start β ≡ 0 by construction (population GD keeps v in span(w*, v⁰)); "
        "the check therefore starts from a perturbed state under every reading.",
    ]
    brief = (f"log(β/|α|) slope {m:.3g} [{lo:.3g}, {hi:.3g}]/step, {len(table)} seeds (d-dim. "
             f"model); random starts: β/|α| {refr.ratio_start.min():.2g}→"
             f"{refr.ratio_end.max():.0e}")
    headline = {"slope": format_interval(m, lo, hi, len(table), ".4g"),
                "slope_derived": float(table.slope_derived.mean()),
                "ref_ratio_end_max": float(refr.ratio_end.max())}

    def figure(fig):
        ax = fig.add_subplot(1, 1, 1)
        ax.errorbar([0], [m], yerr=[[m - lo], [hi - m]], fmt="o", capsize=4,
                    label="measured (full model), 95 % t-interval")
        ax.plot(np.zeros(len(table)) + 0.1, table.slope, "x", color="C0", label="seeds")
        ax.plot([0.3], [table.slope_derived.mean()], "s", color="C1", label="reduction")
        ax.axhline(0, color="k", lw=0.8)
        ax.set_xlim(-0.5, 0.8)
        ax.set_xticks([])
        ax.set_ylabel("d log(β/|α|) / d step")
        ax.legend(fontsize=7)

    return ClaimResult("lemma4.1-4.2", table, v, headline, reading,
                       extra={"reference": refr}, figure=figure, brief=brief)


CLAIM = Claim(
    id="lemma4.1-4.2",
    paper=PAPER_NAME,
    title="Lemmas 4.1–4.2 (v aligns with w*: reduction to alpha, gamma, rho)",
    label="RECONSTRUCTED",
    source="notes §4.3 (a seminar slide, S2, names the lemmas; the statements were not read); "
    "'from random initialization' (abstract, S1)",
    statement="Along GD on (P), v becomes parallel to w* (β/|α| shrinks; from an aligned start "
    "it stays 0), so that the dynamics reduce to (α, γ, ρ).",
    measured="The slope of log(β/|α|) along Monte Carlo population GD of the full model "
    "(v ∈ ℝ^d, A ∈ ℝ^{D×D}) from a state after phase I with an orthogonal part added, over "
    "5 seeds; β/|α| along the reference runs from random starts (reported).",
    predicted="The slope's 95 % t-interval lies below 0.",
    run=run,
    judge=judge,
    thresholds=THRESHOLDS,
    predictions=PREDICTIONS,
    counterfactuals=COUNTERFACTUALS,
    variants=(TEMPERATURE,),
    premises=("at least 3 seeds with a slope",),
    seeds=f"{len(data.SEEDS)} seeds (orthogonal direction and Monte Carlo draws), slope judged "
    "on its t-interval",
    reconstructed="the lemmas' statements (read as the reduction to (α, γ, ρ) with v → w*); "
    "the start of v is not a variant here: from an aligned start β ≡ 0 by construction, so the "
    "measurement starts from the same perturbed state under both readings.",
    untested="The symmetry of A (an engine check, lemma4.1-4.2-symmetry); rates or constants "
    "the lemmas may state.",
)
