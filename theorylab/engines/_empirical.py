"""Full-batch gradient descent on the empirical risk, problem (E) (realistic problem).

Jelassi et al. (2022), problem (E) (FOUND): min_{A,v} (1/N) Σ_n log(1 + exp(−y_n F(X_n))).
All D(D−1) off-diagonal entries of A and v ∈ ℝ^d are trained. One step reads X twice:
U = X·v (O(N·D·d)), then ∂L/∂v = Σ_nj ∂L/∂U_nj X_nj (O(N·D·d)); the attention part is O(N·D²).
The test error is measured on ``n_test`` fresh points at recorded steps.
"""

from __future__ import annotations

import math

import numpy as np

from ..data import sample
from ..model import evaluate_projections
from ._base import ChunkSums, Engine, Evaluation, iter_chunks, standard_error

__all__ = ["EmpiricalEngine"]


class EmpiricalEngine(Engine):
    """GD on (E). ``params`` = {"A": (D, D) array, "v": (d,) array} on the backend."""

    name = "empirical"

    def __init__(self, cfg, xp, partition, wstar, train=None, test=None) -> None:
        super().__init__(cfg, xp, partition, wstar)
        t = cfg.train
        dtype = np.float32 if xp.dtype == "float32" else np.float64
        if train is None:
            rng = np.random.default_rng(np.random.SeedSequence([t.seed, 21]))
            train = sample(cfg.data, t.n_train, rng, partition=partition, wstar=wstar, dtype=dtype)
        if test is None:
            rng = np.random.default_rng(np.random.SeedSequence([t.seed, 22]))
            test = sample(cfg.data, t.n_test, rng, partition=partition, wstar=wstar, dtype=dtype)
        self.train = train
        self.test = test
        self.X, self.y = xp.asarray(train.X), xp.asarray(train.y)
        self.Xt, self.yt = xp.asarray(test.X), xp.asarray(test.y)
        self.N, self.Nt = train.X.shape[0], test.X.shape[0]
        self.d = train.X.shape[2]

    def initial_params(self):
        return {"A": self.xp.asarray(self.initial_A()), "v": self.xp.asarray(self.initial_v())}

    def _pass(self, X, y, n, params, S, need_grad):
        xp = self.xp
        sums = ChunkSums()
        dv = xp.zeros(self.d) if need_grad else None
        w = 1.0 / n
        for sl in iter_chunks(n, self.chunk):
            Xc = X[sl]
            U = xp.project(Xc, params["v"])
            ev = evaluate_projections(
                U, y[sl], w, S, self.model, xp, need_grad=need_grad, tie_tol=self.tie_tol
            )
            sums.add(ev)
            if need_grad:
                dv = dv + xp.pullback(ev.dU, Xc)
        return sums, dv

    def evaluate(self, params, step, *, need_grad, record):
        xp = self.xp
        S = self.attention(params["A"])
        tr, dv = self._pass(self.X, self.y, self.N, params, S, need_grad)
        train_loss = xp.item(tr.loss)
        grads = {"A": self.grad_A(S, tr.dS), "v": dv} if need_grad else None
        loss = err = loss_se = err_se = ties = math.nan
        if record:
            te, _ = self._pass(self.Xt, self.yt, self.Nt, params, S, False)
            loss, err, ties = xp.item(te.loss), xp.item(te.error), xp.item(te.ties)
            loss_se = standard_error(xp.item(te.loss_sq), loss, self.Nt)
            err_se = math.sqrt(max(err * (1 - err), 0.0) / max(self.Nt - 1, 1))
        return Evaluation(
            loss=loss, error=err, tie_mass=ties, loss_se=loss_se, error_se=err_se, train_loss=train_loss,
            grads=grads,
        )

    def apply(self, params, grads):
        return {
            "A": params["A"] - self.lr_A * grads["A"],
            "v": params["v"] - self.lr_v * grads["v"],
        }

    def state(self, params):
        xp = self.xp
        return (
            xp.to_numpy(params["A"]).astype(np.float64),
            xp.to_numpy(params["v"]).astype(np.float64),
        )

    def params_from_arrays(self, arrays):
        return {"A": self.xp.asarray(arrays["A"]), "v": self.xp.asarray(arrays["v"])}
