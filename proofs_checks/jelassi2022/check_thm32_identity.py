"""The Theorem 3.2 construction (RECONSTRUCTED, notes §4.2): with row i ∈ S_ℓ attending
uniformly to S_π(ℓ), z_i = κα s_π(ℓ)/C, so F = Σ_ℓ C σ(κα s_π(ℓ)/C) = Σ_ℓ C σ(κα s_ℓ/C) when π is
a bijection of the sets: the same function as the patch-associating model, hence the same
population loss and error, while no row's Top-C meets its own set."""

import numpy as np

from theorylab.jelassi2022.claims.thm32 import set_permutation_A, topc_overlap
from theorylab.jelassi2022.partition import Partition


def _population(perm, alpha=0.8):
    """Exact population loss and error (brute-force enumeration) of the model whose row i ∈ S_ℓ
    attends uniformly to S_perm[ℓ] (D = 6, C = 2, cubic σ, τ = κ = 1)."""
    from theorylab import DataConfig, ExperimentConfig, ModelConfig, TrainConfig, make_wstar
    from theorylab.core.backend import get_backend
    from theorylab.jelassi2022.engines import BruteForceEngine

    part = Partition(((0, 3), (1, 4), (2, 5)))
    cfg = ExperimentConfig(
        data=DataConfig(D=6, partition=[list(S) for S in part.sets], d=5, q=0.5),
        model=ModelConfig(activation="cubic", temperature=1.0, value_scale=1.0, diag=0.0),
        train=TrainConfig(method="brute"),
    ).resolved()
    eng = BruteForceEngine(cfg, get_backend("numpy", "float64", "cpu"), part, make_wstar(cfg.data))
    ev = eng.evaluate({"A": set_permutation_A(part, perm, 1.0), "alpha": alpha}, 0,
                      need_grad=False, record=False)
    return ev.loss, ev.error


def test_a_set_permutation_has_the_loss_of_patch_association():
    """F = Σ_ℓ C σ(κα s_π(ℓ)/C) equals Σ_ℓ C σ(κα s_ℓ/C) for a bijection π of the sets, so the
    construction of Theorem 3.2 has exactly the population loss and error of the
    patch-associating model (exact sums over all 3^6 configurations); a map of the sets that
    is not a bijection (two sets read the same set) does not."""
    pa = _population([0, 1, 2])
    for perm in ([1, 2, 0], [2, 0, 1], [1, 0, 2]):
        got = _population(perm)
        # two exact float64 sums over the same terms in another order: rounding only
        np.testing.assert_allclose(got, pa, rtol=1e-12, atol=1e-15)
    assert abs(_population([1, 1, 0])[0] - pa[0]) > 1e-3


def test_construction_has_no_patch_association():
    part = Partition(((0, 3), (1, 4), (2, 5)))
    A = set_permutation_A(part, [1, 2, 0], 1.0)
    assert topc_overlap(A, part) == 0
    assert topc_overlap(set_permutation_A(part, [0, 1, 2], 1.0), part) == 2
    Z = np.exp(A - A.max(axis=1, keepdims=True))
    S = Z / Z.sum(axis=1, keepdims=True)
    # row 0 (set 0) puts mass 1/2 on each patch of set 1 up to e^{-60} leakage
    np.testing.assert_allclose(S[0, [1, 4]], 0.5, atol=1e-20)
