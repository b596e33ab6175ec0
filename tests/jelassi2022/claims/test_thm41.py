"""Theorem 4.1's check: its verdict is a pure function of the reference row, the ladder runs
and the boundary runs (hand-made tables that agree, disagree, are degenerate or fail a
premise), and its readings of an exact path."""

import math

import numpy as np
import pandas as pd
import pytest

from theorylab.jelassi2022.claims import thm41
from theorylab.jelassi2022.phases import exact_path
from theorylab.jelassi2022.setups import line_config
from theorylab.jelassi2022.trainer import run_experiment

NAN = math.nan
Q0 = math.log(100) / 10


def _ref(**kw):
    base = {"t_I": 1301.0, "t_II": 4485.0, "t_III": 5668.0, "t_PA": 1435.0, "pa_status": "ok",
            "min_pa_gap": 1.8e-10, "loss_end_I": 0.69, "final_loss": 0.25,
            "final_error_fair": 0.0906, "bayes_error": 0.0906, "q_root": 0.642}
    base.update(kw)
    return pd.Series(base)


def _run(ladder, x, **kw):
    row = {"ladder": ladder, "d": 100.0, "q": Q0, "D": 10, "C": 2, "t_I": 1301.0,
           "t_I_pred": 1300.8, "t_II": 4485.0, "t_II_pred": 6597.0, "t_PA": 1435.0,
           "final_gap": 1.0, "steps_run": 4485.0}
    row[ladder] = x
    row.update(kw)
    return row


def _runs(*extra):
    rows = [_run("d", 100.0), _run("d", 1e4), _run("q", Q0), _run("q", 0.3),
            _run("D", 10), _run("D", 8)]
    return pd.DataFrame(rows + list(extra))


def _boundary(qs=(0.642, 0.667, 0.692, 0.742), t2=(26000.0, NAN, NAN, NAN),
              gaps=(1.0, 0.3, -0.4, -1.0)):
    return pd.DataFrame({"d": 100.0, "q": qs, "D": 10, "C": 2, "t_II": t2, "final_gap": gaps,
                         "final_drift": [0.15, 0.04, -0.03, -0.04],
                         "steps_run": [26000.0, 30000.0, 30000.0, 21000.0]})


def _tables(runs=None, boundary=None, **ref):
    return {"table": pd.DataFrame([_ref(**ref)]),
            "runs": _runs() if runs is None else runs,
            "boundary": _boundary() if boundary is None else boundary}


def test_in_regime_rule():
    # q ≤ 0.5 and more spurious than informative patches, q(D − C) > C
    assert thm41.in_regime(Q0, 10, 2) and thm41.in_regime(0.3, 10, 2)
    assert not thm41.in_regime(0.6, 10, 2)  # q above Q_REGIME
    assert not thm41.in_regime(Q0, 6, 2)  # 0.46·4 = 1.84 < 2: fewer spurious than informative
    assert thm41.in_regime(0.6, 10, 2, q_regime=0.7)


def test_agrees():
    v = thm41.judge(_tables())
    assert v.verdict == "agrees"
    assert any("q ladder" in r and "t_II / derived in [0.680, 0.680]" in r for r in v.reasons)
    last = v.reasons[-1]
    assert last.startswith("finding") and "q ≤ 0.6420" in last and "q ≥ 0.6670" in last
    assert "anti-associated, from q = 0.7420" in last and "0.300 (+0.040) at q = 0.6670" in last
    assert "0.6420, at the lower end of the bracket" in last
    assert "below the bracket" in thm41.judge(_tables(q_root=0.6)).reasons[-1]
    assert "0.6500, inside the bracket" in thm41.judge(_tables(q_root=0.65)).reasons[-1]


def test_out_of_regime_failures_are_reported_not_judged():
    # q = 0.7 ends anti-associated, D = 6 never reaches t_II: both out of regime
    runs = _runs(_run("q", 0.7, t_II=NAN, t_PA=NAN, final_gap=-1.0, t_II_pred=math.inf),
                 _run("D", 6, t_II=NAN, t_PA=NAN, final_gap=0.2))
    assert thm41.judge(_tables(runs)).verdict == "agrees"
    # once the regime is read to include q = 0.7 (Q_REGIME = 0.8), the anti-associated ladder run
    # and the boundary runs from 0.667 on count against the theorem
    v = thm41.judge(_tables(runs), {"Q_REGIME": 0.8})
    assert v.verdict == "disagrees"
    assert any("ends anti-associated" in r and "q = 0.700" in r for r in v.reasons)
    assert any(r.startswith("boundary run q = 0.667") for r in v.reasons)
    assert not any(r.startswith("boundary run q = 0.642") for r in v.reasons)
    # Q_REGIME = 0.65 takes in the associating boundary run only
    assert thm41.judge(_tables(), {"Q_REGIME": 0.65}).verdict == "agrees"


@pytest.mark.parametrize("bad, text", [
    ({"final_gap": -0.5, "t_II": NAN, "t_PA": NAN}, "ends anti-associated"),
    ({"final_gap": 0.4, "t_II": NAN}, "no patch association"),
    ({"t_PA": NAN}, "no patch association"),
    ({"t_I": 1350.0}, "t_I = 1350"),  # 3.8 % off, tolerance 2 %
    ({"t_II": 1800.0}, "outside ×3"),  # ratio 0.27 < 1/3
    ({"t_II": 4485.0, "t_II_pred": math.inf}, "outside ×3"),  # derived r_II ≤ 0
])
def test_in_regime_failures_disagree(bad, text):
    runs = _runs(_run("q", 0.35, **bad))
    v = thm41.judge(_tables(runs))
    assert v.verdict == "disagrees"
    assert any(text in r for r in v.reasons), v.reasons


def test_tolerances_move_the_verdict():
    runs = _runs(_run("q", 0.35, t_I=1350.0))  # t_I 3.8 % above its derived value
    assert thm41.judge(_tables(runs), {"TOL_I": 0.05}).verdict == "agrees"
    runs = _runs(_run("q", 0.35, t_II=1800.0))  # t_II 0.27 of its derived value
    assert thm41.judge(_tables(runs), {"TOL_II": 4.0}).verdict == "agrees"


def test_degenerate_tables_are_inconclusive():
    assert thm41.judge(_tables(_runs().iloc[:0])).verdict == "inconclusive"
    # the D ladder keeps one in-regime run (D = 6 is out of regime)
    runs = pd.DataFrame([_run("d", 100.0), _run("d", 1e4), _run("q", Q0), _run("q", 0.3),
                         _run("D", 10), _run("D", 6)])
    v = thm41.judge(_tables(runs))
    assert v.verdict == "inconclusive" and "ladder(s) D" in v.reasons[1]
    # a boundary that is not bracketed is reported so, and does not change the verdict
    v = thm41.judge(_tables(boundary=_boundary(t2=(26000.0, 20000.0, 19000.0, 18000.0))))
    assert v.verdict == "agrees" and "do not bracket" in v.reasons[-1]


def test_reference_run_premise_and_failures():
    v = thm41.judge(_tables(t_III=NAN))
    assert v.verdict == "inconclusive" and v.reasons[0].startswith("premise failed")
    for bad in ({"t_II": 1000.0}, {"min_pa_gap": -1e-3}, {"pa_status": "censored-above"},
                {"final_loss": 0.8}, {"final_error_fair": 0.1132}):
        assert thm41.judge(_tables(**bad)).verdict == "disagrees", bad
    # the final error 0.0038 above Bayes: inside ERR_TOL = 0.005, outside 0.002
    t = _tables(final_error_fair=0.0944)
    assert thm41.judge(t).verdict == "agrees"
    assert thm41.judge(t, {"ERR_TOL": 0.002}).verdict == "disagrees"


def test_readings_of_a_path():
    cfg = line_config(10, 2, 100, Q0, alpha0=0.01, pa_margin=1e-3)  # diag ln ln 100 = 1.527
    step = np.arange(8)
    path = pd.DataFrame({"step": step,
                         "alpha": [0.01, 0.02, 0.05, 0.1, 0.5, 1.0, 1.5, 1.8],
                         "gamma": [0, 0, 1e-4, 0.01, 0.3, 0.6, 0.9, 1.2],
                         "rho": [0, 0, -1e-4, -0.01, -0.1, -0.3, -0.2, -0.3]})
    r = thm41.readings(cfg, path)
    assert r["t_I"] == 3.0 and r["t_II"] == 6.0  # α ≥ 0.1 at 3; γ − ρ = 1.1 ≥ 1 at 6
    assert r["t_PA"] == 3.0  # min(a, γ) − ρ = 0.02 ≥ 1e-3 from step 3 on (2e-4 at step 2)
    assert r["final_gap"] == pytest.approx(1.5) and r["steps_run"] == 7.0
    # the drift per 1000 steps over the last min(1000, steps) steps: (1.5 − 0) / 7 · 1000
    assert r["final_drift"] == pytest.approx(1500 / 7)
    anti = path.assign(gamma=-path.gamma)
    r = thm41.readings(cfg, anti)
    assert math.isnan(r["t_II"]) and math.isnan(r["t_PA"]) and r["final_gap"] < 0


def test_exact_path_is_the_trainer_run_and_stops_at_the_gap():
    cfg = line_config(6, 2, 100, 0.5, steps=40, n_records=41, record="linear", lr_v=1.0,
                      alpha0=0.05)
    tr = run_experiment(cfg, progress=False).trajectory
    path = exact_path(cfg, 40)
    got = path.set_index("step").loc[tr.step]
    for col in ("alpha", "gamma", "rho", "loss", "error_fair"):
        # the same exact arithmetic in the same order: equal to rounding
        np.testing.assert_allclose(got[col].to_numpy(), tr[col].to_numpy(), rtol=1e-12,
                                   atol=1e-15, err_msg=col)
    gap = (path.gamma - path.rho).abs()
    cut = float(gap.iloc[20])
    short = exact_path(cfg, 40, stop_gap=cut)
    assert int(short.step.iloc[-1]) == int(np.flatnonzero(gap.to_numpy() >= cut)[0])


def test_predicted_times_are_the_predictions():
    from theorylab.jelassi2022.predictions import phase_i, phase_ii

    cfg = line_config(8, 2, 100, Q0).resolved()
    p = thm41.predicted_times(cfg)
    p1, p2 = phase_i(cfg), phase_ii(cfg)
    assert p["t_I_pred"] == p1.time_to(thm41.ALPHA_GROWTH * cfg.train.alpha0)
    assert p["t_II_pred"] == pytest.approx(p1.t_I + thm41.GAP_II / p2.rate, rel=1e-15)
    # past the derived boundary r_II < 0: no finite derived t_II
    assert thm41.predicted_times(line_config(10, 2, 100, 0.75))["t_II_pred"] == math.inf
