"""The data model of Huang et al. (2025), Def. 2.1, and the random masking of Def. 2.5.

Notes: docs/papers/huang2024.md. What the paper states and what is reconstructed:

- FOUND (Def. 2.1): each cluster ``D_k`` partitions the patches ``[P]`` into disjoint areas
  ``P_{k,1}, ..., P_{k,N_k}``; the global area ``P_{k,1}`` is larger than every local area; each
  area j of a sample X carries a coefficient ``z_j(X)`` in a bounded support whose law is
  arbitrary; areas may be contiguous or not; features are orthonormal.
- RECONSTRUCTED: a patch p of area j of a sample of cluster k is ``x_p = z_j(X) v_{k,j}`` (no
  noise); the features ``v_{k,j}`` are orthonormal and orthogonal to orthonormal positional
  encodings ``e_p``; the coefficients of the areas are i.i.d. from one law on ``[L, U]``; the
  clusters are equally likely; global size ``C1 ≈ P^κ_s``, local size ``C ≈ P^κ_c``; the
  information gap is ``Δ = 2κ_s − κ_c − 1``.

Coordinates. Because only inner products between features and positions enter the model, this
module works in the orthonormal basis where ``e_p`` is the p-th and ``v_{k,j}`` the
``(P + f(k, j))``-th standard basis vector of ``ℝ^d``, ``d = P + F``, ``F = Σ_k N_k``,
``f(k, j) = offset_k + j`` (area 0 is the global area). A sample is then described by its
cluster k and its area coefficients ``z`` (one per area of cluster k).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "AreaStructure",
    "Batch",
    "coefficient_vectors",
    "config_batch",
    "contiguous_labels",
    "index_grid",
    "information_gap",
    "mask_count_probs",
    "random_labels",
    "sample_batch",
    "sizes_for_gap",
    "zlaw_nodes",
]


def information_gap(P: int, C1: int, C: int) -> float:
    """Δ = 2κ_s − κ_c − 1 with κ = ln(size)/ln P (Huang et al. (2025), Thm 4.1's Δ;
    RECONSTRUCTED: only its admissible range [−0.5, 1] was FOUND)."""
    ks, kc = math.log(C1) / math.log(P), math.log(C) / math.log(P)
    return 2 * ks - kc - 1


def sizes_for_gap(P: int, Delta: float, *, C: int | None = None,
                  C1: int | None = None) -> tuple[int, int]:
    """(C1, C): admissible area sizes (1 ≤ C ≤ C1 < P, C dividing P − C1) whose information
    gap Δ = 2κ_s − κ_c − 1 ([`information_gap`][]) is closest to `Delta`, with one size given:
    `C` (the local size; C1 chosen) or `C1` (the global size; C chosen). Ties go to the larger
    free size. The realised Δ differs from `Delta` by the rounding of the sizes to integers
    (a config records it as ``delta_rounding``). ``ValueError`` (naming ``data.Delta``) when no
    size is admissible."""
    if (C is None) == (C1 is None):
        raise ValueError("data.Delta: give exactly one of the sizes (C or kappa_c, or C1 or "
                         "kappa_s) with Delta")
    lp = math.log(P)
    if C is not None:
        # C1 = P − kC (k ≥ 1) on a lattice; Δ increases with C1: the lattice points around the
        # continuous solution are the candidates
        c1_star = math.exp((Delta + 1.0) * lp / 2.0 + math.log(C) / 2.0) if C > 0 else P
        k_star = (P - c1_star) / C
        ks = {min(max(k, 1), (P - max(C, 2)) // C) for k in (math.floor(k_star),
                                                              math.ceil(k_star))}
        cands = [(P - k * C, C) for k in ks if k >= 1 and P - k * C >= max(C, 2)]
    else:
        # C divides P − C1; Δ decreases with C: the divisors around the continuous solution
        rest = P - C1
        c_star = math.exp(2.0 * math.log(C1) - (Delta + 1.0) * lp)
        divs = [d for d in range(1, min(C1, rest) + 1) if rest % d == 0]
        below = [d for d in divs if d <= c_star][-1:]
        above = [d for d in divs if d >= c_star][:1]
        cands = [(C1, d) for d in below + above]
    if not cands:
        raise ValueError(f"data.Delta: no admissible sizes at P = {P} with "
                         + (f"C = {C}" if C is not None else f"C1 = {C1}"))
    return min(cands, key=lambda s: (abs(information_gap(P, *s) - Delta), -s[0], -s[1]))


def _snake(side: int, variant: int) -> np.ndarray:
    """Patch indices (row-major on a side×side grid) in boustrophedon order; ``variant`` in
    0..7 picks one of the square's 8 symmetries (transpose, flip rows, flip columns)."""
    r, c = np.divmod(np.arange(side * side), side)
    # boustrophedon: row r runs left→right when r is even, right→left otherwise
    c = np.where(r % 2 == 0, c, side - 1 - c)
    if variant & 1:
        r, c = c, r
    if variant & 2:
        r = side - 1 - r
    if variant & 4:
        c = side - 1 - c
    return r * side + c


def contiguous_labels(P: int, C1: int, C: int, K: int) -> np.ndarray:
    """Area labels (K, P) of contiguous areas on a √P×√P grid: the grid is walked in a
    boustrophedon path (a different symmetry of the square per cluster, K ≤ 8); the first C1
    cells of the path are the global area (label 0), then runs of C cells are the local areas.
    Every run of a path of neighbouring cells is 4-connected."""
    side = math.isqrt(P)
    labels = np.empty((K, P), dtype=np.int64)
    for k in range(K):
        labels[k, _snake(side, k)] = _path_labels(P, C1, C)
    return labels


def random_labels(P: int, C1: int, C: int, K: int, seed: int) -> np.ndarray:
    """Area labels (K, P) of random areas: per cluster a seeded uniform permutation of [P]; its
    first C1 patches form the global area, then runs of C the local areas."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, 24]))
    labels = np.empty((K, P), dtype=np.int64)
    for k in range(K):
        labels[k, rng.permutation(P)] = _path_labels(P, C1, C)
    return labels


def _path_labels(P: int, C1: int, C: int) -> np.ndarray:
    """The labels along an order of the patches: C1 of the global area (0), then runs of C."""
    return np.concatenate([np.zeros(C1, dtype=np.int64), 1 + np.arange(P - C1) // C])


@dataclass(frozen=True)
class AreaStructure:
    """The areas of every cluster: ``labels[k, p]`` is the area of patch p in cluster k (0 is
    the global area), ``n_areas[k]`` the number of areas, ``offset[k]`` the index of
    ``v_{k,0}`` among the F features."""

    labels: np.ndarray

    @property
    def K(self) -> int:
        return int(self.labels.shape[0])

    @property
    def P(self) -> int:
        return int(self.labels.shape[1])

    @property
    def n_areas(self) -> np.ndarray:
        return self.labels.max(axis=1) + 1

    @property
    def offset(self) -> np.ndarray:
        return np.concatenate([[0], np.cumsum(self.n_areas)[:-1]]).astype(np.int64)

    @property
    def F(self) -> int:
        return int(self.n_areas.sum())

    def feature_index(self) -> np.ndarray:
        """(K, P): the feature f(k, area of p in cluster k)."""
        return self.offset[:, None] + self.labels

    def atoms(self) -> tuple[np.ndarray, np.ndarray]:
        """The common refinement of all clusters' partitions: (atom of each patch (P,),
        area of each atom in each cluster (K, n_atoms))."""
        uniq, inv = np.unique(self.labels.T, axis=0, return_inverse=True)
        return inv.reshape(-1).astype(np.int64), uniq.T.astype(np.int64)


@dataclass
class Batch:
    """Samples of (image, mask): ``cluster`` (B,), ``z`` (B, Nmax) area coefficients (0 past
    the cluster's areas), ``mask`` (B, P) bool (True = masked), ``weight`` (B,) (probabilities
    for exact sums, 1/B for sample means)."""

    cluster: np.ndarray
    z: np.ndarray
    mask: np.ndarray
    weight: np.ndarray

    def __len__(self) -> int:
        return int(self.cluster.shape[0])


def zlaw_nodes(law: str, L: float, U: float, values, probs, n_nodes: int = 0):
    """(nodes, probabilities) of the coefficient law when it is discrete (``law = "values"``);
    for ``"uniform"`` on [L, U], Gauss–Legendre nodes when ``n_nodes > 0`` (a quadrature,
    not an exact law), otherwise ``ValueError``."""
    if law == "values":
        v = np.asarray(values, dtype=np.float64)
        p = (np.full(len(v), 1.0 / len(v)) if probs is None
             else np.asarray(probs, dtype=np.float64))
        return v, p
    if n_nodes <= 0:
        raise ValueError("train.z_nodes: a uniform law has no finite support; exact sums "
                         "need Gauss–Legendre nodes (train.z_nodes > 0) or z_law = 'values'")
    x, w = np.polynomial.legendre.leggauss(n_nodes)
    return L + (U - L) * (x + 1) / 2, w / 2


def sample_z(rng, n: int, law: str, L: float, U: float, values, probs) -> np.ndarray:
    if law == "uniform":
        return rng.uniform(L, U, size=n)
    v, p = zlaw_nodes(law, L, U, values, probs)
    return rng.choice(v, size=n, p=p)


def sample_masks(rng, B: int, P: int, kind: str, gamma: float, size: int) -> np.ndarray:
    """(B, P) bool masks: i.i.d. Bernoulli(γ) per patch, or uniform subsets of ``size``
    patches (Huang et al. (2025), Def. 2.5; which one the paper uses is UNCERTAIN)."""
    if kind == "bernoulli":
        return rng.random((B, P)) < gamma
    keys = rng.random((B, P))
    idx = np.argpartition(keys, size - 1, axis=1)[:, :size] if size > 0 else np.zeros((B, 0), int)
    mask = np.zeros((B, P), dtype=bool)
    np.put_along_axis(mask, idx, True, axis=1)
    return mask


def sample_batch(rng, structure: AreaStructure, B: int, *, law, L, U, values, probs, mask_kind,
                 gamma, mask_size) -> Batch:
    """B i.i.d. samples: a uniform cluster, i.i.d. area coefficients, an independent mask."""
    K, Nmax = structure.K, int(structure.n_areas.max())
    cluster = rng.integers(0, K, size=B)
    z = sample_z(rng, B * Nmax, law, L, U, values, probs).reshape(B, Nmax)
    z = np.where(np.arange(Nmax)[None, :] < structure.n_areas[cluster][:, None], z, 0.0)
    mask = sample_masks(rng, B, structure.P, mask_kind, gamma, mask_size)
    return Batch(cluster, z, mask, np.full(B, 1.0 / B))


def config_batch(rng, structure: AreaStructure, cfg, B: int) -> Batch:
    """[`sample_batch`][] of the data law and masking of ``cfg`` (an experiment config)."""
    d, m = cfg.data, cfg.model
    return sample_batch(rng, structure, B, law=d.z_law, L=d.L, U=d.U, values=d.z_values,
                        probs=d.z_probs, mask_kind=m.mask, gamma=m.gamma, mask_size=cfg.mask_size)


def index_grid(sizes) -> np.ndarray:
    """Every index vector i with 0 ≤ i[a] < sizes[a], one a row, in row-major order."""
    return np.stack(np.meshgrid(*[np.arange(n) for n in sizes], indexing="ij"),
                    -1).reshape(-1, len(sizes))


def coefficient_vectors(nodes: np.ndarray, probs: np.ndarray, N: int):
    """(every vector of N i.i.d. coefficients of the discrete law (nodes, probs), one a row;
    its probability)."""
    idx = index_grid([len(nodes)] * N)
    return nodes[idx], np.prod(probs[idx], axis=1)


def mask_count_probs(kind: str, P: int, gamma: float, size: int, c: np.ndarray,
                     n_unmasked: np.ndarray) -> np.ndarray:
    """P[the other keys have ``n_unmasked[:, a]`` unmasked among ``c[a]`` per group | a given
    patch is masked], for rows of ``n_unmasked`` (configs, groups); the groups partition the
    other P − 1 patches. Bernoulli: independent binomials; fixed size: multivariate
    hypergeometric (the other ``size − 1`` masked patches uniform among P − 1)."""
    c = np.asarray(c, dtype=np.int64)
    n = np.asarray(n_unmasked, dtype=np.int64)
    logc = (np.vectorize(math.lgamma)(c + 1.0)[None, :] - np.vectorize(math.lgamma)(n + 1.0)
            - np.vectorize(math.lgamma)(c - n + 1.0))
    if kind == "bernoulli":
        if not 0 < gamma < 1:  # γ ∈ {0, 1}: a point mass
            return np.all((n == c) if gamma == 0 else (n == 0), axis=1).astype(np.float64)
        return np.exp((logc + n * np.log1p(-gamma) + (c - n) * np.log(gamma)).sum(axis=1))
    masked = (c[None, :] - n).sum(axis=1)
    lp = logc.sum(axis=1) - (math.lgamma(P) - math.lgamma(size) - math.lgamma(P - size + 1))
    return np.where(masked == size - 1, np.exp(lp), 0.0)
