"""thm4.1-eps (a derivation check): its judge on hand-made tables with the derived 1/ε tail, a
log(1/ε) tail and a steeper one; the declared counterfactuals; degenerate and premise-failed
tables."""

from __future__ import annotations

from tests.huang2024._mae_tables import NAN, _eps
from theorylab.core.claims import counterfactual_table
from theorylab.huang2024.claims import CLAIMS, thm41eps


def test_thm41_eps():
    v = thm41eps.judge({"table": _eps()})
    assert v.verdict == "agrees", v.reasons  # T* ∝ 1/ε, the derived tail
    # a log(1/ε) tail: its local exponent keeps falling like 1/ln(1/ε), never settled here
    log = thm41eps.judge({"table": _eps(tail="log")})
    assert log.verdict == "inconclusive" and "not settled" in log.reasons[0]
    assert thm41eps.judge({"table": _eps(tail="steep")}).verdict == "disagrees"
    cf = counterfactual_table(thm41eps.judge, {"table": _eps()}, CLAIMS["thm4.1-eps"].values(),
                              thm41eps.COUNTERFACTUALS)
    assert cf.rejected.all(), cf
    e = _eps()
    e.loc[3, "T_star"] = NAN
    assert thm41eps.judge({"table": e}).verdict == "inconclusive"
    e = _eps()
    assert thm41eps.judge({"table": e[e.eps_rel != 0.05]}).verdict == "inconclusive"  # no ε₀
    assert thm41eps.judge({"table": e.iloc[:0]}).verdict == "inconclusive"
