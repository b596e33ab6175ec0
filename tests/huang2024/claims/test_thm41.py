"""Theorem 4.1's theorem check on hand-made tables: agreeing, disagreeing and
premise-failed."""

from __future__ import annotations

from tests.huang2024._mae_tables import NAN, _eps, _ladder
from theorylab.core.claims import counterfactual_table
from theorylab.huang2024.claims import (
    CLAIMS,
    thm41,
)


def test_thm41_agrees_disagrees_and_premises():
    def t41(lad=None, eps=None):
        return thm41.judge({"table": _ladder() if lad is None else lad,
                            "convergence": _eps() if eps is None else eps})

    t = {"table": _ladder(), "convergence": _eps()}
    v = thm41.judge(t)
    assert v.verdict == "agrees", v.reasons
    assert all(p.source == "paper" for p in thm41.PREDICTIONS)
    cf = counterfactual_table(thm41.judge, t, CLAIMS["thm4.1"].values(), thm41.COUNTERFACTUALS)
    assert cf.rejected.all(), cf
    # T*'s growth is reported, not judged: a T* ∝ x^1.4 leaves the verdict
    assert t41(lad=_ladder(t_exp=1.4)).verdict == "agrees"
    # disagreeing: GD stalls at 0.5 % of the initial excess; the loss crosses the computed L*
    assert t41(eps=_eps(end=0.005)).verdict == "disagrees"
    assert t41(eps=_eps(end=-0.005)).verdict == "disagrees"
    # premises and degenerate tables
    assert t41(lad=_ladder(nan_T=True)).verdict == "inconclusive"
    assert t41(lad=_ladder(ns=range(3, 7))).verdict == "inconclusive"
    e = _eps()
    e.loc[5, "T_star"] = NAN
    assert t41(eps=e).verdict == "inconclusive"
    assert t41(eps=e.iloc[:0]).verdict == "inconclusive"
    stuck = _ladder(nan_T=True)
    stuck.loc[stuck.T_star.isna(), "final_rel_excess"] = 1.0
    assert thm41.verdict_convergence(stuck).verdict == "disagrees"


def test_thm41_reports_the_gaps_below_the_statements_ranges():
    """|Δ| ≤ 0.2 (outside [−0.5, −Ω(1)] ∪ [Ω(1), 1]): a quick table of real reduced runs, one
    per gap, with whether each converged and where Phase I ends; reported, never judged."""
    readings = {"coefficient_law": "uniform", "masked_keys": True, "eta": "per-query"}
    sd = thm41.small_delta_table(True, readings)
    assert len(sd) == len(thm41.SMALL_DELTAS) and (sd.delta.abs() < 0.25).all()
    assert sd.converged.all() and (sd.final_rel_excess <= 0.05).all()
    # Phase I needs Δ above its finite-P boundary (lemma5.1): none below 0
    assert not sd[sd.delta < 0].phase_I.any()
    line = thm41._small_delta_line(sd)
    assert line.startswith("Below the statement's ranges (reported, not judged), P = 256")
