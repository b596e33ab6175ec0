"""Cheap unit tests of the claim helpers."""

import math

import numpy as np
import pandas as pd
import pytest

from theorylab.claims import CLAIMS, ClaimResult, get_claim, markdown_table
from theorylab.claims.thm31 import glm_exact_errors
from theorylab.claims.thm41 import phase_times
from theorylab.data import set_sum_distribution


def test_registry_labels():
    assert CLAIMS["thm3.1"].label == "FOUND" and CLAIMS["thm3.2"].label == "FOUND"
    for cid in ("lemma4.1-4.2", "thm4.1", "thm4.2", "thm5.1"):
        assert CLAIMS[cid].label == "RECONSTRUCTED"
    with pytest.raises(KeyError, match="known"):
        get_claim("nope")


def test_verdict_validated():
    with pytest.raises(ValueError, match="verdict"):
        ClaimResult("x", pd.DataFrame(), "maybe", {}, [])


def test_glm_uniform_error_is_tail_of_delta_sum():
    # P[C + Σδ ≤ 0] from the set-sum law of D − C patches (exact sums; rounding only)
    D, C, q = 10, 2, math.log(100) / 10
    law = set_sum_distribution(D - C, q)
    want = sum(p for s, p in law.items() if C + s <= 0)
    assert abs(glm_exact_errors(D, C, q)["err_uniform"] - want) < 1e-14
    assert abs(want - 0.217073) < 5e-7


def test_phase_times_on_synthetic_trajectory():
    step = np.array([0, 1, 10, 100, 1000, 2000, 4000])
    gap = np.array([0, 1e-6, 1e-4, 2e-3, 0.5, 1.9, 2.0])
    err = np.array([0.2, 0.2, 0.2, 0.2, 0.15, 0.113, 0.113])
    tr = pd.DataFrame({"step": step, "gamma": gap, "rho": 0 * gap, "error": err})
    t = phase_times(tr, target_error=0.113)
    assert t == {"t_I": 100.0, "t_II": 2000.0, "t_III": 2000.0}
    never = tr.assign(error=0.2)
    assert math.isnan(phase_times(never, 0.113)["t_III"])


def test_markdown_table_thins_rows():
    df = pd.DataFrame({"a": range(100), "b": np.linspace(0, 1, 100)})
    text = markdown_table(df, max_rows=10)
    assert text.count("\n") == 11


def test_thm32_quick_check():
    res = CLAIMS["thm3.2"].check(quick=True)
    assert res.verdict in ("agrees", "agrees-in-regime")
    assert res.headline["max_abs_error_diff"] <= 1e-12
    assert res.headline["max_topc_own_overlap"] == 0


def test_lemma_quick_check():
    res = CLAIMS["lemma4.1-4.2"].check(quick=True)
    assert res.verdict == "agrees"
    assert res.headline["max_sym_dev"] <= 1e-12
