"""The derived FP-correlation rates at Q⁰ = 0 (module ``theorylab.huang2024.predictions``):
exact against the engines' gradients, the numbers measured independently, and the leading order
on a P ladder."""

from __future__ import annotations

import math

import numpy as np
import pytest

from theorylab.huang2024 import config_from_dict, make_engine
from theorylab.huang2024.predictions import (
    ZMoments,
    count_law,
    has_phase_one,
    initial_rate_matrix,
    initial_rates,
    leading_rates,
    lemma51_ratio,
    z_moments,
)

#: z ~ U[0.5, 1.5]: E z = 1, E z² = 13/12, E z³ = 5/4.
UNIFORM = ZMoments(1.0, 13 / 12, 1.25)


def mae_cfg(P, C1, C, *, K=1, engine="population-exact", mask="bernoulli", mask_keys=True,
            loss_norm="P", law="values", **extra):
    data = {"P": P, "K": K, "C1": C1, "C": C}
    if law == "values":
        data.update(z_law="values", z_values=[0.5, 1.0, 1.7], z_probs=[0.2, 0.5, 0.3], U=2.0)
    else:
        data.update(z_law="uniform", L=0.5, U=1.5)
    model = {"mask": mask, "gamma": 0.4, "mask_keys": mask_keys, "loss_norm": loss_norm}
    if mask == "fixed":
        model["mask_size"] = extra.pop("mask_size")
    return config_from_dict({"data": data, "model": model,
                             "train": {"engine": engine, "z_nodes": 4, **extra}}).resolved()


@pytest.mark.parametrize("kw", [
    dict(P=8, C1=4, C=2, engine="population-brute"),
    dict(P=8, C1=4, C=2, engine="population-brute", mask_keys=False),
    dict(P=9, C1=5, C=2, K=2, mask_keys=False, loss_norm="none"),
    dict(P=9, C1=3, C=3, mask="fixed", mask_size=4, loss_norm="mask"),
    dict(P=9, C1=5, C=2, K=2, mask="fixed", mask_size=5, mask_keys=False, loss_norm="mask"),
    dict(P=64, C1=52, C=3, engine="population-laplace", law="uniform", laplace_step=0.1),
    dict(P=64, C1=16, C=8, engine="population-laplace", law="uniform", laplace_step=0.1,
         mask_keys=False),
], ids=lambda kw: ",".join(f"{k}={v}" for k, v in kw.items()))
def test_exact_rates_equal_the_engine_gradient(kw):
    cfg = mae_cfg(**kw)
    eng = make_engine(cfg)
    r = -eng.evaluate(eng.initial_params(), 0, need_grad=True, record=False).grads["Phi"]
    pred = initial_rate_matrix(cfg, eng.structure)
    # the engines sum the same expectation by enumeration (rounding ~1e-15 per term) or by a
    # trapezoid rule in ln t of step 0.1 (error ~1e-14, tests/huang2024/test_engines_laplace.py):
    # 1e-12 relative is far below any difference a wrong term would make (≥ 1e-3 here)
    assert np.abs(pred - r).max() <= 1e-12 * np.abs(r).max()
    # a perturbed formula fails the same check: E z³ replaced by (E z²)^{3/2} (what a
    # deterministic z of the same second moment would give)
    mu = z_moments(cfg)
    bad = initial_rate_matrix(cfg, eng.structure, mu=ZMoments(mu.mu1, mu.mu2, mu.mu2 ** 1.5))
    assert np.abs(bad - r).max() > 1e-4 * np.abs(r).max()


def test_rates_reproduce_the_independent_measurement():
    # P = 256, C1 = 192, C = 4, γ = 0.5, masked keys in, 1/P, z ~ U[0.5, 1.5]: the rates found
    # four independent ways (binomial sums, Monte Carlo, finite differences of the laplace
    # loss, the engine's gradient), given to 5 significant digits
    r = lemma51_ratio(256, 192, 4, UNIFORM, gamma=0.5, mask_keys=True)
    assert r["own"] == pytest.approx(1.5849e-5, rel=5e-5)
    assert r["glob"] == pytest.approx(-2.1806e-4, rel=5e-5)
    assert r["other"] == pytest.approx(2.0740e-6, rel=5e-5)


@pytest.mark.parametrize("P,C1,C,mk,measured,notes", [
    (64, 52, 3, False, 2.76, 14.1), (256, 192, 4, False, 8.36, 36.0),
    (64, 16, 8, True, 0.35, 0.25)])
def test_lemma51_ratio_exact_leading_and_notes(P, C1, C, mk, measured, notes):
    r = lemma51_ratio(P, C1, C, UNIFORM, gamma=0.5, mask_keys=mk)
    # the measured ratios are quoted to 3 significant digits (2 for 0.35)
    assert r["exact"] == pytest.approx(measured, abs=0.006)
    # the leading order stays within 3 % at these P (its neglected order, O(P^-κ_s), is
    # 1.2 %, 0.4 % and 2.9 % here)
    assert r["leading"] == pytest.approx(r["exact"], rel=0.03)
    # the notes' earlier heuristic a_1²/a_j is off by far more than that
    assert r["notes"] == pytest.approx(notes, rel=0.01)
    assert abs(r["notes"] / r["exact"] - 1) > 0.25


def test_other_local_rate_sign_follows_the_global_share():
    # Δ > 0 at large P: the cross term −μ1μ2 a_m a_1² leads and the rate is positive (the
    # notes' earlier "negative at order a_m²" is wrong there); Δ < 0: negative
    for mk in (True, False):
        assert lemma51_ratio(256, 192, 4, UNIFORM, mask_keys=mk)["other"] > 0
        assert lemma51_ratio(256, 32, 16, UNIFORM, mask_keys=mk)["other"] < 0


def family(P, ks, kc):
    C = int(round(P ** kc))
    C1 = P - C * int(round((P - P ** ks) / C))
    return [C1] + [C] * ((P - C1) // C)


#: (κ_s, κ_c, masked keys in): Δ = 0.65 and Δ = −0.25 (the claims' two families)
LADDER_CASES = [(0.95, 0.25, True), (0.95, 0.25, False), (0.625, 0.5, True)]


@pytest.mark.parametrize("ks,kc,mk", LADDER_CASES, ids=str)
def test_leading_order_error_has_its_stated_order(ks, kc, mk):
    """Fit the log-log slope of the relative error of the leading rates on a P ladder and
    compare it with the stated order: own O(P^-1), global O(P^-κ_s), another local area
    O(P^-(κ_c + max(0, Δ))), the ratio O(P^-κ_s)."""
    Ps = [1024, 2048, 4096, 8192, 16384, 32768]
    delta = 2 * ks - kc - 1
    order = {"own": 1.0, "glob": ks, "other": kc + max(0.0, delta), "ratio": ks}
    err = {k: [] for k in order}
    for P in Ps:
        sizes = family(P, ks, kc)
        ex = initial_rates(P, sizes, 1, UNIFORM, mask_keys=mk)
        ld = leading_rates(P, sizes, 1, UNIFORM, mask_keys=mk)
        err["glob"].append(abs(ld[0] / ex[0] - 1))
        err["own"].append(abs(ld[1] / ex[1] - 1))
        err["other"].append(abs(ld[2] / ex[2] - 1))
        err["ratio"].append(abs((ld[0] / ld[1]) / (ex[0] / ex[1]) - 1))
    for k, e in err.items():
        slope = np.polyfit(np.log(Ps), np.log(e), 1)[0]
        # sizes are rounded to integers (C1 to a multiple of C from P), which jitters single
        # steps of the error by up to ±0.1 in log-slope; 0.15 of slack covers that, and a
        # leading order wrong by one order (e.g. without the (1 − a_1) factor: error O(1))
        # fails by far
        assert slope <= -order[k] + 0.15, (k, slope, order[k])
        assert e[-1] < 0.02, (k, e[-1])


def test_wrong_leading_order_fails_the_ladder():
    # the notes' heuristic as a "leading order" of the ratio: its error does not fall with P
    errs = []
    for P in (1024, 4096, 16384):
        sizes = family(P, 0.95, 0.25)
        r = lemma51_ratio(P, sizes[0], sizes[1], UNIFORM, mask_keys=False)
        errs.append(abs(r["notes"] / r["exact"] - 1))
    slope = np.polyfit(np.log([1024, 4096, 16384]), np.log(errs), 1)[0]
    assert slope > -0.95 + 0.15


def test_count_law_and_bad_input():
    n, p = count_law(10, "bernoulli", 0.3)
    assert p.sum() == pytest.approx(1.0, abs=1e-14)  # a probability law, to rounding
    assert np.dot(n, p) == pytest.approx(9 * 0.7, rel=1e-14)
    assert count_law(10, "fixed", mask_size=4)[0].tolist() == [6]
    with pytest.raises(ValueError, match="^sizes:"):
        initial_rates(8, [4, 3], 1, UNIFORM)
    with pytest.raises(ValueError, match="^j:"):
        initial_rates(8, [4, 4], 2, UNIFORM)
    with pytest.raises(ValueError, match="^loss_norm:"):
        initial_rates(8, [4, 4], 1, UNIFORM, loss_norm="x")
    with pytest.raises(ValueError, match="^sizes:"):
        lemma51_ratio(10, 5, 2, UNIFORM)
    assert math.isnan(lemma51_ratio(8, 4, 4, UNIFORM)["other"])


def test_fixed_size_masks_leading_order():
    # a fixed-size mask: the same leading order with the mean count P − |ℳ|; at P = 4096 the
    # neglected fluctuations are below 1 % on every rate (O(P^-κ) with κ ≥ 0.25 and constants
    # ≤ 1 on the ladders above)
    P = 4096
    sizes = family(P, 0.95, 0.25)
    for mk in (True, False):
        kw = {"mask": "fixed", "mask_size": P // 2, "mask_keys": mk}
        ex = initial_rates(P, sizes, 1, UNIFORM, **kw)
        ld = leading_rates(P, sizes, 1, UNIFORM, **kw)
        assert np.abs(ld[:3] / ex[:3] - 1).max() < 0.01


@pytest.mark.parametrize("C1,mk,expected", [
    (36, True, False), (40, True, True), (32, True, False), (192, True, True),
    (28, False, False), (32, False, True)])
def test_phase_one_at_the_first_step(C1, mk, expected):
    """One exact GD step (population-laplace) from Q⁰ = 0 at P = 256, C = 4: the first
    increments of the local queries' mean Φ_glob and Φ_own decide a Phase I as the claims read
    it, and has_phase_one predicts it (its boundary is near, not at, Δ = 0)."""
    P, C = 256, 4
    cfg = config_from_dict({
        "data": {"P": P, "C1": C1, "C": C, "z_law": "uniform", "L": 0.5, "U": 1.5},
        "model": {"gamma": 0.5, "mask_keys": mk, "loss_norm": "P"},
        "train": {"engine": "population-laplace", "z_nodes": 4, "lr": 2.0 * P}}).resolved()
    eng = make_engine(cfg)
    p0 = eng.initial_params()
    p1 = eng.apply(p0, eng.evaluate(p0, 0, need_grad=True, record=False).grads)
    s0, s1 = eng.phi_summary(p0), eng.phi_summary(p1)
    d_glob = s1["phi_glob_lq"] - s0["phi_glob_lq"]
    d_own = s1["phi_own_lq"] - s0["phi_own_lq"]
    assert bool(-d_glob > d_own) == expected
    assert has_phase_one(P, C1, C, UNIFORM, mask_keys=mk) == expected
