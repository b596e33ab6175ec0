"""Cheap unit tests of the claim helpers."""

import math

import numpy as np
import pandas as pd
import pytest

from theorylab.core.claims import ClaimResult, markdown_table
from theorylab.jelassi2022.claims import CLAIMS, get_claim
from theorylab.jelassi2022.data import set_sum_distribution
from theorylab.jelassi2022.predictions.glm import glm_exact_errors


def test_registry_labels():
    # the theorem checks of Theorems 4.1 and 4.2 judge a FOUND sentence of the paper
    for cid in ("thm3.1", "thm3.1-proof", "thm3.2", "thm4.1", "thm4.2", "thm5.1"):
        assert CLAIMS[cid].label == "FOUND"
    for cid in ("lemma4.1-4.2", "lemma4.1-4.2-reduction", "lemma4.1-4.2-symmetry",
                "thm4.1-phases", "thm4.2-noise"):
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
    """One kind per claim: a check that compares with the paper is a theorem check; our
    derivations against our engines, and a property of the engines, are split off."""
    kinds = {k: c.kind for k, c in CLAIMS.items()}
    assert kinds == {"thm3.1": "theorem check", "thm3.1-proof": "derivation check",
                     "thm3.2": "sanity check", "lemma4.1-4.2": "derivation check",
                     "lemma4.1-4.2-reduction": "derivation check",
                     "lemma4.1-4.2-symmetry": "engine check", "thm4.1": "theorem check",
                     "thm4.1-phases": "derivation check", "thm4.2": "theorem check",
                     "thm4.2-noise": "derivation check", "thm5.1": "theorem check"}
    assert "ω(1)" in CLAIMS["thm3.2"].untested


def test_theorem_checks_declare_what_they_must_reject():
    """Every theorem check declares at least one counterfactual and one prediction, and every
    prediction a counterfactual overrides is declared (the kernel refuses the others); the
    readings of the temperature and of the start of v are declared where they enter."""
    for c in CLAIMS.values():
        if c.kind == "theorem check":
            assert c.counterfactuals and c.predictions, c.id
        for cf in c.counterfactuals:
            assert set(cf.values) <= {p.name for p in c.predictions} | {
                t.name for t in c.thresholds}, c.id
    for cid in ("thm4.1", "thm4.1-phases", "thm4.2", "thm5.1"):
        names = {v.name for v in CLAIMS[cid].variants}
        assert names == {"temperature", "v_start"}, cid
    temps = {r.value for r in CLAIMS["thm4.1"].variants[0].readings}
    assert temps == {"1", "sqrt(D)", "sqrt(d)"}
