"""Lemma 5.1's derivation check (the leading-order rates and the Phase I
boundary) on hand-made tables."""

from __future__ import annotations

import math

import pandas as pd

from theorylab.core.claims import counterfactual_table
from theorylab.huang2024.claims import (
    CLAIMS,
    lemma51,
)
from theorylab.huang2024.predictions.rates import (
    ZMoments,
    local_query_leading,
    phase_one_boundary,
)

_MU = ZMoments(1.0, 13 / 12, 1.25)


def _l51(factor=1.0, glob_sign=-1.0, ns=(3, 4, 6, 8, 12, 16, 25, 40, 64, 100), boundary_q=0.0):
    rows = []
    for mk in (True, False):
        for fam, D in (("pos", 0.65), ("neg", -0.25)):
            for n in ns:
                P = float(n ** 4)
                C1 = P ** ((1 + D + 0.25) / 2)
                # the leading-order ratio of the notes' §4.5, its P^Δ turned into P^{factor·Δ}
                q = local_query_leading(P, C1, n, _MU, gamma=0.5, mask_keys=mk)
                ratio = -q["glob"] / q["own"] * P ** ((factor - 1) * D)
                rows.append({"family": fam, "masked_keys": mk, "gamma": 0.5, "P": P, "C": n,
                             "C1": C1, "delta": D, "phase_I": D > 0,
                             "dphi_own_1": 0.01, "dphi_glob_1": glob_sign * 0.01 * ratio,
                             "ratio": ratio})
    bnd = []
    for mk in (True, False):
        for n in ns:
            P = float(n ** 4)
            f = phase_one_boundary(n ** 4, n, _MU, gamma=0.5, mask_keys=mk)["delta_b"]
            d = f + boundary_q / math.log(P)
            bnd.append({"masked_keys": mk, "P": P, "C": n, "delta_b": d, "halfwidth": 1e-4,
                        "formula": f, "q": boundary_q, "q_halfwidth": 1e-4 * math.log(P)})
    return {"table": pd.DataFrame(rows), "boundary": pd.DataFrame(bnd)}


def test_lemma51_derivation_check():
    t = _l51()
    v = lemma51.judge(t)
    assert v.verdict == "agrees", v.reasons
    assert all(p.source == "derived" for p in lemma51.PREDICTIONS)
    cf = counterfactual_table(lemma51.judge, t, CLAIMS["lemma5.1"].values(),
                              lemma51.COUNTERFACTUALS)
    assert cf.rejected.all(), cf
    assert lemma51.judge(_l51(factor=0.75)).verdict == "disagrees"  # P^{3Δ/4}
    assert lemma51.judge(_l51(factor=1.25)).verdict == "disagrees"  # P^{5Δ/4}
    assert lemma51.judge(_l51(glob_sign=1.0)).verdict == "disagrees"
    assert lemma51.judge(_l51(ns=(3, 4, 5, 6))).verdict == "inconclusive"
    # the Phase I boundary: a factor 2 in its constant (ln 2/ln P off the formula) disagrees
    assert lemma51.judge(_l51(boundary_q=math.log(2))).verdict == "disagrees"
    assert lemma51.judge(_l51(boundary_q=-math.log(2))).verdict == "disagrees"
    no_bnd = {"table": t["table"]}
    assert lemma51.judge(no_bnd).verdict == "inconclusive"
    assert lemma51.judge({"table": t["table"].iloc[:0]}).verdict == "inconclusive"
