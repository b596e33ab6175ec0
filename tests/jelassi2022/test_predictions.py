"""The phase predictions of theorylab.jelassi2022.predictions against the exact exchangeable
engine: closed forms to rounding, asymptotic statements on ladders whose fitted log-log order is
asserted."""

import numpy as np
import pytest
from scipy import stats

from theorylab.jelassi2022.predictions import (
    m3_closed_form,
    phase_i,
    phase_ii,
    reduced_moments,
)

from ._helpers import fig4_config, parts, small_config


def _engine(cfg):
    from theorylab import get_backend
    from theorylab.jelassi2022.engines import ExchangeableEngine

    p, w = parts(cfg)
    return ExchangeableEngine(cfg, get_backend("numpy", "float64", "cpu"), p, w)


def _run(cfg, steps, stop=None):
    eng = _engine(cfg)
    p = eng.initial_params()
    hist = []
    for n in range(steps):
        hist.append((p["alpha"], p["gamma"], p["rho"]))
        if stop is not None and stop(p):
            break
        p = eng.apply(p, eng.evaluate(p, n, need_grad=True, record=False).grads)
    return np.array(hist), eng


def _order(x, err):
    return stats.linregress(np.log(x), np.log(err)).slope


CONFIGS = [
    fig4_config(),
    small_config(D=6, C=2, q=0.4, model=dict(activation="cubic", temperature=1.3,
                                             value_scale=0.9, diag=0.7), offdiag0=0.2),
    small_config(D=9, C=3, q=0.25, model=dict(activation="cubic", temperature=0.8,
                                              value_scale=1.4, diag=-0.5)),
]


@pytest.mark.parametrize("cfg", CONFIGS)
def test_m3_closed_form_equals_the_exact_sum(cfg):
    m = reduced_moments(cfg)
    got = m3_closed_form(m["u"], m["s"], cfg.data.D, parts(cfg)[0].C, cfg.data.q)
    # two float64 evaluations of the same polynomial of O(1) terms: rounding only
    assert got == pytest.approx(m["M"], rel=1e-12)


@pytest.mark.parametrize("cfg", CONFIGS)
def test_small_alpha_gradients_are_the_moments(cfg):
    """∂L/∂α = −(3κ³/2) M₃ α², ∂L/∂γ = −(3κ³/2τ) s G_γ α³, ∂L/∂ρ likewise with G_ρ, up to a
    relative O(α³) (the logistic ℓ'(yF) = −1/2 + yF/4 with F = O(α³))."""
    m = reduced_moments(cfg)
    eng = _engine(cfg)
    k, tau, g0 = cfg.value_scale, cfg.temperature, cfg.train.offdiag0
    alphas = 0.2 / 2.0 ** np.arange(5)
    rel = {"alpha": [], "gamma": [], "rho": []}
    for a in alphas:
        g = eng.evaluate({"alpha": a, "gamma": g0, "rho": g0}, 0, need_grad=True,
                         record=False).grads
        want = {"alpha": -1.5 * k**3 * m["M"] * a**2,
                "gamma": -1.5 * k**3 / tau * m["s"] * m["G_gamma"] * a**3,
                "rho": -1.5 * k**3 / tau * m["s"] * m["G_rho"] * a**3}
        for key in rel:
            rel[key].append(abs(g[key] / want[key] - 1))
    for key, err in rel.items():
        # order 3 stated; the fit over a factor 16 of α is within ±0.5 of it
        assert _order(alphas, err) == pytest.approx(3.0, abs=0.5), key
        assert err[-1] < 1e-3, key


def test_plateau_length_on_an_alpha0_ladder():
    """The measured time for α to reach θ = 0.2 (interpolated in 1/α) against t_I (leading,
    error O(α⁰ log 1/α⁰)) and time_to(θ) (with the fixed-step logarithm, error O(α⁰))."""
    theta, a0s = 0.2, np.array([0.04, 0.02, 0.01, 0.005, 0.0025])
    e_lead, e_fine = [], []
    for a0 in a0s:
        cfg = fig4_config(lr_v=1.0, alpha0=a0)
        pred = phase_i(cfg)
        h, _ = _run(cfg, 2000, stop=lambda p: p["alpha"] >= theta)
        y, n = 1.0 / h[:, 0], len(h) - 2
        t_meas = n + (y[n] - 1 / theta) / (y[n] - y[n + 1])
        e_lead.append(abs(t_meas / pred.t_blowup - 1))
        e_fine.append(abs(t_meas / pred.time_to(theta) - 1))
    # measured: orders 1.24 (leading; α⁰ log(1/α⁰) over this ladder) and 0.94 (refined)
    assert 0.8 < _order(a0s, e_lead) < 1.6
    assert _order(a0s, e_fine) == pytest.approx(1.0, abs=0.25)
    assert e_fine[-1] < 1e-3 and e_lead[-1] < 0.01


def test_attention_moves_with_alpha_squared_in_phase_one():
    cfg = fig4_config(lr_v=1.0, alpha0=0.005)
    pred = phase_i(cfg)
    h, _ = _run(cfg, 2000, stop=lambda p: p["alpha"] >= 0.25)
    al, eg, er = [], [], []
    for x in (0.0125, 0.025, 0.05, 0.1, 0.2):
        n = int(np.argmax(h[:, 0] >= x))
        g, r = pred.gamma_rho(h[n, 0])
        al.append(h[n, 0])
        eg.append(abs(h[n, 1] / g - 1))
        er.append(abs(h[n, 2] / r - 1))
    # order 2 stated (feedback of γ, ρ ~ α² on N); measured 2.7 (γ) and 2.0 (ρ)
    assert _order(al, eg) > 1.7
    assert _order(al, er) > 1.7
    assert max(eg[0], er[0]) < 1e-4


def test_phase_two_rate_on_a_slow_attention_ladder():
    """η_A/η_v = ε → 0: the secant growth of γ − ρ over 100 steps after the plateau against
    r_II, and α there against α*; both relative errors O(ε)."""
    eps = np.array([0.5, 0.25, 0.125, 0.0625])
    e_rate, e_alpha = [], []
    for e in eps:
        cfg = fig4_config(lr_v=1.0, lr_A=float(e), alpha0=0.05)
        t1 = int(phase_i(cfg).t_blowup) + 100
        h, eng = _run(cfg, t1 + 101)
        pred = phase_ii(cfg, eng)
        gap = h[:, 1] - h[:, 2]
        e_rate.append(abs((gap[t1 + 100] - gap[t1]) / 100 / pred.rate - 1))
        e_alpha.append(abs(h[t1, 0] / pred.alpha_star - 1))
    # measured orders 1.07 and 1.02
    assert _order(eps, e_rate) == pytest.approx(1.0, abs=0.25)
    assert _order(eps, e_alpha) == pytest.approx(1.0, abs=0.25)
    assert e_rate[-1] < 0.05


def test_phase_one_refuses_a_linear_start():
    cfg = fig4_config(model=dict(activation="quintic", temperature=1.0, value_scale=1.0))
    with pytest.raises(ValueError, match="lowest power"):
        phase_i(cfg)


def test_phase_one_refuses_a_start_where_alpha_shrinks():
    # a negative cubic coefficient makes the growth constant h negative: α decays, no plateau
    cfg = fig4_config(model=dict(activation=[0.0, 0.0, 0.0, -1.0], temperature=1.0,
                                 value_scale=1.0))
    with pytest.raises(ValueError, match="does not grow"):
        phase_i(cfg)


def test_glm_plateau_alpha_star_below_the_first_bracket():
    """A large value scale puts α* below 1e-3: the bracket is extended downwards."""
    cfg = fig4_config(model=dict(activation="cubic", temperature=1.0, value_scale=3000.0))
    pred = phase_ii(cfg)
    eng = _engine(cfg)
    g = eng.evaluate({"alpha": pred.alpha_star, "gamma": 0.0, "rho": 0.0}, 0, need_grad=True,
                     record=False).grads["alpha"]
    assert pred.alpha_star < 1e-3
    # the root of ∂L/∂α: the gradient there is at rounding level relative to its scale away
    # from the root (its value at 2α*)
    g2 = eng.evaluate({"alpha": 2 * pred.alpha_star, "gamma": 0.0, "rho": 0.0}, 0,
                      need_grad=True, record=False).grads["alpha"]
    assert abs(g) < 1e-9 * abs(g2)


def test_the_predictions_of_a_config_resolve_it_once(monkeypatch):
    """phase_i, phase_ii, plateau and escape_constants of one config resolve it once (its
    memoised Setting, which an equal config shares), and give the same numbers, exactly, when
    given that Setting."""
    from theorylab.jelassi2022 import config as config_module
    from theorylab.jelassi2022.config import ExperimentConfig, config_from_dict, setting_of
    from theorylab.jelassi2022.predictions.phase_two import plateau
    from theorylab.jelassi2022.predictions.random_start import escape_constants

    cfg = fig4_config().replace(model={"temperature": 1.3})
    calls = []
    resolved = ExperimentConfig.resolved
    monkeypatch.setattr(ExperimentConfig, "resolved", lambda c: calls.append(c) or resolved(c))
    monkeypatch.setattr(config_module, "_SETTINGS", {})
    fns = (phase_i, phase_ii, plateau, escape_constants)
    from_config = [f(cfg) for f in fns]
    assert len(calls) == 1
    s = setting_of(config_from_dict(cfg.to_dict()))
    assert setting_of(s) is s is setting_of(cfg) and len(calls) == 1
    assert s.tau == 1.3 and s.partition.C == s.C == 2
    assert [f(s) for f in fns] == from_config
