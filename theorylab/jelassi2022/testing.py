"""Hypothesis strategies for the property tests (after ``xarray/testing/strategies.py``).

Everything is small and bounded so that softmax stays well-conditioned and the exact engines stay
cheap: D ≤ 16 (brute force enumerates 2·L·3^(D−C) configurations, so the tests cap that count
with ``max_brute``), attention entries in [−bound, bound], |α| ≤ 2.

**Strategies:**

- [`partitions`][]: grid, random (seeded) and explicit partitions (Definition 2.1).
- [`automorphisms`][]: permutations that map a given partition to itself.
- [`data_configs`][], [`model_configs`][], [`activations`][]: valid configuration sections.
- [`attention_matrices`][]: arbitrary or partition-symmetric A (Lemmas 4.1–4.2 as reconstructed
  in the paper notes §4.3), with a given frozen diagonal or a drawn one.
- [`value_vectors`][]: v = α·w* (aligned) or v with a component orthogonal to w*.
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

from .config import DataConfig, ModelConfig
from .observables import symmetric_A
from .partition import Partition

__all__ = [
    "GRID_SHAPES",
    "brute_configs",
    "partitions",
    "automorphisms",
    "permutations_of",
    "activations",
    "odd_activations",
    "data_configs",
    "model_configs",
    "attention_matrices",
    "value_vectors",
    "seeds",
    "probabilities",
    "experiment",
]

#: (D, C) with D ≤ 16 for which a grid partition exists (√C divides √D) and L ≥ 2.
GRID_SHAPES = ((4, 1), (9, 1), (16, 1), (16, 4))

seeds = st.integers(min_value=0, max_value=2**32 - 1)


def brute_configs(D: int, C: int) -> int:
    """Rows enumerated by the brute-force engine: 2·L·3^(D−C)."""
    return 2 * (D // C) * 3 ** (D - C)


def _shapes(min_D: int, max_D: int, max_brute: int | None, min_C: int = 1):
    return [(D, C) for D in range(max(min_D, 2), max_D + 1) for C in range(min_C, D)
            if D % C == 0 and D // C >= 2
            and (max_brute is None or brute_configs(D, C) <= max_brute)]


@st.composite
def partitions(
    draw,
    *,
    kinds=("grid", "random", "explicit"),
    min_D: int = 2,
    max_D: int = 16,
    min_C: int = 1,
    max_brute: int | None = None,
) -> Partition:
    """A [`Partition`][theorylab.Partition] of D ≤ `max_D` patches into L ≥ 2 sets of size C.

    **Arguments:**

    - `kinds`: which constructors to draw from: ``"grid"`` (square blocks, Figure 1b-(1)),
      ``"random"`` (``Partition.random`` with a drawn seed) and ``"explicit"`` (sets cut from a
      drawn permutation, Figure 1b-(2): non-contiguous sets).
    - `min_D`, `max_D`, `min_C`: bounds on D and C.
    - `max_brute`: when given, only shapes whose brute-force enumeration 2·L·3^(D−C) fits.
    """
    shapes = _shapes(min_D, max_D, max_brute, min_C)
    grid = [s for s in GRID_SHAPES if s in shapes]
    kinds = [k for k in kinds if k != "grid" or grid]
    kind = draw(st.sampled_from(kinds))
    if kind == "grid":
        D, C = draw(st.sampled_from(grid))
        return Partition.grid(D, C)
    D, C = draw(st.sampled_from(shapes))
    if kind == "random":
        return Partition.random(D, C, draw(seeds))
    perm = draw(st.permutations(range(D)))
    return Partition(tuple(tuple(perm[k : k + C]) for k in range(0, D, C)))


@st.composite
def automorphisms(draw, partition: Partition) -> np.ndarray:
    """A permutation ``perm`` of range(D) with ``partition.permuted(perm) == partition``: the sets
    are permuted among themselves and the patches inside each set (the symmetry group of the law
    of X, notes §4.3 (i))."""
    L, C = partition.L, partition.C
    set_perm = draw(st.permutations(range(L)))
    perm = np.empty(partition.D, dtype=np.int64)
    for k, S in enumerate(partition.sets):
        inner = draw(st.permutations(range(C)))
        perm[list(S)] = np.asarray(partition.sets[set_perm[k]])[inner]
    return perm


def permutations_of(D: int):
    """Any permutation of range(D), as an int64 array."""
    return st.permutations(range(D)).map(lambda p: np.asarray(p, dtype=np.int64))


# coefficients are 0 or of size [0.01, 1]: tiny ones (1e-156) underflow in float32
_mag = st.floats(min_value=0.01, max_value=1.0)

#: q ∈ [0, 1]: the end points exactly, or inside [1e-6, 1 − 1e-6] (subnormal q makes the binomial
#: tests of the statistical properties overflow in scipy without testing anything more)
probabilities = st.one_of(
    st.just(0.0), st.just(1.0), st.floats(min_value=1e-6, max_value=1.0 - 1e-6)
)
_coef = st.one_of(st.just(0.0), _mag, _mag.map(lambda x: -x))


@st.composite
def odd_activations(draw):
    """Odd polynomial σ (σ(−h) = −σ(h)): ``"cubic"``, ``"quintic"`` or c₁h + c₃h³ (+ c₅h⁵)."""
    named = draw(st.sampled_from(["cubic", "quintic", None]))
    if named is not None:
        return named
    c1, c3, c5 = draw(_coef), draw(_coef), draw(_coef)
    if c1 == 0.0 and c3 == 0.0 and c5 == 0.0:
        c3 = 1.0
    return [0.0, c1, 0.0, c3, 0.0, c5]


@st.composite
def activations(draw, *, odd: bool | None = None):
    """An activation spec accepted by ``ModelConfig``; ``odd=True`` only odd polynomials,
    ``odd=False`` only polynomials with a non-zero even coefficient, ``None`` either."""
    odd = draw(st.booleans()) if odd is None else odd
    if odd:
        return draw(odd_activations())
    c = [draw(_coef) for _ in range(4)]
    if c[0] == 0.0 and c[2] == 0.0:
        c[2] = 0.5
    if not any(c[1:]):
        c[1] = 1.0
    return c


@st.composite
def data_configs(draw, *, max_D: int = 16, max_brute: int | None = None, max_d: int = 8,
                 q=None) -> DataConfig:
    """A valid [`DataConfig`][theorylab.DataConfig] with an explicit partition (so the partition
    is drawn by hypothesis, not by the config's seed), small d and q ∈ [0, 1]."""
    part = draw(partitions(max_D=max_D, max_brute=max_brute))
    d = draw(st.integers(min_value=3, max_value=max_d))
    q = draw(probabilities) if q is None else q
    # σ = 0 or σ ≥ 1e-3: subnormal σ² underflows to 0 and says nothing about the data model
    sigma = draw(st.one_of(st.none(), st.just(0.0), st.floats(min_value=1e-3, max_value=2.0)))
    return DataConfig(
        D=part.D, partition=part.to_list(), d=d, q=q, sigma=sigma, seed=draw(st.integers(0, 2**31))
    )


@st.composite
def model_configs(draw, *, odd: bool | None = None) -> ModelConfig:
    """A valid [`ModelConfig`][theorylab.ModelConfig] with bounded temperature (τ ∈ [0.5, 4]),
    value scale (κ ∈ [0.25, 2]) and frozen diagonal (|a| ≤ 3)."""
    return ModelConfig(
        activation=draw(activations(odd=odd)),
        temperature=draw(st.floats(min_value=0.5, max_value=4.0)),
        value_scale=draw(st.floats(min_value=0.25, max_value=2.0)),
        diag=draw(st.floats(min_value=-3.0, max_value=3.0)),
    )


_entry = st.floats(min_value=-3.0, max_value=3.0, allow_nan=False, allow_subnormal=False)


@st.composite
def attention_matrices(
    draw,
    partition: Partition,
    *,
    symmetric: bool = False,
    diag: float | None = None,
    bound: float = 3.0,
) -> np.ndarray:
    """A (D, D) float64 attention matrix with entries in [−bound, bound].

    **Arguments:**

    - `partition`: fixes D (and the symmetry pattern when `symmetric`).
    - `symmetric`: partition-symmetric (diagonal a, same-set γ, cross-set ρ, notes §4.3);
      otherwise every entry is drawn independently.
    - `diag`: the frozen diagonal (drawn when None; arbitrary matrices then keep the drawn
      diagonal, which need not be constant).
    """
    val = st.floats(min_value=-bound, max_value=bound, allow_nan=False, allow_subnormal=False)
    D = partition.D
    if symmetric:
        a = draw(val) if diag is None else diag
        return symmetric_A(D, partition, a, draw(val), draw(val))
    A = draw(hnp.arrays(np.float64, (D, D), elements=val))
    if diag is not None:
        np.fill_diagonal(A, diag)
    return A


@st.composite
def value_vectors(draw, wstar: np.ndarray, *, aligned: bool = True, max_alpha: float = 2.0):
    """v = α·w* (``aligned``) or v = α·w* + β·e with e ⊥ w* a drawn unit vector and β ∈ [0.05, 2]
    (``aligned=False``). Returns the vector (float64, shape (d,))."""
    wstar = np.asarray(wstar, dtype=np.float64)
    # α = 0 exactly or |α| ≥ 1e-3: a denormal-scale α only tests underflow, not the model
    alpha = draw(st.one_of(st.just(0.0), st.floats(min_value=1e-3, max_value=max_alpha)))
    alpha = alpha * draw(st.sampled_from([1.0, -1.0]))
    if aligned:
        return alpha * wstar
    g = np.random.default_rng(draw(seeds)).standard_normal(wstar.shape[0])
    g -= (g @ wstar) * wstar
    n = np.linalg.norm(g)
    if n < 1e-8:  # pragma: no cover - measure zero
        g = np.roll(wstar, 1) - (np.roll(wstar, 1) @ wstar) * wstar
        n = np.linalg.norm(g)
    beta = draw(st.floats(min_value=0.05, max_value=2.0))
    return alpha * wstar + beta * g / n



# -- builders used by the property tests -----------------------------------------------------------
def experiment(partition: Partition, *, q: float, model: ModelConfig | None = None, d: int = 4,
               seed: int = 0, **train):
    """A resolved ``ExperimentConfig`` on an explicit `partition` (for the engines)."""
    from .config import ExperimentConfig, TrainConfig

    model = model or ModelConfig(activation="cubic", temperature=1.0, value_scale=1.0, diag=0.0)
    return ExperimentConfig(
        data=DataConfig(D=partition.D, partition=partition.to_list(), d=d, q=q, seed=seed),
        model=model,
        train=TrainConfig(**train),
    ).resolved()
