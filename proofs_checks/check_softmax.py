"""Softmax derivative (notes §2.4, DERIVED): ∂S_ij/∂A_ik = S_ij (δ_jk − S_ik) / τ, and the
chain rule ∂L/∂A_ik = S_ik (∂L/∂S_ik − Σ_j S_ij ∂L/∂S_ij)/τ used by theorylab.jelassi2022.model."""

import numpy as np
import sympy as sp

from theorylab.core.backend import get_backend
from theorylab.jelassi2022.model import grad_A_from_dS


def test_softmax_derivative_symbolic():
    D = 4
    a = sp.symbols(f"a0:{D}")
    tau = sp.symbols("tau", positive=True)
    Z = sum(sp.exp(x / tau) for x in a)
    S = [sp.exp(x / tau) / Z for x in a]
    for j in range(D):
        for k in range(D):
            lhs = sp.diff(S[j], a[k])
            rhs = S[j] * ((1 if j == k else 0) - S[k]) / tau
            assert sp.simplify(lhs - rhs) == 0


def test_chain_rule_matches_grad_A_from_dS():
    # L = Σ_j g_j S_j for a row; ∂L/∂a_k from sympy against theorylab's formula (float64,
    # tolerance 1e-12: a handful of roundings of O(1) numbers)
    D = 4
    a = sp.symbols(f"a0:{D}")
    g = [0.3, -1.2, 0.7, 2.0]
    tau = 1.7
    Z = sum(sp.exp(x / tau) for x in a)
    Lsym = sum(gj * sp.exp(x / tau) / Z for gj, x in zip(g, a))
    vals = {a[0]: 0.1, a[1]: -0.4, a[2]: 1.3, a[3]: 0.0}
    want = np.array([float(sp.diff(Lsym, x).subs(vals)) for x in a])
    A = np.array([[vals[x] for x in a]])
    Av = A / tau
    S = np.exp(Av) / np.exp(Av).sum()
    got = grad_A_from_dS(S, np.array([g]), tau, get_backend("numpy", "float64", "cpu"),
                         freeze_diag=False)[0]
    np.testing.assert_allclose(got, want, rtol=0, atol=1e-12)
