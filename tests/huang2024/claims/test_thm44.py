"""Theorem 4.4's theorem check (thm4.4): the paper's sentences judged per temperature on
hand-made CL tables that agree, disagree or fail a premise, and its counterfactuals."""

from __future__ import annotations

import math

from theorylab.core.claims import counterfactual_table
from theorylab.huang2024.claims import CLAIMS, thm44

from ._cl_tables import t44 as _t44
from ._cl_tables import taus as _taus

NAN = math.nan


def test_thm44_judges_the_papers_sentences_at_every_temperature():
    for t in (_t44(), _t44(glob=(0.95, 0.97, 0.98), exists=False, tau=0.5, drift=0.02)):
        v = thm44.judge(t)
        assert v.verdict == "agrees", v.reasons  # a plateau below 1 or none: both global
        cf = counterfactual_table(thm44.judge, t, CLAIMS["thm4.4"].values(),
                                  thm44.COUNTERFACTUALS)
        assert cf.rejected.all(), cf
    assert all(p.source == "paper" for p in thm44.PREDICTIONS)
    # disagreeing: balanced attention (s ≈ 0) on the main or the mild ladder
    assert thm44.judge(_t44(cl_own=0.6)).verdict == "disagrees"
    mild = thm44.judge(_t44(mild=(0.2, 0.2, 0.2), cl_own=0.15))
    assert mild.verdict == "disagrees"
    # no selection: the global attention stays at its start share
    assert thm44.judge(_t44(glob=(0.35, 0.35, 0.35))).verdict == "disagrees"
    # no contrast: MAE favours the global area too
    assert thm44.judge(_t44(mae_own=0.05)).verdict == "disagrees"


def test_thm44_verdict_per_temperature():
    """Agrees only when the sentences hold at every τ; failing at one τ of two is
    inconclusive (τ-dependent), at every τ disagrees; the verdict per τ comes first."""
    both = thm44.judge(_taus(_t44(), _t44(glob=(0.95, 0.97, 0.98), exists=False, tau=0.5)))
    assert both.verdict == "agrees" and both.reasons[0].startswith("holds at every τ")
    mixed = thm44.judge(_taus(_t44(), _t44(tau=0.5, cl_own=0.6)))
    assert mixed.verdict == "inconclusive", mixed.reasons
    assert mixed.reasons[0].startswith("τ-dependent (per τ: agrees at τ = 0.1, disagrees at "
                                       "τ = 0.5)")
    bad = thm44.judge(_taus(_t44(cl_own=0.6), _t44(tau=0.5, cl_own=0.6)))
    assert bad.verdict == "disagrees"
    # the near counterfactual above the lower bound: uniform attention, rejected
    assert 0.5 < thm44.UNIFORM_CONTRAST <= 0.5 + 3 / 6
    cf = counterfactual_table(thm44.judge, _t44(), CLAIMS["thm4.4"].values(),
                              thm44.COUNTERFACTUALS)
    assert cf.set_index("counterfactual").rejected["uniform attention"]


def test_thm44_premises():
    one = thm44.judge(_t44(seeds=(0, 1)))
    assert one.verdict == "inconclusive" and one.reasons[0].startswith("premise failed")
    mild = thm44.judge(_t44(mild_seeds=()))
    assert mild.verdict == "inconclusive" and "mild imbalance" in mild.reasons[0]
    mae = thm44.judge(_t44(mae_moved=0.1))
    assert mae.verdict == "inconclusive" and "not converged" in " ".join(mae.reasons)
    t = _t44()
    t["table"].loc[0, "end_glob_lq"] = NAN
    assert thm44.judge(t).verdict == "inconclusive"
