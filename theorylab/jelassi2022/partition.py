"""Partitions of the D patches into L sets S_1, ..., S_L of equal size C.

Jelassi et al. (2022), Definition 2.1 (FOUND): ``[D] = S_1 ∪ ... ∪ S_L`` with disjoint sets of
size C,
so ``D = L·C``.  Patches are 0-indexed here (the paper is 1-indexed).
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

__all__ = ["Partition"]


@dataclass(frozen=True)
class Partition:
    """A partition of ``range(D)`` into ``L`` sets of equal size ``C``.

    **Arguments:**

    - `sets`: the sets ``S_l`` as tuples of patch indices (0-based). Validated: every index in
      ``0..D-1`` appears exactly once and all sets have the same size.

    Build one with [`Partition.grid`][], [`Partition.random`][] or from explicit sets.
    """

    sets: tuple[tuple[int, ...], ...]
    labels: np.ndarray = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        sets = _as_sets(self.sets, "partition")
        object.__setattr__(self, "sets", sets)
        D = sum(len(s) for s in sets)
        labels = np.full(D, -1, dtype=np.int64)
        for ell, s in enumerate(sets):
            labels[list(s)] = ell
        labels.setflags(write=False)
        object.__setattr__(self, "labels", labels)

    # -- constructors -------------------------------------------------------------------------
    @classmethod
    def grid(cls, D: int, C: int) -> Partition:
        """Square blocks of ``C`` patches on a ``√D × √D`` grid, row-major patch order.

        Jelassi et al. (2022), Figure 1b-(1) and Figure 3 (spatially localized sets). Needs D and
        C to be perfect squares with ``√C`` dividing ``√D``.
        """
        side, b = math.isqrt(D), math.isqrt(C)
        if side * side != D:
            raise ValueError(f"data.D: partition='grid' needs a perfect square D (got D={D})")
        if b * b != C or side % b != 0:
            raise ValueError(
                f"data.C: partition='grid' needs C = b² with b dividing √D={side} (got C={C})"
            )
        corners = [(bi * b, bj * b) for bi in range(side // b) for bj in range(side // b)]
        return cls(tuple(tuple((i + r) * side + (j + s) for r in range(b) for s in range(b))
                         for i, j in corners))

    @classmethod
    def random(cls, D: int, C: int, seed: int) -> Partition:
        """A uniformly random partition into sets of size ``C`` (seeded), each set sorted."""
        if C <= 0 or D % C != 0:
            raise ValueError(f"data.C: must divide D={D} (got C={C})")
        perm = np.random.default_rng(seed).permutation(D)
        sets = sorted(tuple(sorted(int(i) for i in perm[k : k + C])) for k in range(0, D, C))
        return cls(tuple(sets))

    # -- derived quantities -------------------------------------------------------------------
    @property
    def D(self) -> int:
        return int(self.labels.shape[0])

    @property
    def L(self) -> int:
        return len(self.sets)

    @property
    def C(self) -> int:
        return len(self.sets[0])

    def same_set_mask(self) -> np.ndarray:
        """Boolean ``D × D`` mask of pairs (i, j) in the same set (diagonal included)."""
        return self.labels[:, None] == self.labels[None, :]

    def permuted(self, perm: Sequence[int]) -> Partition:
        """Image of the partition under the relabelling ``i ↦ perm[i]``."""
        perm = np.asarray(perm)
        return Partition(tuple(tuple(sorted(int(perm[i]) for i in s)) for s in self.sets))

    def to_list(self) -> list[list[int]]:
        return [list(s) for s in self.sets]


def _as_sets(sets, name: str) -> tuple[tuple[int, ...], ...]:
    """Validate an explicit list of sets; raise ``ValueError`` naming ``name``."""
    try:
        if isinstance(sets, (str, bytes)) or any(isinstance(s, (str, bytes)) for s in sets):
            raise TypeError
        if any(isinstance(i, bool) or not isinstance(i, numbers.Integral) for s in sets for i in s):
            raise TypeError
        out = tuple(tuple(int(i) for i in s) for s in sets)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: must be a list of lists of integers (got {sets!r})") from None
    if not out or any(len(s) == 0 for s in out):
        raise ValueError(f"{name}: must be a non-empty list of non-empty sets (got {sets!r})")
    sizes = {len(s) for s in out}
    if len(sizes) != 1:
        raise ValueError(f"{name}: all sets must have the same size C (got sizes {sorted(sizes)})")
    flat = [i for s in out for i in s]
    D = len(flat)
    if sorted(flat) != list(range(D)):
        raise ValueError(
            f"{name}: not a partition of 0..{D - 1}: every patch index must appear exactly once "
            f"(got {sets!r})"
        )
    return out
