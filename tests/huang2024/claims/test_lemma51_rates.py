"""lemma5.1-rates: the engine's first-step rates against the derived ones, and
not the notes' signs."""

from __future__ import annotations

import numpy as np
import pandas as pd

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
    assert lemma51_rates.judge(_l51r(ratio=(13.2, 0.1635))).verdict == "partial"
    engines = lemma51_rates.judge(_l51r(diff=1e-3))
    assert engines.verdict == "inconclusive" and "premise failed" in engines.reasons[-1]


def test_lemma51_rates_match_the_engine_and_not_the_notes_signs():
    rates, r, derived, d_rates, lead = lemma51_rates.gradient_rates(64, 52, 3, False,
                                                                    "population-laplace")
    assert np.abs(r - derived).max() <= 1e-10 * np.abs(derived).max()
    assert d_rates["other_lq"] > 0 and rates["other_lq"] > 0
    assert lemma51_rates.NOTES_SIGNS["other_lq"] == -1
