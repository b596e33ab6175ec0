"""Theorem 5.1's check:
the judges on hand-made tables that agree, disagree, are degenerate or fail a premise, and
the declared counterfactuals rejected on an agreeing table."""

import math

import numpy as np
import pandas as pd

from tests.jelassi2022._helpers import rejects_all
from theorylab.jelassi2022.claims import (
    thm51,
)
from theorylab.jelassi2022.setups import REF_SETS

INF = math.inf


# -- Theorem 5.1 ----------------------------------------------------------------------------
def test_mismatch_permutation_breaks_every_true_pair():
    pi = thm51.mismatch_permutation(REF_SETS)
    assert sorted(pi) == list(range(10))
    label = {j: k for k, S in enumerate(REF_SETS) for j in S}
    for S in REF_SETS:
        assert label[pi[S[0]]] != label[pi[S[1]]]


def _runs51(frozen=50, scratch=400, mismatched=INF, seeds=5, d_list=(20, 40)):
    ladder = (12, 25, 50, 100, 200, 400, 800)
    rows = []
    for d in d_list:
        for s in range(seeds):
            for arm, need in (("frozen", frozen), ("scratch", scratch),
                              ("mismatched", mismatched), ("uniform", INF)):
                for N in ladder:
                    rows.append({"d": d, "arm": arm, "N": N, "seed": s,
                                 "test_error_best": 0.10 if N >= need else 0.15})
    return pd.DataFrame(rows).assign(bayes_error=0.0906, glm_error=0.1561)


_PRE = pd.DataFrame([{"gamma": 2.0, "rho": -1.2, "diag": 1.53, "gamma_minus_rho": 3.2,
                      "pa": True}])


def test_thm51_judge():
    t = {"table": _runs51(), "pretraining": _PRE}
    assert thm51.judge(t).verdict == "agrees"
    cheaper = {"table": _runs51(frozen=400, scratch=50), "pretraining": _PRE}
    assert thm51.judge(cheaper).verdict == "disagrees"
    same = {"table": _runs51(mismatched=50), "pretraining": _PRE}
    assert thm51.judge(same).verdict == "disagrees"
    # one rung of the ladder fewer (×2) passes; the stronger statement is rejected there
    two = {"table": _runs51(frozen=50, scratch=100, mismatched=100), "pretraining": _PRE}
    assert thm51.judge(two).verdict == "agrees"
    rejects_all(thm51.CLAIM, two)
    # seeds that scatter across the band's edge (scratch needs ×1, ×1, ×2, ×4, ×1): undecided
    mixed = _runs51(frozen=50, scratch=100, mismatched=100)
    for seed, need in enumerate((50, 50, 100, 200, 50)):
        rows = (mixed.arm == "scratch") & (mixed.seed == seed)
        mixed.loc[rows, "test_error_best"] = np.where(mixed[rows].N >= need, 0.10, 0.15)
    assert thm51.judge({"table": mixed, "pretraining": _PRE}).verdict == "inconclusive"
    nopa = {"table": _runs51(), "pretraining": _PRE.assign(pa=False, gamma_minus_rho=-3.0)}
    assert thm51.judge(nopa).verdict == "inconclusive"
    few = {"table": _runs51(seeds=3), "pretraining": _PRE}
    assert thm51.judge(few).verdict == "inconclusive"
    # the pre-trained attention never reaches the target: a finding, not a premise
    never = {"table": _runs51(frozen=INF), "pretraining": _PRE}
    v = thm51.judge(never)
    assert v.verdict == "disagrees" and "not sample-efficient" in v.reasons[0]
    # censored in one run only: the ratio cannot be formed there (premise)
    one = _runs51()
    one.loc[(one.arm == "frozen") & (one.seed == 0) & (one.d == 20), "test_error_best"] = 0.15
    assert thm51.judge({"table": one, "pretraining": _PRE}).verdict == "inconclusive"
    # a censored arm: the ratio is reported as a bound
    assert "a bound, ≥ ×" in " ".join(thm51.judge(t).reasons)


def test_thm51_pooled_never_reached_is_a_bound():
    # the mismatched arm never reaches the target within Ñ ≤ 800: N > 800, a ratio > ×16,
    # pooled as a bound (its interval open above), never as a measured ratio
    need = thm51.n_needed(_runs51(), 0.12)
    p = thm51.pooled(need, "mismatched")
    assert np.allclose(np.exp(p.log_ratio), 800 / 50) and (p.censored == 5).all()
    assert np.isinf(p.hi).all()
    s = thm51.pooled(need, "scratch")
    assert np.allclose(np.exp(s.log_ratio), 400 / 50) and (s.censored == 0).all()
    assert np.isfinite(s.hi).all()
