"""The judges of the lemma, Theorem 4.2, Theorem 5.1 and Theorem 3.1 checks on hand-made tables
that agree, disagree, are degenerate or fail a premise, and each theorem check's declared
counterfactuals rejected on an agreeing table."""

import math

import numpy as np
import pandas as pd
import pytest

from theorylab.jelassi2022.claims import (
    lemma41,
    lemma41_reduction,
    thm31,
    thm31_proof,
    thm42,
    thm42_noise,
    thm51,
)
from theorylab.jelassi2022.setups import REF_SETS

INF = math.inf


def _rejects_all(claim, judge, tables):
    values = claim.values()
    for cf in claim.counterfactuals:
        assert judge(tables, {**values, **cf.values}).verdict == "disagrees", cf.name


# -- Lemmas 4.1-4.2 ----------------------------------------------------------------------------
def _align(slopes, derived=-0.01):
    return pd.DataFrame({"seed": range(len(slopes)), "slope": slopes,
                         "slope_derived": [derived] * len(slopes)})


def test_lemma_alignment_sign():
    shrink = _align([-0.011, -0.010, -0.0095, -0.0105, -0.01])
    assert lemma41.judge({"table": shrink}).verdict == "agrees"
    assert lemma41.judge({"table": _align([0.01, 0.011, 0.012])}).verdict == "disagrees"
    assert lemma41.judge({"table": _align([-0.01, 0.01, 0.0])}).verdict == "inconclusive"
    assert lemma41.judge({"table": _align([-0.01, -0.01])}).verdict == "inconclusive"
    _rejects_all(lemma41.CLAIM, lemma41.judge, {"table": shrink})
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
    _rejects_all(lemma41_reduction.CLAIM, lemma41_reduction.judge,
                 {"table": ok, "identity": ident})


# -- Theorem 4.2 ----------------------------------------------------------------------------
def _runs42(b_d=1.0, b_N=-1.0, c=0.35, ok=True, seeds=4):
    rng = np.random.default_rng(0)
    rows = []
    for d in (10, 20, 40):
        for m in (16, 64):
            N = m * (d - 1)
            for s in range(seeds):
                r2 = c * (d - 1) ** b_d * N ** b_N * math.exp(0.1 * rng.standard_normal())
                rows.append({"d": d, "N": N, "seed": s, "r2": r2,
                             "test_error": 0.095 if (ok or m == 16) else 0.2,
                             "patch_association": True})
    return pd.DataFrame(rows)


def _pop42(pa=True):
    return pd.DataFrame({"d": [10, 20, 40], "pop_error": [0.0944] * 3, "c": [0.35] * 3,
                         "pa": [pa] * 3, "gamma_minus_rho": [3.0 if pa else -3.0] * 3})


def test_thm42_noise_fit_recovers_the_exponents():
    f = thm42.noise_fit(_runs42())
    assert abs(f["b_d"] - 1) < 0.1 and abs(f["b_N"] + 1) < 0.1
    assert f["k_lo"] < 1 < f["k_hi"]


def test_thm42_judge():
    t = {"table": _runs42(), "population": _pop42()}
    assert thm42.judge(t).verdict == "agrees"
    steep = {"table": _runs42(b_d=4.0), "population": _pop42()}  # N ∝ d^4
    assert thm42.judge(steep).verdict == "disagrees"
    nopa = {"table": _runs42(), "population": _pop42(pa=False)}
    v = thm42.judge(nopa)
    assert v.verdict == "inconclusive" and "does not associate" in v.reasons[0]
    nogen = {"table": _runs42(ok=False), "population": _pop42()}
    assert thm42.judge(nogen).verdict == "inconclusive"
    few = {"table": _runs42(seeds=2), "population": _pop42()}
    assert thm42.judge(few).verdict == "inconclusive"
    _rejects_all(thm42.CLAIM, thm42.judge, t)


def test_thm42_noise_law_judge():
    t = {"table": _runs42(), "population": _pop42()}
    assert thm42_noise.judge(t).verdict == "agrees"
    assert thm42_noise.judge({"table": _runs42(b_d=2.0), "population": _pop42()}).verdict == \
        "disagrees"
    assert thm42_noise.judge({"table": _runs42(c=3.5), "population": _pop42()}).verdict == \
        "disagrees"
    empty = {"table": _runs42().iloc[:0], "population": _pop42()}
    assert thm42_noise.judge(empty).verdict == "inconclusive"
    _rejects_all(thm42_noise.CLAIM, thm42_noise.judge, t)


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
    nopa = {"table": _runs51(), "pretraining": _PRE.assign(pa=False, gamma_minus_rho=-3.0)}
    assert thm51.judge(nopa).verdict == "inconclusive"
    few = {"table": _runs51(seeds=3), "pretraining": _PRE}
    assert thm51.judge(few).verdict == "inconclusive"
    never = {"table": _runs51(frozen=INF), "pretraining": _PRE}
    assert thm51.judge(never).verdict == "inconclusive"
    _rejects_all(thm51.CLAIM, thm51.judge, t)


def test_thm51_pooled_counts_never_at_twice_the_top():
    need = thm51.n_needed(_runs51(), 0.12)
    p = thm51.pooled(need, "mismatched")
    assert np.allclose(np.exp(p.log_ratio), 2 * 800 / 50) and (p.censored == 5).all()


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
    _rejects_all(thm31.CLAIM, thm31.judge, {"table": _fits([0.35, 0.36, 0.355])})


def test_thm31_proof_judge():
    t = thm31_proof.family(quick=True)
    assert thm31_proof.judge({"table": t}).verdict == "agrees"
    off = t.assign(err_enum=t.err_enum + 1e-6)
    assert thm31_proof.judge({"table": off}).verdict == "disagrees"
    _rejects_all(thm31_proof.CLAIM, thm31_proof.judge, {"table": t})
    with pytest.raises(KeyError):
        thm31_proof.judge({})
