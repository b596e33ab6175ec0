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
from theorylab.jelassi2022.claims import lemma41, thm31, thm32, thm42, thm51

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


# -- Theorem 3.1 -----------------------------------------------------------------------------------
def _t31(x, err, a2=None, pz=None):
    n = len(x)
    return pd.DataFrame({"k": [4] * n, "C": [3] * n, "D": [90] * n, "q": [0.9] * n, "x": x,
                         "assumption2": [True] * n if a2 is None else a2,
                         "err_best_glm": err, "pz_bound": [0.13] * n if pz is None else pz})


_FITS = pd.DataFrame({"k": [4] * 3, "C": [3] * 3, "D": [90] * 3, "q": [0.9] * 3,
                      "x": [0.115] * 3, "assumption2": [True] * 3, "seed": [0, 1, 2],
                      "err_fit": [0.37, 0.371, 0.369], "err_fit_se": [0.003] * 3,
                      "err_best_glm": [0.368] * 3})


def test_thm31_verdicts():
    assert thm31.verdict(_t31([0.1, 0.12], [0.36, 0.30]), _FITS).verdict == "agrees"
    # below 1/8 outside the proved region (x = 1.5): reported, not judged
    assert thm31.verdict(_t31([0.1, 1.5], [0.36, 0.12]), _FITS).verdict == "agrees-in-regime"
    # ... and outside Assumption 2 (q(D − C) ≤ C) likewise
    v = thm31.verdict(_t31([0.1, 0.05], [0.36, 0.1], a2=[True, False]), _FITS)
    assert v.verdict == "agrees-in-regime"
    bad = thm31.verdict(_t31([0.1, 0.12], [0.36, 0.10]), _FITS)
    assert bad.verdict == "disagrees" and "engine, not the theory" in bad.reasons[0]
    fit_beats = _FITS.assign(err_fit=[0.10, 0.101, 0.099])  # mean + 3 s.e. (≈ 0.0019) < 1/8
    v = thm31.verdict(_t31([0.1], [0.36]), fit_beats)
    assert v.verdict == "disagrees" and "a GLM beats" in v.reasons[0]
    # one seed far below, the others above: the mean over seeds is not below 1/8
    mixed = _FITS.assign(err_fit=[0.10, 0.16, 0.16])
    assert thm31.verdict(_t31([0.1], [0.36]), mixed).verdict == "agrees"
    near = _FITS.assign(err_fit=[0.122] * 3)  # within 3 s.e. of 1/8: no evidence
    assert thm31.verdict(_t31([0.1], [0.36]), near).verdict == "agrees"
    assert thm31.verdict(_t31([0.1], [np.nan]), _FITS).verdict == "inconclusive"
    assert thm31.verdict(_t31([], []), _FITS).verdict == "inconclusive"


def test_thm31_premises():
    v = thm31.verdict(_t31([0.5, 1.5], [0.2, 0.05]), _FITS)  # nothing in the proved region
    assert v.verdict == "inconclusive" and v.reasons[0].startswith("premise failed")
    # no fitted GLM inside the regime: the exact part alone is implied by the proof
    for fits in (_FITS.iloc[:0], _FITS.assign(x=0.5)):
        v = thm31.verdict(_t31([0.1], [0.36]), fits)
        assert v.verdict == "inconclusive" and "could not fail" in v.reasons[0]


def test_thm31_proved_region_flip_points():
    """Up: the verdict flips where the region reaches the first point below 1/8; down: where
    it leaves the last fitted point (the premise fails)."""
    tables = {"table": _t31([0.05, 0.1, 1.5], [0.4, 0.36, 0.12]), "fit": _FITS}
    assert thm31.judge(tables).verdict == "agrees-in-regime"
    assert thm31.judge(tables, {"X_PROVED": 2.0}).verdict == "disagrees"
    from theorylab.core.claims import sensitivity
    sens = sensitivity(thm31.judge, tables, thm31.CLAIM.thresholds).set_index("threshold")
    # bisection to ~1e-9 relative: 1e-6 is loose
    assert sens.loc["X_PROVED", "flip_above"] == pytest.approx(1.5, rel=1e-6)
    assert sens.loc["X_PROVED", "flip_below"] == pytest.approx(0.115, rel=1e-6)


def test_thm31_closed_form_against_enumeration_and_pz_bound():
    """The closed form equals the convolution engine (rounding: sums of ≤ 10³ O(1) float64
    terms), and the proved bound is below the exact error wherever it is positive."""
    for D, C, q in ((10, 2, 0.46), (12, 3, 0.75), (20, 4, 0.8), (30, 3, 0.3), (40, 4, 0.5)):
        cf = thm31.glm_best_error(D, C, q)
        en = thm31.glm_exact_errors(D, C, q)
        assert abs(cf["err_best_glm"] - en["err_best_glm"]) < 1e-13
        assert abs(cf["err_uniform"] - en["err_uniform"]) < 1e-13
    for D, C, k in ((90, 3, 4), (320, 4, 4), (600, 8, 3)):
        q = C ** k / D
        assert 0 < thm31.pz_bound(D, C, q) <= thm31.glm_best_error(D, C, q)["err_best_glm"]
    assert thm31.pz_bound(6, 2, 4 / 6) == 0.0  # x ≥ 1: no bound


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


# -- Lemmas 4.1-4.2 --------------------------------------------------------------------------------
def _sym(**kw):
    base = {"max_sym_dev": [1e-15], "max_rel_diff_alpha_gamma_rho": [1e-14],
            "final_gamma": [2.0], "final_rho": [-0.5]}
    base.update(kw)
    return pd.DataFrame(base)


def _align(ratio, seeds=(0, 1, 2), jitter=(1.0, 1.1, 0.95)):
    """β/|α| on the N ladder for each seed, seed k scaled by N^(0.01 k)·jitter[k] (so the
    per-seed slopes differ by 0.01 and the interval has a width)."""
    N = np.array([500, 2000, 8000, 32000][: len(ratio)])
    return pd.concat([pd.DataFrame({"seed": k, "N": N,
                                    "beta_over_alpha": np.asarray(ratio) * jitter[k]
                                    * N ** (0.01 * k)}) for k in seeds], ignore_index=True)


def test_lemma_symmetry_verdicts():
    assert lemma41.verdict_symmetry(_sym()).verdict == "agrees"
    assert lemma41.verdict_symmetry(_sym(max_sym_dev=[1e-8])).verdict == "disagrees"
    assert lemma41.verdict_symmetry(_sym(max_rel_diff_alpha_gamma_rho=[1e-6])).verdict == \
        "disagrees"
    assert lemma41.verdict_symmetry(_sym(max_sym_dev=[np.nan])).verdict == "inconclusive"


def test_lemma_symmetry_premise_a_run_that_never_moved():
    v = lemma41.verdict_symmetry(_sym(final_gamma=[0.0], final_rho=[0.0]))
    assert v.verdict == "inconclusive" and v.reasons[0].startswith("premise failed")


def test_lemma_alignment_verdicts():
    N = np.array([500, 2000, 8000, 32000])
    assert lemma41.verdict_alignment(_align(3 / np.sqrt(N))).verdict == "agrees"
    assert lemma41.verdict_alignment(_align([0.3, 0.3, 0.31, 0.3])).verdict == "disagrees"
    assert lemma41.verdict_alignment(_align(3 / np.sqrt(N[:3]))).verdict == "inconclusive"
    assert lemma41.verdict_alignment(_align(N ** -0.18)).verdict == "partial"
    # one seed only: no interval, no verdict
    assert lemma41.verdict_alignment(_align(3 / np.sqrt(N), seeds=(0,))).verdict == \
        "inconclusive"
    # seeds that disagree widely: the interval crosses both cuts
    wide = pd.concat([_align(N ** -0.6, seeds=(0,)), _align(N ** 0.1, seeds=(0,)).assign(seed=1),
                      _align(N ** -0.2, seeds=(0,)).assign(seed=2)])
    assert lemma41.verdict_alignment(wide).verdict == "inconclusive"
    # the slope interval (≈ −0.52 ... −0.46) lies between the cuts once SLOPE_AGREE is −0.6
    t = {"table": _sym(), "alignment": _align(3 / np.sqrt(N))}
    assert lemma41.judge(t, {"SLOPE_AGREE": -0.6}).verdict == "partial"


# -- Theorem 4.2 -----------------------------------------------------------------------------------
_POP = pd.DataFrame({"steps": [3000], "settled_step": [1500], "pop_error": [0.094]})


def _rows42(first_ok, seeds=(0, 1, 2), ds=(5, 10, 20, 40), ladder=(150, 300, 600, 1200, 2400),
            stuck_exc=None):
    """(d, seed, N) rows: seed k at d passes from first_ok[d][k] on (None: never; then the
    excess is `stuck_exc` at every N, or falls with N)."""
    rows = []
    for d in ds:
        for k in seeds:
            f = first_ok[d][k] if isinstance(first_ok, dict) else first_ok
            for N in ladder:
                ok = f is not None and N >= f
                exc = 0.005 if ok else (stuck_exc if stuck_exc is not None else 30 / N)
                rows.append({"d": d, "seed": k, "N": N, "test_error": 0.094 + exc,
                             "test_error_se": 0.004, "pop_error": 0.094,
                             "patch_association": ok})
    return pd.DataFrame(rows)


def test_thm42_verdicts():
    v = thm42.verdict(_rows42(600), _POP)
    assert v.verdict == "agrees" and "N_needed(d = 40) = 600 [600, 600], 3 seeds" in v.reasons[0]
    # seeds that differ: an interval around the geometric mean
    spread = {d: (600, 1200, 2400) for d in (5, 10, 20, 40)}
    v = thm42.verdict(_rows42(spread), _POP)
    assert v.verdict == "agrees" and "N_needed(d = 5) = 1200 [" in v.reasons[0]
    never = {d: (600, 600, None if d == 40 else 600) for d in (5, 10, 20, 40)}
    assert thm42.verdict(_rows42(never), _POP).verdict == "inconclusive"  # one seed censored
    stuck = _rows42(None, stuck_exc=0.05)
    assert thm42.verdict(stuck, _POP).verdict == "disagrees"
    assert thm42.verdict(_rows42(600).iloc[:0], _POP).verdict == "inconclusive"


def test_thm42_premises():
    unsettled = _POP.assign(settled_step=3000)
    v = thm42.verdict(_rows42(600), unsettled)
    assert v.verdict == "inconclusive" and "premise failed" in v.reasons[0]
    one_seed = thm42.verdict(_rows42(600, seeds=(0,)), _POP)
    assert one_seed.verdict == "inconclusive" and "fewer than 3 seeds" in one_seed.reasons[0]


def test_thm42_err_tol_is_judged():
    """A run 0.015 above the population error passes at ERR_TOL = 0.02 and fails at 0.01."""
    t = _rows42(600)
    t.loc[t.N >= 600, "test_error"] = 0.094 + 0.015
    tables = {"table": t, "population": _POP}
    assert thm42.judge(tables).verdict == "agrees"
    assert thm42.judge(tables, {"ERR_TOL": 0.01}).verdict == "inconclusive"


def test_thm42_n_needed_from_rows():
    rows = pd.DataFrame({"d": [10] * 3, "N": [300, 600, 1200], "patch_association": [True] * 3,
                         "test_error": [0.15, 0.11, 0.10], "pop_error": [0.094] * 3,
                         "test_error_se": [0.004] * 3})
    need = thm42.n_needed(rows)
    assert need.N_needed.iloc[0] == 600 and need.status.iloc[0] == "ok"
    assert need.excess_at_N_min.iloc[0] == pytest.approx(0.056)


# -- Theorem 5.1 -----------------------------------------------------------------------------------
def _need51(nf, nu, ns, status_f="ok", ran_out=(INF, INF, INF)):
    st = {INF: "censored-above"}
    return pd.DataFrame({"arm": ["frozen", "uniform", "scratch"], "N_needed": [nf, nu, ns],
                         "status": [status_f, st.get(nu, "ok"), st.get(ns, "ok")],
                         "ran_out_min_N": list(ran_out), "N_min": [25.0] * 3,
                         "best_error": [0.09, 0.16, 0.1]})


def test_thm51_verdicts():
    assert thm51.verdict(_need51(50, INF, 800)).verdict == "agrees"
    assert thm51.verdict(_need51(50, INF, INF)).verdict == "agrees"  # scratch converged, never
    assert thm51.verdict(_need51(800, INF, 400)).verdict == "disagrees"
    assert thm51.verdict(_need51(INF, INF, 400)).verdict == "disagrees"
    assert thm51.verdict(_need51(50, 400, 800)).verdict == "partial"
    # the old main: N_frozen = 25 at the bottom of the ladder, N_scratch = ∞ after 1500 steps
    assert thm51.verdict(_need51(25, INF, INF, status_f="censored-below")).verdict == \
        "inconclusive"
    # scratch ran out of steps at Ñ = 25 ≤ N_frozen: with more steps it might beat frozen
    assert thm51.verdict(_need51(50, INF, INF, ran_out=(INF, INF, 25))).verdict == \
        "inconclusive"
    # ... but running out at Ñ = 400 > N_frozen cannot change the ordering
    assert thm51.verdict(_need51(50, INF, 800, ran_out=(INF, 100, 400))).verdict == "agrees"
    # a disagreement that more steps for the frozen arm might undo is not a finding
    assert thm51.verdict(_need51(800, INF, 400, ran_out=(100, INF, INF))).verdict == \
        "inconclusive"
    assert thm51.verdict(_need51(50, INF, 800).iloc[:2]).verdict == "inconclusive"


def _seeds51(*needs):
    return pd.concat([n.assign(seed=k) for k, n in enumerate(needs)], ignore_index=True)


def test_thm51_seeds_must_agree():
    good, bad = _need51(50, INF, 800), _need51(800, INF, 400)
    assert thm51.verdict_seeds(_seeds51(good, good, good)).verdict == "agrees"
    assert thm51.verdict_seeds(_seeds51(bad, bad, bad)).verdict == "disagrees"
    mixed = thm51.verdict_seeds(_seeds51(good, bad, good))
    assert mixed.verdict == "inconclusive" and "different verdicts" in mixed.reasons[-1]
    few = thm51.verdict_seeds(_seeds51(good, good))
    assert few.verdict == "inconclusive" and few.reasons[0].startswith("premise failed")


def test_thm51_judge_on_run_rows_and_target():
    """Per-run rows → N_needed per (seed, arm) → verdict; a stricter target moves N_frozen."""
    rows = []
    for seed in (0, 1, 2):
        for arm, errs in (("frozen", (0.2, 0.11, 0.10)), ("uniform", (0.2, 0.17, 0.16)),
                          ("scratch", (0.3, 0.2, 0.12))):
            for N, e in zip((25, 50, 100), errs):
                rows.append({"seed": seed, "arm": arm, "N": N, "test_error_best": e,
                             "ran_out": False, "bayes_error": 0.09, "glm_error": 0.156})
    t = {"table": pd.DataFrame(rows)}
    # target 0.09 + 0.4·0.066 = 0.1164: frozen 50, scratch and uniform never
    assert thm51.target(t["table"]) == pytest.approx(0.1164, abs=1e-12)
    assert thm51.judge(t).verdict == "agrees"
    # at 0.2 the target is 0.1032: frozen needs 100, scratch still never
    need = thm51.n_needed(t["table"], thm51.target(t["table"], 0.2))
    assert set(need[need.arm == "frozen"].N_needed) == {100}
    assert thm51.judge(t, {"TARGET_FRAC": 0.2}).verdict == "agrees"
    # at 2.5 the target 0.255 is above the GLM error: frozen passes at the bottom rung
    assert thm51.judge(t, {"TARGET_FRAC": 2.5}).verdict == "inconclusive"
    assert thm51.judge({"table": t["table"].iloc[:0]}).verdict == "inconclusive"


def test_thm51_summary_best_and_last_step():
    tr = pd.DataFrame({"step": [0, 10, 100, 1000], "error": [0.3, 0.1, 0.08, 0.11],
                       "error_se": [0.004] * 4, "train_loss": [0.7, 0.3, 0.1, 0.01],
                       "cos_v_wstar": [0.1, 0.9, 0.95, 0.8], "beta": [0.1, 0.2, 0.4, 1.5],
                       "patch_association": [True] * 4})
    s = thm51.finetune_summary(tr)
    assert (s["test_error_best"], s["best_step"], s["test_error_last"]) == (0.08, 100, 0.11)
    assert s["beta_last"] == 1.5 and s["beta_best"] == 0.4 and not s["ran_out"]
    still = tr.assign(error=[0.3, 0.2, 0.15, 0.1])  # still falling by > 1 s.e. at the end
    assert thm51.finetune_summary(still)["ran_out"]
    # with a validation column the step is chosen on it, and the test error read there
    val = tr.assign(val_error=[0.3, 0.09, 0.1, 0.12])
    s = thm51.finetune_summary(val)
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
