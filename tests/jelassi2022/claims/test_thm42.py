"""Theorem 4.2's checks (the exponent and the noise law):
the judges on hand-made tables that agree, disagree, are degenerate or fail a premise, and
the declared counterfactuals rejected on an agreeing table."""

import math

import numpy as np
import pandas as pd

from tests.jelassi2022._helpers import rejects_all
from theorylab.jelassi2022.claims import (
    thm42,
    thm42_noise,
)

INF = math.inf


# -- Theorem 4.2 ----------------------------------------------------------------------------
def _runs42(b_d=1.0, b_N=-1.0, c=0.35, ok=True, seeds=4, pa=True, excess=0.0):
    rng = np.random.default_rng(0)
    rows = []
    for d in (10, 20, 40):
        for N in thm42.grid_N(d):
            m = N // (d - 1)
            for s in range(seeds):
                r2 = c * (d - 1) ** b_d * N ** b_N * math.exp(0.1 * rng.standard_normal())
                err = 0.0944 + excess + 0.004 * (s - 1.5) / 1.5 if (ok or m == 16) else 0.2
                rows.append({"d": d, "N": N, "seed": s, "r2": r2, "test_error": err,
                             "patch_association": bool(pa or m == 16)})
    return pd.DataFrame(rows)


def _pop42(pa=True):
    return pd.DataFrame({"d": [10, 20, 40], "pop_error": [0.0944] * 3, "c": [0.35] * 3,
                         "pa": [pa] * 3, "gamma_minus_rho": [3.0 if pa else -3.0] * 3})


def test_thm42_noise_fit_recovers_the_exponents():
    f = thm42.noise_fit(_runs42())
    assert abs(f["b_d"] - 1) < 0.1 and abs(f["b_N"] + 1) < 0.1
    # ln r² scattered by 0.1 per run (4 seeds per cell): k within 0.1 of 1, its interval tight
    assert abs(f["k"] - 1) < 0.1 and f["k_lo"] < f["k"] < f["k_hi"] < f["k_lo"] + 0.2


def test_thm42_judge():
    t = {"table": _runs42(), "population": _pop42()}
    assert thm42.judge(t).verdict == "agrees"
    # generalization judged two-sided: 0.03 above, or 0.03 below, the population error
    for ex in (0.03, -0.03):
        assert thm42.judge({"table": _runs42(excess=ex), "population": _pop42()}
                           ).verdict == "disagrees", ex
    # the excess error's interval reaching the band from outside: undecided
    assert thm42.judge({"table": _runs42(excess=0.0135), "population": _pop42()}
                       ).verdict == "inconclusive"
    # the empirical A does not associate at the largest N: a finding (disagrees), not a premise
    nopa_e = thm42.judge({"table": _runs42(pa=False), "population": _pop42()})
    assert nopa_e.verdict == "disagrees" and "does not perform patch association" in \
        nopa_e.reasons[0]
    nopa = {"table": _runs42(), "population": _pop42(pa=False)}
    v = thm42.judge(nopa)
    assert v.verdict == "inconclusive" and "does not associate" in v.reasons[0]
    nogen = {"table": _runs42(ok=False), "population": _pop42()}
    assert thm42.judge(nogen).verdict == "disagrees"
    few = {"table": _runs42(seeds=2), "population": _pop42()}
    assert thm42.judge(few).verdict == "inconclusive"
    assert thm42.judge({"table": _runs42().iloc[:0], "population": _pop42()}
                       ).verdict == "inconclusive"
    rejects_all(thm42.CLAIM, t)


def test_thm42_noise_law_judge():
    t = {"table": _runs42(), "population": _pop42()}
    assert thm42_noise.judge(t).verdict == "agrees"
    assert thm42_noise.judge({"table": _runs42(b_d=2.0), "population": _pop42()}).verdict == \
        "disagrees"
    assert thm42_noise.judge({"table": _runs42(c=3.5), "population": _pop42()}).verdict == \
        "disagrees"
    empty = {"table": _runs42().iloc[:0], "population": _pop42()}
    assert thm42_noise.judge(empty).verdict == "inconclusive"
    # the bottom rung (16(d − 1)) is never judged, even far off the formula
    off = _runs42()
    off.loc[off.N == 16 * (off.d - 1), "r2"] *= 10
    assert thm42_noise.judge({"table": off, "population": _pop42()}).verdict == "agrees"
    # a largest rung where some seed does not associate is not judged: with two such d,
    # fewer than 2 judged cells remain (premise)
    nopa = _runs42()
    nopa.loc[(nopa.d <= 20) & (nopa.seed == 0), "patch_association"] = False
    v = thm42_noise.judge({"table": nopa, "population": _pop42()})
    assert v.verdict == "inconclusive" and "premise failed" in v.reasons[0]
    # k = 2 and k = 1/2 rejected; within the band both ways
    values = thm42_noise.CLAIM.values()
    for shift in (1.0, -0.5, 0.25, -0.25):
        assert thm42_noise.judge(t, {**values, "B_D_SHIFT": shift}).verdict == "disagrees"
    # the fitted k (three judged N per d) told apart from its neighbouring halves
    kf = thm42_noise.k_fit(t)
    assert kf["min_N"] == 3 and abs(kf["k"] - 1) < 0.1
    for k in (0.5, 1.5, 2.0):
        assert thm42_noise.judge(t, {**values, "K": k}).verdict == "disagrees", k
    # runs with N ∝ d^{3/2}: the fitted k is rejected at 1 (the per-cell formula too)
    steep = {"table": _runs42(b_d=1.5), "population": _pop42()}
    v = thm42_noise.judge(steep)
    assert v.verdict == "disagrees" and v.reasons[0].startswith("k of N ∝ d^k")
    rejects_all(thm42_noise.CLAIM, t)


