"""Common engine interface: evaluate loss, error and gradients at parameters; apply a GD step."""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from .._backend import Backend
from .._partition import Partition
from ..config import ExperimentConfig
from ..model import PositionalAttentionModel, grad_A_from_dS

__all__ = ["Engine", "Evaluation", "ChunkSums", "iter_chunks", "auto_chunk_size", "MEMORY_FRACTION",
           "CPU_CHUNK_BYTES"]

#: Fraction of the device's free memory that an automatic chunk (``chunk_size = 0``) may use.
MEMORY_FRACTION = 0.5

#: On a CPU an automatic chunk's working set is at most this many bytes (16 MiB: each of its
#: ~10 row-sized arrays ~1.6 MiB, near the caches). Measured with 1 thread (docs/performance.md):
#: a batched step of 4 seeds × 4 learning rates (N = 5000, D = d = 64) took 528 ms in one chunk
#: of 41 MB arrays and 269 ms in chunks of 2 MB; one run at D = 256, N = 4000: 110 vs 89 ms.
CPU_CHUNK_BYTES = 1 << 24


@dataclass
class Evaluation:
    """Result of one engine evaluation. ``grads`` is engine-specific (None when not asked)."""

    loss: float
    error: float
    tie_mass: float = math.nan
    loss_se: float = math.nan
    error_se: float = math.nan
    train_loss: float = math.nan
    grads: object = None
    grad_values: dict[str, object] = field(default_factory=dict)


def iter_chunks(n: int, size: int):
    for start in range(0, n, size):
        yield slice(start, min(n, start + size))


def auto_chunk_size(free_bytes: int, bytes_per_row: int, n: int, fraction: float = MEMORY_FRACTION):
    """Rows per chunk so that a chunk's working set uses ``fraction`` of ``free_bytes``.

    At least 1 row, at most ``n`` (a single chunk when everything fits)."""
    rows = int(fraction * free_bytes) // max(int(bytes_per_row), 1)
    return int(min(max(rows, 1), max(n, 1)))


class ChunkSums:
    """Accumulates [`ProjectionEval`][theorylab.model.ProjectionEval] sums over chunks."""

    def __init__(self) -> None:
        self.loss = 0.0
        self.loss_sq = 0.0
        self.error = 0.0
        self.ties = 0.0
        self.dS = None

    def add(self, ev) -> None:
        self.loss = self.loss + ev.loss
        self.loss_sq = self.loss_sq + ev.loss_sq
        self.error = self.error + ev.error
        self.ties = self.ties + ev.ties
        if ev.dS is not None:
            self.dS = ev.dS if self.dS is None else self.dS + ev.dS


class Engine:
    """Base class. Subclasses set ``name`` and implement ``initial_params``, ``evaluate``,
    ``apply`` and ``state``; ``params`` are opaque to the trainer except through these and
    ``params_to_arrays`` / ``params_from_arrays`` (used for checkpoints)."""

    name: str = "engine"

    def __init__(
        self,
        cfg: ExperimentConfig,
        xp: Backend,
        partition: Partition,
        wstar: np.ndarray,
    ) -> None:
        self.cfg = cfg
        self.xp = xp
        self.partition = partition
        self.wstar = np.asarray(wstar, dtype=np.float64)
        self.model = PositionalAttentionModel.from_config(cfg)
        self.D = partition.D
        self.diag = cfg.diag
        self.lr_v = cfg.train.lr_v
        self.lr_A = cfg.train.lr_A_value
        self.tie_tol = cfg.train.tie_tol
        self.chunk = cfg.train.chunk_size

    def chunk_rows(self, bytes_per_row: int, n: int) -> int:
        """``train.chunk_size``, or with 0 ("auto") the size from [`auto_chunk_size`][] and the
        backend's free memory now (call it after the engine's resident arrays are allocated),
        on a CPU at most [`CPU_CHUNK_BYTES`][] of working set."""
        if self.chunk > 0:
            return self.chunk
        rows = auto_chunk_size(self.xp.free_bytes(), bytes_per_row, n)
        if self.xp.device == "cpu":
            rows = min(rows, max(1, CPU_CHUNK_BYTES // max(int(bytes_per_row), 1)))
        return rows

    # -- to implement -----------------------------------------------------------------------------
    def initial_params(self):  # pragma: no cover - interface
        raise NotImplementedError

    def evaluate(self, params, step: int, *, need_grad: bool, record: bool) -> Evaluation:
        raise NotImplementedError  # pragma: no cover - interface

    def apply(self, params, grads):
        """One GD step on full-matrix parameters {"A", "v"} (the diagonal gradient is 0)."""
        return {
            "A": params["A"] - self.lr_A * grads["A"],
            "v": params["v"] - self.lr_v * grads["v"],
        }

    def state(self, params) -> tuple[np.ndarray, np.ndarray]:
        """(A, v) as float64 numpy arrays."""
        xp = self.xp
        return (
            xp.to_numpy(params["A"]).astype(np.float64),
            xp.to_numpy(params["v"]).astype(np.float64),
        )

    def params_to_arrays(self, params) -> dict[str, np.ndarray]:
        A, v = self.state(params)
        return {"A": A, "v": v}

    def params_from_arrays(self, arrays: dict[str, np.ndarray]):  # pragma: no cover - interface
        raise NotImplementedError

    # -- helpers shared by the full-matrix engines -----------------------------------------------
    def initial_A(self) -> np.ndarray:
        """A⁰: diagonal ``diag`` (frozen), off-diagonal ``offdiag0`` (+ optional Gaussian noise)."""
        t = self.cfg.train
        A = np.full((self.D, self.D), t.offdiag0)
        if t.offdiag0_std > 0:
            rng = np.random.default_rng(np.random.SeedSequence([t.seed, 11]))
            A = A + t.offdiag0_std * rng.standard_normal((self.D, self.D))
        np.fill_diagonal(A, self.diag)
        return A

    def initial_v(self) -> np.ndarray:
        t = self.cfg.train
        if t.init_v == "aligned":
            return t.alpha0 * self.wstar
        rng = np.random.default_rng(np.random.SeedSequence([t.seed, 12]))
        return t.v0_scale * rng.standard_normal(self.wstar.shape[0])

    def attention(self, A):
        return self.xp.row_softmax(A / self.model.temperature)

    def grad_A(self, S, dS):
        return grad_A_from_dS(S, dS, self.model.temperature, self.xp)


def binomial_se(p, n: int):
    """Standard error of a frequency p over n draws (numpy arrays allowed)."""
    return np.sqrt(np.maximum(p * (1 - p), 0.0) / max(n - 1, 1))


def standard_error(mean_sq: float, mean: float, n: int) -> float:
    """Standard error of a sample mean from its first two moments (n samples)."""
    var = max(mean_sq - mean * mean, 0.0) * n / max(n - 1, 1)
    return math.sqrt(var / n)
