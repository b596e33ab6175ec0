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
_POP = pd.DataFrame({"steps": [800], "settled_step": [600], "pop_error": [0.094],
                     "plateau_error": [0.1188], "pop_loss": [0.27],
                     "gamma_minus_rho": [2.4], "patch_association": [True]})


def _rows42(expo=1.0, ds=(10, 24, 57, 135, 320), seeds=(0, 1, 2, 3), below=2, above=2,
            top_fails=(), cos=0.99):
    """(d, N, seed) rows on a √2 ladder around N_needed(d) = rung(k_d) ≈ 100·(d/10)^expo:
    seed s succeeds (excess 0.005) from rung k_d + (s % 2) on and fails (excess 0.05) below;
    at the d in `top_fails` no rung succeeds."""
    rows = []
    for d in ds:
        k_d = round(2 * expo * math.log2(d / 10))
        for k in range(k_d - below, k_d + above + 1):
            for s in seeds:
                ok = k >= k_d + (s % 2) and d not in top_fails
                rows.append({"d": d, "N": thm42.rung(k), "seed": s,
                             "test_error": 0.094 + (0.005 if ok else 0.05), "pop_error": 0.094,
                             "cos_v_wstar": cos, "patch_association": True,
                             "train_loss": 0.25})
    return pd.DataFrame(rows)


def test_thm42_rung_is_sqrt2_ladder():
    assert [thm42.rung(k) for k in (-2, 0, 1, 2, 6)] == [50, 100, 141, 200, 800]


def test_thm42_agrees_with_a_linear_n50():
    v = thm42.verdict(_rows42(1.0), _POP)
    assert v.verdict == "agrees", v.reasons
    # d = 10: 0, 0, 2, 4, 4 of 4 on rungs 50…200, symmetric about 100
    assert "N50 ∝ d^" in v.reasons[0] and "N50(d=10) = 100 [" in v.reasons[0]
    per_d, fit = thm42.n50_fit(_rows42(1.0))
    assert 0.9 < fit["slope"] < 1.1 and fit["lo"] <= fit["slope"] <= fit["hi"]
    assert (per_d.N50_lo <= per_d.N50).all() and (per_d.N50 <= per_d.N50_hi).all()


# success counts (of 4 seeds) per (d, N) of a full run: N50 crosses 1/2 between the rungs
_COUNTS42 = {10: {283: 0, 400: 1, 566: 2, 800: 2, 1131: 4},
             24: {566: 0, 800: 0, 1131: 2, 1600: 4},
             57: {566: 0, 800: 0, 1131: 0, 1600: 2, 2263: 4},
             135: {566: 0, 800: 0, 1131: 0, 1600: 0, 2263: 0, 3200: 2, 4525: 4},
             320: {566: 0, 800: 0, 1131: 0, 1600: 0, 2263: 0, 3200: 0, 4525: 1, 6400: 3}}


def _counts42(counts):
    """(d, N, seed) rows with seed s succeeding at (d, N) when s < the count there."""
    return pd.DataFrame([{"d": d, "N": N, "seed": s, "pop_error": 0.094,
                          "test_error": 0.094 + (0.005 if s < k else 0.05),
                          "cos_v_wstar": 0.99, "patch_association": True, "train_loss": 0.25}
                         for d, c in counts.items() for N, k in c.items() for s in range(4)])


def test_thm42_uses_every_seed_a_top_rung_at_3_of_4_agrees():
    # d = 320 ends at 3/4 (Wilson [0.30, 0.95]): an interval rule on the top rung alone could
    # not place N_needed there; the logistic fit over all rungs and seeds does
    t = _counts42(_COUNTS42)
    v = thm42.verdict(t, _POP)
    assert v.verdict == "agrees", v.reasons
    per_d, fit = thm42.n50_fit(t)
    assert 0.5 < fit["slope"] < 0.75 and fit["lo"] < fit["slope"] < fit["hi"] < 1.0
    n320 = per_d.set_index("d").loc[320]
    assert 4525 < n320.N50 < 6400 and math.isfinite(n320.N50_hi)
    # d = 24: 0, 0, 2, 4 of 4: the crossing is the 2-of-4 rung
    assert abs(per_d.set_index("d").loc[24, "N50"] / 1131 - 1) < 0.01
    # seeded bootstrap: the same table gives the same interval
    assert thm42.n50_fit(t)[1] == fit


def test_thm42_logistic_fit():
    x = np.log(100.0) + np.log(2.0) * np.array([0.0, 0.5, 1.0])  # exact √2 steps
    # separable (0/4 then 4/4): the prior on b keeps the fit finite, near the geometric
    # midpoint of the bracketing rungs (the third rung, on one side only, pulls it by
    # ~5e-4 in log N; 0.01 is 3 % of a √2 rung, 0.35)
    x50, b = thm42.logistic_fit(x, [[0, 0, 4], [0, 4, 4]], [[4, 4, 4]] * 2)
    assert np.allclose(x50, [0.5 * (x[1] + x[2]), 0.5 * (x[0] + x[1])], atol=0.01)
    assert (b > 0).all() and np.isfinite(b).all()
    # 1/4, 2/4, 3/4: N50 at the middle rung (symmetry; 1e-9 is rounding); on these 12 runs
    # over one octave the prior shrinks b by 5 % from its maximum-likelihood value log2(3)/
    # log(√2) = 3.17 (a flat prior), and moves neither N50
    x50, b = thm42.logistic_fit(x, [[1, 2, 3]], [[4, 4, 4]])
    x50_flat, b_flat = thm42.logistic_fit(x, [[1, 2, 3]], [[4, 4, 4]], slope_sd=1e6)
    assert abs(x50[0] - x[1]) < 1e-9 and abs(x50_flat[0] - x[1]) < 1e-9
    assert b_flat[0] == pytest.approx(math.log(3) / math.log(math.sqrt(2)), rel=1e-6)
    assert 0.9 < b[0] / b_flat[0] < 1.0
    # no failure or no success: N50 is censored (NaN); decreasing: no N50
    x50, _ = thm42.logistic_fit(x, [[0, 0, 0], [4, 4, 4], [4, 2, 0]], [[4, 4, 4]] * 3)
    assert np.isnan(x50).all()


def test_thm42_flat_and_decreasing_n50_agree():
    # degenerate: the same N50 at every d (exponent 0), then one that falls with d
    assert thm42.verdict(_rows42(0.0), _POP).verdict == "agrees"
    _, fit = thm42.n50_fit(_rows42(0.0))
    # identical tables at every d: slope 0 up to rounding; resampled seeds move single N50
    assert abs(fit["slope"]) < 1e-9 and -0.3 < fit["lo"] < 0 < fit["hi"] < 0.3
    assert thm42.verdict(_rows42(-0.5), _POP).verdict == "agrees"


def test_thm42_separable_ladders_agree():
    # every d jumps from 0/4 to 4/4 between two rungs (no rung in between): finite N50
    counts = {d: {thm42.rung(k): (4 if k > kd else 0) for k in range(kd - 2, kd + 3)}
              for d, kd in ((10, 0), (20, 2), (40, 4), (80, 6))}
    t = _counts42(counts)
    assert thm42.verdict(t, _POP).verdict == "agrees"
    per_d, fit = thm42.n50_fit(t)
    # N50 at the geometric midpoint of rungs k_d and k_d + 1, so exactly ∝ d (rounded rungs)
    assert abs(fit["slope"] - 1.0) < 0.01 and fit["lo"] == fit["hi"] == pytest.approx(
        fit["slope"])


def test_thm42_undefined_resamples_count_against_the_estimate():
    s = np.array([np.nan] * 5 + list(np.linspace(0.0, 1.0, 95)))
    lo, hi = thm42._quantiles(s, 0.95)
    assert lo == -INF and hi == INF
    lo, hi = thm42._quantiles(s[4:], 0.95)  # 1 % undefined: inside both tails
    assert math.isfinite(lo) and math.isfinite(hi)


def test_thm42_disagrees_beyond_the_ceiling():
    # N50 ∝ d^4 on d = 10…40: the whole interval lies above K_MAX = 3
    rows = _rows42(4.0, ds=(10, 14, 20, 28, 40))
    v = thm42.verdict(rows, _POP)
    assert v.verdict == "disagrees" and "not a printed bound" in v.reasons[0]
    # the same table agrees once the declared ceiling is raised above the exponent
    tables = {"table": rows, "population": _POP}
    assert thm42.judge(tables, {"K_MAX": 6.0}).verdict == "agrees"


def test_thm42_premises():
    unsettled = _POP.assign(settled_step=800)
    v = thm42.verdict(_rows42(1.0), unsettled)
    assert v.verdict == "inconclusive" and "premise failed" in v.reasons[0]
    no_pa = _POP.assign(patch_association=False)
    assert thm42.verdict(_rows42(1.0), no_pa).verdict == "inconclusive"
    few = thm42.verdict(_rows42(1.0, seeds=(0, 1)), _POP)
    assert few.verdict == "inconclusive" and "fewer than 3 seeds" in few.reasons[0]
    top = thm42.verdict(_rows42(1.0, top_fails=(320,)), _POP)
    assert top.verdict == "inconclusive" and "d=320" in top.reasons[0]
    assert "largest N" in top.reasons[0]
    low = thm42.verdict(_rows42(1.0, below=0), _POP)
    assert low.verdict == "inconclusive" and "not located" in low.reasons[0]
    # the top rung at exactly 2/4 does not bracket the crossing (strictly above P_TARGET)
    high = thm42.verdict(_rows42(1.0, above=0), _POP)
    assert high.verdict == "inconclusive" and "does not bracket" in high.reasons[0]
    # a target of 1 (P_TARGET × 2 in the sensitivity scan) is never crossed by a logistic curve
    tables = {"table": _rows42(1.0), "population": _POP}
    p1 = thm42.judge(tables, {"P_TARGET": 1.0})
    assert p1.verdict == "inconclusive" and "not inside (0, 1)" in p1.reasons[0]
    one = thm42.verdict(_rows42(1.0, ds=(10,)), _POP)
    assert one.verdict == "inconclusive" and "a fit needs 4" in one.reasons[0]
    interp = _rows42(1.0)
    interp.loc[interp.d == 320, "train_loss"] = 0.004  # the fit interpolates at every N
    iv = thm42.verdict(interp, _POP)
    assert iv.verdict == "inconclusive" and "interpolates" in iv.reasons[0]
    three = thm42.verdict(_rows42(1.0, ds=(10, 24, 57)), _POP)
    assert three.verdict == "inconclusive" and "a fit needs 4" in three.reasons[0]
    assert thm42.verdict(_rows42(1.0).iloc[:0], _POP).verdict == "inconclusive"


def test_thm42_success_needs_both_criteria():
    t = _rows42(1.0)
    ok = thm42.success_rows(t)
    assert ok.ok.sum() == (t.test_error < 0.094 + 0.012).sum()
    # cos 0.5 at d = 10: tan∠/√d = √3/√10 = 0.548 > 0.5 fails; at d = 24 it is 0.354 and passes
    low_cos = thm42.success_rows(_rows42(1.0, cos=0.5))
    assert not low_cos[low_cos.d == 10].ok.any()
    assert (low_cos[low_cos.d == 24].ok == ok[ok.d == 24].ok).all()
    # the noise ratio is judged: at 0.6 the d = 10 runs pass again
    tables = {"table": _rows42(1.0, cos=0.5), "population": _POP}
    assert thm42.judge(tables).verdict == "inconclusive"
    assert thm42.judge(tables, {"NOISE_RATIO_MAX": 0.6}).verdict == "agrees"


def test_thm42_excess_tol_is_judged():
    """Runs 0.010 above the population error pass at EXCESS_TOL = 0.012 and fail at 0.008;
    a tolerance above the error patch association buys (0.1188 − 0.094) is refused."""
    t = _rows42(1.0)
    t.loc[t.test_error < 0.094 + 0.012, "test_error"] = 0.094 + 0.010
    tables = {"table": t, "population": _POP}
    assert thm42.judge(tables).verdict == "agrees"
    assert thm42.judge(tables, {"EXCESS_TOL": 0.008}).verdict == "inconclusive"
    v = thm42.judge(tables, {"EXCESS_TOL": 0.03})
    assert v.verdict == "inconclusive" and "patch association buys" in v.reasons[0]


def test_thm42_success_curve_and_interval():
    curve = thm42.success_curve(_rows42(1.0))
    c10 = curve[curve.d == 10].set_index("N")
    # seeds 0, 2 pass from N = 100, seeds 1, 3 from 141: 2/4 then 4/4 (Wilson 0.51 lower end)
    assert c10.loc[100, "successes"] == 2 and c10.loc[141, "successes"] == 4
    assert 0.5 < c10.loc[141, "p_lo"] < 0.52 and c10.loc[100, "p_lo"] < 0.5


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


def test_thm42_exp_of_an_extrapolated_log_n_is_infinite_not_an_error():
    """A logistic fit far outside the ladder (as in the sensitivity scan at an extreme target)
    gives a log N50 beyond float64's exp range: it is reported as +inf."""
    assert thm42.exp_or_inf(math.log(800.0)) == pytest.approx(800.0, rel=1e-15)
    assert thm42.exp_or_inf(1e4) == math.inf
    assert thm42.exp_or_inf(-math.inf) == 0.0
