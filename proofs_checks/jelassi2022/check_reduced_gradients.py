"""Reduced gradients in (α, γ, ρ) (notes §4.7, DERIVED), derived symbolically, lambdified, and
compared with the exact exchangeable engine on random states.

For one configuration c with y, patch i ∈ S_ℓ has pre-activation
z_i = κα[S_a c_i + S_g (s_ℓ − c_i) + S_r (T − s_ℓ)], with S_a, S_g, S_r the softmax weights of
logits (a, γ, ρ)/τ with multiplicities (1, C − 1, D − C); F = Σ_i σ(z_i), loss = log(1+e^{−yF}).
Sympy differentiates the loss in (α, γ, ρ); the population gradient is its probability-weighted
sum over every configuration (brute-force enumeration). A variant that counts the patch's
own set among the spurious ones in the softmax normaliser (multiplicity D − C + 1 for ρ, a
plausible slip) gives gradients the engine rejects.
"""

import math

import numpy as np
import sympy as sp

from theorylab import DataConfig, ExperimentConfig, ModelConfig, TrainConfig, make_wstar
from theorylab.core.backend import get_backend
from theorylab.jelassi2022.data import enumerate_c
from theorylab.jelassi2022.engines import ExchangeableEngine


def _symbolic_loss(D, C, a, tau, kappa, n_rho=None):
    al, g, r, ci, sl, T, y = sp.symbols("alpha gamma rho c s T y", real=True)
    n_rho = D - C if n_rho is None else n_rho
    Z = sp.exp(a / tau) + (C - 1) * sp.exp(g / tau) + n_rho * sp.exp(r / tau)
    Sa, Sg, Sr = sp.exp(a / tau) / Z, sp.exp(g / tau) / Z, sp.exp(r / tau) / Z
    z = kappa * al * (Sa * ci + Sg * (sl - ci) + Sr * (T - sl))
    return (al, g, r), (ci, sl, T), z


def _max_gap(n_rho=None) -> float:
    """Largest relative gap between the symbolic population gradient and the engine's."""
    D, C, q = 6, 2, 0.4
    a, tau, kappa = 0.8, 1.3, 0.9
    cfg = ExperimentConfig(
        data=DataConfig(D=D, C=C, partition="random", d=5, q=q, seed=3),
        model=ModelConfig(activation="cubic", temperature=tau, value_scale=kappa, diag=a),
        train=TrainConfig(method="exchangeable"),
    ).resolved()
    part = cfg.data.make_partition()
    (al, g, r), (ci, sl, T), z = _symbolic_loss(D, C, a, tau, kappa, n_rho)
    sig = z**3
    # gradient of Σ_i σ(z_i) for one patch, in (α, γ, ρ)
    f_patch = sp.lambdify((al, g, r, ci, sl, T), sig, "numpy")
    d_patch = [sp.lambdify((al, g, r, ci, sl, T), sp.diff(sig, x), "numpy") for x in (al, g, r)]
    c, y, _, w = enumerate_c(part, q)
    labels = part.labels
    s_of = np.stack([c[:, list(S)].sum(axis=1) for S in part.sets], axis=1)[:, labels]
    Tt = c.sum(axis=1, keepdims=True).astype(float)
    eng = ExchangeableEngine(cfg, get_backend("numpy", "float64", "cpu"), part,
                             make_wstar(cfg.data))
    rng = np.random.default_rng(0)
    gap = 0.0
    for _ in range(5):
        p = {"alpha": rng.uniform(0.2, 1.5), "gamma": rng.normal(), "rho": rng.normal()}
        args = (p["alpha"], p["gamma"], p["rho"], c.astype(float), s_of.astype(float), Tt)
        F = f_patch(*args).sum(axis=1)
        lprime = -1.0 / (1.0 + np.exp(y * F))  # d/dm log(1+e^{−m})
        want = [float(np.sum(w * lprime * y * dfun(*args).sum(axis=1))) for dfun in d_patch]
        got = eng.evaluate(p, 0, need_grad=True, record=False).grads
        assert all(math.isfinite(x) for x in want)
        g3 = np.array([got["alpha"], got["gamma"], got["rho"]])
        gap = max(gap, float(np.max(np.abs(g3 - want) / (np.abs(want) + 1e-3))))
    return gap


def test_reduced_gradient_equals_exchangeable_engine():
    # two float64 sums of ~10³ terms of O(1): relative 1e-10 covers rounding
    assert _max_gap() < 1e-10


def test_wrong_softmax_multiplicity_is_rejected():
    assert _max_gap(n_rho=6 - 2 + 1) > 1e-3
