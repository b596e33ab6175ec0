"""Every claim's verdict is a pure function of its measured table: each is tested here on a
table that agrees, one that disagrees, and censored / flat / NaN tables that must give
``inconclusive`` (never ``agrees``). The tables are small hand-made ones, so the tests pin the
rules, not the measurements."""

import math

import numpy as np
import pandas as pd
import pytest

from theorylab.core.claims import VERDICTS, ClaimResult, Verdict
from theorylab.core.claims.verdict import (
    MIN_FIT_POINTS,
    combine,
    ladder_threshold,
    loglog_fit,
    strictly_increasing,
)
from theorylab.jelassi2022.claims import lemma41_symmetry as lemma41
from theorylab.jelassi2022.claims import thm32
from theorylab.jelassi2022.transfer import finetune_summary

INF = math.inf


# -- helpers ---------------------------------------------------------------------------------------
def test_inconclusive_is_a_verdict():
    assert "inconclusive" in VERDICTS
    with pytest.raises(ValueError, match="verdict"):
        Verdict("maybe")
    res = ClaimResult("x", pd.DataFrame(), Verdict("inconclusive", ("too few points",)), {},
                      ["a line"])
    assert res.verdict == "inconclusive"
    assert res.reading[0].startswith("Verdict `inconclusive`: too few points")


def test_strictly_increasing_rejects_ties_and_nan():
    assert strictly_increasing([1, 2, 3])
    assert not strictly_increasing([1, 2, 2])  # non-strict: no verdict may rest on it
    assert not strictly_increasing([3000, 3000, 3000])
    assert not strictly_increasing([1, np.nan, 3])
    assert not strictly_increasing([1])


def test_loglog_fit_needs_four_uncensored_points():
    x = np.array([1.0, 2.0, 4.0, 8.0])
    f = loglog_fit(x, 3 * x**2)
    assert f["slope"] == pytest.approx(2.0, abs=1e-12) and f["r2"] == pytest.approx(1.0)
    three = loglog_fit(x[:3], 3 * x[:3] ** 2)
    assert math.isnan(three["slope"]) and three["n"] == 3 < MIN_FIT_POINTS
    cens = loglog_fit(x, [1.0, 2.0, INF, np.nan])
    assert math.isnan(cens["slope"]) and cens["censored"] == 2
    assert math.isnan(loglog_fit(x, np.full(4, 3000.0))["slope"])  # flat


def test_ladder_threshold_censoring():
    N = [10, 20, 40, 80]
    assert ladder_threshold(N, [False, False, True, True]) == (40.0, "ok")
    assert ladder_threshold(N, [True, True, True, True]) == (10.0, "censored-below")
    assert ladder_threshold(N, [False] * 4) == (INF, "censored-above")
    # a pass followed by a failure does not count: it must hold from N_needed on
    assert ladder_threshold(N, [False, True, False, True]) == (80.0, "ok")
    assert ladder_threshold([], []) == (ladder_threshold([], [])[0], "empty")
    # at the smallest value the quantity can take, a pass is a value, not a censoring
    assert ladder_threshold([1, 2, 4], [True] * 3, floor=1) == (1.0, "ok")
    assert ladder_threshold([2, 4], [True] * 2, floor=1) == (2.0, "censored-below")


def test_combine_orders_verdicts():
    a, p, i, d = (Verdict(v) for v in ("agrees", "partial", "inconclusive", "disagrees"))
    assert combine([a, a]).verdict == "agrees"
    assert combine([a, p]).verdict == "partial"
    assert combine([a, i, p]).verdict == "inconclusive"
    assert combine([i, d]).verdict == "disagrees"
    assert combine([a, Verdict("agrees-in-regime")]).verdict == "agrees-in-regime"
    assert combine([]).verdict == "inconclusive"


# -- Theorem 3.2 (sanity check) --------------------------------------------------------------------
def _t32(**kw):
    base = {"C": [2, 2], "err_perm": [0.11, 0.2], "err_pa": [0.11, 0.2],
            "err_perm_direct": [0.11, 0.2], "err_pa_direct": [0.11, 0.2],
            "topc_own_overlap": [0, 0], "topc_own_overlap_pa": [2, 2]}
    base.update(kw)
    return pd.DataFrame(base)


def test_thm32_verdicts():
    assert thm32.verdict(_t32()).verdict == "agrees"
    assert thm32.verdict(_t32(err_perm=[0.11, 0.21])).verdict == "disagrees"
    assert thm32.verdict(_t32(err_perm_direct=[0.12, 0.2])).verdict == "disagrees"
    assert thm32.verdict(_t32(topc_own_overlap=[0, 1])).verdict == "disagrees"
    premise = thm32.verdict(_t32(topc_own_overlap_pa=[2, 1]))  # the reference is not PA
    assert premise.verdict == "inconclusive" and "premise failed" in premise.reasons[0]
    assert thm32.judge({"table": _t32(err_perm=[0.11, 0.2 + 1e-9])}).verdict == "disagrees"
    assert thm32.judge({"table": _t32(err_perm=[0.11, 0.2 + 1e-9])},
                       {"ERR_TOL": 1e-8}).verdict == "agrees"
    assert thm32.verdict(_t32(err_pa=[np.nan, 0.2])).verdict == "inconclusive"
    assert thm32.verdict(_t32().iloc[:0]).verdict == "inconclusive"


def test_thm32_random_derangement_differs_from_shift():
    rng = np.random.default_rng(0)
    shift = [1, 2, 3, 0]
    for _ in range(20):
        p = thm32._derangement(4, rng, shift)
        assert p != shift and all(p[i] != i for i in range(4))
    assert thm32._derangement(2, rng, [1, 0]) is None  # the only derangement is the shift


def test_thm32_construction_with_a_fixed_set_is_caught():
    """A 'permutation' with a fixed point keeps a row's own set in Top-C: the overlap the
    verdict reads is C there, so a wrong construction would give `disagrees`."""
    from theorylab.jelassi2022.partition import Partition

    part = Partition(((0, 1), (2, 3), (4, 5)))
    A_bad = thm32.set_permutation_A(part, [0, 2, 1], temperature=1.0)  # set 0 → itself
    A_ok = thm32.set_permutation_A(part, [1, 2, 0], temperature=1.0)
    assert thm32.topc_overlap(A_bad, part) == 2 and thm32.topc_overlap(A_ok, part) == 0


# -- Lemmas 4.1-4.2 (symmetry, an engine check) ---------------------------------------------
def _sym(**kw):
    base = {"max_sym_dev": [1e-15], "max_rel_diff_alpha_gamma_rho": [1e-14],
            "final_gamma": [2.0], "final_rho": [-0.5]}
    base.update(kw)
    return pd.DataFrame(base)


def test_lemma_symmetry_verdicts():
    assert lemma41.verdict_symmetry(_sym()).verdict == "agrees"
    assert lemma41.verdict_symmetry(_sym(max_sym_dev=[1e-8])).verdict == "disagrees"
    assert lemma41.verdict_symmetry(_sym(max_rel_diff_alpha_gamma_rho=[1e-6])).verdict == \
        "disagrees"
    assert lemma41.verdict_symmetry(_sym(max_sym_dev=[np.nan])).verdict == "inconclusive"


def test_lemma_symmetry_premise_a_run_that_never_moved():
    v = lemma41.verdict_symmetry(_sym(final_gamma=[0.0], final_rho=[0.0]))
    assert v.verdict == "inconclusive" and v.reasons[0].startswith("premise failed")


# -- transfer (Theorem 5.1) ------------------------------------------------------------------------
def test_finetune_summary_best_and_last_step():
    tr = pd.DataFrame({"step": [0, 10, 100, 1000], "error": [0.3, 0.1, 0.08, 0.11],
                       "error_se": [0.004] * 4, "train_loss": [0.7, 0.3, 0.1, 0.01],
                       "cos_v_wstar": [0.1, 0.9, 0.95, 0.8], "beta": [0.1, 0.2, 0.4, 1.5],
                       "patch_association": [True] * 4})
    s = finetune_summary(tr)
    assert (s["test_error_best"], s["best_step"], s["test_error_last"]) == (0.08, 100, 0.11)
    assert s["beta_last"] == 1.5 and s["beta_best"] == 0.4 and not s["ran_out"]
    still = tr.assign(error=[0.3, 0.2, 0.15, 0.1])  # still falling by > 1 s.e. at the end
    assert finetune_summary(still)["ran_out"]
    # with a validation column the step is chosen on it, and the test error read there
    val = tr.assign(val_error=[0.3, 0.09, 0.1, 0.12])
    s = finetune_summary(val)
    assert (s["best_step"], s["test_error_best"], s["val_error_best"]) == (10, 0.1, 0.09)


def test_finetune_validation_split_is_apart_from_the_test_set():
    """A few steps with a 200-point validation split: the column is there, finite, and not
    the test error (other points); without a split there is no column."""
    from theorylab.jelassi2022.setups import reference_config
    from theorylab.jelassi2022.transfer import finetune

    cfg = reference_config(engine="empirical", method="auto", steps=20, n_train=30,
                           n_test=300, n_records=3, init_v="gaussian", v0_scale=0.05,
                           lr_A=0.0).replace(data={"d": 8, "seed": 1})
    tr = finetune(cfg, n_val=200)
    assert tr.val_error.notna().all() and (tr.val_error != tr.error).any()
    assert "val_error" not in finetune(cfg)
    with pytest.raises(ValueError, match="train.engine"):
        finetune(reference_config(steps=2), n_val=10)
