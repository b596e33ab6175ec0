"""The kernel's band judge and settlement rule (theorylab.core.claims.bands): two-sided bands,
one-sided ones with the alternatives they cannot tell apart, "cannot distinguish", and limits
judged only once their slopes have settled, on two real slope sequences of a crossing-slope
ladder (a law whose slope is still drifting and one whose slope is steady)."""

import math

import pytest

from theorylab.core.claims import (
    Counterfactual,
    Prediction,
    Settlement,
    Threshold,
    band_verdict,
    judge_band,
    judge_settled,
    settle,
    settled_verdict,
)
from theorylab.core.claims.bands import band

# Local slopes of Φ_glob(t_I)/(Δ/2) against ln P, one per sub-ladder, placed at the geometric
# middle of each sub-ladder's P values (81–625, 1296–6561, 10000–65536), then three single
# rungs of the extended ladder (P = 1.6e5, 3.3e5, 1e6): the coefficient law whose derived
# limit is −2 (slopes still falling) ...
P = [math.sqrt(81 * 625), math.sqrt(1296 * 6561), math.sqrt(10000 * 65536), 1.6e5, 3.3e5,
     1e6]
DRIFTING = [-0.7975, -0.9784, -1.1205, -1.21, -1.26, -1.32]
# ... and the constant law (z ≡ 1), steady at −0.97 with noise in the third decimal
STEADY = [-0.971, -0.969, -0.970, -0.9705, -0.9695, -0.970]
# the values a careful reader could hold for the limit: the neighbouring fractions −1/2, −3/2
# and the limit derived for the drifting law, −2
ALTERNATIVES = {"slope −1/2": -0.5, "slope −3/2": -1.5, "slope −2": -2.0}
TOL = 0.1  # the band's half-width: a tenth of the unit slope (the spacing of the fractions /2)
FORMS = ("a + b/ln x", "a + b·ln ln x/ln x")


def test_two_sided_band_rejects_both_sides():
    assert band(1.0, 0.1) == (0.9, 1.1)
    assert band(2.0, 1.0, scale="factor") == (1.0, 4.0)
    assert band(3.0, 0.1, sides="upper") == (-math.inf, 3.1)
    assert band(3.0, 0.1, sides="lower") == (2.9, math.inf)
    assert band_verdict(1.05, 1.0, 0.1).verdict == "agrees"
    assert band_verdict(1.2, 1.0, 0.1).verdict == "disagrees"
    assert band_verdict(0.8, 1.0, 0.1).verdict == "disagrees"  # below: a two-sided band rejects
    assert band_verdict((0.8, 0.75, 0.85), 1.0, 0.1).verdict == "disagrees"
    # the value outside the band, its interval reaching it: not decided
    v = band_verdict((0.85, 0.7, 0.95), 1.0, 0.1)
    assert v.verdict == "inconclusive" and "its interval reaching it" in v.reasons[0]
    assert band_verdict(math.nan, 1.0, 0.1).verdict == "inconclusive"
    # a factor band: ×/÷ (1 + tol)
    assert band_verdict(1.09, 1.0, 0.1, scale="factor").verdict == "agrees"
    assert band_verdict(0.9, 1.0, 0.1, scale="factor").verdict == "disagrees"  # below 1/1.1


def test_an_interval_containing_two_alternatives_cannot_distinguish_them():
    # measured exponent 0.43 [0.33, 0.52]: inside the band of 1/2 and of 3/8 (tol 0.1)
    alts = {"k = 3/8": 0.375, "k = 1": 1.0}
    v = band_verdict((0.43, 0.33, 0.52), 0.5, 0.1, alternatives=alts)
    assert v.verdict == "inconclusive"
    assert "cannot distinguish 0.5 from 0.375 (k = 3/8)" in v.reasons[0]
    assert "k = 1" not in v.reasons[0]
    # an interval that misses the other band (3/8 + 0.1 = 0.475) tells them apart; one that
    # reaches into both bands does not, even when it holds neither value
    assert band_verdict((0.50, 0.48, 0.52), 0.5, 0.1, alternatives=alts).verdict == "agrees"
    assert band_verdict((0.46, 0.45, 0.47), 0.5, 0.1,
                        alternatives=alts).verdict == "inconclusive"


def test_a_one_sided_band_lists_the_alternatives_it_cannot_tell_apart():
    # "N = poly(d)" read as k ≤ 3: the measured 0.82 [0.71, 0.93] agrees with the bound ...
    alts = {"N ∝ d": 1.0, "N ∝ d²": 2.0, "N ∝ d⁴": 4.0}
    v = band_verdict((0.82, 0.71, 0.93), 3.0, 0.1, sides="upper", alternatives=alts)
    assert v.verdict == "agrees"
    # ... and says which simple alternatives on its open side it cannot tell apart
    assert "one-sided: cannot tell it apart from 1 (N ∝ d)" in v.reasons[0]
    assert "N ∝ d²" not in v.reasons[0] and "d⁴" not in v.reasons[0]
    # the same numbers judged two-sided against k = 3 disagree
    assert band_verdict((0.82, 0.71, 0.93), 3.0, 0.1, alternatives=alts).verdict == "disagrees"
    # a lower bound rejects what lies below it only
    assert band_verdict(5.0, 3.0, 0.1, sides="lower").verdict == "agrees"
    assert band_verdict(2.0, 3.0, 0.1, sides="lower").verdict == "disagrees"


def test_a_drifting_slope_is_not_judged_until_it_settles():
    # the first three sub-ladders, against neighbours ±1/4 (a third of the distance: 0.083):
    # the drift 0.142 between the last two is too large
    v = settled_verdict(P[:3], DRIFTING[:3], -1.0, TOL, "a + b/ln x",
                        alternatives={"slope −5/4": -1.25, "slope −3/4": -0.75}, variable="P")
    assert v.verdict == "inconclusive"
    text = v.reasons[0]
    assert text.startswith("not settled (slopes -0.797, -0.978, -1.12 at P = ")
    assert "drift 0.142" in text and "≥ 0.0833" in text
    # the size of the ladder the extrapolation says would settle it
    st = settle(P[:3], DRIFTING[:3], "a + b/ln x", 0.25)
    assert not st.settled and P[2] < st.settle_at < 1e9
    assert f"P ≈ {st.settle_at:.2g} would settle it" in text
    # two sub-ladders cannot be extrapolated at all
    assert settled_verdict(P[:2], DRIFTING[:2], -1.0, TOL, "a + b/ln x",
                           alternatives=ALTERNATIVES).verdict == "inconclusive"


@pytest.mark.parametrize("form", FORMS)
@pytest.mark.parametrize("rungs", [3, 4, 5, 6])
def test_the_drifting_law_never_settles_to_minus_one(form, rungs):
    v = settled_verdict(P[:rungs], DRIFTING[:rungs], -1.0, TOL, form, alternatives=ALTERNATIVES,
                        variable="P")
    assert v.verdict != "agrees", v.reasons


def test_the_drifting_law_extrapolates_towards_its_derived_limit():
    # on the whole ladder the drift (0.06) lies below a third of 1/2: settled; the 1/ln P form
    # puts the limit at −2.01 ± 0.07 (agreeing with −2), the ln ln P/ln P form at −2.46 (the
    # form is part of the derivation: the same slopes give another limit)
    st = settle(P, DRIFTING, "a + b/ln x", 0.5)
    assert st.settled and st.drift == pytest.approx(0.06)
    assert st.limit == pytest.approx(-2.0, abs=0.05) and st.upper - st.lower < 0.2
    v = settled_verdict(P, DRIFTING, -2.0, TOL, "a + b/ln x",
                        alternatives={"slope −1": -1.0, "slope −3/2": -1.5}, variable="P")
    assert v.verdict == "agrees", v.reasons
    st2 = settle(P, DRIFTING, "a + b·ln ln x/ln x", 0.5)
    assert st2.limit < -2.2


def test_the_steady_law_settles_and_agrees():
    for rungs in (3, 6):
        v = settled_verdict(P[:rungs], STEADY[:rungs], -1.0, TOL, "a + b/ln x",
                            alternatives=ALTERNATIVES, variable="P")
        assert v.verdict == "agrees", v.reasons
        assert v.reasons[0].startswith("settled (slopes")
    # and its wrong neighbours are rejected on the same slopes
    for alt in ALTERNATIVES.values():
        assert settled_verdict(P, STEADY, alt, TOL, "a + b/ln x",
                               alternatives={"declared": -1.0}).verdict != "agrees"


def test_the_tolerance_never_grows_with_the_drift():
    # a steady and a drifting sequence, both settled: the band used is the declared ±0.1 in
    # both (the drifting one is not let through with a wider band)
    for seq, verdict in ((STEADY, "agrees"), (DRIFTING, "disagrees")):
        v = settled_verdict(P, seq, -1.0, TOL, "a + b/ln x", alternatives=ALTERNATIVES)
        assert v.verdict == verdict and "the band -1 ± 0.1 (two-sided)" in v.reasons[1]
    # a drift of 0.06 (settled) against a nearest neighbour 0.15 away: not settled
    assert not settle(P, DRIFTING, "a + b/ln x", 0.15).settled


PRED = Prediction("SLOPE", -1.0, "shift", "limit of the crossing slope", "derived",
                  check="tests/core/test_claims_bands.py::test_judge_settled_reads_the_values",
                  tolerance="SLOPE_TOL",
                  settlement=Settlement("a + b/ln x", "leading correction of the toy law", "P"))
TH = Threshold("SLOPE_TOL", TOL, "project choice", "a tenth of the unit slope")
CFS = (Counterfactual("slope −1/2", "the crossing slope is −1/2", {"SLOPE": -0.5}),
       Counterfactual("slope −2", "the crossing slope is −2", {"SLOPE": -2.0}))


def test_judge_settled_reads_the_values():
    values = {"SLOPE": -1.0, "SLOPE_TOL": TOL}
    assert judge_settled(PRED, P, STEADY, values, CFS).verdict == "agrees"
    assert judge_settled(PRED, P, DRIFTING, values, CFS).verdict == "disagrees"
    # re-judged under a counterfactual (the value replaced): the declared −1 is its neighbour
    assert judge_settled(PRED, P, DRIFTING, {**values, "SLOPE": -2.0}, CFS).verdict == "agrees"
    assert judge_settled(PRED, P, STEADY, {**values, "SLOPE": -0.5}, CFS).verdict == "disagrees"
    # whether the slopes settled is the declaration's (a third of the declared value's distance
    # to its nearest counterfactual, 1/2), not the judged value's: a resolution step of 0.05
    # is judged on the same settled limit
    v = judge_settled(PRED, P[:3], DRIFTING[:3], {**values, "SLOPE": -1.05}, CFS)
    assert v.verdict == "disagrees" and v.reasons[0].startswith("settled (slopes")
    # a plain band from the same declaration
    assert judge_band(PRED, (-0.97, -0.99, -0.95), values, CFS).verdict == "agrees"
    v = judge_band(PRED, (-0.8, -1.1, -0.5), values, CFS)
    assert v.verdict == "inconclusive" and "cannot distinguish -1 from -0.5" in v.reasons[0]
    with pytest.raises(ValueError, match="^settlement:"):
        judge_settled(Prediction("X", 1.0, "shift", "m", "heuristic", tolerance="T"), P,
                      STEADY, {"X": 1.0, "T": 0.1})
    with pytest.raises(ValueError, match="^form:"):
        Settlement("a + b·x", "d")


def test_a_bound_is_one_sided_and_its_alternatives_are_points():
    # "the exponent is at most 3" (an upper bound), measured 2.0 [1.9, 2.1]
    bound = Prediction("EXP", 3.0, "shift", "exponent of T in d", "paper", quote="q",
                       section="§1", tolerance="EXP_TOL", sides="upper")
    cfs = (Counterfactual("exponent 4", "T ∝ d⁴", {"EXP": 4.0}),
           Counterfactual("exponent 2", "T ∝ d²", {"EXP": 2.0}))
    values = {"EXP": 3.0, "EXP_TOL": 0.2}
    est = (2.0, 1.9, 2.1)
    v = judge_band(bound, est, values, cfs)
    assert v.verdict == "agrees" and "upper bound" in v.reasons[0]
    # the counterfactual above is the point statement T ∝ d⁴: rejected, not read as the
    # weaker bound "at most 4"; the one below (T ∝ d²) is what was measured
    assert judge_band(bound, est, {**values, "EXP": 4.0}, cfs).verdict == "disagrees"
    assert judge_band(bound, est, {**values, "EXP": 2.0}, cfs).verdict != "disagrees"
    from theorylab.core.claims.bands import judged_sides

    assert judged_sides(bound, values) == "upper"
    assert judged_sides(bound, {**values, "EXP": 3.5}) == "two"
