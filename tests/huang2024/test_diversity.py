"""Attention-diversity metrics (theorylab.huang2024.diversity): closed forms on reference maps,
a hand-computed 2×2 example, properties (hypothesis) against a brute-force oracle, and input
validation.

Tolerances. Every metric is a float64 sum of at most P² terms, each at most log P in size (an
entropy or mutual-information term) or √2·(√P − 1) (a grid distance), so its rounding error is
at most P² · max|term| · 2⁻⁵³. That bound is 2e-12 at P = 64 (4096 terms ≤ 4.2) and 8e-14 at
P ≤ 16, so closed forms are checked with ``ATOL = 1e-11`` (a margin of 5 over the worst case at
P = 64; typical errors are 1e-15). A ratio such as NMI = I/N inherits the absolute errors δI,
δN ≤ ATOL of its parts as |δ(I/N)| ≤ (δI + NMI·δN)/N ≤ 2·ATOL/N, so NMI comparisons between two
computations use ``2 * ATOL / N`` with N the larger of the two denominators (both NMIs are 0
exactly when both denominators are 0).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from theorylab.huang2024 import diversity as dv

ATOL = 1e-11
NORMS = dv.NMI_NORMALIZATIONS


# -- reference maps --------------------------------------------------------------------------------
def uniform(P: int) -> np.ndarray:
    return np.full((P, P), 1.0 / P)


def collapse(P: int, keys) -> np.ndarray:
    """Every query attends the same keys, uniformly (one key: every row the same one-hot)."""
    A = np.zeros((P, P))
    A[:, list(keys)] = 1.0 / len(keys)
    return A


def blocks(P: int, b_side: int) -> np.ndarray:
    """Each query attends, uniformly, its own b_side×b_side block of the √P×√P grid."""
    side = math.isqrt(P)
    row, col = np.divmod(np.arange(P), side)
    block = (row // b_side) * (side // b_side) + col // b_side
    same = block[:, None] == block[None, :]
    return same / same.sum(axis=1, keepdims=True)


def brute_mean_grid_distance(P: int) -> float:
    """Mean Euclidean distance between two independent uniform patches, by explicit loops."""
    side = math.isqrt(P)
    total = 0.0
    for q in range(P):
        for k in range(P):
            total += math.hypot(q // side - k // side, q % side - k % side)
    return total / P**2


# -- brute-force oracle (explicit loops, math.log) -------------------------------------------------
def oracle(A: np.ndarray, w: np.ndarray) -> dict:
    """H(Q), H(K), H(K|Q), I(Q;K) and the mean grid distance of one (P, P) map."""
    P = A.shape[0]
    pk = [sum(w[q] * A[q, k] for q in range(P)) for k in range(P)]
    hq = -sum(x * math.log(x) for x in w if x > 0)
    hk = -sum(x * math.log(x) for x in pk if x > 0)
    hkq = mi = dist = 0.0
    side = math.isqrt(P)
    for q in range(P):
        for k in range(P):
            j = w[q] * A[q, k]
            if j > 0:
                hkq -= j * math.log(A[q, k])
                mi += j * math.log(A[q, k] / pk[k])
                dist += j * math.hypot(q // side - k // side, q % side - k % side)
    return {"hq": hq, "hk": hk, "hkq": hkq, "mi": mi, "dist": dist}


# -- strategies ------------------------------------------------------------------------------------
KINDS = ("softmax", "sparse", "onehot", "shared", "uniform")


def make_map(rng: np.random.Generator, shape: tuple, kind: str, scale: float) -> np.ndarray:
    """Row-stochastic maps of shape (..., P, P); logits bounded by `scale` ≤ 6 so that no entry
    underflows (softmax entries ≥ e^(−12)/P)."""
    P = shape[-1]
    if kind == "uniform":
        return np.full(shape, 1.0 / P)
    if kind == "onehot":
        return np.eye(P)[rng.integers(0, P, size=shape[:-1])]
    logits = scale * rng.uniform(-1.0, 1.0, size=shape)
    if kind == "shared":  # every row the same distribution: I(Q;K) = 0
        logits = np.broadcast_to(logits[..., :1, :], shape)
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    if kind == "sparse":  # exact zeros, the 0·log 0 = 0 paths; the row maximum is always kept
        keep = rng.random(shape) < 0.5
        keep |= logits == logits.max(axis=-1, keepdims=True)
        e = np.where(keep, e, 0.0)
    return e / e.sum(axis=-1, keepdims=True)


def make_weights(rng: np.random.Generator, shape: tuple, kind: str) -> np.ndarray | None:
    if kind == "none":
        return None
    w = rng.random(shape)
    if kind == "sparse":
        w = np.where(rng.random(shape) < 0.5, w, 0.0)
        w[..., 0] += 1.0  # at least one query with weight > 0
    return w / w.sum(axis=-1, keepdims=True)


@st.composite
def maps(draw, lead=((),), weights=True):
    """(A, w) with P ∈ {1, 4, 9, 16} (a square grid) and w = None or valid query weights."""
    side = draw(st.integers(1, 4))
    shape = draw(st.sampled_from(lead)) + (side * side, side * side)
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    A = make_map(rng, shape, draw(st.sampled_from(KINDS)), draw(st.floats(0.0, 6.0)))
    wkind = draw(st.sampled_from(("none", "dense", "sparse"))) if weights else "none"
    return A, make_weights(rng, shape[:-1], wkind)


def nmi_denominator(o: dict, norm: str, P: int) -> float:
    """The NMI denominator `norm` from oracle entropies."""
    hq, hk = o["hq"], o["hk"]
    return {"geometric": math.sqrt(hq * hk), "arithmetic": (hq + hk) / 2, "min": min(hq, hk),
            "max": max(hq, hk), "query": hq, "key": hk, "log_p": math.log(P)}[norm]


def nmi_tol(o1: dict, o2: dict, norm: str, P: int) -> float:
    """2·ATOL/N with N the larger denominator (module docstring); 0 when both are 0, since
    then both NMIs are exactly 0."""
    den = max(nmi_denominator(o1, norm, P), nmi_denominator(o2, norm, P))
    return 2 * ATOL / den if den > 0 else 0.0


def _weights_or_uniform(w, A):
    return np.full(A.shape[:-1], 1.0 / A.shape[-1]) if w is None else w


# -- 1. reference maps -----------------------------------------------------------------------------
@pytest.mark.parametrize("P", [4, 16, 64])
def test_uniform_attention(P):
    """Uniform rows: K is independent of Q, so I = 0 and NMI = 0 in every normalisation; no
    query is focused (sharpness 0, 0, 0); coverage = per-query keys = P; the mean distance is
    the mean distance of two random grid patches (brute-force loops)."""
    A = uniform(P)
    assert abs(dv.mutual_information(A)) <= ATOL
    for norm in NORMS:
        assert abs(dv.normalized_mutual_information(A, normalization=norm)) <= ATOL
    s = dv.sharpness_decomposition(A)
    np.testing.assert_allclose([s.total, s.shared, s.diverse], 0.0, atol=ATOL)
    eff = dv.effective_keys(A)
    np.testing.assert_allclose([eff.coverage, eff.per_query, eff.patterns], [P, P, 1.0],
                               rtol=ATOL)
    assert dv.mean_attention_distance(A) == pytest.approx(brute_mean_grid_distance(P), abs=ATOL)


@pytest.mark.parametrize("P", [4, 16, 64])
def test_identity_attention(P):
    """Each query attends itself: I = H(Q) = H(K) = log P, so NMI = 1 in every normalisation;
    all focus is query-specific (total 1 = shared 0 + diverse 1); distance 0."""
    A = np.eye(P)
    assert dv.mutual_information(A) == pytest.approx(math.log(P), abs=ATOL)
    for norm in NORMS:
        assert dv.normalized_mutual_information(A, normalization=norm) == pytest.approx(
            1.0, abs=ATOL)
    s = dv.sharpness_decomposition(A)
    np.testing.assert_allclose([s.total, s.shared, s.diverse], [1.0, 0.0, 1.0], atol=ATOL)
    assert dv.mean_attention_distance(A) == 0.0
    np.testing.assert_array_equal(dv.attention_distance_per_query(A), np.zeros(P))


@pytest.mark.parametrize("P", [16, 64])
@pytest.mark.parametrize("key", ["corner", "centre"])
def test_global_collapse_onto_one_key(P, key):
    """Every row the same one-hot: H(K) = H(K|Q) = 0, so I = 0 and NMI = 0 (zero denominator →
    0) as for uniform attention; but all queries are maximally and jointly focused, so the
    collapse index and total sharpness are 1 where uniform attention gives 0."""
    side = math.isqrt(P)
    k0 = 0 if key == "corner" else (side // 2) * side + side // 2
    A = collapse(P, [k0])
    for norm in NORMS:
        assert dv.normalized_mutual_information(A, normalization=norm) == 0.0
    assert dv.normalized_mutual_information(A) == pytest.approx(
        dv.normalized_mutual_information(uniform(P)), abs=ATOL)  # NMI cannot tell them apart
    s = dv.sharpness_decomposition(A)
    np.testing.assert_allclose([s.total, s.shared, s.diverse], [1.0, 1.0, 0.0], atol=ATOL)
    assert dv.collapse_index(A) - dv.collapse_index(uniform(P)) == pytest.approx(1.0, abs=ATOL)
    eff = dv.effective_keys(A)
    np.testing.assert_allclose([eff.coverage, eff.per_query, eff.patterns], 1.0, atol=ATOL)
    # distance to one key: the grid mean of ‖x − x_k0‖ (brute force)
    r0, c0 = divmod(k0, side)
    expect = sum(math.hypot(q // side - r0, q % side - c0) for q in range(P)) / P
    assert dv.mean_attention_distance(A) == pytest.approx(expect, abs=ATOL)


@pytest.mark.parametrize(("P", "m"), [(16, 4), (64, 8), (64, 16)])
def test_global_collapse_onto_an_area(P, m):
    """All queries attend the same m keys (a global area of P^κ keys, κ = log m / log P): NMI 0,
    collapse index = total sharpness = 1 − κ, coverage = per-query keys = m."""
    A = collapse(P, range(0, P, P // m))
    kappa = math.log(m) / math.log(P)
    assert dv.normalized_mutual_information(A) == pytest.approx(0.0, abs=ATOL)
    s = dv.sharpness_decomposition(A)
    np.testing.assert_allclose([s.total, s.shared, s.diverse], [1 - kappa, 1 - kappa, 0.0],
                               atol=ATOL)
    assert dv.collapse_index(A) == pytest.approx(1 - kappa, abs=ATOL)
    eff = dv.effective_keys(A)
    np.testing.assert_allclose([eff.coverage, eff.per_query, eff.patterns], [m, m, 1.0],
                               rtol=ATOL)


@pytest.mark.parametrize(("P", "b_side"), [(16, 2), (64, 2), (64, 4)])
def test_local_block_attention(P, b_side):
    """Each query attends its own block of b = b_side² keys: p(k) = 1/P, H(K|Q) = log b, so
    I = log(P/b) and NMI = 1 − log b / log P, strictly between 0 and 1 (0.5 at P = 16, b = 4;
    2/3 and 1/3 at P = 64, b = 4 and 16); no shared focus (collapse index 0)."""
    A = blocks(P, b_side)
    b = b_side**2
    expect = 1 - math.log(b) / math.log(P)
    nmi = dv.normalized_mutual_information(A)
    assert 0 < nmi < 1
    assert nmi == pytest.approx(expect, abs=ATOL)
    for norm in NORMS:  # H(Q) = H(K) = log P here, so every normalisation agrees
        assert dv.normalized_mutual_information(A, normalization=norm) == pytest.approx(
            expect, abs=ATOL)
    s = dv.sharpness_decomposition(A)
    np.testing.assert_allclose([s.total, s.shared, s.diverse], [expect, 0.0, expect], atol=ATOL)
    eff = dv.effective_keys(A)
    np.testing.assert_allclose([eff.coverage, eff.per_query, eff.patterns], [P, b, P / b],
                               rtol=ATOL)
    if b_side == 2:  # per query: itself (0), two neighbours (1), the diagonal one (√2)
        np.testing.assert_allclose(dv.attention_distance_per_query(A), (2 + math.sqrt(2)) / 4,
                                   atol=ATOL)
    else:
        assert dv.mean_attention_distance(A) == pytest.approx(
            oracle(A, np.full(P, 1 / P))["dist"], abs=ATOL)


@pytest.mark.parametrize(("P", "C1", "C"), [(64, 16, 4), (128, 32, 8), (256, 192, 4)])
def test_idealised_end_states_of_the_paper(P, C1, C):
    """The two end states contrasted by Huang et al. (paper notes §5.4), on a random partition
    into one global area of C1 = P^κ_s and local areas of C = P^κ_c patches:

    - MAE (every query attends its own area uniformly): every key gets total weight 1/P, so
      shared = 0 and NMI = diverse = 1 − (C1/P)·κ_s − (1 − C1/P)·κ_c;
    - CL (every query attends the global area uniformly): NMI = diverse = 0 and
      shared = total = 1 − κ_s.

    Tolerance: the worst-case rounding bound of the module docstring grows like P², so ATOL
    (set for P ≤ 64) is scaled by max(1, (P/64)²).
    """
    tol = ATOL * max(1.0, (P / 64) ** 2)
    rng = np.random.default_rng(P + C1 + C)
    labels = np.empty(P, dtype=int)
    perm = rng.permutation(P)
    labels[perm[:C1]] = 0
    labels[perm[C1:]] = 1 + np.arange(P - C1) // C
    same = labels[:, None] == labels[None, :]
    mae = same / same.sum(axis=1, keepdims=True)
    cl = collapse(P, np.flatnonzero(labels == 0))
    ks, kc = math.log(C1) / math.log(P), math.log(C) / math.log(P)
    diverse = 1 - (C1 / P) * ks - (1 - C1 / P) * kc
    s = dv.sharpness_decomposition(mae)
    np.testing.assert_allclose([s.total, s.shared, s.diverse], [diverse, 0.0, diverse], atol=tol)
    assert dv.normalized_mutual_information(mae) == pytest.approx(diverse, abs=tol)
    s = dv.sharpness_decomposition(cl)
    np.testing.assert_allclose([s.total, s.shared, s.diverse], [1 - ks, 1 - ks, 0.0], atol=tol)
    assert dv.normalized_mutual_information(cl) == pytest.approx(0.0, abs=tol)


# -- 2. a hand-computed example --------------------------------------------------------------------
def test_hand_computed_2x2():
    """A = [[1, 0], [½, ½]] on 2 positions (distances need a square grid, so not checked here).

    Uniform p(q) = (½, ½): J = [[½, 0], [¼, ¼]], p(k) = (¾, ¼);
    H(Q) = ln 2, H(K) = 2 ln 2 − ¾ ln 3, H(K|Q) = ½ ln 2, I = H(K) − H(K|Q) = (3/2) ln 2 − ¾ ln 3.
    Weights p(q) = (¼, ¾): p(k) = (⅝, ⅜), H(K|Q) = ¾ ln 2, I = H(K) − ¾ ln 2.

    Tolerance 1e-15: each quantity is a sum of at most four terms of size ≤ 1 (ratios divide by
    denominators ≥ 0.56), a few roundings of 1.1e-16 each. The printed NMI 0.3455920 is checked
    to its 7 digits.
    """
    A = np.array([[1.0, 0.0], [0.5, 0.5]])
    ln2, ln3 = math.log(2), math.log(3)
    hq, hk, hkq = ln2, 2 * ln2 - 0.75 * ln3, 0.5 * ln2
    mi = 1.5 * ln2 - 0.75 * ln3
    assert mi == pytest.approx(hk - hkq, abs=1e-15)
    np.testing.assert_allclose(dv.key_marginal(A), [0.75, 0.25], atol=1e-15)
    assert dv.query_entropy(A) == pytest.approx(hq, abs=1e-15)
    assert dv.key_entropy(A) == pytest.approx(hk, abs=1e-15)
    assert dv.conditional_key_entropy(A) == pytest.approx(hkq, abs=1e-15)
    assert dv.mutual_information(A) == pytest.approx(mi, abs=1e-15)
    expect = {"geometric": mi / math.sqrt(hq * hk), "arithmetic": 2 * mi / (hq + hk),
              "min": mi / hk, "max": mi / hq, "query": mi / hq, "key": mi / hk,
              "log_p": mi / ln2}
    for norm, value in expect.items():
        assert dv.normalized_mutual_information(A, normalization=norm) == pytest.approx(
            value, abs=1e-15), norm
    assert dv.normalized_mutual_information(A) == pytest.approx(0.3455920, abs=1e-7)
    s = dv.sharpness_decomposition(A)
    np.testing.assert_allclose([s.total, s.shared, s.diverse],
                               [1 - hkq / ln2, 1 - hk / ln2, mi / ln2], atol=1e-15)

    w = np.array([0.25, 0.75])
    hk_w = -(0.625 * math.log(0.625) + 0.375 * math.log(0.375))
    np.testing.assert_allclose(dv.key_marginal(A, query_weights=w), [0.625, 0.375], atol=1e-15)
    assert dv.conditional_key_entropy(A, query_weights=w) == pytest.approx(0.75 * ln2, abs=1e-15)
    assert dv.mutual_information(A, query_weights=w) == pytest.approx(hk_w - 0.75 * ln2,
                                                                       abs=1e-15)


def test_hand_computed_distance_2x2_grid():
    """P = 4 (a 2×2 grid, patches 0 1 / 2 3): each query attends the opposite corner (√2) with
    weight ½ and itself with weight ½ → distance √2/2 for every query; with query weights
    concentrated on query 0 the mean is the same √2/2."""
    A = 0.5 * (np.eye(4) + np.eye(4)[[3, 2, 1, 0]])
    np.testing.assert_allclose(dv.attention_distance_per_query(A), math.sqrt(2) / 2, atol=1e-15)
    w = np.array([1.0, 0.0, 0.0, 0.0])
    assert dv.mean_attention_distance(A, query_weights=w) == pytest.approx(math.sqrt(2) / 2,
                                                                           abs=1e-15)
    np.testing.assert_array_equal(dv.grid_positions(4), [[0, 0], [0, 1], [1, 0], [1, 1]])


def test_single_position():
    """P = 1: log P = 0 and every entropy is 0; every metric is 0, with no warning (warnings
    are errors in this suite)."""
    A = np.ones((1, 1))
    for norm in NORMS:
        assert dv.normalized_mutual_information(A, normalization=norm) == 0.0
    assert tuple(dv.sharpness_decomposition(A)) == (0.0, 0.0, 0.0)
    assert dv.mean_attention_distance(A) == 0.0


# -- 3. properties ---------------------------------------------------------------------------------
@given(maps(), st.data())
def test_nmi_invariant_under_joint_permutation(inp, data):
    """Relabelling positions (one permutation applied to queries, keys and query weights)
    changes no entropy, I, NMI or sharpness part. Entropies and I within ATOL; NMI within
    2·ATOL/N (module docstring)."""
    A, w = inp
    P = A.shape[-1]
    perm = np.asarray(data.draw(st.permutations(range(P))), dtype=int)
    A2 = A[np.ix_(perm, perm)]
    w, w2 = (None, None) if w is None else (w, w[perm])
    for f in (dv.query_entropy, dv.key_entropy, dv.conditional_key_entropy,
              dv.mutual_information, dv.collapse_index):
        assert abs(f(A, query_weights=w) - f(A2, query_weights=w2)) <= ATOL, f.__name__
    for part1, part2 in zip(dv.sharpness_decomposition(A, query_weights=w),
                            dv.sharpness_decomposition(A2, query_weights=w2)):
        assert abs(part1 - part2) <= ATOL
    o1, o2 = oracle(A, _weights_or_uniform(w, A)), oracle(A2, _weights_or_uniform(w2, A2))
    for norm in NORMS:
        n1 = dv.normalized_mutual_information(A, normalization=norm, query_weights=w)
        n2 = dv.normalized_mutual_information(A2, normalization=norm, query_weights=w2)
        assert abs(n1 - n2) <= nmi_tol(o1, o2, norm, P), norm


@given(maps())
def test_matches_bruteforce_oracle(inp):
    """The vectorised metrics equal explicit loops over (q, k) with math.log (module oracle)."""
    A, w = inp
    o = oracle(A, _weights_or_uniform(w, A))
    assert dv.query_entropy(A, query_weights=w) == pytest.approx(o["hq"], abs=ATOL)
    assert dv.key_entropy(A, query_weights=w) == pytest.approx(o["hk"], abs=ATOL)
    assert dv.conditional_key_entropy(A, query_weights=w) == pytest.approx(o["hkq"], abs=ATOL)
    assert dv.mutual_information(A, query_weights=w) == pytest.approx(max(o["mi"], 0.0),
                                                                      abs=ATOL)
    for norm in NORMS:
        den = nmi_denominator(o, norm, A.shape[-1])
        expect = min(max(o["mi"], 0.0) / den, 1.0) if den > 0 else 0.0
        got = dv.normalized_mutual_information(A, normalization=norm, query_weights=w)
        assert abs(got - expect) <= nmi_tol(o, o, norm, A.shape[-1]), norm
    assert dv.mean_attention_distance(A, query_weights=w) == pytest.approx(o["dist"], abs=ATOL)


@given(maps())
def test_bounds_and_identities(inp):
    """0 ≤ NMI ≤ 1 (every normalisation); 0 ≤ I ≤ min(H(Q), H(K)); H(K|Q) ≤ H(K) ≤ log P;
    total = shared + diverse with every part in [0, 1]; 1 ≤ per-query keys ≤ coverage ≤ P and
    patterns = coverage / per_query; 0 ≤ distance ≤ √2 (√P − 1), the grid diameter."""
    A, w = inp
    P = A.shape[-1]
    hq = dv.query_entropy(A, query_weights=w)
    hk = dv.key_entropy(A, query_weights=w)
    hkq = dv.conditional_key_entropy(A, query_weights=w)
    mi = dv.mutual_information(A, query_weights=w)
    assert 0 <= mi <= min(hq, hk) + ATOL
    assert hkq <= hk + ATOL and hk <= math.log(P) + ATOL
    for norm in NORMS:
        assert 0 <= dv.normalized_mutual_information(A, normalization=norm, query_weights=w) <= 1
    s = dv.sharpness_decomposition(A, query_weights=w)
    assert all(0 <= part <= 1 for part in s)
    assert s.total == pytest.approx(s.shared + s.diverse, abs=ATOL)
    eff = dv.effective_keys(A, query_weights=w)
    assert 1 - ATOL <= eff.per_query <= eff.coverage * (1 + ATOL) <= P * (1 + ATOL) ** 2
    assert eff.patterns == pytest.approx(eff.coverage / eff.per_query, rel=ATOL)
    dist = dv.mean_attention_distance(A, query_weights=w)
    assert 0 <= dist <= math.sqrt(2) * (math.isqrt(P) - 1) + ATOL


@given(maps(lead=((2, 3), (1, 2)), weights=False), st.data())
def test_batch_axes_equal_a_loop(inp, data):
    """Leading axes are batch axes: each metric of a (B1, B2, P, P) stack equals the metric of
    each map (bitwise up to einsum's summation order: ATOL); query weights broadcast."""
    A, _ = inp
    lead, P = A.shape[:-2], A.shape[-1]
    fns = (dv.mutual_information, dv.normalized_mutual_information, dv.collapse_index,
           dv.mean_attention_distance, dv.key_entropy, dv.conditional_key_entropy)
    for f in fns:
        batched = f(A)
        assert batched.shape == lead
        for idx in np.ndindex(*lead):
            assert abs(batched[idx] - f(A[idx])) <= ATOL, f.__name__
    assert dv.attention_distance_per_query(A).shape == lead + (P,)
    # four weight vectors on a new leading axis, broadcast against A's leading shape
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    w = make_weights(rng, (4,) + (1,) * len(lead) + (P,), "dense")
    out = dv.mutual_information(A, query_weights=w)
    assert out.shape == (4,) + lead
    for i in range(4):
        for idx in np.ndindex(*lead):
            wi = w[(i,) + (0,) * len(lead)]
            assert abs(out[(i,) + idx] - dv.mutual_information(A[idx], query_weights=wi)) <= ATOL


DIHEDRAL = {
    "transpose": lambda r, c, s: (c, r),
    "flip_rows": lambda r, c, s: (s - 1 - r, c),
    "flip_cols": lambda r, c, s: (r, s - 1 - c),
    "rotate90": lambda r, c, s: (c, s - 1 - r),
}


@given(maps(), st.sampled_from(sorted(DIHEDRAL)))
def test_distance_invariant_under_grid_symmetries(inp, name):
    """A symmetry of the square grid (transpose, flips, rotation) preserves Euclidean distances,
    so moving queries, keys and weights along it leaves the mean attention distance unchanged
    (and the per-query distances move with the queries)."""
    A, w = inp
    P = A.shape[-1]
    s = math.isqrt(P)
    row, col = np.divmod(np.arange(P), s)
    r2, c2 = DIHEDRAL[name](row, col, s)
    new = r2 * s + c2
    A2 = np.empty_like(A)
    A2[np.ix_(new, new)] = A
    w2 = None
    if w is not None:
        w2 = np.empty_like(w)
        w2[new] = w
    assert dv.mean_attention_distance(A2, query_weights=w2) == pytest.approx(
        dv.mean_attention_distance(A, query_weights=w), abs=ATOL)
    np.testing.assert_allclose(dv.attention_distance_per_query(A2)[new],
                               dv.attention_distance_per_query(A), atol=ATOL)


@given(maps(weights=False), st.data())
def test_zero_weight_queries_are_ignored(inp, data):
    """A query with p(q) = 0 does not enter any metric: rewriting its row (here: a one-hot on a
    drawn key) changes no metric beyond ATOL (the 0·inf guard of the joint law)."""
    A, _ = inp
    P = A.shape[-1]
    if P < 2:
        return
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1)))
    w = make_weights(rng, (P,), "dense")
    dead = data.draw(st.integers(0, P - 1))
    w[dead] = 0.0
    w /= w.sum()
    A2 = A.copy()
    A2[dead] = np.eye(P)[data.draw(st.integers(0, P - 1))]
    for f in (dv.key_entropy, dv.conditional_key_entropy, dv.mutual_information,
              dv.normalized_mutual_information, dv.mean_attention_distance):
        assert abs(f(A, query_weights=w) - f(A2, query_weights=w)) <= ATOL, f.__name__


# -- 4. inputs -------------------------------------------------------------------------------------
BAD = [
    ("A must have shape", lambda: dv.mutual_information(np.ones(3) / 3)),
    ("A must have shape", lambda: dv.mutual_information(np.ones((2, 3)) / 3)),
    ("A must have shape", lambda: dv.mutual_information(np.ones((0, 0)))),
    ("A must be finite", lambda: dv.mutual_information(np.array([[np.nan, 1.0], [0.5, 0.5]]))),
    ("A rows must be non-negative",
     lambda: dv.mutual_information(np.array([[1.5, -0.5], [0.5, 0.5]]))),
    ("A rows must sum to 1", lambda: dv.mutual_information(np.array([[0.6, 0.5], [0.5, 0.5]]))),
    ("A rows must sum to 1", lambda: dv.key_entropy(np.zeros((2, 2)))),
    ("query_weights must have shape",
     lambda: dv.mutual_information(uniform(4), query_weights=np.ones(3) / 3)),
    ("query_weights must be non-negative",
     lambda: dv.key_entropy(uniform(2), query_weights=np.array([1.5, -0.5]))),
    ("query_weights must sum to 1",
     lambda: dv.key_entropy(uniform(2), query_weights=np.array([0.5, 0.6]))),
    ("query_weights must be finite",
     lambda: dv.key_entropy(uniform(2), query_weights=np.array([np.inf, 0.5]))),
    ("query_weights leading shape",
     lambda: dv.key_entropy(np.stack([uniform(2)] * 3), query_weights=np.full((2, 2), 0.5))),
    ("normalization must be one of",
     lambda: dv.normalized_mutual_information(uniform(4), normalization="sqrt")),
    ("A must have P = side", lambda: dv.mean_attention_distance(uniform(8))),
    ("A must have P = side", lambda: dv.attention_distance_per_query(uniform(2))),
    ("P must be a perfect square", lambda: dv.grid_positions(15)),
    ("P must be a positive integer", lambda: dv.grid_positions(0)),
    ("P must be a positive integer", lambda: dv.grid_distances(4.0)),
    ("atol must be", lambda: dv.check_attention(uniform(2), atol=-1.0)),
]


@pytest.mark.parametrize(("match", "call"), BAD, ids=[f"{i}-{m}" for i, (m, _) in enumerate(BAD)])
def test_invalid_inputs_raise_one_line_value_errors(match, call):
    """Each bad input raises a one-line ValueError that names the argument."""
    with pytest.raises(ValueError, match=match) as exc:
        call()
    assert "\n" not in str(exc.value)


def test_row_sum_tolerance():
    """Float32 softmax maps (P = 256) pass the default tolerance (their row sums are within
    ~1e-6 of 1); a map off by 1e-4 fails it but passes with atol=1e-3. Float64 is returned."""
    rng = np.random.default_rng(0)
    logits = rng.normal(size=(2, 256, 256)).astype(np.float32)
    e = np.exp(logits - logits.max(axis=-1, keepdims=True))
    A32 = e / e.sum(axis=-1, keepdims=True)
    assert np.abs(A32.sum(axis=-1, dtype=np.float64) - 1).max() < dv.ROW_SUM_ATOL
    assert dv.check_attention(A32).dtype == np.float64
    off = uniform(4) * (1 + 1e-4)
    with pytest.raises(ValueError, match="within atol=1e-05"):
        dv.check_attention(off)
    assert dv.check_attention(off, atol=1e-3).shape == (4, 4)
