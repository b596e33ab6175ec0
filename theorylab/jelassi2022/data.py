"""The spatially structured data of Jelassi et al. (2022), Definition 2.1 and Assumption 1 (FOUND).

Each sample: a signal set ``S_ℓ(X)`` with ℓ(X) uniform on [L]; ``X_j = y·w* + ξ_j`` on the signal
set and ``X_j = δ_j·w* + ξ_j`` elsewhere, δ_j ∈ {−1, 0, +1} with probabilities q/2, 1−q, q/2,
ξ_j ~ N(0, σ²(I_d − w*w*ᵀ)), y uniform on {±1} (the law of y is RECONSTRUCTED: the text does
not say; uniform is the only choice consistent with the third-party script S7).

Because ξ ⊥ w* and ‖w*‖ = 1, ``c_j := ⟨w*, X_j⟩ ∈ {−1, 0, 1}`` exactly (DERIVED), and c is a
sufficient statistic for y: the noise is independent of (y, c). Every exact quantity here
(Bayes error, error of f*) is a finite sum over c.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np
from scipy import special

from .config import DataConfig
from .partition import Partition

__all__ = [
    "Sample",
    "make_wstar",
    "sample",
    "sample_c",
    "fstar",
    "fstar_from_c",
    "bayes_error",
    "bayes_error_enumerate",
    "bayes_predict",
    "fstar_error",
    "enumerate_c",
    "set_sum_distribution",
    "convolve",
]


@dataclass(frozen=True)
class Sample:
    """N samples. ``X``: (N, D, d); ``y``: (N,) ±1; ``ell``: (N,) signal-set index; ``c``: (N, D)
    the coefficients ⟨w*, X_j⟩ ∈ {−1, 0, 1}; ``wstar``: (d,) unit vector."""

    X: np.ndarray
    y: np.ndarray
    ell: np.ndarray
    c: np.ndarray
    wstar: np.ndarray


def make_wstar(cfg: DataConfig) -> np.ndarray:
    """The feature w*: a uniformly random unit vector of ℝ^d seeded by ``cfg.seed``."""
    g = np.random.default_rng(np.random.SeedSequence([cfg.seed, 2])).standard_normal(cfg.d)
    return g / np.linalg.norm(g)


def sample_c(
    partition: Partition, q: float, N: int, rng
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Draw (c, y, ℓ): c ∈ {−1,0,1}^{N×D} with the signal set equal to y (Assumption 1)."""
    if N < 0:
        raise ValueError(f"N: must be >= 0 (got {N})")
    rng = np.random.default_rng(rng)  # a Generator is kept as it is
    D = partition.D
    y = rng.choice(np.array([-1, 1], dtype=np.int8), size=N)
    ell = rng.integers(0, partition.L, size=N)
    u = rng.random((N, D))
    c = np.where(u < q / 2, -1, np.where(u < q, 1, 0)).astype(np.int8)
    signal = partition.labels[None, :] == ell[:, None]
    c = np.where(signal, y[:, None], c).astype(np.int8)
    return c, y, ell

#: float64 values per block of normals drawn by [`sample`][] (2²³: 64 MB)
SAMPLE_BLOCK_VALUES = 1 << 23


def sample(
    cfg: DataConfig,
    N: int,
    rng,
    *,
    partition: Partition | None = None,
    wstar: np.ndarray | None = None,
    dtype=np.float64,
) -> Sample:
    """Draw N samples of Assumption 1: X = c·w* + ξ with ξ ~ N(0, σ²(I − w*w*ᵀ)).

    **Arguments:**

    - `cfg`: the data configuration.
    - `N`: number of samples.
    - `rng`: a seed or ``numpy.random.Generator``.
    - `partition`, `wstar`: default to ``cfg.make_partition()`` and ``make_wstar(cfg)``.
    """
    rng = np.random.default_rng(rng)
    partition = cfg.make_partition() if partition is None else partition
    wstar = make_wstar(cfg) if wstar is None else np.asarray(wstar, dtype=np.float64)
    c, y, ell = sample_c(partition, cfg.q, N, rng)
    D, d = partition.D, cfg.d
    X = np.empty((N, D, d), dtype=dtype)
    # row blocks of SAMPLE_BLOCK_VALUES float64 values: the peak stays near one copy of X in
    # ``dtype`` (N·D·d may be in the 10¹⁰ range); the normals are drawn in the same order as
    # one (N, D, d) draw, so the sample does not depend on the block size
    # (tests/jelassi2022/test_data.py)
    rows = max(1, SAMPLE_BLOCK_VALUES // max(D * d, 1))
    for start in range(0, N, rows):
        sl = slice(start, min(N, start + rows))
        g = rng.standard_normal((sl.stop - sl.start, D, d))
        g -= (g @ wstar)[..., None] * wstar  # project off w*: covariance I − w*w*ᵀ
        X[sl] = cfg.sigma_value * g + c[sl, :, None] * wstar
    return Sample(X=X, y=y, ell=ell, c=c, wstar=wstar)


def _threshold(z: np.ndarray, t: float) -> np.ndarray:
    """Threshold_t(z) = z if |z| > t else 0 (Jelassi et al. (2022), §3, FOUND)."""
    return np.where(np.abs(z) > t, z, 0)


def fstar_from_c(c: np.ndarray, partition: Partition) -> np.ndarray:
    """f*(X) = Σ_ℓ Threshold_{0.9C}(Σ_{i∈S_ℓ} ⟨w*, X_i⟩), from c = ⟨w*, X_j⟩ (Assumption 1)."""
    c = np.asarray(c)
    s = np.stack([c[..., list(S)].sum(axis=-1) for S in partition.sets], axis=-1)
    return _threshold(s, 0.9 * partition.C).sum(axis=-1)


def fstar(X: np.ndarray, partition: Partition, wstar: np.ndarray) -> np.ndarray:
    """The labelling function f* of Assumption 1 on raw inputs X (N, D, d).

    ⟨w*, X_j⟩ ∈ {−1, 0, 1} exactly (noise ⟂ w*); it is rounded so that exact ties f* = 0 are not
    decided by floating-point rounding of the projection."""
    return fstar_from_c(np.rint(np.asarray(X) @ np.asarray(wstar)).astype(np.int64), partition)


def _p_delta(q: float) -> dict[int, float]:
    return {-1: q / 2, 0: 1.0 - q, 1: q / 2}


def enumerate_c(partition: Partition, q: float, max_configs: int = 5_000_000):
    """All (c, y, ℓ, weight) of Assumption 1 with positive probability (brute force).

    Returns ``c`` (n, D) int8, ``y`` (n,), ``ell`` (n,), ``weight`` (n,) summing to 1. The same
    c can appear under several ℓ; the enumeration is over (ℓ, y, δ), 2·L·3^{D−C} rows (rows with
    probability 0 dropped).
    """
    D, C, L = partition.D, partition.C, partition.L
    vals = [v for v, p in _p_delta(q).items() if p > 0]
    n = 2 * L * len(vals) ** (D - C)
    if n > max_configs:
        raise ValueError(
            f"train.max_configs: brute-force enumeration needs {n} configurations "
            f"(> max_configs={max_configs}); use the exchangeable or Monte Carlo engine"
        )
    pd = _p_delta(q)
    grid = np.array(list(itertools.product(vals, repeat=D - C)), dtype=np.int8).reshape(-1, D - C)
    lut = np.zeros(3)  # log p(δ) at δ + 1
    lut[np.array(vals) + 1] = [math.log(pd[v]) for v in vals]
    logw_grid = lut[grid.astype(np.int64) + 1].sum(axis=1) if D > C else np.zeros(1)
    cs, ys, ells, ws = [], [], [], []
    for ell, S in enumerate(partition.sets):
        others = [j for j in range(D) if partition.labels[j] != ell]
        for y in (-1, 1):
            c = np.empty((grid.shape[0], D), dtype=np.int8)
            c[:, list(S)] = y
            c[:, others] = grid
            cs.append(c)
            ys.append(np.full(grid.shape[0], y, dtype=np.int8))
            ells.append(np.full(grid.shape[0], ell))
            ws.append(np.exp(logw_grid) / (2 * L))
    return np.concatenate(cs), np.concatenate(ys), np.concatenate(ells), np.concatenate(ws)


def _likelihood_c(c: np.ndarray, y: int, partition: Partition, q: float) -> np.ndarray:
    """P(c | y) = (1/L) Σ_ℓ [c_{S_ℓ} = y] Π_{j∉S_ℓ} p(c_j), by direct summation (no shortcut)."""
    lut = np.array([_p_delta(q)[v] for v in (-1, 0, 1)])
    p = lut[c.astype(np.int64) + 1]
    out = np.zeros(c.shape[0])
    for ell in range(partition.L):
        inside = partition.labels == ell
        match = np.all(c[:, inside] == y, axis=1)
        out += match * np.prod(p[:, ~inside], axis=1)
    return out / partition.L


def bayes_predict(c: np.ndarray, partition: Partition) -> np.ndarray:
    """The Bayes classifier: sign(n₊(c) − n₋(c)), n± = number of sets whose c are all ±1; 0 on ties.

    DERIVED from Assumption 1: P(c | y) = Π_j p(c_j) · n_y(c) / (L (q/2)^C) for q > 0, so the
    posterior odds are n₊/n₋. With q = 0 only the signal set is non-zero and the rule is exact.
    """
    c = np.asarray(c)
    s = np.stack([c[..., list(S)] for S in partition.sets], axis=-2)  # (..., L, C)
    n_plus = np.all(s == 1, axis=-1).sum(axis=-1)
    n_minus = np.all(s == -1, axis=-1).sum(axis=-1)
    return np.sign(n_plus - n_minus)


def bayes_error_enumerate(partition: Partition, q: float) -> float:
    """Exact Bayes error Σ_c min(P(c, +1), P(c, −1)) by enumerating c ∈ {−1,0,1}^D (small D)."""
    D = partition.D
    if 3**D > 20_000_000:
        raise ValueError(f"data.D: enumeration over 3^D configurations is too large (D={D})")
    c = np.array(list(itertools.product((-1, 0, 1), repeat=D)), dtype=np.int8)
    p_plus = 0.5 * _likelihood_c(c, 1, partition, q)
    p_minus = 0.5 * _likelihood_c(c, -1, partition, q)
    return float(np.minimum(p_plus, p_minus).sum())


def bayes_error(partition_or_cfg, q: float | None = None) -> float:
    """Exact Bayes error of Assumption 1 in closed form (any D).

    With y = +1 (the other case is symmetric), the signal set is all +1 and each of the other
    L−1 sets is all +1 or all −1 with probability p = (q/2)^C each. The Bayes rule compares
    n₊ = 1 + a with n₋ = b, (a, b, L−1−a−b) ~ Multinomial(L−1; p, p, 1−2p); it errs when b > a+1
    and with probability 1/2 on ties b = a+1.
    """
    partition, q = _partition_q(partition_or_cfg, q)
    L, C = partition.L, partition.C
    p = (q / 2) ** C
    n = L - 1
    err = 0.0
    for a in range(n + 1):
        for b in range(a + 1, n + 1 - a):
            logw = (
                special.gammaln(n + 1)
                - special.gammaln(a + 1)
                - special.gammaln(b + 1)
                - special.gammaln(n - a - b + 1)
            )
            w = math.exp(logw) * (p ** (a + b)) * ((1 - 2 * p) ** (n - a - b))
            err += w if b > a + 1 else 0.5 * w
    return float(err)


def convolve(a: dict, b: dict, n: int = 1) -> dict:
    """The law of X + Y₁ + … + Yₙ for independent X ~ `a` and Yᵢ ~ `b` (value → probability;
    tuples of values add entry by entry), its values in the order they first occur."""
    for _ in range(n):
        out: dict = {}
        for ka, pa in a.items():
            for kb, pb in b.items():
                k = tuple(x + y for x, y in zip(ka, kb)) if isinstance(ka, tuple) else ka + kb
                out[k] = out.get(k, 0.0) + pa * pb
        a = out
    return a


def set_sum_distribution(C: int, q: float) -> dict[int, float]:
    """Law of s = Σ_{i∈S} δ_i for a non-signal set of C patches (δ = ±1 w.p. q/2, 0 w.p. 1−q)."""
    return convolve({0: 1.0}, {v: p for v, p in _p_delta(q).items() if p > 0}, C)


def fstar_error(partition_or_cfg, q: float | None = None, *, strict: bool = False) -> float:
    """Exact P[y·f*(X) ≤ 0] (``strict=False``: f* = 0 counts as an error) or P[y·f*(X) < 0].

    By symmetry take y = +1: y·f* = C + Σ_{ℓ ≠ ℓ(X)} Threshold_{0.9C}(s_ℓ) with i.i.d. set sums
    s_ℓ; the law of the sum is a convolution over the L−1 other sets.
    """
    partition, q = _partition_q(partition_or_cfg, q)
    C, L = partition.C, partition.L
    one: dict[int, float] = {}
    for s, p in set_sum_distribution(C, q).items():
        t = s if abs(s) > 0.9 * C else 0
        one[t] = one.get(t, 0.0) + p
    total = convolve({C: 1.0}, one, L - 1)
    return float(sum(p for m, p in total.items() if (m < 0 if strict else m <= 0)))


def _partition_q(partition_or_cfg, q):
    if isinstance(partition_or_cfg, DataConfig):
        return partition_or_cfg.make_partition(), partition_or_cfg.q
    if q is None:
        raise ValueError("q: required when a Partition is given")
    return partition_or_cfg, float(q)
