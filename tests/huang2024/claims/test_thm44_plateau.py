"""CL's plateau against the reduced CL model (thm4.4-plateau): the derivation check's judge on
hand-made CL tables (settled plateaus judged, two-sided; the temperatures without a derived
plateau; the Jensen formula told apart through τ_c; the reduced-direction runs)."""

from __future__ import annotations

from theorylab.core.claims import counterfactual_table
from theorylab.huang2024.claims import CLAIMS, thm44_plateau

from ._cl_tables import t44 as _t44


def test_thm44_plateau_derivation_check():
    t = _t44()
    assert thm44_plateau.judge(t).verdict == "agrees"
    cf = counterfactual_table(thm44_plateau.judge, t, CLAIMS["thm4.4-plateau"].values(),
                              thm44_plateau.COUNTERFACTUALS)
    assert cf.rejected.all(), cf
    assert thm44_plateau.judge(_t44(glob=(0.45, 0.44, 0.43))).verdict == "disagrees"
    # a plateau a fifth above the derived one (two-sided: above as well as below)
    assert thm44_plateau.judge(_t44(glob=(0.77, 0.76, 0.72))).verdict == "disagrees"
    # outside the derivation's premise only the plateau's existence is compared
    out = thm44_plateau.judge(_t44(phi_l=0.6))
    assert out.verdict == "agrees" and "not compared" in out.reasons[0]
    # a derived plateau where the attention goes on above 1 − ONE_TOL
    assert thm44_plateau.judge(_t44(glob=(0.96, 0.97, 0.98))).verdict == "disagrees"
    # the Jensen formula: rejected where it differs by more than the band, not where it is close
    near = _t44(jensen=(0.63, 0.62, 0.60))
    cf = counterfactual_table(thm44_plateau.judge, near, CLAIMS["thm4.4-plateau"].values(),
                              thm44_plateau.COUNTERFACTUALS).set_index("counterfactual")
    assert not cf.rejected["Jensen"]
    # where the exact expectation has no plateau and the Jensen formula has one (τ_c between)
    between = _t44(glob=(0.98, 0.98, 0.99), exists=False, tau=0.25, jensen=(0.86, 0.86, 0.86),
                   jitter=0.002)
    assert thm44_plateau.judge(between).verdict == "agrees"
    assert thm44_plateau.judge(between, {**CLAIMS["thm4.4-plateau"].values(),
                                         "NEG_EXACT": 0.0}).verdict == "disagrees"
    above = _t44(glob=(0.97, 0.98, 0.99), exists=False, tau=0.5, jitter=0.002)
    assert thm44_plateau.judge(above).verdict == "agrees"
    settled = _t44(glob=(0.7, 0.7, 0.7), exists=False, tau=0.5, drift=-0.05)
    assert thm44_plateau.judge(settled).verdict == "disagrees"


def test_a_plateau_that_has_not_settled_is_not_judged():
    """Settled is the kernel's rule: the mean drift over the last half of the runs below a third
    of the distance to the nearest counterfactual plateau (×0.8: a quarter of the value, so
    0.64/12 ≈ 0.053 here). A drifting run is inconclusive even when its end value lies in the
    band, and a drift just inside the rule is judged."""
    assert thm44_plateau.settle_allowed(
        _t44_rows(_t44())).round(4).tolist() == [round(p / 12, 4) for p in (0.64, 0.63, 0.60)]
    drifting = thm44_plateau.judge(_t44(drift=0.06))
    assert drifting.verdict == "inconclusive"
    assert "not settled" in " ".join(drifting.reasons)
    # a drift downward counts alike (|drift|)
    assert thm44_plateau.judge(_t44(drift=-0.06)).verdict == "inconclusive"
    assert thm44_plateau.judge(_t44(drift=0.045)).verdict == "agrees"


def test_the_reduced_direction_runs_are_judged_against_the_same_plateau():
    """The engine on the reduced model's direction (objective ``cl-reduced``) is judged with
    the same band: the derivation's own error shows there; a reduced run far above the derived
    plateau makes the check disagree though the full engine agrees."""
    t = _t44()

    def red(glob):
        r = _t44(glob=glob, tau=0.2, objective="cl-reduced")["table"]
        return r[r.objective == "cl-reduced"]

    ok = thm44_plateau.judge({**t, "reduced": red((0.64, 0.63, 0.61))})
    assert ok.verdict == "agrees"
    assert any(x.startswith("reduced direction, τ=0.2, P=32") for x in ok.reasons)
    bad = thm44_plateau.judge({**t, "reduced": red((0.80, 0.79, 0.75))})
    assert bad.verdict == "disagrees"


def _t44_rows(t):
    from theorylab.huang2024.setups import cl_rung_rows

    return cl_rung_rows(t["table"])
