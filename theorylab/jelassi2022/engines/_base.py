"""The engines of Jelassi et al. (2022): what they share on top of the kernel's engine interface.

[`Engine`][] implements [`theorylab.core.engine.Engine`][] for full-matrix parameters
``{"A", "v"}``: its recorded row is the loss and error of the evaluation and the observables of
[`theorylab.jelassi2022.observables`][] (schema `TRAJECTORY_SCHEMA` of
[`theorylab.jelassi2022.trainer`][]).
"""

from __future__ import annotations

import contextlib
import math
from dataclasses import dataclass, field

import numpy as np

from theorylab.core import engine as _kernel
from theorylab.core.backend import Backend, flush_denormals
from theorylab.core.engine import (
    CPU_CHUNK_BYTES,
    MEMORY_FRACTION,
    auto_chunk_size,
    binomial_se,
    iter_chunks,
    standard_error,
)
from theorylab.core.primitives import default_primitive

from ..config import ExperimentConfig, setting_of
from ..model import PositionalAttentionModel, grad_A_from_dS
from ..observables import fair_error, track
from ..partition import Partition

__all__ = ["Engine", "Evaluation", "ChunkSums", "iter_chunks", "auto_chunk_size", "MEMORY_FRACTION",
           "binomial_se", "standard_error",
           "CPU_CHUNK_BYTES"]


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


class ChunkSums:
    """Accumulates [`ProjectionEval`][theorylab.jelassi2022.model.ProjectionEval] sums over
    chunks."""

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

    def evaluation(self, xp: Backend, n: int | None = None, **fields) -> Evaluation:
        """The [`Evaluation`][] of these sums (as floats), with the standard errors of a mean
        over ``n`` samples when ``n`` is given; ``fields``: its other fields."""
        loss, error = xp.item(self.loss), xp.item(self.error)
        if n is not None:
            fields.update(loss_se=standard_error(xp.item(self.loss_sq), loss, n),
                          error_se=float(binomial_se(error, n)))
        return Evaluation(loss=loss, error=error, tie_mass=xp.item(self.ties), **fields)


class Engine(_kernel.Engine):
    """Base class of this paper's engines. Subclasses set ``name`` and implement ``evaluate``
    and, when their parameters are not ``{"A", "v"}`` arrays on the backend,
    ``initial_params``, ``params_from_arrays``, ``apply`` and ``state``."""

    name: str = "engine"
    #: flush subnormal numbers to zero inside a CPU step (the Monte Carlo and exchangeable
    #: engines use it; tests switch it off to compare)
    flush_denormals: bool = True

    def __init__(
        self,
        cfg: ExperimentConfig,
        xp: Backend,
        partition: Partition,
        wstar: np.ndarray,
    ) -> None:
        self.cfg = cfg
        self.xp = xp
        #: how the empirical engines read X on a CPU (``._reads``; ``$THEORYLAB_PRIMITIVE``)
        self.primitive = default_primitive()
        self.partition = partition
        self.wstar = np.asarray(wstar, dtype=np.float64)
        s = setting_of(cfg)
        self.model = PositionalAttentionModel(s.activation, s.tau, s.kappa)
        self.D = partition.D
        self.diag, self.lr_v, self.lr_A = s.diag, s.lr_v, s.lr_A
        #: the gradient flow's clock: one GD step is a time lr_v (lr_A when v is frozen)
        self.time_step = self.lr_v if self.lr_v > 0 else self.lr_A
        self.tie_tol = cfg.train.tie_tol
        self.chunk = cfg.train.chunk_size

    def flushing(self):
        """The context of a step on a CPU with ``flush_denormals``: subnormal numbers flushed
        to zero ([`flush_denormals`][theorylab.core.backend.flush_denormals]); a no-op
        otherwise."""
        if self.xp.device != "cpu" or not self.flush_denormals:
            return contextlib.nullcontext()
        return flush_denormals()

    def chunk_rows(self, bytes_per_row: int, n: int) -> int:
        """``train.chunk_size``, or with 0 ("auto") the size from [`auto_chunk_size`][] and the
        backend's free memory now (call it after the engine's resident arrays are allocated),
        on a CPU at most [`CPU_CHUNK_BYTES`][] of working set."""
        return _kernel.chunk_rows(self.chunk, self.xp, bytes_per_row, n)

    # -- to implement -----------------------------------------------------------------------------
    def initial_params(self):
        """Full-matrix parameters at [`initial_A`][] and [`initial_v`][], on the backend."""
        return {"A": self.xp.asarray(self.initial_A()), "v": self.xp.asarray(self.initial_v())}

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

    def params_from_arrays(self, arrays: dict[str, np.ndarray]):
        """Full-matrix parameters {"A", "v"} from checkpoint arrays, on the backend."""
        return {"A": self.xp.asarray(arrays["A"]), "v": self.xp.asarray(arrays["v"])}

    # -- what the trainer records ---------------------------------------------------------------
    def watched(self, ev: Evaluation) -> dict[str, object]:
        """The loss checked at every step (the training loss where there is no test loss)."""
        return {"loss": ev.train_loss if math.isnan(ev.loss) else ev.loss}

    def record(self, params, step: int, ev: Evaluation) -> dict[str, object]:
        """One row of ``TRAJECTORY_SCHEMA``: the evaluation, then the observables of (A, v)."""
        A, v = self.state(params)
        return {
            "loss": ev.loss,
            "error": ev.error,
            "tie_mass": ev.tie_mass,
            "error_fair": fair_error(ev.error, ev.tie_mass),
            "loss_se": ev.loss_se,
            "error_se": ev.error_se,
            "train_loss": ev.train_loss,
            **track(A, v, self.wstar, self.partition, self.cfg.temperature,
                    self.cfg.train.pa_margin),
            "engine": self.name,
        }

    def final_arrays(self, params) -> dict[str, np.ndarray]:
        A, v = self.state(params)
        return {"A": A, "v": v, "wstar": self.wstar, "partition_labels": self.partition.labels,
                "engine": np.array(self.name)}

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
