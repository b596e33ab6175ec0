"""The phases-reduction derivation check (the reduced dynamics against the exact
engine) on hand-made tables."""

from __future__ import annotations

import pandas as pd

from tests.huang2024._mae_tables import NAN
from theorylab.core.claims import counterfactual_table
from theorylab.huang2024.claims import (
    CLAIMS,
    reduction,
)


def _red(gap=0.0, step=0.0, quad=1e-15):
    rows = []
    for mk in (True, False):
        for fam, ph in (("pos", True), ("neg", False)):
            for P in (81, 256):
                rows.append({"family": fam, "P": P, "masked_keys": mk, "phase_I_engine": ph,
                             "phase_I_reduced": ph, "t_I_engine": 20.0 + step,
                             "t_I_reduced": 20.0, "t_II_engine": 50.0, "t_II_reduced": 50.0,
                             "T_star_engine": 60.0 if mk else NAN, "T_star_reduced": 60.0,
                             "phi_glob_end_I_engine": -1.0 + gap,
                             "phi_glob_end_I_reduced": -1.0, "neglect": 1e-3})
    q = pd.DataFrame({"P": [1296], "count_nodes": [24], "max_phi_diff": [quad],
                      **{f"{k}_{s}": [1.0] for k in reduction.READ for s in ("gauss", "exact")}})
    return {"table": pd.DataFrame(rows), "quadrature": q}


def test_reduction_judge():
    t = _red(gap=5e-4)
    assert reduction.judge(t).verdict == "agrees"
    cf = counterfactual_table(reduction.judge, t, CLAIMS["phases-reduction"].values(),
                              reduction.COUNTERFACTUALS)
    assert cf.rejected.all(), cf
    # a reduced Φ_glob(t_I) 2 % off on a rung with a loose derived bound: the scale band
    loose = _red(gap=0.02)
    loose["table"]["neglect"] = 0.05
    v = reduction.judge(loose)
    assert v.verdict == "disagrees" and v.reasons[0].startswith("scale:")
    assert reduction.judge(_red(gap=5e-3)).verdict == "disagrees"  # beyond |Φ|·√v = 1e-3
    assert reduction.judge(_red(step=2.0)).verdict == "disagrees"
    assert reduction.judge(_red(quad=1e-6)).verdict == "disagrees"
    t = _red()
    t["table"] = t["table"].iloc[:0]
    assert reduction.judge(t).verdict == "inconclusive"
