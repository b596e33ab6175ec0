"""Many empirical runs (seeds × learning rates) as one batched computation, problem (E).

Jelassi et al. (2022), problem (E) (FOUND), as in [`EmpiricalEngine`][]; here B = K·R runs move
together: K data seeds, each shared by R learning-rate pairs (lr_v, lr_A). Run b = k·R + r.
Parameters carry a leading batch axis, A (B, D, D) and v (B, d); the data X (K, N, D, d). One
step is one launch sequence for the whole batch: U = X_k·V_kᵀ is one batched matrix product
(reading each data set once for its R runs), the attention part is batched ``U @ Sᵀ`` with
S (K, R, D, D), and ∂L/∂v = dU_k·X_k another batched product.

Run b equals the unbatched [`EmpiricalEngine`][] run with ``train.seed = seeds[k]``,
``lr_v``, ``lr_A`` of that run: same data (``SeedSequence([seed, 21])`` train,
``[seed, 22]`` test), same A⁰ and v⁰, same arithmetic up to rounding
(tests/jelassi2022/test_sweep.py).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from ..model import evaluate_projections
from ._base import ChunkSums, Engine, binomial_se, iter_chunks, standard_error
from ._empirical import draw_split, place_data
from ._reads import project_batched, pullback_batched

__all__ = ["BatchedEmpiricalEngine", "BatchEvaluation"]


@dataclasses.dataclass
class BatchEvaluation:
    """Per-run results of one batched evaluation: float64 numpy arrays of shape (B,)."""

    loss: np.ndarray
    error: np.ndarray
    tie_mass: np.ndarray
    loss_se: np.ndarray
    error_se: np.ndarray
    train_loss: np.ndarray
    grads: object = None


class BatchedEmpiricalEngine(Engine):
    """GD on (E) for B = K·R runs at once. ``params`` = {"A": (B, D, D), "v": (B, d)}.

    **Arguments:**

    - `cfg`: the resolved configuration shared by all runs (``engine="empirical"``).
    - `xp`, `partition`, `wstar`: as for [`EmpiricalEngine`][].
    - `seeds`: K distinct data seeds (each replaces ``train.seed`` for data, A⁰ and v⁰).
    - `lrs`: R pairs (lr_v, lr_A).
    """

    name = "empirical"

    def __init__(self, cfg, xp, partition, wstar, seeds, lrs) -> None:
        super().__init__(cfg, xp, partition, wstar)
        seeds = [int(s) for s in seeds]
        if len(set(seeds)) != len(seeds) or not seeds:
            raise ValueError(f"seeds: must be a non-empty list of distinct seeds (got {seeds})")
        lrs = [(float(a), float(b)) for a, b in lrs]
        if not lrs:
            raise ValueError("lrs: must hold at least one (lr_v, lr_A) pair")
        self.seeds, self.lrs = seeds, lrs
        self.K, self.R = len(seeds), len(lrs)
        self.B = self.K * self.R
        t = cfg.train
        trains, tests, self._init = [], [], []
        for s in seeds:
            trains.append(draw_split(cfg, xp, s, partition, wstar, test=False))
            tests.append(draw_split(cfg, xp, s, partition, wstar, test=True))
            one = Engine(self._seed_cfg(s), xp, partition, wstar)
            self._init.append((one.initial_A(), one.initial_v()))
        self.N, self.Nt = t.n_train, t.n_test
        self.d = trains[0].X.shape[2]
        item = xp.itemsize()
        n_bytes = self.K * (self.N + self.Nt) * self.D * self.d * item
        X = np.stack([s.X for s in trains])
        Xt = np.stack([s.X for s in tests])
        (self.X, self.Xt), self.streamed = place_data(xp, t.stream, (X, Xt), n_bytes)
        del X, Xt
        self.y = xp.asarray(np.stack([s.y for s in trains]))  # (K, N)
        self.yt = xp.asarray(np.stack([s.y for s in tests]))
        row = item * (10 * self.B * self.D + (self.K * self.D * self.d if self.streamed else 0))
        self.chunk = self.chunk_rows(row, max(self.N, self.Nt))
        lr = np.array(lrs)
        self.lr_v_runs = np.tile(lr[:, 0], self.K)  # (B,), run b = k·R + r
        self.lr_A_runs = np.tile(lr[:, 1], self.K)
        # per-run learning rates, broadcast against v (B, d) and A (B, D, D) by Engine.apply
        self.lr_v = xp.asarray(self.lr_v_runs)[:, None]
        self.lr_A = xp.asarray(self.lr_A_runs)[:, None, None]

    def _seed_cfg(self, seed):
        return dataclasses.replace(self.cfg, train=dataclasses.replace(self.cfg.train, seed=seed))

    def runs(self) -> list[dict]:
        """One dict per run b: ``run``, ``seed``, ``lr_v``, ``lr_A``."""
        return [
            {"run": k * self.R + r, "seed": s, "lr_v": a, "lr_A": b}
            for k, s in enumerate(self.seeds)
            for r, (a, b) in enumerate(self.lrs)
        ]

    def initial_params(self):
        A = np.stack([a for a, _ in self._init for _ in range(self.R)])
        v = np.stack([v for _, v in self._init for _ in range(self.R)])
        return {"A": self.xp.asarray(A), "v": self.xp.asarray(v)}

    def _rows(self, X, sl):
        sl = (slice(None), sl)
        return self.xp.chunk_to_device(X, sl) if self.streamed else X[sl]

    def _pass(self, X, y, n, V, S, need_grad):
        xp = self.xp
        sums = ChunkSums()
        dv = None
        for sl in iter_chunks(n, self.chunk):
            Xc = self._rows(X, sl)  # (K, n_c, D, d)
            U = project_batched(xp, Xc, V, self.primitive)  # (K, R, n_c, D)
            ev = evaluate_projections(
                U, y[:, None, sl], 1.0 / n, S, self.model, xp, need_grad=need_grad,
                tie_tol=self.tie_tol,
            )
            sums.add(ev)
            if need_grad:
                g = pullback_batched(xp, ev.dU, Xc, self.primitive)
                dv = g if dv is None else dv + g
        return sums, dv

    def _flat(self, x) -> np.ndarray:
        return np.asarray(self.xp.to_numpy(x), dtype=np.float64).reshape(self.B)

    def evaluate(self, params, step, *, need_grad, record) -> BatchEvaluation:
        K, R, D = self.K, self.R, self.D
        S = self.attention(params["A"])  # (B, D, D)
        V = params["v"].reshape(K, R, self.d)
        tr, dv = self._pass(self.X, self.y, self.N, V, S.reshape(K, R, D, D), need_grad)
        grads = None
        if need_grad:
            dA = self.grad_A(S, tr.dS.reshape(self.B, D, D))
            grads = {"A": dA, "v": dv.reshape(self.B, self.d)}
        nan = np.full(self.B, math.nan)
        loss = err = ties = loss_se = err_se = nan
        if record:
            te, _ = self._pass(self.Xt, self.yt, self.Nt, V, S.reshape(K, R, D, D), False)
            loss, err, ties = self._flat(te.loss), self._flat(te.error), self._flat(te.ties)
            loss_se = np.array([standard_error(sq, m, self.Nt)
                                for sq, m in zip(self._flat(te.loss_sq), loss)])
            err_se = binomial_se(err, self.Nt)
        return BatchEvaluation(loss, err, ties, loss_se, err_se, self._flat(tr.loss), grads)
