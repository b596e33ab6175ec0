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
def _fits(err, se=0.003):
    return pd.DataFrame({"k": 4, "C": 3, "D": 90, "q": 0.9, "x": 0.115, "seed": [0, 1, 2],
                         "err_fstar": err, "err_fstar_se": [se] * 3})


def test_thm31_judge_against_fstar():
    assert thm31.judge({"table": _fits([0.35, 0.36, 0.355])}).verdict == "agrees"
    assert thm31.judge({"table": _fits([0.09, 0.1, 0.095])}).verdict == "disagrees"
    assert thm31.judge({"table": _fits([0.126, 0.124, 0.125])}).verdict == "inconclusive"
    outside = _fits([0.09, 0.1, 0.095]).assign(x=2.0)  # outside the proved region
    assert thm31.judge({"table": outside}).verdict == "inconclusive"
    rejects_all(thm31.CLAIM, {"table": _fits([0.35, 0.36, 0.355])})


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
