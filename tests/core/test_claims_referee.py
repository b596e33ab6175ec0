"""The referee's rules (theorylab.core.claims.referee) and what they read: prediction sources
(the paper's sentence found verbatim under a FOUND tag, a derivation's check), near
counterfactuals on both sides and WEAK sides, parts judged and reported per reading, the page
header generated from the claim and its settings, and interval methods calibrated on a null
table. The toy claim measures one slope and judges it with a two-sided band."""

import math
from types import SimpleNamespace

import numpy as np
import pandas as pd
import pytest

from theorylab.core.claims import (
    Claim,
    ClaimResult,
    Counterfactual,
    IntervalMethod,
    Prediction,
    Reading,
    Reported,
    Threshold,
    Variant,
    bootstrap_interval,
    combine,
    interval_coverage,
    judge_band,
    near_counterfactuals,
    quote_problem,
    readings_cell,
    referee_problems,
    separation,
    t_interval,
    threshold_values,
    wrong_sides,
)
from theorylab.core.claims.report import render_markdown
from theorylab.core.claims.verdict import Verdict

NOTES = """# Notes

## §4.2 Theorem 4.2 (learning) — FOUND qualitatively

FOUND [S1, S2]: the model "learns diverse
correlations across all areas" while the other one does not.

The model "collapses to a single pattern" (FOUND-2nd [S5]).

The slope "is minus one" (RECONSTRUCTED).

## §5 Other

"learns diverse correlations across all areas" (FOUND [S1]) again.
"""
MADE = {"run": "quick", "commit": "abc1234", "date": "2026-01-02 03:04 UTC", "version": "0"}
QUOTE = "learns diverse correlations across all areas"
SECTION = "§4.2"

TOL = Threshold("TOL", 0.1, "project choice", "a tenth of the unit slope")
SLOPE = Prediction("SLOPE", 1.0, "shift", "slope of y in x", "paper", quote=QUOTE,
                   section=SECTION, tolerance="TOL")
NEAR = (Counterfactual("slope 3/4", "y grows as x^(3/4)", {"SLOPE": 0.75}),
        Counterfactual("slope 5/4", "y grows as x^(5/4)", {"SLOPE": 1.25}))


def judge(tables, values=None):
    v = threshold_values((TOL, SLOPE), values)
    t = tables["table"]
    return judge_band(SLOPE, (t.slope.iloc[0], t.lo.iloc[0], t.hi.iloc[0]), v, NEAR)


def run(quick):
    t = pd.DataFrame({"slope": [1.02], "lo": [0.99], "hi": [1.05]})
    return ClaimResult("toy", t, judge({"table": t}), {}, [],
                       settings={"start of v": "random, norm 0.1", "seeds": 4})


def toy(**kw):
    args = dict(id="toy", title="Toy", label="FOUND", source="§4.2", statement="s",
                measured="m", predicted="p", run=run, judge=judge, paper="toypaper",
                thresholds=(TOL,), predictions=(SLOPE,), counterfactuals=NEAR,
                settings={"start of v": "random, norm 0.1"},
                interval=IntervalMethod("t", seeds=4))
    args.update(kw)
    return Claim(**args)


@pytest.mark.parametrize("make, field", [
    (lambda: Prediction("P", 1.0, "shift", "m", "paper"), "quote"),
    (lambda: Prediction("P", 1.0, "shift", "m", "paper", quote="q"), "quote"),
    (lambda: Prediction("P", 1.0, "shift", "m", "derived"), "check"),
    (lambda: Prediction("P", 1.0, "shift", "m", "heuristic", quote="q"), "quote"),
    (lambda: Prediction("P", 1.0, "shift", "m", "heuristic", sides="upper"), "sides"),
    (lambda: Prediction("P", 1.0, "shift", "m", "heuristic", sides="both"), "sides"),
    (lambda: toy(predictions=(Prediction("P", 1.0, "shift", "m", "heuristic",
                                         tolerance="NOPE"),), counterfactuals=()),
     "predictions"),
    (lambda: IntervalMethod("bootstrap", seeds=4), "calibration"),
    (lambda: IntervalMethod("t", seeds=1), "seeds"),
    (lambda: IntervalMethod("jackknife", seeds=4), "method"),
])
def test_bad_declarations_name_the_field(make, field):
    with pytest.raises(ValueError, match=f"^{field}:"):
        make()


def test_older_source_names_are_mapped_and_flagged():
    p = Prediction("P", 1.0, "shift", "m", "paper statement (reconstructed)")
    assert (p.source, p.legacy_source) == ("heuristic", "paper statement (reconstructed)")
    assert Prediction("P", 1.0, "shift", "m", "our derivation").source == "derived"
    c = toy(predictions=(p,), counterfactuals=())
    probs = referee_problems(c)
    assert any("older name 'paper statement (reconstructed)'" in x for x in probs)
    assert any("a theorem check judges only paper sentences (source heuristic)" in x
               for x in probs)
    assert any("a theorem check that judges no paper sentence" in x for x in probs)
    assert any("no band tolerance declared" in x for x in probs)
    # the same prediction in a derivation check: no theorem-check rule, still the legacy one
    d = referee_problems(toy(predictions=(p,), counterfactuals=(), kind="derivation check"))
    assert not any("theorem check" in x for x in d) and any("older name" in x for x in d)


def test_a_paper_quote_must_stand_verbatim_under_a_found_tag():
    assert quote_problem(NOTES, QUOTE, SECTION) == ""  # across a line break, tag before it
    assert quote_problem(NOTES, f"“{QUOTE}”", SECTION) == ""  # typographic quotes folded
    assert quote_problem(NOTES, QUOTE, "§5") == ""  # tag right after it
    assert "FOUND-2nd" in quote_problem(NOTES, "collapses to a single pattern", SECTION)
    assert "RECONSTRUCTED" in quote_problem(NOTES, "is minus one", SECTION)
    assert "not in the notes' section" in quote_problem(NOTES, "learns diverse patterns",
                                                        SECTION)
    assert "no section" in quote_problem(NOTES, QUOTE, "§9")
    assert referee_problems(toy(), NOTES) == []
    bad = Prediction("SLOPE", 1.0, "shift", "m", "paper", quote="collapses to a single pattern",
                     section=SECTION, tolerance="TOL")
    assert any("FOUND-2nd" in x for x in referee_problems(toy(predictions=(bad,)), NOTES))


def test_near_counterfactuals_on_each_side():
    near = near_counterfactuals(SLOPE, NEAR + (Counterfactual("slope 2", "s", {"SLOPE": 2.0}),),
                                0.1)
    assert near["below"]["counterfactual"] == "slope 3/4" and near["below"]["near"]
    assert near["above"]["value"] == 1.25 and near["above"]["distance"] == pytest.approx(0.25)
    # only a far one above (10 tolerances): declared, but not near
    far = near_counterfactuals(SLOPE, (NEAR[0], Counterfactual("slope 2", "s", {"SLOPE": 2.0})),
                               0.1)
    assert not far["above"]["near"]
    probs = referee_problems(toy(counterfactuals=(NEAR[0],)))
    assert probs == ["toypaper/toy SLOPE: no counterfactual above it"]
    probs = referee_problems(toy(counterfactuals=(NEAR[0], Counterfactual(
        "slope 2", "s", {"SLOPE": 2.0}))))
    assert probs == ["toypaper/toy SLOPE: the nearest counterfactual above it (slope 2, 2) "
                     "lies beyond 3 tolerances"]
    # an upper bound needs no counterfactual on its open side (above: a looser bound holds
    # whenever it does), and one below (a tighter bound, which the data can reject)
    upper = Prediction("SLOPE", 1.0, "shift", "m", "paper", quote=QUOTE, section=SECTION,
                       tolerance="TOL", sides="upper")
    assert referee_problems(toy(predictions=(upper,), counterfactuals=(NEAR[0],))) == []
    assert referee_problems(toy(predictions=(upper,), counterfactuals=(NEAR[1],))) == [
        "toypaper/toy SLOPE: no counterfactual below it"]
    lower = Prediction("SLOPE", 1.0, "shift", "m", "paper", quote=QUOTE, section=SECTION,
                       tolerance="TOL", sides="lower")
    assert referee_problems(toy(predictions=(lower,), counterfactuals=(NEAR[1],))) == []
    assert wrong_sides(lower) == ("above",) and wrong_sides(SLOPE) == ("below", "above")
    # a sentence that states a direction only: its bound is the smallest difference that
    # counts (ours), its wrong readings lie beyond the open end (no difference, the other
    # way); a tighter bound is a stronger statement it leaves open, not a wrong reading
    more = Prediction("SLOPE", 1.0, "shift", "m", "paper", quote=QUOTE, section=SECTION,
                      tolerance="TOL", sides="lower", direction=True)
    assert wrong_sides(more) == ("below",)
    assert referee_problems(toy(predictions=(more,), counterfactuals=(NEAR[0],))) == []
    assert referee_problems(toy(predictions=(more,), counterfactuals=(NEAR[1],))) == [
        "toypaper/toy SLOPE: no counterfactual below it"]
    with pytest.raises(ValueError, match="^direction: "):
        Prediction("SLOPE", 1.0, "shift", "m", "paper", quote=QUOTE, section=SECTION,
                   tolerance="TOL", direction=True)


def test_resolution_against_the_nearest_counterfactual_marks_weak_sides():
    res = toy().check()
    assert res.verdict == "agrees"
    sep = separation(toy().predictions, NEAR, toy().values(), res.resolution)
    # the band ±0.1 around the interval [0.99, 1.05] flips at 0.89 and 1.15: tighter than
    # the neighbours 0.25 away on both sides
    assert list(sep.status) == ["ok", "ok"]
    assert sep.resolution.tolist() == pytest.approx([0.11, 0.15], abs=1e-4)
    # a wide interval [0.7, 1.3]: the neighbours cannot be told apart (the verdict is then
    # inconclusive, and every change within 0.4 keeps it so): both sides WEAK
    wide = {"table": pd.DataFrame({"slope": [1.0], "lo": [0.7], "hi": [1.3]})}
    from theorylab.core.claims import resolution

    r = resolution(judge, wide, toy().values(), (SLOPE,))
    sep = separation((SLOPE,), NEAR, toy().values(), r)
    assert sep.weak.all() and sep.status.str.startswith("WEAK: resolution").all()
    # a judge that never rejects below: judged one-sided in fact
    one = pd.DataFrame([{"prediction": "SLOPE", "verdict": "agrees", "value_down": math.nan,
                         "value_up": 1.15}])
    sep = separation((SLOPE,), NEAR, toy().values(), one)
    assert sep.status.iloc[0].startswith("WEAK: no change on this side flips the verdict")
    res.resolution = one
    probs = referee_problems(toy(), NOTES, res)
    assert "toypaper/toy SLOPE: declared two-sided but judged one-sided (no change below it " \
           "flips the verdict)" in probs
    assert any("a headline part is WEAK" in x for x in probs)


def test_a_one_sided_prediction_is_judged_on_its_closed_side():
    # an upper bound 1.0 ± 0.1 on a measured 0.95: lowering it below 0.85 flips the verdict,
    # raising it never does; the side above is open (not WEAK), the side below is read
    upper = Prediction("SLOPE", 1.0, "shift", "m", "paper", quote=QUOTE, section=SECTION,
                       tolerance="TOL", sides="upper")
    one = pd.DataFrame([{"prediction": "SLOPE", "verdict": "agrees", "value_down": 0.85,
                         "value_up": math.nan}])
    sep = separation((upper,), NEAR, toy().values(), one)
    assert list(sep.side) == ["below", "above"]
    assert sep.status.iloc[0] == "ok" and sep.status.iloc[1].startswith("open side")
    assert not sep.weak.any()
    assert referee_problems(toy(predictions=(upper,)), NOTES,
                            SimpleNamespace(resolution=one, settings={})) == []



def test_a_direction_sentence_is_judged_on_the_side_of_the_readings_it_denies():
    # "at least 1.0" read from a sentence that states a direction only, on a measured 1.6 ±
    # 0.1: judged as a point once moved, the verdict flips 0.5 below and within 0.1 above;
    # below, the readings it denies (0.75 here) must be near and beyond the resolution; above,
    # a tighter bound (1.25) is a stronger statement the data support: not a WEAK side
    more = Prediction("SLOPE", 1.0, "shift", "m", "paper", quote=QUOTE, section=SECTION,
                      tolerance="TOL", sides="lower", direction=True)
    one = pd.DataFrame([{"prediction": "SLOPE", "verdict": "agrees", "value_down": 0.9999,
                         "value_up": 1.0001}])
    sep = separation((more,), NEAR, toy().values(), one)
    assert list(sep.side) == ["below", "above"]
    assert sep.status.iloc[0] == "ok" and sep.status.iloc[1].startswith("a tighter bound")
    assert not sep.weak.any()
    assert referee_problems(toy(predictions=(more,)), NOTES,
                            SimpleNamespace(resolution=one, settings={})) == []
    # the same check whose resolution below is coarser than the denied reading: WEAK
    coarse = one.assign(value_down=0.7)
    probs = referee_problems(toy(predictions=(more,)), NOTES,
                             SimpleNamespace(resolution=coarse, settings={}))
    assert any("WEAK: resolution" in x for x in probs)


def test_a_claim_on_seeds_declares_its_interval_method():
    assert referee_problems(toy(seeds="4 seeds, t-interval"), NOTES) == []
    assert referee_problems(toy(seeds="4 seeds", interval=None), NOTES) == [
        "toypaper/toy: rests on seeds (4 seeds) without a declared interval method "
        "(IntervalMethod)"]


def test_a_declared_weak_part_may_not_be_a_headline():
    weak = Prediction("SLOPE", 1.0, "shift", "m", "paper", quote=QUOTE, section=SECTION,
                      tolerance="TOL", weak="the interval spans both neighbours")
    assert referee_problems(toy(predictions=(weak,)), NOTES) == [
        "toypaper/toy SLOPE: a headline part declared WEAK"]
    side = Prediction("SLOPE", 1.0, "shift", "m", "paper", quote=QUOTE, section=SECTION,
                      tolerance="TOL", weak="the interval spans both neighbours",
                      headline=False)
    assert referee_problems(toy(predictions=(side,)), NOTES) == []


def test_settings_on_the_page_come_from_the_run():
    c = toy()
    res = c.check()
    page = render_markdown(c, res, made=MADE)
    assert ('`SLOPE` = 1 (slope of y in x): paper: "learns diverse correlations across all '
            'areas" (notes, §4.2); band ± 0.1 (TOL), two-sided') in page
    assert "- **Settings (from the code):** start of v = random, norm 0.1; seeds = 4" in page
    assert "- **Intervals:** t-interval (95%) over 4 seeds" in page
    assert "## Separation from the nearest counterfactuals" in page
    assert referee_problems(c, NOTES, res) == []
    # a page whose declared start differs from the run's
    c2 = toy(settings={"start of v": "random, norm 0.01"})
    res2 = c2.check()
    assert referee_problems(c2, NOTES, res2) == [
        "toypaper/toy: start of v: page says random, norm 0.01, the run used random, norm 0.1"]
    assert "**Settings that differ from the declared ones:**" in render_markdown(
        c2, res2, made=MADE)


def test_a_hand_written_page_states_the_codes_settings():
    from theorylab.core.claims.referee import stated_settings_mismatches

    page = ("Phase I from a random v⁰ with ‖v⁰‖ = 0.01, q = 0.30 (below q*), D = 8, and "
            "later ‖v⁰‖ = 0.1; τ = √d.")
    assert stated_settings_mismatches(page, {"‖v⁰‖": 0.1, "q": 0.3, "D": 8, "τ": "√d"}) == [
        "‖v⁰‖: the page states 0.01, the code uses 0.1"]
    assert stated_settings_mismatches(page, {"τ": "√D"}) == [
        "τ: the page states √d, the code uses √D"]
    assert stated_settings_mismatches("no setting here", {"q": 0.3}) == []


def test_combine_counts_reported_parts():
    v = combine([Verdict("agrees", ("phases in order",), judged=("phases",)),
                 Reported("end-to-end", "reference run anti-associates: reported only")])
    assert v.verdict == "agrees" and v.judged == ("phases",) and v.reported == ("end-to-end",)
    assert v.reasons == ("phases in order", "reference run anti-associates: reported only")
    # a part judged by one part is not counted as reported
    w = combine([Verdict("agrees", judged=("a",)), Reported("a", "r")])
    assert w.reported == ()
    assert combine([Reported("a", "r")]).verdict == "inconclusive"
    with pytest.raises(ValueError, match="^reported:"):
        Verdict("agrees", judged=("a",), reported=("a",))


VARIANT = Variant("temperature", Reading(1.0, "τ = 1", "project choice"),
                  (Reading(2.0, "τ = 2", "printed in the paper", setting="q = 0.30"),
                   Reading(3.0, "τ = 3", "paper notes")), "the temperature is reconstructed")


def _run_parts(drop_under):
    def run_r(quick, readings):
        t = pd.DataFrame({"slope": [1.0], "lo": [0.98], "hi": [1.02]})
        parts = [Verdict("agrees", ("slope in band",), judged=("slope",))]
        if readings["temperature"] in drop_under:
            parts.append(Reported("end-to-end", "reference point beyond the boundary"))
        else:
            parts.append(Verdict("agrees", ("end-to-end within δ",), judged=("end-to-end",)))
        return ClaimResult("toy", t, combine(parts), {}, [])
    return run_r


def test_a_reading_that_drops_a_part_is_not_counted_as_the_same_verdict():
    full = toy(run=_run_parts(()), variants=(VARIANT,), predictions=(), counterfactuals=(),
               kind="derivation check")
    res = full.check()
    assert readings_cell(res.readings) == "same verdict under all 3 readings"
    assert list(res.readings.judged) == ["slope; end-to-end"] * 3
    dropped = toy(run=_run_parts((2.0,)), variants=(VARIANT,), predictions=(),
                  counterfactuals=(), kind="derivation check")
    res = dropped.check()
    assert list(res.readings.verdict) == ["agrees"] * 3
    assert readings_cell(res.readings) == ("agrees under 3 readings (part end-to-end reported "
                                           "only under τ = 2)")
    page = render_markdown(dropped, res, made=MADE)
    assert "| τ = 2 | printed in the paper | agrees | – | slope | end-to-end |" in page
    # the admissible setting a reading runs at is declared on the page
    assert "alternatives τ = 2 (printed in the paper; run at q = 0.30); τ = 3" in page


def _normal(rng, n):
    return rng.normal(1.0, 2.0, n)


def test_intervals_with_few_seeds_are_calibrated_on_a_null_table():
    # 4 seeds of a normal null with mean 1: the t-interval covers its 95 % (the Wilson
    # interval of 600 repetitions, ±2 %, holds 0.95) ...
    cov, lo, hi = interval_coverage(t_interval, _normal, 1.0, 4, reps=600, seed=1)
    assert lo <= 0.95 <= hi
    # ... the percentile bootstrap does not (it covers about 3 in 4 at 4 seeds) ...
    cov_b, lo_b, hi_b = interval_coverage(
        lambda x: bootstrap_interval(x, n_boot=400), _normal, 1.0, 4, reps=600, seed=1)
    assert hi_b < 0.9
    # ... and with 30 seeds it comes close to its level
    cov_30, _, hi_30 = interval_coverage(
        lambda x: bootstrap_interval(x, n_boot=400), _normal, 1.0, 30, reps=300, seed=2)
    assert cov_30 > cov_b and hi_30 >= 0.92
    assert IntervalMethod("bootstrap", seeds=4, calibration="tests/x.py::t").text().startswith(
        "percentile bootstrap (95%) over 4 seeds")


def test_a_bootstrap_is_calibrated_on_a_null_table_or_refused():
    from theorylab.core.claims.robustness import calibrated_level

    def boot(level):
        return lambda x: bootstrap_interval(x, level=level, n_boot=400)

    # 4 seeds: the percentile bootstrap never covers 95 % (at most 1 − 2/2⁴ = 87.5 %)
    assert math.isnan(calibrated_level(boot, _normal, 1.0, 4, reps=300, seed=3))
    # 8 seeds: a nominal level near 99.5 % covers 95 %, on fresh null tables too (the Wilson
    # interval of 1000 repetitions, ±1.4 %, holds 0.95)
    level = calibrated_level(boot, _normal, 1.0, 8, reps=1000, seed=3)
    assert 0.98 < level < 0.9999
    _, lo, hi = interval_coverage(boot(level), _normal, 1.0, 8, reps=1000, seed=11)
    assert lo <= 0.95 <= hi
    _, _, hi_95 = interval_coverage(boot(0.95), _normal, 1.0, 8, reps=1000, seed=11)
    assert hi_95 < 0.95  # uncalibrated, the nominal 95 % covers less


def test_bootstrap_interval_keeps_its_draws():
    # the vectorised resampling draws the same indices as one resample at a time
    x = np.array([1.0, 4.0, 2.0, 8.0, 5.0])
    rng = np.random.default_rng(0)
    loop = np.array([x[rng.integers(0, 5, 5)].mean() for _ in range(4000)])
    m, lo, hi = bootstrap_interval(x)
    assert (lo, hi) == (float(np.quantile(loop, 0.025)), float(np.quantile(loop, 0.975)))
    med = bootstrap_interval(x, stat=lambda v: float(np.median(v)), n_boot=50)  # no axis
    assert med[0] == 4.0 and med[1] <= med[2]


def test_the_summary_names_the_sentence_or_the_source():
    from theorylab.core.claims.report import QUOTE_MAX, sources_cell

    assert sources_cell(toy()) == f"paper: “{QUOTE}”"
    long = Prediction("A", 1.0, "shift", "m", "paper", quote="word " * 30, section=SECTION)
    two = toy(predictions=(long, SLOPE), counterfactuals=())
    assert sources_cell(two) == "paper: “" + ("word " * 30)[:QUOTE_MAX - 1].rstrip() + "…” (+1)"
    assert sources_cell(toy(predictions=(Prediction("A", 1.0, "shift", "m", "heuristic"),
                                         Prediction("B", 1.0, "shift", "m", "our derivation")),
                            counterfactuals=())) == "heuristic, derived"
    assert sources_cell(toy(predictions=(), counterfactuals=())) == "–"
