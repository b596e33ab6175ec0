"""Theorem 4.2 (RECONSTRUCTED, notes §4.6): GD on the empirical risk (E) with N = poly(d)
samples generalizes like GD on the population risk (P).

**Model.** The reference data model (D = 10, C = 2, Figure 4's sets, q = ln(100)/10, frozen
diagonal ln ln 100) with only d varied, from d = D to 32·D (``D_LIST``). With temperature 1
and v ∥ w* the population dynamics do not depend on d, so the exact population GD (the
exchangeable engine) gives one population error for every d; d enters the empirical problem
only through the noise ξ ∈ ℝ^d (σ² = 1/d) that v can fit.

**Success of one run** (kept apart from patch association, which is reported but not judged:
it does not depend on d): after ``STEPS`` GD steps at lr ``LR`` on N samples,

- the test error (``N_TEST`` fresh points) is at most ``EXCESS_TOL`` above the exact population
  error after the same steps (one-sided: the theorem asks for a small test error), and
- v has learned w* at the scale the data see it: the learned projection of a patch is
  ⟨v, X_j⟩ = α c_j + ⟨v_⊥, ξ_j⟩ with α = ⟨v, w*⟩, and on fresh data the noise term is exactly
  N(0, σ²‖v_⊥‖²), so its ratio to the signal is r = σ‖v_⊥‖/|α| = tan∠(v, w*)/√d; success
  needs r ≤ ``NOISE_RATIO_MAX``, i.e. cos(v, w*) ≥ 1/√(1 + NOISE_RATIO_MAX²·d).

**Success probability and N50.** Every (d, N) runs the seeds ``SEEDS`` in one batched run
([`run_sweep`][theorylab.jelassi2022.sweep.run_sweep]); the success fraction of each (d, N) is
reported with its Wilson interval. The N ladder is √2-spaced (``rung``); per d it is extended
upwards until every seed of the top rung succeeds and the fit there no longer interpolates
(mean training loss ≥ ``INTERP_FRAC`` × population loss: below the interpolation threshold
N ≈ c·d the test error can rise again with N, double descent) or rung(``K_CAP``) = 6400, and
downwards until no seed of the bottom rung succeeds (or rung(``K_FLOOR``) = 25). Anchoring
both ends on all-fail and all-success rungs keeps N50 defined in the bootstrap resamples of the
seeds (a resample of a ladder whose bottom rung has one success in four can draw that seed
four times and see no failure at all).
N50(d) is where a logistic fit of success against log N, p(N) = σ(b·(log N − log N50)),
over every rung and seed of that d ([`logistic_fit`][]; maximum likelihood with a weak
Gaussian prior ``SLOPE_SD`` on b, so separable data have a finite fit) crosses ``P_TARGET``.

**Exponent.** log N50 against log d, least squares. The 95 % intervals of N50 and of the
exponent are one percentile bootstrap over seeds ([`n50_fit`][]: ``N_BOOT`` resamples,
generator seed ``BOOT_SEED``; the seeds of every d resampled with replacement, every N50 and
the slope refitted).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from theorylab.core.claims import (
    Claim,
    ClaimResult,
    Threshold,
    point_rows,
    threshold_values,
    wilson_interval,
)
from theorylab.core.claims.verdict import MIN_FIT_POINTS, Verdict
from theorylab.core.sweep import call_point, run_points

from ..config import PAPER_NAME
from ..setups import REF_DIAG, reference_config
from ..trainer import run_experiment

__all__ = ["CLAIM", "D_LIST", "SEEDS", "THRESHOLDS", "judge", "verdict", "success_curve",
           "logistic_fit", "n50_fit", "rung", "seeds_point"]

#: GD steps and learning rate of both problems: the population run is past phase III from
#: about step 600 on (its fair-coin error then stays at its final value; checked as a premise).
STEPS = 800
LR = 1.0
N_TEST = 5000
#: d from D = 10 to 32·D, geometric.
D_LIST = (10, 24, 57, 135, 320)
#: seeds of every (d, N): samples, noise, test set, batched in one run.
SEEDS = (0, 1, 2, 3)
MIN_SEEDS = 3
#: ladder bounds: rung(-4) = 25 and rung(12) = 6400. The cap is the time budget: a rung
#: costs N·D·d multiply-adds twice per step and seed (d = 320, N = 6400: ≈ 80 s of one core;
#: N = 9051 measured 112 s).
K_FLOOR, K_CAP = -4, 12
#: first rungs of every d (rung(5) = 566, rung(6) = 800); the ladder grows from there.
K_START = (5, 6)
#: the population run has settled when its fair-coin error moves by less than this over the
#: recorded steps after ``settled_step`` (rounding of an exact error).
SETTLE_TOL = 1e-12
#: bootstrap resamples of the N50 and exponent intervals, and the seed of their generator
#: (the same tables give the same intervals).
N_BOOT = 1000
BOOT_SEED = 0
LEVEL = 0.95

EXCESS_TOL = 0.012
NOISE_RATIO_MAX = 0.5
INTERP_FRAC = 0.5
P_TARGET = 0.5
SLOPE_SD = 10.0
K_MAX = 3.0

THRESHOLDS = (
    Threshold("EXCESS_TOL", EXCESS_TOL, "project choice",
              "half the error that patch association buys in the population run (fair-coin "
              "error 0.1188 on the phase-I plateau, 0.0944 after phase III: gap 0.0244), so a "
              "run that stays at the plateau fails; 2.9 standard errors of a 5000-point test "
              "error near 0.1 (0.0042)",
              role="success: test error − population error ≤ it (premise: below the gap)"),
    Threshold("NOISE_RATIO_MAX", NOISE_RATIO_MAX, "project choice",
              "the noise part of a patch's projection ⟨v, X_j⟩ at most half its signal part "
              "(σ‖v_⊥‖ ≤ |α|/2): a ±w* patch keeps its sign with probability Φ(2) = 0.977; a "
              "fixed cos(v, w*) would instead demand a per-patch SNR growing like d",
              role="success: tan∠(v, w*)/√d ≤ it"),
    Threshold("INTERP_FRAC", INTERP_FRAC, "project choice",
              "(E) approximates (P) when its training loss is near the population loss; a fit "
              "whose training loss is below half of it carries the labels on the noise "
              "directions (interpolation), where the test error can rise again with N (double "
              "descent), so success there does not yet say that larger N keep succeeding",
              role="premise: mean training loss at every d's largest N ≥ it × population loss"),
    Threshold("P_TARGET", P_TARGET, "project choice",
              "N50 is the N at which a run succeeds as often as not (the median run succeeds)",
              role="N50: the fitted success probability equals it; premise: the ladder's "
                   "smallest rung lies below it and its largest above it"),
    Threshold("SLOPE_SD", SLOPE_SD, "project choice",
              "a weak Gaussian prior (standard deviation) on the logistic slope b per unit of "
              "log N, so that separable data (all failures below all successes) have a finite "
              "fit, near the midpoint of the bracketing rungs on the log scale; b = 10 already "
              "moves p from 0.15 to 0.85 within one √2 rung (Δlog N = 0.35), while fits on "
              "overlapping data have b of a few units: the prior shrinks those by a few per "
              "cent (2 % at d = 10 of the full run) and moves their N50 by far less than a "
              "rung",
              role="N50: logistic fit of success against log N with prior b ~ N(0, it²)"),
    Threshold("K_MAX", K_MAX, "project choice",
              "the reconstructed statement fixes no exponent, so a finite ladder tests a "
              "declared ceiling: 3 is one power of d above the d² that the steepest quantity "
              "tracked needs (‖v_⊥‖² of a fully fitted v grows like d²/N, so a fixed cos(v, w*) "
              "needs N ∝ d²); parametric rates for the d + D(D−1) trained parameters give d¹",
              role="agrees: the exponent's interval lies at or below it; disagrees: above it"),
)


def rung(k: int) -> int:
    """The k-th rung of the √2-spaced ladder: round(100·2^(k/2)) (…, 71, 100, 141, 200, …)."""
    return int(round(100 * 2 ** (k / 2)))


def _k_of(N: int) -> int:
    return int(round(2 * math.log2(N / 100)))


def success_rows(table: pd.DataFrame, excess_tol: float = EXCESS_TOL,
                 noise_max: float = NOISE_RATIO_MAX) -> pd.DataFrame:
    """`table` (d, N, seed rows) with ``excess`` = test − population error, ``noise_ratio`` =
    tan∠(v, w*)/√d and ``ok`` = excess ≤ `excess_tol` and noise_ratio ≤ `noise_max`."""
    t = table.copy()
    t["excess"] = t.test_error - t.pop_error
    cos = t.cos_v_wstar.clip(-1.0, 1.0)
    with np.errstate(divide="ignore", invalid="ignore"):
        t["noise_ratio"] = np.sqrt(np.maximum(1.0 - cos ** 2, 0.0)) / cos.abs() / np.sqrt(t.d)
    t["ok"] = (t.excess <= excess_tol) & (t.noise_ratio <= noise_max)
    return t


def success_curve(table: pd.DataFrame, excess_tol: float = EXCESS_TOL,
                  noise_max: float = NOISE_RATIO_MAX, level: float = LEVEL) -> pd.DataFrame:
    """Per (d, N): seeds, successes, the success probability p and its Wilson interval
    (p_lo, p_hi), and the mean excess error, cos(v, w*) and patch-association share."""
    t = success_rows(table, excess_tol, noise_max)
    t["pa"] = t.patch_association.astype(bool)
    c = t.groupby(["d", "N"]).agg(
        seeds=("ok", "size"), successes=("ok", "sum"), excess_mean=("excess", "mean"),
        excess_max=("excess", "max"), cos_mean=("cos_v_wstar", "mean"),
        noise_ratio_max=("noise_ratio", "max"), pa_share=("pa", "mean"),
        train_loss_mean=("train_loss", "mean")).reset_index()
    c["successes"] = c.successes.astype(int)
    w = [wilson_interval(k, n, level) for k, n in zip(c.successes, c.seeds)]
    c["p"], c["p_lo"], c["p_hi"] = ([x[i] for x in w] for i in range(3))
    cols = ["d", "N", "seeds", "successes", "p", "p_lo", "p_hi", "excess_mean", "excess_max",
            "cos_mean", "noise_ratio_max", "pa_share", "train_loss_mean"]
    return c[cols] if len(c) else pd.DataFrame(columns=cols)


def _logit(p: float) -> float:
    return math.log(p / (1.0 - p))


def logistic_fit(logN: np.ndarray, k: np.ndarray, n: np.ndarray, p_target: float = P_TARGET,
                 slope_sd: float = SLOPE_SD, iters: int = 100
                 ) -> tuple[np.ndarray, np.ndarray]:
    """Logistic fit of the success probability in log N, batched over rows.

    `logN` (R,) are the rungs, `k` and `n` (B, R) the successes and runs of B data sets. Each
    row maximizes Σ log Binomial(k | n, σ(a + b·(log N − x̄))) − b²/(2·`slope_sd`²) (a weak
    Gaussian prior on the slope b keeps separable data, all failures below all successes,
    finite: its N50 then lies near the midpoint of the bracketing rungs on the log scale,
    exactly there when the ladder is symmetric about them). Returns (log N50, b) per row:
    log N50 = x̄ + (logit(`p_target`) − a)/b; NaN where the row has no success or no failure
    (N50 censored) or b ≤ 0 (not increasing)."""
    k = np.atleast_2d(np.asarray(k, dtype=float))
    n = np.atleast_2d(np.asarray(n, dtype=float))
    x = np.asarray(logN, dtype=float)
    xbar = float(x.mean())
    x = x - xbar
    lam = 1.0 / slope_sd ** 2
    tot, kk = n.sum(axis=1), k.sum(axis=1)
    both = (kk > 0) & (kk < tot)
    x50, b_out = np.full(len(k), np.nan), np.full(len(k), np.nan)
    k, n, kk, tot = k[both], n[both], kk[both], tot[both]  # the others stay NaN (censored)
    rate = kk / tot
    a, b = np.log(rate / (1 - rate)), np.zeros(len(k))
    for _ in range(iters):  # Newton on a strictly convex objective (both classes present)
        p = 1.0 / (1.0 + np.exp(-(a[:, None] + b[:, None] * x)))
        r = n * p - k
        w = n * p * (1 - p)
        ga, gb = r.sum(1), (r * x).sum(1) + lam * b
        haa, hab, hbb = w.sum(1) + 1e-12, (w * x).sum(1), (w * x * x).sum(1) + lam
        det = haa * hbb - hab ** 2
        da, db = (hbb * ga - hab * gb) / det, (haa * gb - hab * ga) / det
        step = np.maximum(1.0, np.maximum(np.abs(da), np.abs(db)) / 5.0)  # damped: ≤ 5
        a, b = a - da / step, b - db / step
        if not np.all(np.abs(da) + np.abs(db) < 1e-12):
            continue
        break  # converged (quadratically) in every row
    inc = b > 0
    x50[np.flatnonzero(both)[inc]] = xbar + (_logit(p_target) - a[inc]) / b[inc]
    b_out[both] = b
    return x50, b_out


def _ok_matrix(t: pd.DataFrame, d) -> tuple[np.ndarray, np.ndarray]:
    g = t[t.d == d].set_index(["N", "seed"]).ok.astype(float).unstack("seed").sort_index()
    return g.index.to_numpy(dtype=float), g.to_numpy(dtype=float)  # NaN: (N, seed) missing


def _quantiles(s: np.ndarray, level: float) -> tuple[float, float]:
    """Percentile interval of `s` (B, …) along axis 0 with NaN (undefined) counted against
    the estimate: as −∞ for the lower end and +∞ for the upper end. No interpolation between
    order statistics, so an infinite one stays infinite."""
    a = (1 - level) / 2
    lo = np.quantile(np.where(np.isnan(s), -np.inf, s), a, axis=0, method="inverted_cdf")
    hi = np.quantile(np.where(np.isnan(s), np.inf, s), 1 - a, axis=0, method="inverted_cdf")
    return lo, hi


def _slope(logd: np.ndarray, logN: np.ndarray) -> np.ndarray:
    """Least-squares slope of each row of `logN` (…, n_d) against `logd` (n_d,)."""
    x = logd - logd.mean()
    return ((logN - logN.mean(axis=-1, keepdims=True)) * x).sum(axis=-1) / float(x @ x)


def exp_or_inf(x: float) -> float:
    """exp(x) for a log-N value, +inf (not an OverflowError) beyond float64's range: a fit far
    outside the ladder (e.g. a threshold scanned to an extreme in the sensitivity analysis)
    extrapolates N50 or an interval end without bound."""
    return math.inf if x > 709.0 else math.exp(x)


def n50_fit(table: pd.DataFrame, excess_tol: float = EXCESS_TOL,
            noise_max: float = NOISE_RATIO_MAX, p_target: float = P_TARGET,
            slope_sd: float = SLOPE_SD, n_boot: int = N_BOOT, level: float = LEVEL,
            seed: int = BOOT_SEED) -> tuple[pd.DataFrame, dict[str, float]]:
    """N50(d) per d and the exponent of N50 ∝ d^k, with bootstrap intervals over seeds.

    Per d, [`logistic_fit`][] over every rung and seed gives N50 (success probability
    `p_target`) and the slope b. The exponent is the least-squares slope of log N50 on log d.
    Each of `n_boot` resamples (generator seeded with `seed`) draws the seeds of every d with
    replacement (one draw for all rungs of a d, independently across d), refits every N50 and
    the exponent; the intervals are percentile intervals at `level`, a resample whose N50 is
    undefined at some d (no success or no failure, or a decreasing fit) counting against the
    estimate at both ends (``_quantiles``). Returns the per-d table (d, N50, N50_lo, N50_hi,
    b, N_min, N_max, p_at_N_min, p_at_N_max, train_loss_at_N_max) and ``{"slope", "lo",
    "hi", "r2", "n", "undefined"}`` (NaN where fewer than [`MIN_FIT_POINTS`][] d have an
    N50; ``undefined``: the share of resamples with an undefined N50)."""
    t = success_rows(table, excess_tol, noise_max)
    cols = ["d", "N50", "N50_lo", "N50_hi", "b", "N_min", "N_max", "p_at_N_min",
            "p_at_N_max", "train_loss_at_N_max"]
    fit = {"slope": math.nan, "lo": math.nan, "hi": math.nan, "r2": math.nan, "n": 0,
           "undefined": math.nan}
    if len(t) == 0:
        return pd.DataFrame(columns=cols), fit
    rng = np.random.default_rng(seed)
    rows, boots = [], []
    for d in sorted(t.d.unique()):
        N, ok = _ok_matrix(t, d)
        x50, b = logistic_fit(np.log(N), np.nansum(ok, 1)[None], (~np.isnan(ok)).sum(1)[None],
                              p_target, slope_sd)
        idx = rng.integers(0, ok.shape[1], size=(n_boot, ok.shape[1]))
        rs = ok[:, idx]  # (rungs, n_boot, seeds)
        xb, _ = logistic_fit(np.log(N), np.nansum(rs, 2).T, (~np.isnan(rs)).sum(2).T,
                             p_target, slope_sd)
        boots.append(xb)
        lo, hi = _quantiles(xb, level)
        p = np.nanmean(ok, axis=1)
        g = t[t.d == d]
        rows.append({"d": d, "N50": exp_or_inf(x50[0]) if np.isfinite(x50[0]) else math.nan,
                     "N50_lo": exp_or_inf(lo), "N50_hi": exp_or_inf(hi), "b": float(b[0]),
                     "N_min": N[0], "N_max": N[-1], "p_at_N_min": float(p[0]),
                     "p_at_N_max": float(p[-1]),
                     "train_loss_at_N_max": float(g[g.N == N[-1]].train_loss.mean())})
    per_d = pd.DataFrame(rows, columns=cols)
    fin = np.isfinite(per_d.N50.to_numpy())
    fit["n"] = int(fin.sum())
    if fin.sum() < MIN_FIT_POINTS or fin.sum() < len(per_d):
        return per_d, fit
    logd = np.log(per_d.d.to_numpy(dtype=float))
    ly = np.log(per_d.N50.to_numpy(dtype=float))
    s = float(_slope(logd, ly))
    resid = ly - ly.mean() - s * (logd - logd.mean())
    ss = float(((ly - ly.mean()) ** 2).sum())
    B = np.stack(boots, axis=1)  # (n_boot, n_d), NaN where undefined
    und = np.isnan(B).any(axis=1)
    sb = np.where(und, np.nan, _slope(logd, np.where(und[:, None], 0.0, B)))
    lo, hi = _quantiles(sb, level)
    fit.update(slope=s, r2=1.0 - float(resid @ resid) / ss if ss > 0 else 1.0, lo=float(lo),
               hi=float(hi), undefined=float(und.mean()))
    return per_d, fit


def verdict(table: pd.DataFrame, population: pd.DataFrame, excess_tol: float = EXCESS_TOL,
            noise_max: float = NOISE_RATIO_MAX, p_target: float = P_TARGET,
            k_max: float = K_MAX, interp_frac: float = INTERP_FRAC,
            slope_sd: float = SLOPE_SD, n_boot: int = N_BOOT) -> Verdict:
    """Verdict from the (d, N, seed) rows and the population run's summary (``settled_step``,
    ``steps``).

    Premises (else ``inconclusive`` with the reason): 0 < `p_target` < 1; `excess_tol` lies
    below the error that patch association buys in the population run (``plateau_error`` −
    ``pop_error``); the population run performs patch association at its last step and its
    error has settled before it; ≥ 3 seeds at every (d, N); at every d the ladder brackets
    the crossing (the success fraction of the smallest rung is < `p_target`, that of the
    largest > `p_target`), the largest rung's mean training loss is ≥ `interp_frac` × the
    population loss (past interpolation) and the logistic fit increases with N;
    ≥ [`MIN_FIT_POINTS`][] values of d.
    Then, with the exponent k of N50 ∝ d^k and its bootstrap interval [lo, hi]
    ([`n50_fit`][]): ``agrees`` when hi ≤ `k_max` (N50 grows at most like the declared
    polynomial), ``disagrees`` when lo > `k_max`, else ``inconclusive`` (the interval
    straddles the ceiling)."""
    if len(table) == 0 or len(population) == 0:
        return Verdict("inconclusive", ("no d measured",))
    if not 0.0 < p_target < 1.0:
        return Verdict("inconclusive", (f"premise failed: the target success probability "
                                        f"{p_target:g} is not inside (0, 1), so no N reaches "
                                        "it on a logistic curve",))
    pop = population.iloc[0]
    if not (pop.settled_step < pop.steps and bool(pop.patch_association)):
        return Verdict("inconclusive", (f"premise failed: the population run has not settled "
                                        f"after patch association within {pop.steps:g} steps "
                                        f"(settled from step {pop.settled_step:g}, γ − ρ = "
                                        f"{pop.gamma_minus_rho:.3f})",))
    gap = pop.plateau_error - pop.pop_error
    if not excess_tol < gap:
        return Verdict("inconclusive", (f"premise failed: the excess tolerance {excess_tol:g} "
                                        f"is not below the error that patch association buys "
                                        f"in the population run ({pop.plateau_error:.4f} → "
                                        f"{pop.pop_error:.4f}, gap {gap:.4f}): a run without "
                                        "its benefit would pass",))
    curve = success_curve(table, excess_tol, noise_max)
    few = curve[curve.seeds < MIN_SEEDS]
    if len(few):
        return Verdict("inconclusive", (f"premise failed: fewer than {MIN_SEEDS} seeds at "
                                        + ", ".join(f"(d={r.d:g}, N={r.N:g})"
                                                    for r in few.itertuples()),))
    per_d, fit = n50_fit(table, excess_tol, noise_max, p_target, slope_sd, n_boot)
    bad = []
    for r in per_d.itertuples():
        if not r.p_at_N_max > p_target:
            bad.append(f"d={r.d:g}: the success fraction at the largest N ({r.N_max:g}; "
                       f"{r.p_at_N_max:.2f}) is not above {p_target:g}: the ladder does not "
                       f"bracket N50 (the test error is not within {excess_tol:g} of the "
                       "population error there often enough)")
        elif not r.p_at_N_min < p_target:
            bad.append(f"d={r.d:g}: the success fraction at the smallest N ({r.N_min:g}; "
                       f"{r.p_at_N_min:.2f}) is not below {p_target:g}: N50 is not located")
        elif r.train_loss_at_N_max < interp_frac * pop.pop_loss:
            bad.append(f"d={r.d:g}: the fit still interpolates at the largest N ({r.N_max:g}; "
                       f"training loss {r.train_loss_at_N_max:.4f} < {interp_frac:g} × "
                       f"population loss {pop.pop_loss:.4f}): success beyond the "
                       "interpolation threshold is not established")
        elif not np.isfinite(r.N50):
            bad.append(f"d={r.d:g}: the logistic fit of success against log N does not "
                       "increase with N")
    if bad:
        return Verdict("inconclusive", tuple(f"premise failed: {b}" for b in bad))
    if len(per_d) < MIN_FIT_POINTS:
        return Verdict("inconclusive", (f"premise failed: {len(per_d)} values of d, a fit "
                                        f"needs {MIN_FIT_POINTS}",))
    txt = "; ".join(f"N50(d={r.d:g}) = {r.N50:.0f} [{r.N50_lo:.0f}, {r.N50_hi:.0f}]"
                    for r in per_d.itertuples())
    k = (f"N50 ∝ d^{fit['slope']:.2f} [{fit['lo']:.2f}, {fit['hi']:.2f}] (95 % bootstrap over "
         f"seeds, {fit['undefined']:.1%} of resamples with an undefined N50, r² = "
         f"{fit['r2']:.2f}, d = {per_d.d.min():g}–{per_d.d.max():g})")
    if fit["hi"] <= k_max:
        return Verdict("agrees", (f"{k}: the exponent's interval lies at or below the declared "
                                  f"ceiling {k_max:g}, so N = poly(d) samples suffice on this "
                                  f"range ({txt})",))
    if fit["lo"] > k_max:
        return Verdict("disagrees", (f"{k}: the whole interval lies above the declared ceiling "
                                     f"{k_max:g} ({txt}); this contradicts our reading of "
                                     "poly(d) (the ceiling is a project choice, the theorem's "
                                     "exponent was not read), not a printed bound",))
    return Verdict("inconclusive", (f"{k}: the interval straddles the declared ceiling "
                                    f"{k_max:g} ({txt})",))


def seeds_point(d: int, N: int, seeds: list[int], steps: int, lr: float, pop_err: float
                ) -> pd.DataFrame:
    """The empirical runs at (d, N) for `seeds`, in one batched run: one row per seed at the
    last step."""
    from ..sweep import run_sweep

    cfg = reference_config(engine="empirical", method="auto", steps=steps, lr_v=lr, n_train=N,
                           n_test=N_TEST, n_records=2).replace(data={"d": d},
                                                               model={"diag": REF_DIAG})
    tr = run_sweep(cfg, seeds=seeds, progress=False)
    last = tr[tr.step == steps]
    return pd.DataFrame({
        "d": d, "N": N, "seed": last.seed.to_numpy(), "steps": steps,
        "test_error": last.error.to_numpy(), "test_error_se": last.error_se.to_numpy(),
        "pop_error": pop_err, "train_loss": last.train_loss.to_numpy(),
        "test_loss": last.loss.to_numpy(), "alpha": last.alpha.to_numpy(),
        "cos_v_wstar": last.cos_v_wstar.to_numpy(), "gamma": last.gamma.to_numpy(),
        "rho": last.rho.to_numpy(), "pa_gap": last.pa_gap.to_numpy(),
        "sym_dev": last.sym_dev.to_numpy(),
        "patch_association": last.patch_association.astype(bool).to_numpy()})


def _population(steps: int) -> pd.DataFrame:
    pop = run_experiment(reference_config(steps=steps, lr_v=LR, n_records=20),
                         progress=False).trajectory
    last = pop.iloc[-1]
    err = float(last.error_fair)
    moving = (pop.error_fair - err).abs() > SETTLE_TOL
    settled = int(pop.step[moving].max() + 1) if moving.any() else 0
    # the error on the plateau before the final value: the last recorded one before it settled
    plateau = float(pop.error_fair[moving].iloc[-1]) if moving.any() else err
    return pd.DataFrame([{"steps": steps, "settled_step": settled, "pop_error": err,
                          "plateau_error": plateau,
                          "pop_loss": float(last.loss),
                          "gamma_minus_rho": float(last.gamma - last.rho),
                          "patch_association": bool(last.patch_association)}])


def run(quick: bool) -> ClaimResult:
    d_list = (10, 20) if quick else D_LIST
    steps = 40 if quick else STEPS
    k_start, k_floor, k_cap = ((-2, -1), -2, -1) if quick else (K_START, K_FLOOR, K_CAP)
    seeds = list(SEEDS)
    population = _population(steps)
    pop_err = float(population.pop_error.iloc[0])

    def points(cells):  # one sweep point per (d, N), all seeds batched inside it
        return [point_rows(p) for p in run_points([
            call_point(f"{__name__}:seeds_point", d=d, N=rung(k), seeds=seeds, steps=steps,
                       lr=LR, pop_err=pop_err) for d, k in cells])]

    parts = points([(d, k) for d in d_list for k in k_start])
    while True:  # grow every d's ladder until both ends bracket the target (or hit a bound)
        table = pd.concat(parts, ignore_index=True)
        curve = success_curve(table)
        more = []
        for d, g in curve.sort_values("N").groupby("d"):
            top, bottom = g.iloc[-1], g.iloc[0]
            past = top.train_loss_mean >= INTERP_FRAC * population.pop_loss.iloc[0]
            if (top.p < 1.0 or not past) and _k_of(top.N) < k_cap:
                more.append((d, _k_of(top.N) + 1))
            if bottom.p > 0.0 and _k_of(bottom.N) > k_floor:
                more.append((d, _k_of(bottom.N) - 1))
        if not more:
            break
        parts += points(more)
    table = success_rows(table).sort_values(["d", "N", "seed"], ignore_index=True)
    v = judge({"table": table, "population": population})
    curve = success_curve(table)
    need, fit = n50_fit(table)
    pop0 = population.iloc[0]
    big = table[table.N == table.groupby("d").N.transform("max")]
    reading = [
        f"Population GD (lr {LR}, {steps} steps): fair-coin error {pop_err:.4f}, settled from "
        f"the recorded step {pop0.settled_step:g} on (γ − ρ = {pop0.gamma_minus_rho:.3f}); the "
        "same at every d (the population dynamics do not depend on d in this model).",
        "Success probability (Wilson 95 %) per (d, N): " + "; ".join(
            f"d={r.d:g}, N={r.N:g}: {r.successes}/{r.seeds} [{r.p_lo:.2f}, {r.p_hi:.2f}]"
            for r in curve.itertuples()) + ".",
        f"N50(d) (logistic fit of success against log N over all rungs and seeds, p = "
        f"{P_TARGET:g}; 95 % bootstrap over seeds, {N_BOOT} resamples): "
        + "; ".join(f"d={r.d:g}: {r.N50:.0f} [{r.N50_lo:.0f}, {r.N50_hi:.0f}]"
                    for r in need.itertuples())
        + (f". Fit N50 ∝ d^{fit['slope']:.2f} [{fit['lo']:.2f}, {fit['hi']:.2f}] "
           f"(same bootstrap), r² = {fit['r2']:.2f}." if np.isfinite(fit["slope"])
           else f". No exponent (fewer than {MIN_FIT_POINTS} d with an N50)."),
        "At the largest N of each d: mean excess " + ", ".join(
            f"{g.excess.mean():.4f} (d={d:g})" for d, g in big.groupby("d"))
        + "; mean cos(v, w*) " + ", ".join(f"{g.cos_v_wstar.mean():.3f} (d={d:g})"
                                          for d, g in big.groupby("d"))
        + "; noise ratio tan∠/√d up to " + ", ".join(f"{g.noise_ratio.max():.3f} (d={d:g})"
                                                    for d, g in big.groupby("d")) + ".",
        f"Patch association (margin, not judged) holds in {table.patch_association.mean():.0%} "
        "of the runs; it does not depend on d.",
        f"The horizon is fixed in steps ({steps} at lr {LR}) while the noise directions of v "
        "have curvature ∝ σ² = 1/d: at large d they are fitted less within the horizon (early "
        "stopping), so N50 need not grow monotonically with d.",
        f"{len(seeds)} seeds per (d, N), batched in one run per point; the ladder is √2-spaced "
        f"from {rung(k_floor)} to {rung(k_cap)}.",
    ]
    headline = {"pop_error_fair": pop_err,
                **{f"N50(d={r.d:g})": f"{r.N50:.0f} [{r.N50_lo:.0f}, {r.N50_hi:.0f}]"
                   for r in need.itertuples()},
                "exponent": (f"{fit['slope']:.2f} [{fit['lo']:.2f}, {fit['hi']:.2f}]"
                             if np.isfinite(fit["slope"]) else "n/a")}

    def figure(fig):
        ax, bx = fig.add_subplot(1, 2, 1), fig.add_subplot(1, 2, 2)
        for d, g in curve.groupby("d"):
            ax.errorbar(g.N, g.p, yerr=[g.p - g.p_lo, g.p_hi - g.p], marker="o", capsize=2,
                        label=f"d={d:g}")
        ax.axhline(P_TARGET, color="k", ls="--", lw=0.8, label=f"target {P_TARGET:g}")
        ax.set_xscale("log")
        ax.set_xlabel("N (training samples)")
        ax.set_ylabel("success probability (Wilson 95 %)")
        ax.legend(fontsize=7)
        fin = need[np.isfinite(need.N50) & np.isfinite(need.N50_hi)]
        bx.errorbar(fin.d, fin.N50, yerr=[fin.N50 - fin.N50_lo, fin.N50_hi - fin.N50],
                    marker="o", capsize=3, ls="none", label="measured N50 (logistic fit)")
        if len(fin) and np.isfinite(fit["slope"]):
            dd = np.geomspace(fin.d.min(), fin.d.max(), 20)
            g0 = math.exp(np.log(fin.N50).mean() - fit["slope"] * np.log(fin.d).mean())
            bx.plot(dd, g0 * dd ** fit["slope"], "C1-",
                    label=f"fit d^{fit['slope']:.2f} [{fit['lo']:.2f}, {fit['hi']:.2f}]")
            bx.plot(dd, fin.N50.iloc[0] * (dd / fin.d.iloc[0]) ** K_MAX, "k:",
                    label=f"declared ceiling ∝ d^{K_MAX:g}")
        if len(fin):
            bx.set_xscale("log")
            bx.set_yscale("log")
            bx.legend(fontsize=7)
        else:
            bx.text(0.5, 0.5, "no N50 located (no d with both successes and failures)",
                    ha="center", va="center", transform=bx.transAxes, fontsize=8)
        bx.set_xlabel("d")
        bx.set_ylabel("N50")

    return ClaimResult("thm4.2", table, v, headline, reading,
                       extra={"population": population, "success": curve, "n50": need},
                       figure=figure)


def judge(tables: dict[str, pd.DataFrame], values=None) -> Verdict:
    """[`verdict`][] on the written main table and ``population`` with the declared thresholds
    (or `values`)."""
    th = threshold_values(THRESHOLDS, values)
    return verdict(tables["table"], tables["population"], th["EXCESS_TOL"],
                   th["NOISE_RATIO_MAX"], th["P_TARGET"], th["K_MAX"], th["INTERP_FRAC"],
                   th["SLOPE_SD"])


CLAIM = Claim(
    id="thm4.2",
    paper=PAPER_NAME,
    title="Theorem 4.2 (realistic: GD on the empirical risk)",
    label="RECONSTRUCTED",
    source="notes §4.6 (name and Figure 4 FOUND; statement not read)",
    statement="With N = poly(d) samples, GD on (E) generalizes like GD on (P): test error near "
    "the population error, v aligned with w*.",
    measured=f"Per (d, N, seed), after {STEPS} empirical GD steps (lr {LR}): test error on "
    f"{N_TEST} fresh points against the exact population error after the same steps, and "
    f"cos(v, w*); d = {', '.join(str(d) for d in D_LIST)} (D = 10 to 32·D), a √2-spaced N "
    f"ladder grown per d until it brackets P = {P_TARGET:g}, {len(SEEDS)} seeds per point.",
    predicted="N50(d), the N at which the fitted success probability is 1/2, grows at most "
    "polynomially in d: its fitted exponent's interval lies at or below the declared ceiling "
    f"{K_MAX:g}.",
    run=run,
    judge=judge,
    thresholds=THRESHOLDS,
    premises=("EXCESS_TOL lies below the error that patch association buys in the population "
              "run (plateau error − final error)",
              "the population run performs patch association and its error has settled "
              "before the last step (the comparison is made after phase III)",
              "at least 3 seeds at every (d, N)",
              "at every d the ladder brackets the crossing: the success fraction of the "
              "smallest rung is below P_TARGET and that of the largest above it, the largest "
              "rung is past interpolation (mean training loss ≥ INTERP_FRAC × population "
              "loss), and the logistic fit increases with N", "at least 4 values of d"),
    seeds=f"{len(SEEDS)} seeds per (d, N), batched in one run; success fraction with its "
    "Wilson 95 % interval; N50 from a logistic fit over all rungs and seeds of a d; the "
    f"intervals of N50 and of the exponent from {N_BOOT} bootstrap resamples of the seeds "
    f"(generator seed {BOOT_SEED})",
    reconstructed="the statement (N = poly(d) suffices for a test error near the population "
    "one) is reconstructed from the name and Figure 4; its exponent, horizon and learning rate "
    "were not read, so the exponent is judged against a declared ceiling, not a printed one.",
    figsize=(10.0, 4.0),
    untested="A horizon that grows with d (the reconstructed T = poly(d)/η): the horizon here "
    "is fixed in steps; d beyond 32·D; other D.",
)
