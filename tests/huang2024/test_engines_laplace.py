"""``population-laplace`` (the exact population sum at any P through 1/Z = ∫ e^{−tZ} dt)
against the enumeration of ``population-exact`` and against Monte Carlo at larger P."""

from __future__ import annotations

import math

import numpy as np
import pytest

from theorylab.huang2024 import config_from_dict, make_engine
from theorylab.huang2024.engines import ExactEngine, LaplaceEngine, MonteCarloEngine, Params


def cfg_of(P=8, K=1, C1=4, C=2, mask_keys=True, loss_norm="P", **train):
    return config_from_dict({
        "data": {"P": P, "K": K, "C1": C1, "C": C, "z_law": "values",
                 "z_values": [0.5, 1.0, 1.5], "z_probs": [0.2, 0.5, 0.3]},
        "model": {"gamma": 0.4, "mask_keys": mask_keys, "loss_norm": loss_norm},
        "train": {"engine": "population-laplace", **train},
    })


def symmetric_state(structure, seed, scale=2.0):
    rng = np.random.default_rng(seed)
    P = structure.P
    atom, atom_area = structure.atoms()
    Ups = scale * rng.standard_normal((P, atom_area.shape[1]))[:, atom]
    Ups[np.arange(P), np.arange(P)] = rng.standard_normal(P)
    return Params(scale * rng.standard_normal((P, structure.F)), Ups)


@pytest.mark.parametrize("kw", [
    dict(), dict(mask_keys=False, loss_norm="none"), dict(K=2), dict(K=2, mask_keys=False),
    dict(P=16, C1=12, C=2),
], ids=str)
def test_laplace_equals_the_enumeration(kw):
    cfg = cfg_of(**kw)
    s = cfg.data.make_structure()
    lap, exact = LaplaceEngine(cfg, s), ExactEngine(cfg, s)
    for seed in range(2):
        params = symmetric_state(s, seed)
        a = exact.evaluate(params, 0, need_grad=True, record=True)
        b = lap.evaluate(params, 0, need_grad=True, record=True)
        # trapezoid in ln t with step 0.2 (error ~e^{-π²/h}, measured ~1e-15) + rounding
        assert abs(a.loss - b.loss) < 1e-10
        assert np.abs(a.grads["Phi"] - b.grads["Phi"]).max() < 1e-10
        assert np.abs(a.grads["Ups"] - b.grads["Ups"]).max() < 1e-10
        for key, v in a.attn.items():
            assert abs(v - b.attn[key]) < 1e-10, key


def test_refusals():
    s = cfg_of().data.make_structure()
    with pytest.raises(ValueError, match=r"^model\.mask: population-laplace"):
        make_engine(config_from_dict({"data": {"P": 8, "C1": 4, "C": 2, "z_law": "values",
                                               "z_values": [1.0]},
                                      "model": {"mask": "fixed"},
                                      "train": {"engine": "population-laplace"}}))
    with pytest.raises(ValueError, match=r"^model\.loss_norm: population-laplace"):
        make_engine(cfg_of(loss_norm="mask"))
    lap = LaplaceEngine(cfg_of(), s)
    bad = symmetric_state(s, 0)
    bad.Ups[0, :] += np.linspace(0, 1e-6, s.P)
    with pytest.raises(ValueError, match="not constant on an atom"):
        lap.evaluate(bad, 0, need_grad=False, record=False)


def test_uniform_law_quadrature_converges_and_montecarlo_agrees_at_P64():
    base = {"data": {"P": 64, "C1": 48, "C": 4, "z_law": "uniform", "L": 0.5, "U": 1.5},
            "train": {"engine": "population-laplace", "lr": 100.0}}
    cfg16 = config_from_dict({**base, "train": {**base["train"], "z_nodes": 16}})
    cfg32 = config_from_dict({**base, "train": {**base["train"], "z_nodes": 32}})
    s = cfg16.data.make_structure()
    e16, e32 = LaplaceEngine(cfg16, s), LaplaceEngine(cfg32, s)
    params = e16.initial_params()
    for step in range(3):  # move away from Q⁰ = 0 by exact GD (keeps the symmetry)
        params = e16.apply(params, e16.evaluate(params, step, need_grad=True,
                                                record=False).grads)
    params.Phi[:, 0] -= 1.0  # a lower global correlation, as in Phase I
    a = e16.evaluate(params, 0, need_grad=True, record=True)
    b = e32.evaluate(params, 0, need_grad=True, record=True)
    # Gauss–Legendre in z of an analytic integrand: 16 and 32 nodes agree to rounding
    assert abs(a.loss - b.loss) < 1e-12
    assert np.abs(a.grads["Phi"] - b.grads["Phi"]).max() < 1e-12
    mc = MonteCarloEngine(cfg16.replace(train={"engine": "population-montecarlo",
                                               "mc_samples": 1000}), s)
    zs = [(m.loss - a.loss) / m.loss_se
          for m in (mc.evaluate(params, r, need_grad=False, record=False) for r in range(4))]
    # four independent estimates, each |z| < 4 with probability 0.99994 when unbiased
    assert np.all(np.abs(zs) < 4), zs
    assert math.isfinite(a.loss_star) and a.loss > a.loss_star
