"""Theorem 4.2's theorem check on hand-made tables: the paper's sentences,
premises and degenerate tables."""

from __future__ import annotations

from tests.huang2024._mae_tables import NAN, _t42
from theorylab.core.claims import counterfactual_table
from theorylab.huang2024.claims import (
    CLAIMS,
    thm42,
)


def test_thm42_theorem_check_judges_the_papers_sentences():
    t = _t42()
    v = thm42.judge(t)
    assert v.verdict == "agrees", v.reasons
    assert all(p.source == "paper" for p in thm42.PREDICTIONS)
    cf = counterfactual_table(thm42.judge, t, CLAIMS["thm4.2"].values(), thm42.COUNTERFACTUALS)
    assert cf.rejected.all(), cf
    # disagreeing: the own-area attention falls like P^{−1/4}; Phase II before Phase I ends
    assert thm42.judge(_t42(own_exp=-0.25)).verdict == "disagrees"
    assert thm42.judge(_t42(own_exp=0.25)).verdict == "disagrees"
    late = thm42.judge(_t42(late_phase=True))
    assert late.verdict == "disagrees" and "phases" in late.reasons[0]
    # Phase I on Δ < 0 rungs is reported, not judged
    assert thm42.judge(_t42(neg_phase=True)).verdict == "agrees"


def test_thm42_premises_and_degenerate_tables():
    short = thm42.judge(_t42(ns=range(3, 7)))
    assert short.verdict == "inconclusive" and "premise failed" in short.reasons[0]
    cens = thm42.judge(_t42(nan_T=True))
    assert cens.verdict == "inconclusive" and "inside the horizon" in cens.reasons[0]
    t = _t42()
    t["table"]["attn_own_T"] = NAN
    assert thm42.judge(t).verdict == "inconclusive"
