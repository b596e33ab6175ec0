"""The engine interface that the kernel's trainer drives, and helpers shared by engines.

An engine owns one training problem of one paper: it evaluates the loss (and whatever the paper
records) and its gradients at opaque parameters, applies one gradient step, and turns
parameters into named arrays and back (checkpoints). The trainer
([`theorylab.core.trainer.train`][]) never looks inside parameters or evaluations except through
these methods, so a paper adds engines without touching the kernel.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = [
    "CPU_CHUNK_BYTES",
    "MEMORY_FRACTION",
    "Engine",
    "auto_chunk_size",
    "binomial_se",
    "chunk_rows",
    "iter_chunks",
    "standard_error",
]

#: Fraction of the device's free memory that an automatic chunk (``chunk_size = 0``) may use.
MEMORY_FRACTION = 0.5

#: On a CPU an automatic chunk's working set is at most this many bytes (16 MiB: each of its
#: ~10 row-sized arrays ~1.6 MiB, near the caches). Measured with 1 thread (docs/performance.md):
#: a batched step of 4 seeds × 4 learning rates (N = 5000, D = d = 64) took 528 ms in one chunk
#: of 41 MB arrays and 269 ms in chunks of 2 MB; one run at D = 256, N = 4000: 110 vs 89 ms.
CPU_CHUNK_BYTES = 1 << 24


class Engine:
    """What the trainer needs of an engine. Subclasses set ``name`` and implement the methods.

    - ``initial_params()``: the parameters at step 0 (any object).
    - ``evaluate(params, step, need_grad=..., record=...)``: an evaluation object with a
      ``grads`` attribute (``None`` when ``need_grad`` is false); ``record`` says that this step
      is recorded, so quantities needed only for the record may be computed.
    - ``apply(params, grads)``: the parameters after one gradient-descent step.
    - ``watched(ev)``: ``{name: value}`` checked to be finite at every step (a run whose value
      is not finite stops with [`DivergenceError`][theorylab.core.trainer.DivergenceError]).
    - ``record(params, step, ev)``: the recorded row's quantities (a dict; the trainer adds
      ``step``).
    - ``params_to_arrays(params)`` / ``params_from_arrays(arrays)``: named float arrays for the
      checkpoint and back; the arrays are also checked to be finite at each recorded step.
    - ``final_arrays(params)``: what ``final_state.npz`` holds (default: the parameter arrays).
    - ``flow_arrays(params)`` / ``flow_params(arrays)``: the coordinates the gradient flow
      integrates (default: the checkpoint's arrays). An engine whose parameters are a structured
      form of its arrays (a matrix fixed by a few numbers) gives those numbers: an adaptive
      solver keeps a structure only to its tolerance.
    - ``time_step``: the time one gradient-descent step advances, η (an attribute): the clock
      of the gradient flow ([`theorylab.core.flow`][]), which records step s at time η·s;
      ``None``: the engine has no flow.
    """

    name: str = "engine"
    time_step: float | None = None

    def initial_params(self):  # pragma: no cover - interface
        raise NotImplementedError

    def evaluate(self, params, step: int, *, need_grad: bool, record: bool):
        raise NotImplementedError  # pragma: no cover - interface

    def apply(self, params, grads):  # pragma: no cover - interface
        raise NotImplementedError

    def watched(self, ev) -> dict[str, object]:
        return {"loss": ev.loss}

    def record(self, params, step: int, ev) -> dict[str, object]:  # pragma: no cover - interface
        raise NotImplementedError

    def params_to_arrays(self, params) -> dict[str, np.ndarray]:  # pragma: no cover - interface
        raise NotImplementedError

    def params_from_arrays(self, arrays: dict[str, np.ndarray]):  # pragma: no cover - interface
        raise NotImplementedError

    def final_arrays(self, params) -> dict[str, np.ndarray]:
        return self.params_to_arrays(params)

    def flow_arrays(self, params) -> dict[str, np.ndarray]:
        return self.params_to_arrays(params)

    def flow_params(self, arrays: dict[str, np.ndarray]):
        return self.params_from_arrays(arrays)


def iter_chunks(n: int, size: int):
    """Slices ``[0, size)``, ``[size, 2 size)``, ... covering ``range(n)``."""
    for start in range(0, n, size):
        yield slice(start, min(n, start + size))


def auto_chunk_size(free_bytes: int, bytes_per_row: int, n: int, fraction: float = MEMORY_FRACTION):
    """Rows per chunk so that a chunk's working set uses ``fraction`` of ``free_bytes``.

    At least 1 row, at most ``n`` (a single chunk when everything fits)."""
    rows = int(fraction * free_bytes) // max(int(bytes_per_row), 1)
    return int(min(max(rows, 1), max(n, 1)))


def chunk_rows(chunk_size: int, xp, bytes_per_row: int, n: int) -> int:
    """``chunk_size`` when positive; with 0 ("auto") the size from [`auto_chunk_size`][] and the
    backend ``xp``'s free memory now (call it after the engine's resident arrays are allocated),
    on a CPU at most [`CPU_CHUNK_BYTES`][] of working set."""
    if chunk_size > 0:
        return chunk_size
    rows = auto_chunk_size(xp.free_bytes(), bytes_per_row, n)
    if xp.device == "cpu":
        rows = min(rows, max(1, CPU_CHUNK_BYTES // max(int(bytes_per_row), 1)))
    return rows


def binomial_se(p, n: int):
    """Standard error of a frequency p over n draws (numpy arrays allowed)."""
    return np.sqrt(np.maximum(p * (1 - p), 0.0) / max(n - 1, 1))


def standard_error(mean_sq: float, mean: float, n: int) -> float:
    """Standard error of a sample mean from its first two moments (n samples)."""
    var = max(mean_sq - mean * mean, 0.0) * n / max(n - 1, 1)
    return math.sqrt(var / n)
