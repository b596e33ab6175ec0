"""Lemmas 4.1–4.2's alignment and reduction checks:
the judges on hand-made tables that agree, disagree, are degenerate or fail a premise, and
the declared counterfactuals rejected on an agreeing table."""

import math

import pandas as pd

from tests.jelassi2022._helpers import rejects_all
from theorylab.jelassi2022.claims import (
    lemma41,
    lemma41_reduction,
)

INF = math.inf


# -- Lemmas 4.1-4.2 ----------------------------------------------------------------------------
def _align(slopes, derived=-0.01):
    return pd.DataFrame({"seed": range(len(slopes)), "slope": slopes,
                         "slope_derived": [derived] * len(slopes)})


def _growth(ratios):
    n = len(ratios)
    return pd.DataFrame({"seed": range(n), "beta_growth": [1.065 * r for r in ratios],
                         "beta_growth_derived": [1.065] * n})


def test_lemma_growth_of_beta_in_phase_one():
    ok = _growth([1.00003, 0.99994, 0.99996])
    assert lemma41.judge({"reference": ok}).verdict == "agrees"
    # two-sided: 0.5 % above or below the derived growth on one start
    for off in (1.005, 1 / 1.005):
        assert lemma41.judge({"reference": _growth([1.0, off, 1.0])}).verdict == "disagrees"
    # β frozen during the escape (growth 1 instead of 1.065)
    assert lemma41.judge({"reference": _growth([1 / 1.065] * 3)}).verdict == "disagrees"
    # no start reaches t_I: premise
    nan = _growth([1.0]).assign(beta_growth=math.nan)
    v = lemma41.judge({"reference": nan})
    assert v.verdict == "inconclusive" and "premise failed" in v.reasons[0]
    assert lemma41.judge({"reference": _growth([])}).verdict == "inconclusive"
    rejects_all(lemma41.CLAIM, {"reference": ok})
    assert lemma41.sign_name(-1) == "shrinks" and lemma41.sign_name(0.2) == "keeps its angle"


def test_lemma_reduction_rate_band_and_identity():
    ident = pd.DataFrame({"step": [0, 10], "loss_diff": [1e-16, 2e-16],
                          "grad_alpha_diff": [0.0, 1e-16], "grad_gamma_diff": [0.0, 0.0],
                          "grad_rho_diff": [0.0, 0.0]})
    ok = _align([-0.0102, -0.0098, -0.0101, -0.0099, -0.01])
    assert lemma41_reduction.judge({"table": ok, "identity": ident}).verdict == "agrees"
    fast = _align([-0.02, -0.021, -0.019, -0.0205, -0.02])
    assert lemma41_reduction.judge({"table": fast, "identity": ident}).verdict == "disagrees"
    broken = ident.assign(loss_diff=[1e-6, 0.0])
    assert lemma41_reduction.judge({"table": ok, "identity": broken}).verdict == "disagrees"
    rejects_all(lemma41_reduction.CLAIM, {"table": ok, "identity": ident})




def test_lemma_reduction_undecided_tables():
    ident = pd.DataFrame({"step": [0], "loss_diff": [1e-16], "grad_alpha_diff": [0.0],
                          "grad_gamma_diff": [0.0], "grad_rho_diff": [0.0]})
    ok = _align([-0.0102, -0.0098, -0.0101, -0.0099, -0.01])
    # no identity measurement; two seeds (no interval); an interval wider than the band
    assert lemma41_reduction.judge({"table": ok, "identity": ident.iloc[:0]}).verdict == \
        "inconclusive"
    two = _align([-0.0102, -0.0098])
    assert lemma41_reduction.judge({"table": two, "identity": ident}).verdict == "inconclusive"
    wide = _align([-0.002, -0.010, -0.018])  # ratios 0.2, 1.0, 1.8: interval ≈ [−1.0, 3.0]
    v = lemma41_reduction.judge({"table": wide, "identity": ident})
    assert v.verdict == "inconclusive" and "crosses the band" in v.reasons[0]
