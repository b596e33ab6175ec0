"""Hypothesis strategies for the property tests of Huang et al. (2025) (after
[`theorylab.jelassi2022.testing`][]).

Everything is tiny so that the brute-force population sum (every cluster × coefficient vector
× mask; ``2^P`` Bernoulli masks) stays a few thousand rows: P ≤ 6, K ≤ 2, at most three
coefficient values, entries of Φ and Υ of order one (softmax well-conditioned).

**Strategies:**

- [`configs`][]: valid tiny MAE configurations (sizes, K, masks, ``mask_keys``, ``loss_norm``
  and a discrete law of z), engine ``population-brute``.
- [`symmetric_states`][]: random Φ and a Υ constant on each atom of every row (the exact
  engine's exchangeability; the diagonal is free).
- [`states`][]: arbitrary Φ and Υ.
- [`atom_permutations`][]: permutations of the patches that map every area of every cluster to
  itself (permutations within the atoms of the common refinement).
- [`orthogonal_matrices`][]: a random orthogonal matrix (QR of a Gaussian matrix).
"""

from __future__ import annotations

import numpy as np
from hypothesis import strategies as st

from .config import ExperimentConfig, config_from_dict
from .data import AreaStructure
from .engines import Params

__all__ = [
    "atom_permutations",
    "configs",
    "orthogonal_matrices",
    "seeds",
    "states",
    "symmetric_states",
]

seeds = st.integers(min_value=0, max_value=2**32 - 1)


def _shapes(min_P: int, max_P: int):
    """(P, C1, C) with C ≤ C1 < P and C | P − C1 (at least one local area)."""
    return [(P, C1, C) for P in range(min_P, max_P + 1) for C1 in range(1, P)
            for C in range(1, C1 + 1) if (P - C1) % C == 0]


@st.composite
def configs(draw, min_P: int = 3, max_P: int = 6, K=None, mask_keys=None,
            engine: str = "population-brute") -> ExperimentConfig:
    """A tiny valid MAE configuration with a discrete coefficient law."""
    P, C1, C = draw(st.sampled_from(_shapes(min_P, max_P)))
    K = draw(st.integers(1, 2)) if K is None else K
    n_vals = draw(st.integers(1, 3 if P <= 5 else 2))
    vals = draw(st.lists(st.sampled_from([0.5, 0.75, 1.0, 1.25, 1.5]), min_size=n_vals,
                         max_size=n_vals, unique=True))
    raw = draw(st.lists(st.integers(1, 4), min_size=n_vals, max_size=n_vals))
    probs = [r / sum(raw) for r in raw]
    mask = draw(st.sampled_from(["bernoulli", "fixed"]))
    model = {"mask": mask, "gamma": draw(st.sampled_from([0.25, 0.5, 0.75])),
             "mask_keys": draw(st.booleans()) if mask_keys is None else mask_keys,
             "loss_norm": draw(st.sampled_from(["P", "mask", "none"]))}
    if mask == "fixed":
        # every patch masked with masked keys left out leaves a query no key (refused)
        model["mask_size"] = draw(st.integers(1, P if model["mask_keys"] else P - 1))
    return config_from_dict({
        "data": {"P": P, "K": K, "C1": C1, "C": C, "z_law": "values", "z_values": vals,
                 "z_probs": probs, "L": 0.5, "U": 1.5, "seed": draw(st.integers(0, 1000))},
        "model": model,
        "train": {"engine": engine},
    })


@st.composite
def states(draw, structure: AreaStructure, scale: float = 1.5) -> Params:
    """Arbitrary Φ (P, F) and Υ (P, P), i.i.d. N(0, scale²) from a drawn seed."""
    rng = np.random.default_rng(draw(seeds))
    P, F = structure.P, structure.F
    return Params(scale * rng.standard_normal((P, F)), scale * rng.standard_normal((P, P)))


@st.composite
def symmetric_states(draw, structure: AreaStructure, scale: float = 1.5) -> Params:
    """Random Φ; random Υ constant on each atom of every row, with a free diagonal."""
    rng = np.random.default_rng(draw(seeds))
    P = structure.P
    atom, atom_area = structure.atoms()
    Ups = scale * rng.standard_normal((P, atom_area.shape[1]))[:, atom]
    Ups[np.arange(P), np.arange(P)] = scale * rng.standard_normal(P)
    return Params(scale * rng.standard_normal((P, structure.F)), Ups)


@st.composite
def atom_permutations(draw, structure: AreaStructure) -> np.ndarray:
    """π (P,) with ``labels[k, π[p]] == labels[k, p]`` for every cluster k: a uniform
    permutation inside each atom of the common refinement of the clusters' partitions."""
    rng = np.random.default_rng(draw(seeds))
    atom, _ = structure.atoms()
    pi = np.arange(structure.P)
    for a in np.unique(atom):
        members = np.flatnonzero(atom == a)
        pi[members] = rng.permutation(members)
    return pi


@st.composite
def orthogonal_matrices(draw, d: int) -> np.ndarray:
    """A random d×d orthogonal matrix (QR of a Gaussian matrix, signs fixed)."""
    rng = np.random.default_rng(draw(seeds))
    q, r = np.linalg.qr(rng.standard_normal((d, d)))
    return q * np.sign(np.diag(r))[None, :]
