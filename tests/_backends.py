"""The array backends under test and the tolerance of a comparison between two results, per
dtype: one switch and one table for the engine tests of every paper.

**Backends.** [`BACKENDS`][] are the ``(backend, device)`` pairs the engine tests run on:
numpy (the reference) and torch on the CPU, torch on CUDA (marked ``gpu``: skipped where CUDA
is absent, conftest.py). [`CPU_BACKENDS`][] are their names on the CPU. The environment
variable ``THEORYLAB_TEST_BACKENDS`` (comma-separated ids: ``numpy``, ``torch-cpu``, ``cuda``)
restricts both, e.g. ``THEORYLAB_TEST_BACKENDS=torch-cpu`` runs the engine tests of the torch
backend alone; a comparison against numpy keeps numpy as its reference.

**Tolerances** ([`TOL`][]: dtype → ``(rtol, atol)``, a pass being
``|got − want| ≤ atol + rtol·|want|``):

- ``float64``: both sides sum the same float64 terms in other orders (vectorised over queries,
  chunked, another BLAS or a GPU's reduction order, a written-out backward pass instead of
  autograd, a few GD steps on top), which moves results by a few units of 1e-16 relative
  (measured: ≤ 2.7e-16 on the second paper's engine reference cases, ≤ 1.1e-14 absolute on
  losses up to 18.8, ~1e-15 after five GD steps); 1e-12 leaves two to three orders of
  magnitude for other machines, and a wrong term, weight or index moves results by 1e-3 or
  more.
- ``float32``: eps = 1.2e-7, and sums of ~N·D terms amplify it; 1e-4 relative (1e-5 absolute
  near zero) bounds short runs and single evaluations, and is still well below the 1e-3 of a
  wrong term.
"""

from __future__ import annotations

import os
from typing import NamedTuple

import numpy as np
import pytest

__all__ = ["BACKENDS", "CPU_BACKENDS", "TOL", "assert_close"]


class Tolerance(NamedTuple):
    rtol: float
    atol: float


#: dtype → the tolerance of a comparison (module docstring).
TOL = {"float64": Tolerance(1e-12, 1e-12), "float32": Tolerance(1e-4, 1e-5)}

_ALL = {"numpy": ("numpy", "cpu"), "torch-cpu": ("torch", "cpu"), "cuda": ("torch", "cuda")}
_CHOSEN = [s.strip() for s in os.environ.get("THEORYLAB_TEST_BACKENDS", "").split(",")
           if s.strip()] or list(_ALL)
if set(_CHOSEN) - set(_ALL):
    raise ValueError(f"THEORYLAB_TEST_BACKENDS: ids are {list(_ALL)} (got {_CHOSEN})")

#: ``(backend, device)`` under test, as pytest parameters (ids ``numpy``, ``torch-cpu``, ``cuda``).
BACKENDS = [pytest.param(*_ALL[k], id=k, marks=pytest.mark.gpu if k == "cuda" else ())
            for k in _ALL if k in _CHOSEN]
#: The backends under test on the CPU, by name.
CPU_BACKENDS = [_ALL[k][0] for k in ("numpy", "torch-cpu") if k in _CHOSEN]


def assert_close(got, want, dtype: str = "float64", err_msg: str = "") -> None:
    """``got`` equals ``want`` within [`TOL`][]``[dtype]`` elementwise (NaN where both are)."""
    rtol, atol = TOL[dtype]
    np.testing.assert_allclose(np.asarray(got, dtype=float), np.asarray(want, dtype=float),
                               rtol=rtol, atol=atol, equal_nan=True, err_msg=err_msg)
