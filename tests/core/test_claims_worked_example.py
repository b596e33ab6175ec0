"""The worked example of docs/reading-a-verdict.md, computed here: one asymptotic prediction
that fails each of the referee's rules (source, two-sided band, settlement, near
counterfactuals) before it passes. The page holds the block this module generates between two
markers, and the test fails when they differ (``python tests/core/test_claims_worked_example.py``
prints the block to paste).

The measured quantity is a synthetic Φ(P) = −ln P + 4 ln ln P + noise, whose local slope against
ln P tends to −1 as −1 + 4/ln P: the correction form a + b/ln P is exact to leading order."""

from __future__ import annotations

import math
import sys
from pathlib import Path

import numpy as np
import pandas as pd

from theorylab.core.claims import (
    Claim,
    ClaimResult,
    Counterfactual,
    Prediction,
    Settlement,
    Threshold,
    band_verdict,
    judge_settled,
    referee_problems,
    separation,
    settle,
    threshold_values,
)
from theorylab.core.claims.claim import markdown_table

PAGE = Path(__file__).resolve().parents[2] / "docs" / "reading-a-verdict.md"
START, END = "<!-- worked example: start -->", "<!-- worked example: end -->"

SHORT = [10.0, 100.0, 1e3, 1e4]  # the first ladder: three sub-ladders of one decade
LONG = [10.0 ** k for k in range(1, 8)]  # extended to P = 10⁷
TOL = Threshold("SLOPE_TOL", 0.2, "project choice",
                "a fifth of the unit slope: below half the spacing of the fractions n/2")
SLOPE = Prediction("SLOPE", -1.0, "shift", "limit of the local slope of Φ against ln P",
                   "derived", check="tests/core/test_claims_worked_example.py",
                   tolerance="SLOPE_TOL",
                   settlement=Settlement("a + b/ln x", "dΦ/d ln P = −1 + 4/ln P", "P"))
EASY = (Counterfactual("slope 0", "Φ does not fall with P", {"SLOPE": 0.0}),)
NEAR = (Counterfactual("slope −1/2", "Φ falls like −(1/2) ln P", {"SLOPE": -0.5}),
        Counterfactual("slope −3/2", "Φ falls like −(3/2) ln P", {"SLOPE": -1.5}), *EASY)


def phi(P: np.ndarray) -> np.ndarray:
    noise = np.random.default_rng(0).normal(0.0, 0.003, P.size)  # a measurement's rounding
    return -np.log(P) + 4 * np.log(np.log(P)) + noise


def local_slopes(rungs) -> pd.DataFrame:
    """One row per sub-ladder (two consecutive rungs): its geometric middle and the secant
    slope of Φ against ln P."""
    P = np.asarray(rungs, dtype=np.float64)
    s = np.diff(phi(P)) / np.diff(np.log(P))
    return pd.DataFrame({"P_from": P[:-1], "P_to": P[1:], "x": np.sqrt(P[1:] * P[:-1]),
                         "slope": s})


def make_judge(counterfactuals):
    def judge(tables, values=None):
        v = threshold_values((TOL, SLOPE), values)
        t = tables["table"]
        return judge_settled(SLOPE, t.x, t.slope, v, counterfactuals)
    return judge


def toy(kind, prediction, counterfactuals) -> Claim:
    def run(quick):
        t = local_slopes(LONG)
        return ClaimResult("slope-limit", t, make_judge(counterfactuals)({"table": t}), {}, [])
    return Claim(id="slope-limit", title="Limit slope", label="RECONSTRUCTED", source="toy",
                 statement="Φ falls like −ln P", measured="local slopes", predicted="−1",
                 run=run, judge=make_judge(counterfactuals), kind=kind, paper="example",
                 thresholds=(TOL,), predictions=(prediction,), counterfactuals=counterfactuals)


def verdicts(judge_one) -> str:
    """``declared −1: agrees · −1/2: disagrees · −3/2: disagrees``."""
    items = [("declared −1", -1.0), ("slope −1/2", -0.5), ("slope −3/2", -1.5)]
    return " · ".join(f"{name}: `{judge_one(v).verdict}`" for name, v in items)


def worked_example() -> str:
    short, long = local_slopes(SHORT), local_slopes(LONG)
    vals = {"SLOPE": -1.0, "SLOPE_TOL": TOL.value}
    lines = ["**The ladder.** Local slopes of Φ against ln P, one per sub-ladder (computed by "
             "`tests/core/test_claims_worked_example.py`):", "",
             markdown_table(long.rename(columns={"x": "middle"})), ""]

    heuristic = Prediction("SLOPE", -1.0, "shift", SLOPE.meaning, "heuristic",
                           tolerance="SLOPE_TOL", settlement=SLOPE.settlement)
    before = [p for p in referee_problems(toy("theorem check", heuristic, NEAR))
              if "theorem check" in p]
    after = referee_problems(toy("derivation check", SLOPE, NEAR))
    lines += ["**1. Source.** Declared as a theorem check with source `heuristic`, the "
              "registry refuses it:", "", *[f"- {p}" for p in before], "",
              "Declared as a derivation check, source `derived` with its check named, it "
              f"passes ({len(after)} problems).", ""]

    st = settle(long.x, long.slope, "a + b/ln x", 0.5)
    est = (st.limit, st.lower, st.upper)
    one = verdicts(lambda v: band_verdict(est, v, TOL.value, sides="upper"))
    two = verdicts(lambda v: band_verdict(est, v, TOL.value))
    lines += ["**2. Two-sided band.** The settled limit is "
              f"{st.limit:.3f} [{st.lower:.3f}, {st.upper:.3f}]. Read as an upper bound "
              f"(slope ≤ −1 + {TOL.value:g}) it accepts a wrong neighbour: {one}. With the band "
              f"−1 ± {TOL.value:g} on both sides: {two}.", ""]

    last = float(short.slope.iloc[-1])
    naive = verdicts(lambda v: band_verdict(last, v, TOL.value))
    unsettled = make_judge(NEAR)({"table": short}, vals)
    settled = verdicts(lambda v: make_judge(NEAR)({"table": long}, {**vals, "SLOPE": v}))
    lines += ["**3. Settlement.** On the first ladder (P ≤ 10⁴) the top slope is "
              f"{last:.3f}; judged as it stands: {naive}, the wrong answer. The settlement "
              f"rule says `{unsettled.verdict}`: {unsettled.reasons[0]}. On the ladder "
              f"extended to P = 10⁷: {settled}.", ""]

    easy = [p for p in referee_problems(toy("derivation check", SLOPE, EASY))
            if "counterfactual" in p]
    near_claim = toy("derivation check", SLOPE, NEAR)
    res = near_claim.check()
    sep = separation(near_claim.predictions, NEAR, near_claim.values(), res.resolution)
    lines += ["**4. Near counterfactuals.** With only the easy counterfactual “slope 0”, the "
              "registry refuses it:", "", *[f"- {p}" for p in easy], "",
              "With the neighbouring fractions −1/2 and −3/2 declared, the check's resolution "
              "(the change of the prediction that turns the verdict) is tighter than the "
              "distance to each:", "",
              markdown_table(sep[["side", "counterfactual", "distance", "resolution",
                                  "status"]]), ""]
    return "\n".join(lines)


def page_block() -> str:
    text = PAGE.read_text(encoding="utf-8")
    return text.split(START, 1)[1].split(END, 1)[0].strip()


def test_the_page_shows_the_computed_example():
    assert page_block() == worked_example().strip(), (
        "docs/reading-a-verdict.md: the worked example differs from the computed one; paste "
        "the output of `python tests/core/test_claims_worked_example.py`")


def test_each_rule_fails_before_it_passes():
    short, long = local_slopes(SHORT), local_slopes(LONG)
    vals = {"SLOPE": -1.0, "SLOPE_TOL": TOL.value}
    judge = make_judge(NEAR)
    assert judge({"table": short}, vals).reasons[0].startswith("not settled (slopes")
    assert judge({"table": long}, vals).verdict == "agrees"
    for wrong in (-0.5, -1.5):
        assert judge({"table": long}, {**vals, "SLOPE": wrong}).verdict == "disagrees"
    # the naive reading of the top slope of the first ladder picks −1/2
    assert band_verdict(float(short.slope.iloc[-1]), -0.5, TOL.value).verdict == "agrees"
    st = settle(long.x, long.slope, "a + b/ln x", 0.5)
    assert math.isclose(st.limit, -1.0, abs_tol=0.05)
    assert band_verdict((st.limit, st.lower, st.upper), -0.5, TOL.value,
                        sides="upper").verdict == "agrees"
    assert referee_problems(toy("derivation check", SLOPE, NEAR)) == []


if __name__ == "__main__":
    sys.stdout.write(worked_example() + "\n")
