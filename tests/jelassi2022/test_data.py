import numpy as np
import pytest

from theorylab import DataConfig, Partition, bayes_error, fstar_error, make_wstar, sample
from theorylab.jelassi2022.data import (
    bayes_error_enumerate,
    bayes_predict,
    enumerate_c,
    fstar_from_c,
    sample_c,
)

from ._helpers import FIG4_Q, FIG4_SETS


def test_partitions():
    g = Partition.grid(16, 4)
    assert g.sets == ((0, 1, 4, 5), (2, 3, 6, 7), (8, 9, 12, 13), (10, 11, 14, 15))  # Fig. 1b-(1)
    r = Partition.random(12, 3, seed=1)
    assert sorted(i for s in r.sets for i in s) == list(range(12))
    assert r == Partition.random(12, 3, seed=1)
    with pytest.raises(ValueError, match="^partition:"):
        Partition(((0, 1), (1, 2)))


def test_sample_is_assumption_1():
    cfg = DataConfig(D=12, C=3, d=7, q=0.3, seed=3)
    s = sample(cfg, 2000, 0)
    p = cfg.make_partition()
    c = s.X @ s.wstar
    assert np.allclose(c, s.c, atol=1e-12)  # <w*, X_j> = c_j exactly (noise ⟂ w*)
    signal = p.labels[None, :] == s.ell[:, None]
    assert np.all(s.c[signal] == np.repeat(s.y, p.C))
    noise = s.X - s.c[..., None] * s.wstar
    assert np.abs(noise @ s.wstar).max() < 1e-12
    assert np.linalg.norm(s.wstar) == pytest.approx(1.0)


@pytest.mark.parametrize("dtype", [np.float64, np.float32])
def test_sample_does_not_depend_on_the_block_size(dtype, monkeypatch):
    """sample() draws X in row blocks to bound its memory; any block size gives the same bits
    as one (N, D, d) draw (so seeds reproduce results made before the blocks existed)."""
    import theorylab.jelassi2022.data as data

    cfg = DataConfig(D=8, C=2, d=6, q=0.3, partition="random", seed=1)
    monkeypatch.setattr(data, "SAMPLE_BLOCK_VALUES", 10**9)  # one block
    one = sample(cfg, 101, 5, dtype=dtype)
    rng = np.random.default_rng(5)
    data.sample_c(cfg.make_partition(), cfg.q, 101, rng)
    g = rng.standard_normal((101, 8, 6))  # the reference: the whole draw at once
    w = one.wstar
    g -= (g @ w)[..., None] * w
    np.testing.assert_array_equal(one.X, (cfg.sigma_value * g + one.c[..., None] * w).astype(dtype))
    for block in (1, 48, 7 * 48 + 5):  # one value, one row, 7 rows (rounded down)
        monkeypatch.setattr(data, "SAMPLE_BLOCK_VALUES", block)
        np.testing.assert_array_equal(sample(cfg, 101, 5, dtype=dtype).X, one.X)


def test_digest_reference_numbers():
    """Jelassi notes §9: Bayes 0.090607; f* 0.16716 (ties as errors) and 0.014051 (strict)."""
    cfg = DataConfig(D=10, partition=FIG4_SETS, d=100, q=FIG4_Q)
    assert bayes_error(cfg) == pytest.approx(0.090607, abs=5e-7)
    assert fstar_error(cfg) == pytest.approx(0.16716, abs=5e-6)
    assert fstar_error(cfg, strict=True) == pytest.approx(0.014051, abs=5e-7)


@pytest.mark.parametrize("D,C,q", [(6, 2, 0.5), (8, 4, 0.3), (9, 3, 0.9), (6, 3, 0.0), (6, 2, 1.0)])
def test_bayes_closed_form_equals_enumeration(D, C, q):
    p = Partition.random(D, C, seed=D)
    assert bayes_error(p, q) == pytest.approx(bayes_error_enumerate(p, q), abs=1e-14)
    assert bayes_error(p, q) <= fstar_error(p, q) + 1e-15


def test_enumeration_and_bayes_rule():
    p = Partition.random(8, 2, seed=0)
    c, y, ell, w = enumerate_c(p, 0.4)
    assert w.sum() == pytest.approx(1.0, abs=1e-13)
    # the Bayes rule's error over the enumeration, ties counting 1/2, is the Bayes error
    pred = bayes_predict(c, p)
    err = np.sum(w * np.where(pred == 0, 0.5, pred != y))
    assert err == pytest.approx(bayes_error(p, 0.4), abs=1e-13)
    # f* on enumerated configurations agrees with the exact convolution
    f = fstar_from_c(c, p)
    assert np.sum(w * (y * f <= 0)) == pytest.approx(fstar_error(p, 0.4), abs=1e-13)


def test_delta_frequencies():
    p = Partition.random(20, 4, seed=0)
    c, y, ell = sample_c(p, 0.3, 50_000, 1)
    signal = p.labels[None, :] == ell[:, None]
    nz = np.abs(c[~signal]).mean()
    # 50000·16 Bernoulli(0.3) draws: sd ≈ 5e-4, so 0.005 is > 9 sd
    assert nz == pytest.approx(0.3, abs=0.005)
    assert make_wstar(DataConfig(D=4, C=2, d=9)).shape == (9,)
