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
    rejects_all(thm42_noise.CLAIM, t)


