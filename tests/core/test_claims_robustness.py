"""The kernel's verdict machinery: declared thresholds, sensitivity (flip points on tables with
a known flip), premises, seed intervals, `combine`, and the page / summary lines."""

import math

import numpy as np
import pandas as pd
import pytest

from theorylab.core.claims import (
    KINDS,
    Claim,
    ClaimResult,
    Premise,
    Threshold,
    Verdict,
    bootstrap_interval,
    combine,
    format_interval,
    is_robust,
    log_t_interval,
    premises_verdict,
    render_markdown,
    sensitivity,
    t_interval,
    threshold_values,
)
from theorylab.core.claims.report import robust_cell

CUT = Threshold("CUT", 1.0, "project choice", "a unit cut", role="x below it is judged")
TOL = Threshold("TOL", 0.1, "derived bound", "rounding of y")
STEPS = Threshold("STEPS", 3000, "project choice", "horizon", judged=False)


def _judge(tables, values=None):
    """agrees when every y of the rows with x < CUT is ≥ TOL, disagrees otherwise; no row
    inside: inconclusive."""
    v = threshold_values((CUT, TOL, STEPS), values)
    t = tables["table"]
    inside = t[t.x < v["CUT"]]
    if not len(inside):
        return Verdict("inconclusive", ("no row inside",))
    return Verdict("agrees" if (inside.y >= v["TOL"]).all() else "disagrees")


# the y of the row at x = 1.3 is below TOL: the verdict flips to disagrees once CUT > 1.3,
# and to inconclusive once CUT ≤ 0.5 (no row left inside); TOL flips above 0.2 (row x = 0.5)
TABLE = {"table": pd.DataFrame({"x": [0.5, 0.9, 1.3], "y": [0.2, 0.3, 0.05]})}


def test_threshold_declaration_is_validated():
    with pytest.raises(ValueError, match="source"):
        Threshold("A", 1.0, "folklore", "r")
    with pytest.raises(ValueError, match="value"):
        Threshold("A", 0.0, "project choice", "r")
    with pytest.raises(ValueError, match="reason"):
        Threshold("A", 1.0, "project choice", "")
    assert threshold_values((CUT, TOL), {"CUT": 2}) == {"CUT": 2.0, "TOL": 0.1}
    with pytest.raises(ValueError, match="unknown name"):
        threshold_values((CUT,), {"NOPE": 1})


def test_sensitivity_finds_the_known_flip_points():
    s = sensitivity(_judge, TABLE, (CUT, TOL)).set_index("threshold")
    # the bisection brackets the flip to ~1e-9 relative: 1e-6 is far looser than that
    assert s.loc["CUT", "verdict"] == "agrees"
    assert s.loc["CUT", "flip_above"] == pytest.approx(1.3, rel=1e-6)
    assert s.loc["CUT", "flip_below"] == pytest.approx(0.5, rel=1e-6)
    assert s.loc["CUT", "verdict_half"] == "inconclusive"  # 0.5: the row x = 0.5 is out
    assert s.loc["CUT", "verdict_double"] == "disagrees"
    assert not s.loc["CUT", "robust"]
    assert s.loc["TOL", "flip_above"] == pytest.approx(0.2, rel=1e-6)
    assert math.isnan(s.loc["TOL", "flip_below"])  # lowering TOL never changes it
    assert s.loc["TOL", "robust"]  # 0.05 and 0.2 (inclusive) both agree
    assert is_robust(s.reset_index()) is False


def test_sensitivity_of_a_measurement_threshold_needs_a_rerun():
    s = sensitivity(_judge, TABLE, (TOL, STEPS))
    assert s.verdict_half.iloc[1] == "rerun" and math.isnan(s.flip_above.iloc[1])
    assert is_robust(s) is True  # only judged thresholds count
    assert is_robust(s.iloc[1:]) is None and is_robust(None) is None


def test_premises_give_inconclusive_with_the_reason():
    assert premises_verdict([Premise("converged", True)]) is None
    v = premises_verdict([Premise("converged", True),
                          Premise("attention away from uniform", False, "max 0.023 vs 0.020")])
    assert v.verdict == "inconclusive"
    assert v.reasons == ("premise failed: attention away from uniform (max 0.023 vs 0.020)",)


def test_t_interval_against_a_hand_computation():
    m, lo, hi = t_interval([1.0, 2.0, 3.0])
    # t_{0.975, 2} = 4.30265272974946 (tables), s = 1, n = 3: half-width t/√3
    half = 4.30265272974946 / math.sqrt(3)
    assert m == 2.0 and lo == pytest.approx(2 - half, rel=1e-12)
    assert hi == pytest.approx(2 + half, rel=1e-12)
    assert math.isnan(t_interval([5.0])[1]) and math.isnan(t_interval([])[0])
    assert t_interval([4.0, 4.0, np.nan]) == (4.0, 4.0, 4.0)  # NaN dropped, no spread


def test_log_t_interval_is_geometric():
    m, lo, hi = log_t_interval([100.0, 1000.0, 10000.0, math.inf])
    assert m == pytest.approx(1000.0, rel=1e-12)  # geometric mean; ∞ (censored) dropped
    assert lo * hi == pytest.approx(m * m, rel=1e-12)  # symmetric in log


def test_bootstrap_interval_is_seeded_and_covers_the_mean():
    x = np.random.default_rng(1).normal(5.0, 1.0, 50)
    a = bootstrap_interval(x)
    assert a == bootstrap_interval(x)
    assert a[1] < a[0] < a[2] and a[1] < 5.0 < a[2]
    assert math.isnan(bootstrap_interval([1.0])[1])
    assert format_interval(1200, 850, 1700, 5, ".4g") == "1200 [850, 1700], 5 seeds"
    assert format_interval(3.0, math.nan, math.nan, 1) == "3 (1 seed, no interval)"


def test_combine_precedence():
    A, R = Verdict("agrees", ("a",)), Verdict("agrees-in-regime", ("r",))
    P, I, D = Verdict("partial"), Verdict("inconclusive"), Verdict("disagrees")
    assert combine([A, R]).verdict == "agrees-in-regime"  # nothing fails: not partial
    assert combine([A, R]).reasons == ("a", "r")
    assert combine([A, A]).verdict == "agrees"
    assert combine([A, P]).verdict == "partial"
    assert combine([R, P]).verdict == "partial"
    assert combine([P, I]).verdict == "inconclusive"
    assert combine([I, D]).verdict == "disagrees"
    assert combine([]).verdict == "inconclusive"


def _claim(**kw):
    return Claim(id="x", title="X", label="RECONSTRUCTED", source="s", statement="st",
                 measured="m", predicted="p", run=lambda q: ClaimResult(
                     "x", TABLE["table"], _judge(TABLE), {"n": 1}, []),
                 judge=_judge, **kw)


def test_engine_check_is_a_kind_and_thresholds_are_distinct():
    assert "engine check" in KINDS
    _claim(kind="engine check")
    with pytest.raises(ValueError, match="distinct"):
        _claim(thresholds=(CUT, CUT))


def test_check_computes_the_sensitivity_and_the_page_lists_it():
    c = _claim(thresholds=(CUT, TOL), premises=("a row inside the regime",), seeds="3 seeds",
               reconstructed="the cut; a wrong one moves the regime")
    res = c.check()
    assert res.robust is False and robust_cell(res) == "no (CUT)"
    assert c.judged(TABLE, CUT=1.5).verdict == "disagrees"
    page = render_markdown(c, res)
    assert "## Declared thresholds" in page and "| CUT | 1 | project choice | a unit cut |" in page
    assert "**no, fragile**: CUT" in page and "Rests on a RECONSTRUCTED formula:** the cut" in page
    assert "Premises" in page and "Seeds:** 3 seeds" in page
    bare = _claim().check()
    assert bare.sensitivity is None and robust_cell(bare) == "–"


def test_wilson_interval():
    from theorylab.core.claims import wilson_interval

    # textbook values (Wilson 1927; z = 1.959964): 0/4 → [0, 0.4899], 4/4 → [0.5101, 1],
    # 2/4 → [0.1500, 0.8500]; 1e-4 is the rounding of the quoted digits
    assert wilson_interval(0, 4) == pytest.approx((0.0, 0.0, 0.4899), abs=1e-4)
    assert wilson_interval(4, 4) == pytest.approx((1.0, 0.5101, 1.0), abs=1e-4)
    assert wilson_interval(2, 4) == pytest.approx((0.5, 0.1500, 0.8500), abs=1e-4)
    assert wilson_interval(0, 3)[1] == 0.0 and wilson_interval(3, 3)[2] == 1.0
    assert all(math.isnan(x) for x in wilson_interval(0, 0))
    with pytest.raises(ValueError, match="k:"):
        wilson_interval(5, 4)
