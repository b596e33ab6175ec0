"""``Backend.rng``: one generator interface for numpy and torch, so that no engine branches on
the backend for its random draws."""

import numpy as np
import pytest

from theorylab.core.backend import get_backend

N = 40_000


@pytest.mark.parametrize("backend,dtype", [("numpy", "float64"), ("numpy", "float32"),
                                           ("torch", "float64"), ("torch", "float32")])
def test_draws_are_seeded_shaped_and_follow_their_laws(backend, dtype):
    xp = get_backend(backend, dtype)

    def draws(seed):
        rng = xp.rng(np.random.SeedSequence([seed, 13]))
        return [xp.to_numpy(a) for a in (rng.integers(5, N), rng.random((N, 2)),
                                         rng.normal((N, 2)))]

    ints, uni, nor = draws(1)
    for a, b in zip(draws(1), draws(1)):
        np.testing.assert_array_equal(a, b)  # one seed, one stream
    assert not np.array_equal(uni, draws(2)[1])
    assert ints.shape == (N,) and uni.shape == nor.shape == (N, 2)
    assert set(np.unique(ints)) == set(range(5))
    assert uni.min() >= 0.0 and uni.max() < 1.0
    # torch draws in the compute dtype on its device; numpy in float64 (cast by the engine)
    assert uni.dtype == np.dtype(dtype if backend == "torch" else "float64")
    # the laws, each to 5 standard errors of N·2 draws (a false failure has odds ~1e-6):
    # U(0, 1) has mean 1/2 and sd 1/√12; N(0, 1) has mean 0, sd 1 and var's sd √2
    se = 1 / np.sqrt(2 * N)
    assert abs(uni.mean() - 0.5) < 5 * se / np.sqrt(12)
    assert abs(nor.mean()) < 5 * se and abs(nor.var() - 1.0) < 5 * se * np.sqrt(2)
    assert abs(np.bincount(ints, minlength=5) / N - 0.2).max() < 5 * np.sqrt(0.16 / N)
