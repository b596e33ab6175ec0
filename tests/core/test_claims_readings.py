"""The kernel's reading variants, counterfactuals, resolution and kinds, on a toy claim whose
measurement is a slope: ``agrees`` when the measured slope lies within TOL of the predicted
SLOPE (a shift prediction) and the measured ratio within RATIO_TOL of the predicted factor
RATIO, ``disagrees`` otherwise, ``inconclusive`` on an empty table."""

import math

import pandas as pd
import pytest

from theorylab.core.claims import (
    BRIEF_MAX,
    HEADLINE_MAX,
    Claim,
    ClaimResult,
    Counterfactual,
    Prediction,
    Reading,
    Threshold,
    Variant,
    can_fail_cell,
    counterfactual_table,
    readings_cell,
    resolution,
    threshold_values,
)
from theorylab.core.claims.claim import markdown_table
from theorylab.core.claims.readings import reading_dependent
from theorylab.core.claims.report import headline_cell, marks, reading_folder, write_result
from theorylab.core.claims.runner import run_checks
from theorylab.core.claims.verdict import Verdict

THRESHOLDS = (Threshold("TOL", 0.1, "project choice", "toy tolerance"),
              Threshold("RATIO_TOL", 0.1, "project choice", "toy tolerance"))
PREDICTIONS = (Prediction("SLOPE", 1.0, "shift", "slope of y in x", "paper statement"),
               Prediction("RATIO", 1.0, "factor", "measured / derived", "our derivation"))
COUNTERFACTUALS = (Counterfactual("slope 1/2", "y grows as x^(1/2)", {"SLOPE": 0.5}),
                   Counterfactual("ratio 2", "twice the derived value", {"RATIO": 2.0}),
                   Counterfactual("slope 1.05", "a slope within the tolerance", {"SLOPE": 1.05}))
VARIANT = Variant("temperature", Reading(1.0, "τ = 1", "project choice"),
                  (Reading(2.0, "τ = 2", "printed in the paper"),
                   Reading(3.0, "τ = 3", "paper notes")), "the temperature is reconstructed")


def judge(tables, values=None):
    v = threshold_values((*THRESHOLDS, *PREDICTIONS), values)
    t = tables["table"]
    if t.empty:
        return Verdict("inconclusive", ("premise failed: no rows",))
    slope, ratio = float(t.slope.iloc[0]), float(t.ratio.iloc[0])
    ok = abs(slope - v["SLOPE"]) <= v["TOL"] and abs(ratio / v["RATIO"] - 1) <= v["RATIO_TOL"]
    return Verdict("agrees" if ok else "disagrees", (f"slope {slope:g}, ratio {ratio:g}",))


def run(quick, readings):
    # the measured slope equals the temperature: only τ = 1 agrees with SLOPE = 1
    t = pd.DataFrame({"slope": [readings["temperature"]], "ratio": [1.0]})
    return ClaimResult("toy", t, judge({"table": t}), {"slope": t.slope.iloc[0]}, [],
                       brief=f"slope {t.slope.iloc[0]:g} (3 seeds)")


def toy(**kw):
    args = dict(id="toy", title="Toy", label="RECONSTRUCTED", source="none", statement="s",
                measured="m", predicted="p", run=run, judge=judge, paper="toypaper",
                thresholds=THRESHOLDS, predictions=PREDICTIONS, counterfactuals=COUNTERFACTUALS,
                variants=(VARIANT,))
    args.update(kw)
    return Claim(**args)


def tables(slope=1.0, ratio=1.0):
    return {"table": pd.DataFrame({"slope": [slope], "ratio": [ratio]})}


@pytest.mark.parametrize("make, field", [
    (lambda: Reading([1], "x", "project choice"), "value"),
    (lambda: Reading(1, "x", "somewhere"), "source"),
    (lambda: Variant("t", Reading(1, "a", "project choice"), (), "r"), "alternatives"),
    (lambda: Variant("t", Reading(1, "a", "project choice"),
                     (Reading(1, "b", "paper notes"),), "r"), "alternatives"),
    (lambda: Prediction("P", 0.0, "factor", "m", "our derivation"), "value"),
    (lambda: Prediction("P", 1.0, "power", "m", "our derivation"), "scale"),
    (lambda: Prediction("P", 1.0, "shift", "m", "a hunch"), "source"),
    (lambda: Counterfactual("c", "s", {}), "values"),
    (lambda: toy(counterfactuals=(Counterfactual("c", "s", {"NOPE": 1.0}),)),
     "counterfactuals"),
    (lambda: toy(predictions=(Prediction("TOL", 1.0, "shift", "m", "our derivation"),)),
     "thresholds"),
    (lambda: toy(kind="proof check"), "kind"),
])
def test_bad_declarations_name_the_field(make, field):
    with pytest.raises(ValueError, match=f"^{field}:"):
        make()


def test_counterfactuals_are_rejected_only_when_the_judge_disagrees():
    c = toy()
    cf = counterfactual_table(judge, tables(), c.values(), COUNTERFACTUALS)
    assert list(cf.rejected) == [True, True, False]
    assert list(cf.verdict) == ["disagrees", "disagrees", "agrees"]
    assert can_fail_cell("theorem check", "agrees", cf) == "partly: rejects 2/3"
    assert can_fail_cell("theorem check", "agrees", cf.iloc[:2]) == "yes: rejects 2/2"
    assert can_fail_cell("theorem check", "agrees", cf.iloc[2:]) == "NO: rejects 0/1"
    assert can_fail_cell("theorem check", "inconclusive", cf) == "untested (inconclusive)"
    assert can_fail_cell("theorem check", "agrees", None) == "NO: none declared"
    assert can_fail_cell("derivation check", "agrees", None) == "–"


def test_resolution_finds_the_tolerance_edges():
    res = resolution(judge, tables(), toy().values(), PREDICTIONS).set_index("prediction")
    # a shift of the slope beyond ±TOL disagrees; the bisection locates it to ~1e-5
    assert res.loc["SLOPE", "value_up"] == pytest.approx(1.1, rel=1e-4)
    assert res.loc["SLOPE", "value_down"] == pytest.approx(0.9, rel=1e-4)
    assert res.loc["SLOPE", "change_up"].startswith("+0.1")
    # a factor: ratio / RATIO outside [0.9, 1.1] disagrees
    assert res.loc["RATIO", "value_up"] == pytest.approx(1 / 0.9, rel=1e-4)
    assert res.loc["RATIO", "value_down"] == pytest.approx(1 / 1.1, rel=1e-4)
    assert res.loc["RATIO", "change_down"].startswith("×0.909")
    assert set(res.target) == {"disagrees"}


def test_resolution_from_disagrees_is_the_change_that_accepts():
    res = resolution(judge, tables(slope=1.5), toy().values(),
                     PREDICTIONS[:1]).set_index("prediction")
    assert res.loc["SLOPE", "target"] == "not disagrees"
    assert res.loc["SLOPE", "value_up"] == pytest.approx(1.4, rel=1e-4)
    assert math.isnan(res.loc["SLOPE", "value_down"])  # lowering the slope never accepts
    assert res.loc["SLOPE", "change_down"] == "none within ±100"


def test_check_runs_each_alternative_reading_and_flags_the_dependence():
    res = toy().check(quick=False)
    r = res.readings
    assert list(r.choice) == ["main", "temperature", "temperature"]
    assert list(r.verdict) == ["agrees", "disagrees", "disagrees"]
    assert reading_dependent(r) == ["temperature"]
    assert readings_cell(r) == ("temperature: agrees (τ = 1) · disagrees (τ = 2) · "
                                "disagrees (τ = 3)")
    assert set(res.variant_results) == {("temperature", 2.0), ("temperature", 3.0)}
    assert marks(toy(), res).startswith("READING-DEPENDENT (temperature)")
    # quick: only the first alternative of each variant
    quick = toy().check(quick=True)
    assert list(quick.readings.reading) == ["temperature=τ = 1", "τ = 2"]
    # a run under an explicit reading runs no alternatives
    only = toy().check(readings={"temperature": 3.0})
    assert only.verdict == "disagrees" and only.readings is None
    with pytest.raises(ValueError, match="^readings:"):
        toy().check(readings={"kappa": 1})


def test_same_verdict_under_every_reading():
    def flat(quick, readings):
        t = pd.DataFrame({"slope": [1.0], "ratio": [1.0]})
        return ClaimResult("toy", t, judge({"table": t}), {}, [])

    res = toy(run=flat).check()
    assert readings_cell(res.readings) == "same verdict under all 3 readings"
    assert reading_dependent(res.readings) == []


def test_a_theorem_check_that_rejects_nothing_is_marked():
    claim = toy(counterfactuals=COUNTERFACTUALS[2:], variants=(),
                run=lambda quick: ClaimResult("toy", tables()["table"], "agrees", {}, []))
    res = claim.check()
    assert "CANNOT FAIL" in marks(claim, res)
    derivation = toy(kind="derivation check", counterfactuals=(), variants=(),
                     run=lambda quick: ClaimResult("toy", tables()["table"], "agrees", {}, []))
    assert "CANNOT FAIL" not in marks(derivation, derivation.check())


def test_brief_and_headline_fit_one_line():
    with pytest.raises(ValueError, match="^brief:"):
        ClaimResult("toy", pd.DataFrame(), "agrees", {}, [], brief="x" * (BRIEF_MAX + 1))
    long = ClaimResult("toy", pd.DataFrame(), "agrees", {f"n{i}": 1.0 * i for i in range(90)},
                       [])
    assert len(long.short()) <= BRIEF_MAX and long.short().endswith("…")
    claim = toy()
    res = claim.check()
    res.brief = "y" * BRIEF_MAX  # the longest brief, behind the marks
    assert len(headline_cell(claim, res)) <= HEADLINE_MAX
    assert headline_cell(claim, res).startswith("READING-DEPENDENT")
    res.brief = ""
    res.headline = {f"n{i}": 1.0 * i for i in range(90)}
    res.sensitivity = res.sensitivity.assign(robust=False)  # marks FRAGILE (TOL, RATIO_TOL)
    cell = headline_cell(claim, res)
    assert cell.startswith("FRAGILE (TOL, RATIO_TOL): READING-DEPENDENT")
    assert len(cell) <= HEADLINE_MAX and cell.endswith("…")


def test_pages_and_tables_of_every_reading_are_written_and_rejudge(tmp_path):
    claim = toy()
    res = claim.check()
    write_result(claim, res, tmp_path, figures=False)
    page = (tmp_path / "toy.md").read_text()
    for section in ("## Verdict per reading", "## Counterfactuals", "## Resolution",
                    "**The verdict depends on the reading of temperature.**",
                    "Kind:** theorem check: compares"):
        assert section in page, section
    for name in ("counterfactuals", "resolution", "readings", "sensitivity"):
        assert (tmp_path / f"toy-{name}.csv").exists()
    readings = pd.read_csv(tmp_path / "toy-readings.csv")
    for row in readings[~readings.main].itertuples():
        folder = reading_folder(tmp_path, "toy", row.choice, float(row.value))
        assert judge({"table": pd.read_csv(folder / "table.csv")}).verdict == row.verdict


def test_markdown_table_says_when_rows_are_left_out():
    df = pd.DataFrame({"x": range(100)})
    text = markdown_table(df, max_rows=10, csv="t.csv")
    assert "10 of 100 rows shown (evenly spaced); the full table is `t.csv`." in text
    assert "rows shown" not in markdown_table(df.iloc[:10], max_rows=10)
    assert "a \\| b" in markdown_table(pd.DataFrame({"x": ["a | b"]}))


def test_kernel_run_checks_groups_by_kind_and_links_pages(tmp_path):
    def plain(quick):
        return ClaimResult("d", tables()["table"], "agrees", {}, [], brief="fine")

    derivation = toy(id="d", kind="derivation check", run=plain, variants=(),
                     counterfactuals=())
    claims = {"toypaper/d": derivation, "toypaper/toy": toy()}
    summary = run_checks(claims, titles={"toypaper": "A toy paper"}, out=tmp_path,
                         figures=False, progress=False)
    assert list(summary.claim) == ["toypaper/toy", "toypaper/d"]  # theorem checks first
    row = summary.set_index("claim").loc["toypaper/toy"]
    assert row["can fail?"] == "partly: rejects 2/3"
    assert row["readings"].startswith("temperature: agrees (τ = 1)")
    assert row["headline"].startswith("READING-DEPENDENT (temperature): slope 1 (3 seeds)")
    text = (tmp_path / "toypaper" / "summary.md").read_text()
    assert "## theorem checks" in text and "## derivation checks" in text
    assert "[toypaper/toy](toy.md)" in text
    assert text.index("## theorem checks") < text.index("## derivation checks")
