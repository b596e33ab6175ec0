"""The measured choice among implementations (the package's one autotuner), the contractions of
a (n, D, d) array with a vector on a CPU it chooses among, and flush-to-zero of subnormals.

**Measured contractions.** U_nj = Σ_k X_njk v_k (``project``) and Σ_nj dU_nj X_njk
(``pullback``), the reads of a data array X in a step of an engine (a paper's engines call
[`run_primitive`][]), have three implementations on a CPU (the candidates, [`PRIMITIVES`][]):

- ``einsum``: ``np.einsum("njk,k->nj")`` / ``np.einsum("nj,njk->k")`` (the plain reference);
- ``blas``: numpy's matrix–vector product on X viewed as (n·D, d) (OpenBLAS/MKL gemv);
- ``torch``: torch's CPU matrix–vector product on the same memory (zero-copy ``from_numpy``).

No candidate is fastest on every CPU: einsum was 2.3–2.8× faster than gemv on an AMD EPYC, and
1.4–1.7× slower than both gemv's on an Intel Xeon (docs/performance.md). With ``"auto"`` (the
default) the first call for a *shape class* — the operation, D, d, the dtype and the number of
rows rounded to a power of two — times the candidates on the call's own arguments, interleaved
(one untimed call each, then three rounds of one call per candidate), and keeps the candidate of
the smallest median for the rest of the process ([`PrimitiveChoice`][], a [`MeasuredChoice`][]).
``einsum``, ``blas`` or ``torch`` pin one, through an engine's ``primitive`` or the
environment variable ``THEORYLAB_PRIMITIVE``. The candidates sum in different orders, so
results differ by rounding only (≈ 1e-15 relative per product; trajectories ≤ 1e-13, tested
with the engines that use them): pin a candidate where runs in different processes must agree
to the bit. On CUDA, and for tensors that need gradients, engines use ``@``.

**Subnormals.** [`flush_denormals`][] turns on flush-to-zero and denormals-are-zero for the
calling thread while a block runs (the exchangeable and Monte Carlo steps): sigmoid factors of
large margins times small weights fall below 2.2e-308, where the CPU takes a slow microcode path.
Flushing changes a sum only by such tiny terms (below 1e-300 absolute; tested to 1e-15 relative).
"""

from __future__ import annotations

import contextlib
import functools
import os
import statistics
import time
from collections.abc import Callable, Iterator, Mapping

import numpy as np

__all__ = ["PRIMITIVES", "PRIMITIVE_ENV", "MeasuredChoice", "PrimitiveChoice", "check_primitive",
           "default_primitive", "env_choice", "flush_denormals", "primitive_choices",
           "run_primitive"]

#: implementations of the reads of X on a CPU; "auto" measures them (see the module)
PRIMITIVES = ("auto", "einsum", "blas", "torch")
PRIMITIVE_ENV = "THEORYLAB_PRIMITIVE"


def env_choice(env: str, choices: tuple[str, ...]) -> str:
    """``$env`` when set (one of `choices`; ``ValueError`` naming it otherwise), else
    ``"auto"``: how a user pins a measured choice."""
    raw = os.environ.get(env, "").strip() or "auto"
    if raw not in choices:
        raise ValueError(f"{env}: must be one of {choices} (got {raw!r})")
    return raw


def default_primitive() -> str:
    """``$THEORYLAB_PRIMITIVE`` when set (one of [`PRIMITIVES`][]), else ``"auto"``."""
    return env_choice(PRIMITIVE_ENV, PRIMITIVES)


def _torch_view(a: np.ndarray):
    import torch

    return torch.from_numpy(a)


def _rows(X: np.ndarray) -> np.ndarray:
    return X.reshape(-1, X.shape[-1])


def _project_einsum(X, v):
    return np.einsum("njk,k->nj", X, v)


def _project_blas(X, v):
    return (_rows(X) @ v).reshape(X.shape[:-1])


def _project_torch(X, v):
    return (_torch_view(_rows(X)) @ _torch_view(v)).numpy().reshape(X.shape[:-1])


def _pullback_einsum(dU, X):
    return np.asarray(np.einsum("nj,njk->k", dU, X))


def _pullback_blas(dU, X):
    return dU.reshape(-1) @ _rows(X)


def _pullback_torch(dU, X):
    return (_torch_view(np.ascontiguousarray(dU).reshape(-1)) @ _torch_view(_rows(X))).numpy()


_IMPLEMENTATIONS = {
    "project": {"einsum": _project_einsum, "blas": _project_blas, "torch": _project_torch},
    "pullback": {"einsum": _pullback_einsum, "blas": _pullback_blas, "torch": _pullback_torch},
}


class MeasuredChoice:
    """The measured choice among implementations of one operation, per key (a shape class),
    kept for the process: the first call for a new key runs every candidate once, untimed,
    then [`rounds`][] interleaved rounds of one call each, and keeps the candidate of the
    smallest median time. ``cache``: key → the chosen name; ``timings``: key → name → median
    seconds; ``clear()`` forgets both. The one autotuner of the package: the reads of X here
    ([`PrimitiveChoice`][]) and any engine's choice between its passes use it."""

    rounds = 3

    def __init__(self) -> None:
        self.cache: dict[tuple, str] = {}
        self.timings: dict[tuple, dict[str, float]] = {}

    def choose(self, key: tuple, candidates: Mapping[str, Callable[[], object]]) -> str:
        """The name of the candidate to use for ``key``; ``candidates`` maps names to
        zero-argument callables running that implementation on this call's data (timed when
        ``key`` is new)."""
        name = self.cache.get(key)
        if name is not None:
            return name
        times: dict[str, list[float]] = {k: [] for k in candidates}
        for f in candidates.values():  # warm-up (compiles or loads a kernel), untimed
            f()
        for _ in range(self.rounds):  # interleaved rounds
            for k, f in candidates.items():
                t0 = time.perf_counter()
                f()
                times[k].append(time.perf_counter() - t0)
        med = {k: statistics.median(t) for k, t in times.items()}
        self.cache[key] = name = min(med, key=med.get)
        self.timings[key] = med
        return name

    def clear(self) -> None:
        self.cache.clear()
        self.timings.clear()


class PrimitiveChoice(MeasuredChoice):
    """The measured choice of implementation of the reads of X per shape class (see the
    module for the rule)."""

    @staticmethod
    def shape_class(op: str, X: np.ndarray) -> tuple:
        n = max(int(X.shape[0]), 1)
        return (op, int(X.shape[1]), int(X.shape[2]), X.dtype.name, 1 << (n.bit_length() - 1))

    def run(self, op: str, X: np.ndarray, a, b):
        """``op`` on (a, b) with the implementation chosen for X's shape class (measured now
        on this call's arguments when the class is new)."""
        impls = _IMPLEMENTATIONS[op]
        if not X.flags.writeable:  # torch.from_numpy needs writeable memory
            return impls["blas"](a, b)
        name = self.choose(self.shape_class(op, X),
                           {k: functools.partial(f, a, b) for k, f in impls.items()})
        return impls[name](a, b)


_CHOICE = PrimitiveChoice()


def primitive_choices() -> PrimitiveChoice:
    """The process-wide [`PrimitiveChoice`][] (its ``cache`` and ``timings`` say what was
    measured and picked; ``clear()`` forgets it)."""
    return _CHOICE


def run_primitive(primitive: str, op: str, X, a, b):
    if primitive == "auto":
        return _CHOICE.run(op, X, a, b)
    if primitive == "torch" and not X.flags.writeable:
        primitive = "blas"
    return _IMPLEMENTATIONS[op][primitive](a, b)


@contextlib.contextmanager
def flush_denormals() -> Iterator[None]:
    """Within the block the calling thread flushes subnormal results to zero and reads subnormal
    inputs as zero (x86 FTZ/DAZ, ARM FZ, through ``torch.set_flush_denormal``); the mode is off
    again after the block (it is off by default; a no-op where unsupported). It acts on numpy
    and torch alike in this thread; other threads (BLAS pools) keep their mode."""
    import torch

    on = torch.set_flush_denormal(True)
    try:
        yield
    finally:
        if on:
            torch.set_flush_denormal(False)


def check_primitive(primitive: str | None) -> str:
    if primitive is None:
        return default_primitive()
    if primitive not in PRIMITIVES:
        raise ValueError(f"primitive: must be one of {PRIMITIVES} (got {primitive!r})")
    return primitive
