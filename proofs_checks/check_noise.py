"""Elimination of the noise for v ∥ w* (notes §4.3 (ii), DERIVED): with ξ ~ N(0, σ²(I − w*w*ᵀ))
and v = α w*, ⟨v, X_j⟩ = α c_j exactly, so the noise drops out of F; and E[h(c) ⟨u, ξ_j⟩] = 0 for
every u, so the v-gradient stays parallel to w*."""

import numpy as np
import sympy as sp

from theorylab import DataConfig, make_wstar, sample


def test_projection_kills_noise_symbolic():
    d = 3
    w = sp.Matrix(sp.symbols("w0:3", real=True))
    xi = sp.Matrix(sp.symbols("g0:3", real=True))
    P = sp.eye(d) - w * w.T
    alpha, c = sp.symbols("alpha c", real=True)
    X = c * w + P * xi
    expr = (alpha * w).T * X
    # ⟨αw*, X⟩ − αc = α c (‖w‖² − 1) + α (wᵀ(I − wwᵀ) g) = 0 when ‖w‖ = 1
    norm1 = {w[2] ** 2: 1 - w[0] ** 2 - w[1] ** 2}
    out = sp.expand(expr[0] - alpha * c)
    assert sp.simplify(out.subs(norm1)) == 0 or sp.simplify(
        out.subs(w[2], sp.sqrt(1 - w[0] ** 2 - w[1] ** 2))) == 0


def test_projection_numeric():
    cfg = DataConfig(D=6, C=2, partition="random", d=7, q=0.4, seed=1)
    w = make_wstar(cfg)
    s = sample(cfg, 200, 0)
    # float64: |⟨w*, X⟩ − c| is rounding of O(1) numbers in d = 7 dims, < 1e-14
    np.testing.assert_allclose(s.X @ w, s.c, atol=1e-14)
