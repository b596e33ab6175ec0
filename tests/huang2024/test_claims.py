"""The huang2024 claims: every judge on hand-made agreeing, disagreeing, degenerate (censored,
NaN, short) and premise-failed tables; each theorem check's counterfactuals; and a quick run of
each claim whose verdict is the claim's `judge` of the tables it wrote."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from theorylab.core.claims import counterfactual_table, write_result
from theorylab.huang2024.claims import (
    CLAIMS,
    lemma51,
    lemma51_rates,
    reduction,
    thm41,
    thm41eps,
    thm42,
    thm42_laws,
)
from theorylab.huang2024.predictions.asymptotics import crossing_law
from theorylab.huang2024.predictions.rates import (
    ZMoments,
    local_query_leading,
    phase_one_boundary,
)
from theorylab.vision.imagedata import fashion_mnist_available

NAN = math.nan
NS = range(3, 17)


def test_claims_in_the_papers_order_and_registered():
    from theorylab.commands.check import resolve_claims
    from theorylab.huang2024 import PAPER

    assert list(CLAIMS) == ["thm4.1", "thm4.1-eps", "thm4.2", "thm4.2-laws", "phases-reduction",
                            "lemma5.1",
                            "lemma5.1-rates", "thm4.4", "thm4.4-plateau", "realvit-diversity"]
    assert PAPER.load_claims() is CLAIMS
    assert all(c.paper == "huang2024" for c in CLAIMS.values())
    assert all(c.label == "RECONSTRUCTED" for k, c in CLAIMS.items()
               if k not in ("realvit-diversity", "thm4.1", "thm4.2", "thm4.4"))
    kinds = {k: c.kind for k, c in CLAIMS.items()}
    assert {k for k, v in kinds.items() if v == "derivation check"} == {
        "thm4.1-eps", "thm4.2-laws", "phases-reduction", "lemma5.1", "lemma5.1-rates",
        "thm4.4-plateau"}
    for c in CLAIMS.values():
        if c.kind == "theorem check" and c.id != "realvit-diversity":
            assert c.counterfactuals and c.predictions
    assert resolve_claims(["huang2024"]) == [f"huang2024/{c}" for c in CLAIMS]


# -- the MAE ladders (thm4.1, thm4.2) ----------------------------------------------------------
def _ladder(*, cross="law", t_exp=1.0, neg_phase=False, nan_T=False, ns=NS, phi_own_exp=1.0,
            eta="per-query", own_exp=0.0, late_phase=False):
    rows = []
    for fam, D in (("pos", 0.65), ("neg", -0.25)):
        for n in ns:
            P, C = float(n ** 4), float(n)
            x = P / C / 2
            C1 = P ** ((1 + D + 0.25) / 2)
            t_I = 1.3 * x ** t_exp if fam == "pos" else 1.0
            # the uniform law's finite-P crossing (its limit −(Δ/(2·0.5)) ln P), or the notes'
            # −(Δ/2) ln P that ignores the coefficients' spread (cross = "notes")
            phi, attn = crossing_law(P, C1, C, 0.5, 1.5, 0.5, 0.5)
            if cross == "notes":
                phi = -(D / 2) * math.log(P)
            rows.append({
                "family": fam, "P": P, "C1": C1, "C": C, "delta": D, "delta_target": D,
                "delta_rounding": 0.0, "x_phase": x, "phase_I": fam == "pos" or neg_phase,
                "dphi_glob_1": -0.1, "dphi_own_1": 0.01, "t_I": t_I,
                "phi_glob_end_I": phi,
                "attn_glob_end_I": attn,
                "t_II": (0.5 if late_phase else 3.0) * x ** t_exp,
                "T_star": NAN if nan_T and n == 5 else 3.3 * x ** t_exp + 2,
                "len_I": t_I, "len_II": 1.7 * x, "phi_own_T": 0.8 * math.log(P) ** phi_own_exp,
                "attn_own_T": 0.7 * (1 - 0.5 / math.log(P)) * P ** own_exp,
                "attn_own_max": 1 - 0.5 ** (C - 1), "neglect": 1e-3,
                "loss_monotone": True, "steps_run": 4 * x, "final_rel_excess": 0.05,
                "coefficient_law": "uniform", "masked_keys": True, "eta": eta})
    return pd.DataFrame(rows)


def _eps(gap_exp=0.5, tail="inverse", end=1e-4):
    from theorylab.huang2024.setups import EPS_LADDER

    rows = []
    for fam in ("pos", "neg"):
        for e in EPS_LADDER:
            # the phases' 500 steps, then a tail in 1/ε (derived), in log(1/ε), or in ε^{-k}
            k = {"inverse": 1.0, "log": 0.0, "steep": 1.5}[tail]
            T = 500 + (50 * math.log(0.2 / e) if k == 0 else 2 / e ** k)
            rows.append({"family": fam, "P": 4096.0, "C1": 2704, "C": 8, "delta": 0.65,
                         "eps_rel": e, "T_star": T, "t_II": 80.0, "phi_own_T": 6.0,
                         "attn_own_T": 0.99 - 3 * e ** gap_exp, "attn_own_max": 0.99,
                         "attn_gap_T": 3 * e ** gap_exp, "final_rel_excess": end,
                         "coefficient_law": "uniform", "masked_keys": True})
    return pd.DataFrame(rows)


def _boundary(flip=False):
    rows = []
    for P in (256.0, 65536.0, 1e8):
        for D in (-0.2, -0.1, -0.05, 0.05, 0.1, 0.2):
            rows.append({"kind": "grid", "delta_target": D, "P": P, "C": P ** 0.25, "C1": 1,
                         "delta": D, "phase_I": (D > 0) != flip, "ratio": 1.0})
        rows.append({"kind": "boundary", "delta_target": NAN, "P": P, "C": P ** 0.25, "C1": 1,
                     "delta": 0.7 / math.log(P), "phase_I": True, "ratio": 1.0})
    return pd.DataFrame(rows)


def _t42(**kw):
    eps = kw.pop("eps", _eps())
    bnd = kw.pop("boundary", _boundary())
    lad = _ladder(**kw)
    cross = pd.DataFrame(columns=["P", "C1", "C", "delta", "t_I", "phi_glob_end_I",
                                  "attn_glob_end_I"])
    return {"table": lad, "eps": eps, "boundary": bnd, "crossing": cross}


def test_thm42_theorem_check_judges_the_papers_sentences():
    t = _t42()
    v = thm42.judge(t)
    assert v.verdict == "agrees", v.reasons
    assert all(p.source == "paper" for p in thm42.PREDICTIONS)
    cf = counterfactual_table(thm42.judge, t, CLAIMS["thm4.2"].values(), thm42.COUNTERFACTUALS)
    assert cf.rejected.all(), cf
    # disagreeing: the own-area attention falls like P^{−1/4}; Phase II before Phase I ends
    assert thm42.judge(_t42(own_exp=-0.25)).verdict == "disagrees"
    assert thm42.judge(_t42(own_exp=0.25)).verdict == "disagrees"
    late = thm42.judge(_t42(late_phase=True))
    assert late.verdict == "disagrees" and "phases" in late.reasons[0]
    # Phase I on Δ < 0 rungs is reported, not judged
    assert thm42.judge(_t42(neg_phase=True)).verdict == "agrees"


def test_thm42_premises_and_degenerate_tables():
    short = thm42.judge(_t42(ns=range(3, 7)))
    assert short.verdict == "inconclusive" and "premise failed" in short.reasons[0]
    cens = thm42.judge(_t42(nan_T=True))
    assert cens.verdict == "inconclusive" and "inside the horizon" in cens.reasons[0]
    t = _t42()
    t["table"]["attn_own_T"] = NAN
    assert thm42.judge(t).verdict == "inconclusive"


def test_thm42_laws_agree_disagree_and_premises():
    t = _t42()
    v = thm42_laws.judge(t)
    assert v.verdict == "agrees", v.reasons
    cf = counterfactual_table(thm42_laws.judge, t, CLAIMS["thm4.2-laws"].values(),
                              thm42_laws.COUNTERFACTUALS)
    assert cf.rejected.all(), cf
    notes = thm42_laws.judge(_t42(cross="notes"))  # the notes' −(Δ/2) ln P
    assert notes.verdict != "agrees" and "crossing Φ·z_min/(Δ/2) (pos)" in notes.judged
    assert thm42_laws.judge(_t42(t_exp=1.5)).verdict == "disagrees"
    assert thm42_laws.judge(_t42(phi_own_exp=2.0)).verdict == "disagrees"  # Θ(log² P)
    # the gap's exponent in ε is reported, not judged: any exponent leaves the verdict alone
    gap = thm42_laws.judge(_t42(eps=_eps(gap_exp=1.0)))
    assert gap.verdict == v.verdict and "attention gap at T* (pos)" in gap.reported
    assert thm42_laws.judge(_t42(ns=range(3, 7))).verdict == "inconclusive"
    assert thm42_laws.judge(_t42(nan_T=True)).verdict == "inconclusive"


def test_thm42_laws_crossing_is_settled_before_it_is_judged():
    # the crossing slope of the uniform law, measured up to P ≈ 10⁶ (raw slopes of
    # Φ_glob(t_I)/(Δ/2): −0.80, −0.98, −1.12 on the ladder, then −1.21, −1.26, −1.32): on the
    # ladder alone it has not settled to the derived −1 (in z_min units: −2 raw) ...
    raw = [-0.7975, -0.9784, -1.1205]
    x = [math.sqrt(81 * 625), math.sqrt(1296 * 6561), math.sqrt(10000 * 65536)]
    p = thm42_laws.PREDICTIONS[0]
    vals = CLAIMS["thm4.2-laws"].values()
    from theorylab.core.claims import judge_settled

    v = judge_settled(p, x, [0.5 * s for s in raw], vals, thm42_laws.COUNTERFACTUALS)
    assert v.verdict == "inconclusive" or "settled" in v.reasons[0]
    longer = judge_settled(p, x + [1.6e5, 3.3e5, 1e6],
                           [0.5 * s for s in raw + [-1.21, -1.26, -1.32]], vals,
                           thm42_laws.COUNTERFACTUALS)
    assert longer.verdict == "agrees", longer.reasons
    # z ≡ 1 (z_min = 1): steady −0.97 agrees with −1
    steady = judge_settled(p, x, [-0.971, -0.969, -0.970], vals, thm42_laws.COUNTERFACTUALS)
    assert steady.verdict == "agrees", steady.reasons


def test_thm41_agrees_disagrees_and_premises():
    def t41(lad=None, eps=None):
        return thm41.judge({"table": _ladder() if lad is None else lad,
                            "convergence": _eps() if eps is None else eps})

    t = {"table": _ladder(), "convergence": _eps()}
    v = thm41.judge(t)
    assert v.verdict == "agrees", v.reasons
    assert all(p.source == "paper" for p in thm41.PREDICTIONS)
    cf = counterfactual_table(thm41.judge, t, CLAIMS["thm4.1"].values(), thm41.COUNTERFACTUALS)
    assert cf.rejected.all(), cf
    # T*'s growth is reported, not judged: a T* ∝ x^1.4 leaves the verdict
    assert t41(lad=_ladder(t_exp=1.4)).verdict == "agrees"
    # disagreeing: GD stalls at 0.5 % of the initial excess; the loss crosses the computed L*
    assert t41(eps=_eps(end=0.005)).verdict == "disagrees"
    assert t41(eps=_eps(end=-0.005)).verdict == "disagrees"
    # premises and degenerate tables
    assert t41(lad=_ladder(nan_T=True)).verdict == "inconclusive"
    assert t41(lad=_ladder(ns=range(3, 7))).verdict == "inconclusive"
    e = _eps()
    e.loc[5, "T_star"] = NAN
    assert t41(eps=e).verdict == "inconclusive"
    assert t41(eps=e.iloc[:0]).verdict == "inconclusive"
    stuck = _ladder(nan_T=True)
    stuck.loc[stuck.T_star.isna(), "final_rel_excess"] = 1.0
    assert thm41.verdict_convergence(stuck).verdict == "disagrees"


def test_thm41_eps():
    v = thm41eps.judge({"table": _eps()})
    assert v.verdict == "agrees", v.reasons  # T* ∝ 1/ε, the derived tail
    # a log(1/ε) tail: its local exponent keeps falling like 1/ln(1/ε), never settled here
    log = thm41eps.judge({"table": _eps(tail="log")})
    assert log.verdict == "inconclusive" and "not settled" in log.reasons[0]
    assert thm41eps.judge({"table": _eps(tail="steep")}).verdict == "disagrees"
    cf = counterfactual_table(thm41eps.judge, {"table": _eps()}, CLAIMS["thm4.1-eps"].values(),
                              thm41eps.COUNTERFACTUALS)
    assert cf.rejected.all(), cf
    e = _eps()
    e.loc[3, "T_star"] = NAN
    assert thm41eps.judge({"table": e}).verdict == "inconclusive"
    e = _eps()
    assert thm41eps.judge({"table": e[e.eps_rel != 0.05]}).verdict == "inconclusive"  # no ε₀
    assert thm41eps.judge({"table": e.iloc[:0]}).verdict == "inconclusive"


def test_a_slope_that_has_not_settled_is_not_judged():
    """T* ∝ x^(1 + 0.15 ln x): its local exponent keeps rising along the ladder."""
    t = _t42()
    x = t["table"].P / t["table"].C / 2
    t["table"]["T_star"] = x ** (1 + 0.15 * np.log(x))
    v = thm42_laws.judge(t)
    assert v.verdict == "inconclusive" and "not settled" in " ".join(v.reasons)


# -- the reduction against the engine ----------------------------------------------------------
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


# -- Lemma 5.1 ---------------------------------------------------------------------------------
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


# -- quick runs --------------------------------------------------------------------------------
def _read(out, cid):
    tables = {"table": pd.read_csv(out / f"{cid}.csv")}
    for p in out.glob(f"{cid}-*.csv"):
        tables[p.stem[len(cid) + 1:]] = pd.read_csv(p)
    return tables


#: the claims that need the Fashion-MNIST files (skipped without them, conftest.py)
NEEDS_FILES = {"realvit-diversity"}


@pytest.mark.slow
@pytest.mark.parametrize("cid", [pytest.param(c, marks=pytest.mark.fashion_mnist)
                                 if c in NEEDS_FILES else c for c in CLAIMS])
def test_quick_run_verdict_is_the_judge_of_its_tables(cid, tmp_path):
    claim = CLAIMS[cid]
    res = claim.check(quick=True, variants=False)
    assert claim.judge({"table": res.table, **res.extra}).verdict == res.verdict
    write_result(claim, res, tmp_path, figures=True)
    assert claim.judge(_read(tmp_path, cid)).verdict == res.verdict
    page = (tmp_path / f"{cid}.md").read_text()
    assert f"Verdict `{res.verdict}`" in page and (tmp_path / f"{cid}.png").exists()
    assert len(res.short()) <= 160
    if claim.kind == "theorem check" and res.verdict != "inconclusive":
        assert res.counterfactuals.rejected.any(), res.counterfactuals


@pytest.mark.slow
def test_check_command_quick(tmp_path):
    """``python -m theorylab check --quick --only huang2024`` (main readings): every verdict is
    the judge of the tables it wrote."""
    from theorylab.commands.check import main

    assert main(["--quick", "--only", "huang2024", "--out", str(tmp_path), "--no-figures",
                 "--main-reading-only"]) == 0
    out = tmp_path / "huang2024"
    summary = pd.read_csv(out / "summary.csv")
    v = {k.split("/", 1)[1]: verdict for k, verdict in zip(summary.claim, summary.verdict)}
    assert set(v) == set(CLAIMS)
    for cid, verdict in v.items():
        if verdict == "skipped":  # its data are not on this machine
            assert cid in NEEDS_FILES and not fashion_mnist_available(), cid
            continue
        assert CLAIMS[cid].judge(_read(out, cid)).verdict == verdict
    assert v["lemma5.1"] == "agrees" and v["lemma5.1-rates"] == "agrees"
