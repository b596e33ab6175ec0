"""Full-batch gradient descent on the empirical risk, problem (E) (realistic problem).

Jelassi et al. (2022), problem (E) (FOUND): min_{A,v} (1/N) Σ_n log(1 + exp(−y_n F(X_n))).
All D(D−1) off-diagonal entries of A and v ∈ ℝ^d are trained. The plain step reads X twice:
U = X·v (O(N·D·d)), then ∂L/∂v = Σ_nj ∂L/∂U_nj X_nj (O(N·D·d)); the attention part is O(N·D²).
On a CPU in float64 the training pass may instead be the fused one-pass kernel of
[`theorylab.jelassi2022.engines.fused`][] (chosen by measurement, or pinned with
``$THEORYLAB_EMPIRICAL_PASS``; the attribute ``pass_impl`` of an engine overrides both).
The test error is measured on ``n_test`` fresh points at recorded steps.

Memory: X takes N·D·d·itemsize bytes (8 in float64). When it does not fit in the device's free
memory (``train.stream = "auto"``) or when asked (``stream = True``), X stays on the host
(page-locked for CUDA) and each step copies one chunk at a time to the device; the results do
not change. ``chunk_size = 0`` picks the chunk from the free memory ([`auto_chunk_size`][]).
"""

from __future__ import annotations

import math

import numpy as np

from ..data import sample
from ..model import evaluate_projections
from ._base import ChunkSums, Engine, Evaluation, iter_chunks
from ._reads import project, pullback
from .fused import PASSES, FusedPass, default_pass, fused_eligible, pass_choices

__all__ = ["EmpiricalEngine", "draw_split", "place_data", "STREAM_FRACTION"]

#: "auto" streams when the data would take more than this fraction of the free device memory.
STREAM_FRACTION = 0.8


def draw_split(cfg, xp, seed: int, partition, wstar, *, test: bool):
    """The ``train.n_train`` training samples (``test``: the ``train.n_test`` test samples) of
    the run seeded by ``seed``, in the backend's dtype."""
    n, stream = (cfg.train.n_test, 22) if test else (cfg.train.n_train, 21)
    return sample(cfg.data, n, np.random.SeedSequence([seed, stream]), partition=partition,
                  wstar=wstar, dtype=np.dtype(xp.dtype))


def place_data(xp, stream, arrays, n_bytes: int):
    """Put the big data arrays on the device, or keep them on the host to be streamed.

    **Arguments:**

    - `xp`: the backend. `stream`: ``True``, ``False`` or ``"auto"`` (stream when ``n_bytes`` >
      ``STREAM_FRACTION`` × free device memory). `arrays`: numpy arrays. `n_bytes`: their size
      in the compute dtype.

    Returns ``(placed, streamed)``; with streaming, ``placed`` are [`Backend.to_host`][] arrays
    read through ``xp.chunk_to_device(placed, slice)``.
    """
    if stream == "auto":
        stream = xp.name != "numpy" and n_bytes > STREAM_FRACTION * xp.free_bytes()
    if stream:
        return [xp.to_host(np.asarray(a, dtype=xp.dtype)) for a in arrays], True
    return [xp.asarray(a) for a in arrays], False


class EmpiricalEngine(Engine):
    """GD on (E). ``params`` = {"A": (D, D) array, "v": (d,) array} on the backend."""

    name = "empirical"

    def __init__(self, cfg, xp, partition, wstar, train=None, test=None) -> None:
        super().__init__(cfg, xp, partition, wstar)
        t = cfg.train
        if train is None:
            train = draw_split(cfg, xp, t.seed, partition, wstar, test=False)
        if test is None:
            test = draw_split(cfg, xp, t.seed, partition, wstar, test=True)
        self.train = train
        self.test = test
        self.N, self.Nt = train.X.shape[0], test.X.shape[0]
        self.d = train.X.shape[2]
        item = xp.itemsize()
        n_bytes = (self.N + self.Nt) * self.D * self.d * item
        (self.X, self.Xt), self.streamed = place_data(xp, t.stream, (train.X, test.X), n_bytes)
        self.y, self.yt = xp.asarray(train.y), xp.asarray(test.y)
        # working set of one sample in a step: ~10 length-D arrays (+ its copy of X if streamed)
        row = item * (10 * self.D + (self.D * self.d if self.streamed else 0))
        self.chunk = self.chunk_rows(row, max(self.N, self.Nt))
        #: "auto", "fused" or "two-pass" (see ``fused``): how the training pass reads X
        self.pass_impl = default_pass()
        self._fused = None  # the prepared FusedPass, made on first use

    def _rows(self, X, sl):
        return self.xp.chunk_to_device(X, sl) if self.streamed else X[sl]

    def _pass(self, X, y, n, params, S, need_grad):
        if need_grad and X is self.X and self._use_fused(params, S):
            return self._fused_pass(params, S)
        return self._two_pass(X, y, n, params, S, need_grad)

    def _use_fused(self, params, S) -> bool:
        """Whether this training pass runs fused (``pass_impl``; "auto" measures once per
        shape class, see ``fused.PassChoice``)."""
        if self.pass_impl not in PASSES:
            raise ValueError(f"pass_impl: must be one of {PASSES} (got {self.pass_impl!r})")
        if self.pass_impl == "two-pass" or not fused_eligible(self.xp, self.X, self.streamed):
            return False
        if self.pass_impl == "fused":
            return True
        candidates = {
            "fused": lambda: self._fused_pass(params, S),
            "two-pass": lambda: self._two_pass(self.X, self.y, self.N, params, S, True),
        }
        choice = pass_choices()
        return choice.choose(choice.shape_class(self.xp.to_numpy(self.X)), candidates) == "fused"

    def _fused_pass(self, params, S):
        xp = self.xp
        if self._fused is None:
            self._fused = FusedPass(xp.to_numpy(self.X), xp.to_numpy(self.y), self.model,
                                    self.tie_tol, 1.0 / self.N)
        (loss, loss_sq, error, ties), dv, dS = self._fused(xp.to_numpy(params["v"]),
                                                           xp.to_numpy(S))
        sums = ChunkSums()
        sums.loss, sums.loss_sq, sums.error, sums.ties = loss, loss_sq, error, ties
        sums.dS = xp.asarray(dS)
        return sums, xp.asarray(dv)

    def _two_pass(self, X, y, n, params, S, need_grad):
        xp = self.xp
        sums = ChunkSums()
        dv = xp.zeros(self.d) if need_grad else None
        w = 1.0 / n
        for sl in iter_chunks(n, self.chunk):
            Xc = self._rows(X, sl)
            U = project(xp, Xc, params["v"], self.primitive)
            ev = evaluate_projections(
                U, y[sl], w, S, self.model, xp, need_grad=need_grad, tie_tol=self.tie_tol
            )
            sums.add(ev)
            if need_grad:
                dv = dv + pullback(xp, ev.dU, Xc, self.primitive)
        return sums, dv

    def evaluate(self, params, step, *, need_grad, record):
        xp = self.xp
        S = self.attention(params["A"])
        tr, dv = self._pass(self.X, self.y, self.N, params, S, need_grad)
        train_loss = xp.item(tr.loss)
        grads = {"A": self.grad_A(S, tr.dS), "v": dv} if need_grad else None
        if not record:  # the test set is read at recorded steps only
            return Evaluation(loss=math.nan, error=math.nan, train_loss=train_loss, grads=grads)
        te, _ = self._pass(self.Xt, self.yt, self.Nt, params, S, False)
        return te.evaluation(xp, n=self.Nt, train_loss=train_loss, grads=grads)
