"""The error identity behind the Theorem 3.2 construction: with row i ∈ S_ℓ attending uniformly
to S_π(ℓ), z_i = κα s_π(ℓ)/C, so F = Σ_ℓ C σ(κα s_π(ℓ)/C) = Σ_ℓ C σ(κα s_ℓ/C) (π is a bijection
of the sets): the same function as the patch-associating model, hence the same error."""

import numpy as np
import sympy as sp

from theorylab.jelassi2022.claims.thm32 import set_permutation_A, topc_overlap
from theorylab.jelassi2022.partition import Partition


def test_identity_symbolic():
    L, C = 3, 2
    s = sp.symbols("s0:3")
    k = sp.symbols("kappa")

    def sigma(h):
        return h**3

    perm = [1, 2, 0]
    F_perm = sum(C * sigma(k * s[perm[ell]] / C) for ell in range(L))
    F_pa = sum(C * sigma(k * s[ell] / C) for ell in range(L))
    assert sp.expand(F_perm - F_pa) == 0


def test_construction_has_no_patch_association():
    part = Partition(((0, 3), (1, 4), (2, 5)))
    A = set_permutation_A(part, [1, 2, 0], 1.0)
    assert topc_overlap(A, part) == 0
    assert topc_overlap(set_permutation_A(part, [0, 1, 2], 1.0), part) == 2
    Z = np.exp(A - A.max(axis=1, keepdims=True))
    S = Z / Z.sum(axis=1, keepdims=True)
    # row 0 (set 0) puts mass 1/2 on each patch of set 1 up to e^{-60} leakage
    np.testing.assert_allclose(S[0, [1, 4]], 0.5, atol=1e-20)
