"""Theorem 3.1's checks (against f*, and the proof):
the judges on hand-made tables that agree, disagree, are degenerate or fail a premise, and
the declared counterfactuals rejected on an agreeing table."""

import math

import pandas as pd
import pytest

from tests.jelassi2022._helpers import rejects_all
from theorylab.jelassi2022.claims import (
    thm31,
    thm31_proof,
)

INF = math.inf


# -- Theorem 3.1 ----------------------------------------------------------------------------
def _fits(err, ties="strict", zero=0.16):
    return pd.DataFrame({"k": 4, "C": 3, "D": 90, "q": 0.9, "x": 0.115, "seed": [0, 1, 2],
                         "err_fstar": err, "err_fstar_se": [0.003] * 3, "fstar_ties": ties,
                         "p_fstar_zero_fit": zero})


def test_thm31_judge_against_fstar():
    assert thm31.judge({"table": _fits([0.35, 0.36, 0.355])}).verdict == "agrees"
    # a lower bound with slack 0.025: an interval below 0.1 is a GLM that beats it
    assert thm31.judge({"table": _fits([0.07, 0.08, 0.075])}).verdict == "disagrees"
    # mean below 0.1, its t-interval (3 seeds) reaching the band: undecided
    assert thm31.judge({"table": _fits([0.08, 0.12, 0.09])}).verdict == "inconclusive"
    outside = _fits([0.07, 0.08, 0.075]).assign(x=2.0)  # outside the proved region
    v = thm31.judge({"table": outside})
    assert v.verdict == "inconclusive" and "premise failed" in v.reasons[0]
    assert thm31.judge({"table": _fits([math.nan] * 3)}).verdict == "inconclusive"
    # the committed strict errors at (4, 3, 90): 1/5 is rejected there
    rejects_all(thm31.CLAIM, {"table": _fits([0.1491, 0.1446, 0.1349])})
    # the lowest point is the one judged
    two = pd.concat([_fits([0.35, 0.36, 0.355]), _fits([0.07, 0.08, 0.075]).assign(D=320)])
    assert thm31.judge({"table": two}).verdict == "disagrees"


def test_thm31_literal_reading_says_it_cannot_fail_where_fstar_is_zero_often():
    v = thm31.judge({"table": _fits([0.30, 0.31, 0.305], ties="literal", zero=0.16)})
    assert v.verdict == "inconclusive" and "cannot fail" in v.reasons[0]
    # where P[f* = 0] lies below the band, the literal reading is judged like the strict one
    low = _fits([0.07, 0.08, 0.075], ties="literal", zero=0.02)
    assert thm31.judge({"table": low}).verdict == "disagrees"


def test_thm31_proof_judge():
    t = thm31_proof.family(quick=True)
    assert thm31_proof.judge({"table": t}).verdict == "agrees"
    off = t.assign(err_enum=t.err_enum + 1e-6)
    assert thm31_proof.judge({"table": off}).verdict == "disagrees"
    # two-sided: an enumeration 3e-12 above or below the closed form is caught either way
    for shift in (3e-12, -3e-12):
        v = thm31_proof.judge({"table": t.assign(err_enum=t.err_enum + shift)})
        assert v.verdict == "disagrees", shift
    below = t.assign(pz_bound=t.pz_bound.where(t.index != t.index[0], 0.99))
    assert thm31_proof.judge({"table": below}).verdict == "disagrees"  # under the bound
    rejects_all(thm31_proof.CLAIM, {"table": t})
    with pytest.raises(KeyError):
        thm31_proof.judge({})


def test_thm31_proof_undecided_tables():
    t = thm31_proof.family(quick=True)
    assert thm31_proof.judge({"table": t.iloc[:0]}).verdict == "inconclusive"  # no errors
    outside = t[~thm31_proof._inside(t)]  # no point in the proved region: premise failed
    v = thm31_proof.judge({"table": outside})
    assert v.verdict == "inconclusive" and "premise failed" in v.reasons[0]
