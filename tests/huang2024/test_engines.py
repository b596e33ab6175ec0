"""Engines of Huang et al. (2025)'s MAE problem: the exchangeable exact sum against brute force,
Monte Carlo against exact, the empirical engine, L*, and the refusals."""

from __future__ import annotations

import math

import numpy as np
import pytest

from theorylab.huang2024 import config_from_dict, run_experiment
from theorylab.huang2024.engines import (
    BruteEngine,
    EmpiricalEngine,
    ExactEngine,
    MonteCarloEngine,
    Params,
    batch_lstar,
)

VALUES = {"z_law": "values", "z_values": [0.5, 1.0, 1.5], "z_probs": [0.2, 0.5, 0.3]}


def tiny(K=1, mask="bernoulli", mask_keys=True, loss_norm="P", P=6, C1=4, C=2, **train):
    return config_from_dict({
        "data": {"P": P, "K": K, "C1": C1, "C": C, **VALUES},
        "model": {"mask": mask, "gamma": 0.4, "mask_keys": mask_keys, "loss_norm": loss_norm},
        "train": {"engine": "population-brute", **train},
    })


def symmetric_state(structure, seed):
    """Random Φ; random Υ constant on each atom (the exact engine's symmetry), random Υ[p, p]."""
    rng = np.random.default_rng(seed)
    P = structure.P
    atom, atom_area = structure.atoms()
    Ups = rng.standard_normal((P, atom_area.shape[1]))[:, atom]
    Ups[np.arange(P), np.arange(P)] = rng.standard_normal(P)
    return Params(2 * rng.standard_normal((P, structure.F)), Ups)


CASES = [
    dict(K=1, mask="bernoulli", mask_keys=True, loss_norm="P"),
    dict(K=1, mask="bernoulli", mask_keys=False, loss_norm="mask"),
    dict(K=2, mask="bernoulli", mask_keys=True, loss_norm="none"),
    dict(K=2, mask="fixed", mask_keys=False, loss_norm="P"),
    dict(K=1, mask="fixed", mask_keys=True, loss_norm="mask"),
    dict(K=2, mask="bernoulli", mask_keys=False, loss_norm="P", P=8, C1=4, C=2),
    dict(K=1, mask="bernoulli", mask_keys=True, loss_norm="mask"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c.values())))
def test_exact_equals_brute_force_on_random_symmetric_states(case):
    cfg = tiny(**case)
    s = cfg.data.make_structure()
    brute, exact = BruteEngine(cfg, s), ExactEngine(cfg, s)
    for seed in range(3):
        params = symmetric_state(s, seed)
        b = brute.evaluate(params, 0, need_grad=True, record=True)
        e = exact.evaluate(params, 0, need_grad=True, record=True)
        # the same finite sum in two orders (≤ 10⁵ terms of size ≤ 1): rounding ≈ 1e-15
        assert abs(b.loss - e.loss) < 1e-10
        assert np.abs(b.grads["Phi"] - e.grads["Phi"]).max() < 1e-10
        assert np.abs(b.grads["Ups"] - e.grads["Ups"]).max() < 1e-10
        for key, v in b.attn.items():
            assert abs(v - e.attn[key]) < 1e-10, key


def test_exact_keeps_the_symmetry_and_refuses_asymmetric_states():
    cfg = tiny(K=2, lr=0.5)
    s = cfg.data.make_structure()
    exact = ExactEngine(cfg, s)
    params = symmetric_state(s, 1)
    for step in range(3):  # GD keeps Υ constant on atoms exactly (check_symmetric passes)
        params = exact.apply(params, exact.evaluate(params, step, need_grad=True,
                                                    record=False).grads)
    bad = Params(params.Phi, params.Ups + 1e-6 * np.random.default_rng(0).standard_normal(
        params.Ups.shape))
    with pytest.raises(ValueError, match="not constant on an atom"):
        exact.evaluate(bad, 0, need_grad=False, record=False)
    with pytest.raises(ValueError, match=r"^train\.max_configs"):
        ExactEngine(tiny(max_configs=10), s)
    with pytest.raises(ValueError, match=r"^train\.max_configs"):
        BruteEngine(tiny(max_configs=10), s)
    # a uniform law without quadrature nodes is refused by the config, naming the remedy
    with pytest.raises(ValueError, match=r"^train\.z_nodes: population-exact sums over the "
                                         r"coefficient law; .*set train\.z_nodes > 0"):
        config_from_dict({"data": {"P": 6, "C1": 4, "C": 2},
                          "train": {"engine": "population-exact"}})


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c.values())))
def test_population_lstar_formula_equals_brute_force_infimum(case):
    cfg = tiny(**case)
    s = cfg.data.make_structure()
    brute = BruteEngine(cfg, s)
    direct = batch_lstar(s, brute.batch, cfg.model.loss_norm, cfg.model.mask_keys)
    if not cfg.model.mask_keys:
        assert math.isnan(brute.lstar) and math.isnan(direct)
    else:
        assert abs(brute.lstar - direct) < 1e-14  # a few hundred terms: rounding only


def test_loss_approaches_lstar_in_the_reconstructing_limit():
    cfg = tiny(K=2)
    s = cfg.data.make_structure()
    brute = BruteEngine(cfg, s)
    Phi = np.zeros((s.P, s.F))
    for k in range(s.K):  # Φ[p, own] = 400 for every cluster, Υ[p, p] = 100: see population_lstar
        Phi[np.arange(s.P), s.feature_index()[k]] = 400.0
    Ups = 100.0 * np.eye(s.P)
    ev = brute.evaluate(Params(Phi, Ups), 0, need_grad=False, record=False)
    assert abs(ev.loss - brute.lstar) < 1e-12  # leakage e^{-100}
    assert ev.loss > 0


def test_montecarlo_agrees_with_exact_within_four_standard_errors():
    cfg = tiny(P=8, C1=4, C=2, engine="population-montecarlo", mc_samples=2000)
    s = cfg.data.make_structure()
    exact, mc = ExactEngine(cfg, s), MonteCarloEngine(cfg, s)
    params = symmetric_state(s, 4)
    e = exact.evaluate(params, 0, need_grad=True, record=True)
    zs = []
    for step in range(6):
        m = mc.evaluate(params, step, need_grad=False, record=False)
        zs.append((m.loss - e.loss) / m.loss_se)
    # six independent estimates: each |z| < 4 fails with probability ~6e-5 if unbiased
    assert np.all(np.abs(zs) < 4), zs
    # gradients: 30 independent batches, z-score of the mean of each coordinate
    g = np.stack([np.concatenate([x.ravel() for x in mc.evaluate(params, 100 + r,
                  need_grad=True, record=False).grads.values()]) for r in range(30)])
    ge = np.concatenate([x.ravel() for x in e.grads.values()])
    se = g.std(axis=0, ddof=1) / math.sqrt(len(g))
    ok = se > 0
    z = (g.mean(axis=0)[ok] - ge[ok]) / se[ok]
    # ~100 coordinates, t-statistics with 29 dof: |t| < 4 for each with probability ≈ 0.9996;
    # a Bonferroni-style bound over 100 gives a false alarm below 5%; the seeds are fixed
    assert np.abs(z).max() < 4.5, np.abs(z).max()
    # exactly zero gradient coordinates (never touched) stay zero in every batch
    assert np.allclose(ge[~ok], 0.0, atol=1e-15)


def test_empirical_engine_is_full_batch_and_deterministic():
    cfg = config_from_dict({"data": {"P": 16, "C1": 8, "C": 4},
                            "train": {"engine": "empirical", "n_train": 50, "steps": 5,
                                      "lr": 5.0}})
    e = EmpiricalEngine(cfg)
    ev = e.evaluate(e.initial_params(), 0, need_grad=False, record=False)
    assert ev.loss_star == batch_lstar(e.structure, e.batch, "P") and ev.loss > ev.loss_star
    r1, r2 = run_experiment(cfg), run_experiment(cfg)
    assert r1.trajectory.equals(r2.trajectory)
    assert r1.trajectory.loss.iloc[-1] < r1.trajectory.loss.iloc[0]
    re = run_experiment(cfg.replace(train={"resample_masks": True}))
    assert not np.allclose(re.Phi, r1.Phi)
