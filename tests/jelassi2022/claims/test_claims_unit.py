"""Cheap unit tests of the claim helpers."""

import math

import numpy as np
import pandas as pd
import pytest

from theorylab.core.claims import ClaimResult, markdown_table
from theorylab.jelassi2022.claims import CLAIMS, get_claim
from theorylab.jelassi2022.claims.thm31 import glm_exact_errors
from theorylab.jelassi2022.data import set_sum_distribution


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


def test_markdown_table_thins_rows():
    df = pd.DataFrame({"a": range(100), "b": np.linspace(0, 1, 100)})
    text = markdown_table(df, max_rows=10)
    table, note = text.split("\n\n")
    assert table.count("\n") == 11 and note.startswith("10 of 100 rows shown")


def test_kinds_say_what_a_check_is():
    assert CLAIMS["thm3.2"].kind == "sanity check" and "ω(1)" in CLAIMS["thm3.2"].untested
    assert all(c.kind == "theorem check" for k, c in CLAIMS.items() if k != "thm3.2")
