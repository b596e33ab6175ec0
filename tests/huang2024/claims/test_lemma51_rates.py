"""lemma5.1-rates: the engine's first-step rates against the derived ones, and
not the notes' signs; its two predictions (the leading-order ratio's coefficient RATIO_C, the
sign boundary's offset CROSSING_Q) judged two-sided against near counterfactuals on both
sides."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from theorylab.core.claims import counterfactual_table, referee_problems, resolution
from theorylab.core.claims.referee import separation
from theorylab.huang2024.claims import (
    lemma51_rates,
)

_L51_SIGNS = {"pos256": {"own_lq": 1, "glob_lq": -1, "other_lq": 1, "own_gq": 1, "other_gq": -1},
              "neg256": {"own_lq": 1, "glob_lq": -1, "other_lq": -1, "own_gq": 1,
                         "other_gq": -1}}


def _l51r(other_sign=+1, ratio=(13.76, 0.1635), diff=1e-12, exact=1e-11, cross=0.21):
    rows = []
    for cfg, d in (("pos256", 0.65), ("neg256", -0.25)):
        for coord, s in _L51_SIGNS[cfg].items():
            val = s * 1e-4
            if coord == "other_lq" and cfg == "pos256":
                val = other_sign * 1e-5
            rows.append({"config": cfg, "P": 256, "delta": d, "mask_keys": True,
                         "coordinate": coord, "rate": val, "derived_sign": s,
                         "notes_sign": lemma51_rates.NOTES_SIGNS[coord]})
    ratios = pd.DataFrame({"config": ["pos256", "neg256", "tiny"], "P": [256, 256, 8],
                           "mask_keys": True, "ratio": [*ratio, 1.08],
                           "ratio_leading": [13.75, 0.1611, 0.95],
                           "ratio_notes_heuristic": [18.0, 0.125, 0.5],
                           "neglected_order": [1 / 96 + 1 / 256, 1 / 16 + 1 / 256, 0.625]})
    engines = pd.DataFrame({"config": ["tiny"], "P": [8], "mask_keys": [True],
                            "engine": ["population-brute"], "max_rel_diff": [diff]})
    exact_t = pd.DataFrame({"config": ["pos256", "neg256"], "P": [256, 256],
                            "mask_keys": [True, True], "max_rel_diff": [1e-12, exact]})
    d = np.linspace(0.1, 0.3, 11)
    bnd = pd.DataFrame({"P": 400, "C": 4, "gamma": 0.5, "mask_keys": True, "C1": 1,
                        "delta": d, "own": 1.0, "glob": -1.0, "other": d - cross, "ratio": 1.0,
                        "delta0": 0.2, "band": 0.02, "delta0_asymptotic": 0.21})
    return {"table": pd.DataFrame(rows), "ratios": ratios, "engines": engines,
            "exact": exact_t, "boundary": bnd}


def test_lemma51_rates_derivation_check():
    v = lemma51_rates.judge(_l51r())
    assert v.verdict == "agrees", v.reasons
    assert "fails on" in " ".join(v.reasons)  # 0 < Δ < Δ₀ with a negative rate
    assert lemma51_rates.judge(_l51r(other_sign=-1)).verdict == "disagrees"
    assert lemma51_rates.judge(_l51r(exact=1e-6)).verdict == "disagrees"
    assert lemma51_rates.judge(_l51r(cross=0.26)).verdict == "disagrees"  # crossing off Δ₀
    assert lemma51_rates.judge(_l51r(ratio=(12.5, 0.1635))).verdict == "disagrees"
    engines = lemma51_rates.judge(_l51r(diff=1e-3))
    assert engines.verdict == "inconclusive" and "premise failed" in engines.reasons[-1]


def test_lemma51_rates_match_the_engine_and_not_the_notes_signs():
    rates, r, derived, d_rates, lead = lemma51_rates.gradient_rates(64, 52, 3, False,
                                                                    "population-laplace")
    assert np.abs(r - derived).max() <= 1e-10 * np.abs(derived).max()
    assert d_rates["other_lq"] > 0 and rates["other_lq"] > 0
    assert lemma51_rates.NOTES_SIGNS["other_lq"] == -1


# The fixture's own numbers: ratio / leading order 13.76/13.75 = 1.0007 and 0.1635/0.1611 =
# 1.015 on the P = 256 rows; crossing 0.21 against Δ₀ = 0.2 with band 0.02 (+0.5 bands).
LEAD = (13.75, 0.1611)


def _values(**kw):
    return {**{p.name: p.value for p in lemma51_rates.PREDICTIONS},
            **{t.name: t.value for t in lemma51_rates.THRESHOLDS}, **kw}


def _at(cf_name):
    """Tables measured where the counterfactual `cf_name` holds: the ratios its constant times
    the leading order, or the crossing its number of bands from Δ₀ = 0.2 (band 0.02)."""
    cf = next(c for c in lemma51_rates.COUNTERFACTUALS if c.name == cf_name)
    if "RATIO_C" in cf.values:
        c = cf.values["RATIO_C"]
        return _l51r(ratio=(c * LEAD[0], c * LEAD[1])), cf.values
    return _l51r(cross=0.2 + 0.02 * cf.values["CROSSING_Q"]), cf.values


def test_lemma51_rates_declares_two_sided_predictions_with_near_counterfactuals():
    assert {p.name for p in lemma51_rates.PREDICTIONS} == {"RATIO_C", "CROSSING_Q"}
    assert all(p.sides == "two" and p.source == "derived" for p in lemma51_rates.PREDICTIONS)
    assert referee_problems(lemma51_rates.CLAIM) == []


def test_lemma51_rates_agreeing_tables_reject_every_counterfactual():
    t = _l51r(ratio=(LEAD[0], LEAD[1]))
    assert lemma51_rates.judge(t).verdict == "agrees"
    cft = counterfactual_table(lemma51_rates.judge, t, _values(),
                               lemma51_rates.COUNTERFACTUALS)
    assert cft.rejected.all(), cft[["counterfactual", "verdict", "reason"]].to_string()
    res = resolution(lemma51_rates.judge, t, _values(), lemma51_rates.PREDICTIONS)
    sep = separation(lemma51_rates.PREDICTIONS, lemma51_rates.COUNTERFACTUALS, _values(), res)
    assert (sep.status == "ok").all(), sep.to_string()
    # the resolution is the band's edge: RATIO_C flips at ×/÷1.07 of the exact ratio (1.0 here),
    # CROSSING_Q at the measured offset ± 1 band (+0.5 here: -0.5 and +1.5)
    r = res.set_index("prediction")
    assert r.loc["RATIO_C", "value_up"] == pytest.approx(1.07, rel=1e-4)
    assert r.loc["CROSSING_Q", "value_down"] == pytest.approx(-0.5, abs=1e-3)
    assert r.loc["CROSSING_Q", "value_up"] == pytest.approx(1.5, abs=1e-3)


@pytest.mark.parametrize("cf", [c.name for c in lemma51_rates.COUNTERFACTUALS])
def test_lemma51_rates_tables_at_a_counterfactual_disagree(cf):
    t, vals = _at(cf)
    v = lemma51_rates.judge(t)
    assert v.verdict == "disagrees", v.reasons
    # the same tables agree with the counterfactual's own value: the judge reads the value
    assert lemma51_rates.judge(t, vals).verdict == "agrees", \
        lemma51_rates.judge(t, vals).reasons


def test_lemma51_rates_degenerate_and_premise_failed_tables():
    empty = {k: v.iloc[0:0] for k, v in _l51r().items()}
    assert lemma51_rates.judge(empty).verdict == "inconclusive"
    nan = _l51r(ratio=(math.nan, 0.1635))
    assert lemma51_rates.judge(nan).verdict == "inconclusive"
    flat = _l51r()
    flat["boundary"] = flat["boundary"].assign(other=-1.0, delta=np.linspace(0.0, 0.15, 11))
    v = lemma51_rates.judge(flat)  # no sign change on the grid: no crossing to place
    assert v.verdict == "inconclusive" and "no crossing" in " ".join(v.reasons)
    engines = lemma51_rates.judge(_l51r(diff=1e-3))
    assert engines.verdict == "inconclusive" and "premise failed" in engines.reasons[-1]
