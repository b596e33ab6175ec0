"""Theorem 4.1's two checks: the theorem check's verdict (association boundary, T = poly(d),
reference runs) and the derivation check's, each a pure function of hand-made tables that
agree, disagree, are degenerate or fail a premise; and the exact path the checks read."""

import math

import numpy as np
import pandas as pd

from theorylab.jelassi2022.claims import thm41, thm41_phases
from theorylab.jelassi2022.phases import exact_path, read_phases
from theorylab.jelassi2022.setups import line_config
from theorylab.jelassi2022.trainer import run_experiment

NAN = math.nan


def _boundary(qstar):
    """Boundary runs with one associating run just below and one anti-associating just above
    q*(D) for each D."""
    rows = []
    for D, q in qstar.items():
        rows.append({"D": D, "q": q - 0.01, "outcome": "associates", "tau": 1.0})
        rows.append({"D": D, "q": q + 0.01, "outcome": "anti-associates", "tau": 1.0})
        rows.append({"D": D, "q": q + 0.005, "outcome": "undecided", "tau": 1.0})
    return pd.DataFrame(rows)


def _escape(k, ds=(10, 32, 100, 316, 1000), seeds=4, top=None):
    rows = []
    for d in ds:
        kk = top if (top is not None and d == ds[-1]) else k
        base = 900.0 * (d / ds[0]) ** kk if top is None else (
            900.0 * (ds[-2] / ds[0]) ** k * (d / ds[-2]) ** kk if d == ds[-1]
            else 900.0 * (d / ds[0]) ** k)
        for s in range(seeds):
            rows.append({"d": d, "seed": s, "t_I": base * (1 + 0.05 * s), "lr": 1.0})
    return pd.DataFrame(rows)


def _ref(**kw):
    base = {"seed": [0, 1], "t_I": [3200.0, 4400.0], "t_II": [3500.0, 4800.0],
            "t_III": [3650.0, 4930.0], "t_PA": [3225.0, 4500.0], "final_gap": [3.3, 3.6],
            "loss_end_I": [0.69, 0.69], "final_loss": [0.21, 0.21],
            "final_error_fair": [0.0906, 0.0906], "bayes_error": [0.0906, 0.0906],
            "min_pa_gap": [-2e-9, 1e-12], "alpha0": [-1e-3, 1e-3],
            "final_beta_over_alpha": [1e-20, 1e-20], "tau": [1.0, 1.0]}
    base.update(kw)
    return pd.DataFrame(base)


def _tables(qstar=None, k=0.5, ref=None):
    qstar = qstar or {8: 0.66, 12: 0.65, 16: 0.64, 24: 0.63}
    return {"table": _ref() if ref is None else ref, "escape": _escape(k),
            "boundary": _boundary(qstar)}


def test_boundary_exponent_spans_the_brackets():
    e = thm41.boundary_exponent(_boundary({8: 0.66, 24: 0.66}))
    assert e["lo"] < e["k"] < e["hi"] and abs(e["k"]) < 0.02
    one_over_D = thm41.boundary_exponent(_boundary({8: 4 / 8, 16: 4 / 16, 32: 4 / 32}))
    assert abs(one_over_D["k"] + 1) < 0.05


def test_thm41_agrees_disagrees_inconclusive():
    assert thm41.judge(_tables()).verdict == "agrees"
    # the associating side shrinks faster than 1/D: the paper's regime would leave it
    shrink = {D: 4 * D ** -1.5 for D in (8, 16, 32, 64)}
    assert thm41.judge(_tables(qstar=shrink)).verdict == "disagrees"
    # exactly like 1/D: the range straddles the floor
    edge = {D: 4 / D for D in (8, 16, 32, 64)}
    assert thm41.judge(_tables(qstar=edge)).verdict == "inconclusive"
    # one bracketed D: no exponent
    assert thm41.judge(_tables(qstar={8: 0.6})).verdict == "inconclusive"


def test_thm41_reference_runs():
    values = thm41.CLAIM.values()
    assert thm41.verdict_reference(_ref(), values).verdict == "agrees"
    # generalization two-sided: 3 points above, or 1 point below the Bayes error
    bad = _ref(final_error_fair=[0.0906, 0.12])
    assert thm41.verdict_reference(bad, values).verdict == "disagrees"
    low = _ref(final_error_fair=[0.0906, 0.0806])
    assert thm41.verdict_reference(low, values).verdict == "disagrees"
    # a start that anti-associates: the sentence fails (no premise, a finding)
    anti = _ref(final_gap=[-13.0, 3.6])
    v = thm41.verdict_reference(anti, values)
    assert v.verdict == "disagrees" and "1/2 starts" in v.reasons[0]
    assert thm41.judge(_tables(ref=anti)).verdict == "disagrees"
    nopa = _ref(t_PA=[NAN, 4500.0])  # association not held to the end
    assert thm41.verdict_reference(nopa, values).verdict == "disagrees"
    assert thm41.verdict_reference(_ref().iloc[:0], values).verdict == "inconclusive"


def test_thm41_reports_the_reference_point_of_a_reading_judged_elsewhere():
    t = _tables()
    t["at_ref_q"] = _ref(final_gap=[-13.0, -20.0], final_error_fair=[0.2, 0.21])
    v = thm41.judge(t)
    assert v.verdict == "agrees" and "anti-associates" in v.reasons[-1]
    # an extra finding, not a dropped part: every part is judged at the admissible q
    assert not v.reported and len(v.judged) == 2


def test_thm41_counterfactuals_are_rejected_on_an_agreeing_table():
    t = _tables()
    values = thm41.CLAIM.values()
    for cf in thm41.COUNTERFACTUALS:
        assert thm41.judge(t, {**values, **cf.values}).verdict == "disagrees", cf.name


def _phases_tables(ratio_I=1.001, ratio_II=1.005, never=False):
    ref = _ref().assign(t_I_pred=lambda x: x.t_I / ratio_I, t_II_pred=lambda x: x.t_II / ratio_II)
    if never:
        ref = ref.assign(t_II=[NAN, NAN], t_II_pred=[math.inf, math.inf])
    esc = _escape(0.5)
    esc["t_I_pred"] = esc.t_I / ratio_I
    esc["exp_expected"] = 0.5
    dl = pd.DataFrame({"D": [8, 12, 16, 24], "t_II": [1000.0, 1300.0, 1700.0, 2400.0]})
    dl["t_II_pred"] = dl.t_II / ratio_II
    return {"table": ref, "escape": esc, "dladder": dl}


def test_thm41_phases_judge():
    assert thm41_phases.judge(_phases_tables()).verdict == "agrees"
    assert thm41_phases.judge(_phases_tables(ratio_I=1.05)).verdict == "disagrees"
    assert thm41_phases.judge(_phases_tables(ratio_II=1.2)).verdict == "disagrees"
    # the slow flow predicts no association and none is seen: agreement, said so
    v = thm41_phases.judge(_phases_tables(never=True))
    assert v.verdict == "agrees" and any("never reach" in r for r in v.reasons)
    # a derived time and no measured one within the horizon: premise
    t = _phases_tables()
    t["dladder"].loc[0, "t_II"] = NAN
    assert thm41_phases.judge(t).verdict == "inconclusive"
    values = thm41_phases.CLAIM.values()
    for cf in thm41_phases.COUNTERFACTUALS:
        assert thm41_phases.judge(_phases_tables(), {**values, **cf.values}).verdict == \
            "disagrees", cf.name


def test_thm41_phases_exponent_of_t_I_is_two_sided():
    values = thm41_phases.CLAIM.values()
    for k, want in ((0.62, "disagrees"), (0.38, "disagrees"), (0.52, "agrees")):
        t = _phases_tables()
        t["escape"] = t["escape"].assign(t_I=_escape(k).t_I, t_I_pred=_escape(k).t_I / 1.001)
        assert thm41_phases.judge(t, values).verdict == want, k
    # seeds whose slopes scatter widely: the interval reaches the band of 1/2 as well
    t = _phases_tables()
    noisy = _escape(0.5)
    noisy["t_I"] = noisy.t_I * noisy.d.astype(float) ** (0.3 * (noisy.seed - 1.5))
    t["escape"] = noisy.assign(t_I_pred=noisy.t_I / 1.001, exp_expected=0.5)
    assert thm41_phases.judge(t, values).verdict == "inconclusive"


def test_exact_path_is_the_trainer_run_and_stops_at_the_gap():
    """The every-step exact path equals the trainer's exchangeable run at the recorded steps
    (same engine, same order: rounding only), and stop_gap stops after the first step with
    |γ − ρ| at least the gap; phase_readings reads it without a config too."""
    cfg = line_config(6, 2, 36, 0.4, lr_v=0.5, steps=300, record="all").resolved()
    path = exact_path(cfg, 300)
    tr = run_experiment(cfg, progress=False).trajectory
    for col in ("alpha", "gamma", "rho", "loss"):
        assert np.max(np.abs(path[col].to_numpy() - tr[col].to_numpy())) < 1e-13
    cut = float((path.gamma - path.rho).abs().iloc[20])
    short = exact_path(cfg, 300, stop_gap=cut)
    assert short.step.iloc[-1] <= 20 and abs(short.gamma.iloc[-1] - short.rho.iloc[-1]) >= cut
    rd = read_phases(path)
    assert np.isfinite(rd["t_I"]) and rd["t_I"] == read_phases(tr, cfg)["t_I"]
    assert math.isnan(rd["t_III"])  # no config, no target error: no t_III
