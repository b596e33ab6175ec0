"""The identity behind theorylab.jelassi2022.predictions.set_statistics (DERIVED): for
c_i ∈ {−1, 0, 1} and N_i = a₁c_i + a₂s_ℓ(i) + a₃T,

    Σ_i N_i³ = a₁³T + 3a₁²a₂U + 3a₁²a₃TK + 3a₁a₂²W + 6a₁a₂a₃TQ + 3a₁a₃²T³
               + C a₂³W + 3C a₂²a₃TQ + 3C a₂a₃²T³ + D a₃³T³,

with T = Σ s_ℓ, K = Σ n_ℓ, U = Σ s_ℓn_ℓ, Q = Σ s_ℓ², W = Σ s_ℓ³ — checked exactly on every
configuration of small partitions with a₁, a₂, a₃ symbolic, and against the shipped function;
a slip (3C → C in the a₂a₃²T³ term) is rejected. The shipped loss also equals the exchangeable
engine at a few states (float64 rounding)."""

import itertools

import numpy as np
import sympy as sp

from theorylab.jelassi2022.predictions.set_statistics import (
    StatisticsLaw,
    cubic_sum,
    loss_and_grad,
    statistics_law,
)


def _formula(a1, a2, a3, T, K, U, Q, W, C, D, slip=False):
    c3 = C if slip else 3 * C
    return (a1**3 * T + 3 * a1**2 * a2 * U + 3 * a1**2 * a3 * T * K + 3 * a1 * a2**2 * W
            + 6 * a1 * a2 * a3 * T * Q + 3 * a1 * a3**2 * T**3 + C * a2**3 * W
            + 3 * C * a2**2 * a3 * T * Q + c3 * a2 * a3**2 * T**3 + D * a3**3 * T**3)


def test_cubic_sum_identity_on_every_configuration():
    a1, a2, a3 = sp.symbols("a1 a2 a3")
    for D, C in ((4, 2), (6, 3), (6, 2)):
        L = D // C
        sets = [list(range(k * C, (k + 1) * C)) for k in range(L)]
        for c in itertools.product((-1, 0, 1), repeat=D):
            s = [sum(c[j] for j in S) for S in sets]
            n = [sum(abs(c[j]) for j in S) for S in sets]
            T = sum(c)
            direct = sum((a1 * c[i] + a2 * s[k] + a3 * T) ** 3
                         for k, S in enumerate(sets) for i in S)
            stats = (T, sum(n), sum(x * y for x, y in zip(s, n)), sum(x * x for x in s),
                     sum(x**3 for x in s))
            assert sp.expand(direct - _formula(a1, a2, a3, *stats, C, D)) == 0
        # a slip is caught on some configuration
        c = (1,) * C + (1,) + (0,) * (D - C - 1)
        s = [sum(c[j] for j in S) for S in sets]
        n = [sum(abs(c[j]) for j in S) for S in sets]
        T = sum(c)
        direct = sum((a1 * c[i] + a2 * s[k] + a3 * T) ** 3 for k, S in enumerate(sets) for i in S)
        stats = (T, sum(n), sum(x * y for x, y in zip(s, n)), sum(x * x for x in s),
                 sum(x**3 for x in s))
        assert sp.expand(direct - _formula(a1, a2, a3, *stats, C, D, slip=True)) != 0


def test_shipped_cubic_sum_is_the_formula():
    law = statistics_law(10, 2, 0.4)
    got = cubic_sum(law, 0.3, 0.2, 0.05)
    want = _formula(0.3, 0.2, 0.05, law.T, law.K, law.U, law.Q, law.W, 2, 10)
    assert np.max(np.abs(got - want)) < 1e-12
    assert abs(law.p.sum() - 1.0) < 1e-12
    assert isinstance(law, StatisticsLaw)


def test_loss_equals_the_exchangeable_engine():
    from theorylab.jelassi2022.predictions import _exchangeable
    from theorylab.jelassi2022.setups import reference_config

    cfg = reference_config().resolved()
    ex = _exchangeable(cfg)
    law = statistics_law(10, 2, cfg.data.q)
    for a, g, r in ((0.5, 0.3, -0.2), (1.7, 0.0, 0.0), (1.3, 2.0, -1.5)):
        ev = ex.evaluate({"alpha": a, "gamma": g, "rho": r}, 0, need_grad=True, record=False)
        loss, grads = loss_and_grad(law, a, g, r, cfg.diag, cfg.temperature, cfg.value_scale)
        assert abs(loss - ev.loss) < 1e-13
        for k in ("alpha", "gamma", "rho"):
            assert abs(grads[k] - ev.grads[k]) < 1e-13 * (1 + abs(ev.grads[k]))
