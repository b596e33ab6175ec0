"""Exact population risk by brute-force enumeration (the oracle), problem (P).

Jelassi et al. (2022), problem (P) (FOUND): L(A, v) = E[log(1 + e^{−yF(X)})]. For v = α·w* the
noise drops out exactly because ξ ⊥ w* (DERIVED): ⟨v, X_j⟩ = α c_j with c_j ∈ {−1, 0, 1}, so the
expectation is a finite sum over (ℓ(X), y, δ), 2·L·3^{D−C} terms. Exact for any A; the gradient in
v is ∂L/∂α · w* (the ξ-part has mean zero). Use it for D ≲ 14.
"""

from __future__ import annotations

import math

import numpy as np

from ..data import enumerate_c
from ..model import evaluate_projections
from ._base import ChunkSums, Engine, iter_chunks

__all__ = ["BruteForceEngine"]


class BruteForceEngine(Engine):
    """Exact (P) for any A and v = α·w*. ``params`` = {"A": (D, D) array, "alpha": float}."""

    name = "population-brute"

    def __init__(self, cfg, xp, partition, wstar) -> None:
        super().__init__(cfg, xp, partition, wstar)
        c, y, _, w = enumerate_c(partition, cfg.data.q, max_configs=cfg.train.max_configs)
        self.n_configs = c.shape[0]
        self.c = xp.asarray(c)
        self.y = xp.asarray(y)
        self.w = xp.asarray(w)
        # working set of one configuration: ~10 length-D arrays of evaluate_projections
        self.chunk = self.chunk_rows(10 * self.D * xp.itemsize(), self.n_configs)

    def initial_params(self):
        if self.cfg.train.init_v != "aligned":
            raise ValueError(
                "train.method: 'brute' is exact only for v parallel to w* (init_v='aligned'); "
                "use method='montecarlo' for init_v='gaussian'"
            )
        return {"A": self.xp.asarray(self.initial_A()), "alpha": float(self.cfg.train.alpha0)}

    def evaluate(self, params, step, *, need_grad, record):
        xp, A, alpha = self.xp, params["A"], params["alpha"]
        S = self.attention(A)
        sums = ChunkSums()
        g_alpha = 0.0
        for sl in iter_chunks(self.n_configs, self.chunk):
            c = self.c[sl]
            ev = evaluate_projections(
                alpha * c, self.y[sl], self.w[sl], S, self.model, xp,
                need_grad=need_grad, tie_tol=self.tie_tol,
            )
            sums.add(ev)
            if need_grad:
                g_alpha = g_alpha + xp.sum(ev.dU * c)
        grads = None
        if need_grad:
            grads = {"A": self.grad_A(S, sums.dS), "alpha": xp.item(g_alpha)}
        return sums.evaluation(xp, grads=grads)

    def apply(self, params, grads):
        return {
            "A": params["A"] - self.lr_A * grads["A"],
            "alpha": params["alpha"] - self.lr_v * grads["alpha"],
        }

    def state(self, params):
        return self.xp.to_numpy(params["A"]).astype(np.float64), params["alpha"] * self.wstar

    def params_from_arrays(self, arrays):
        alpha = float(np.asarray(arrays["v"]) @ self.wstar)
        if not math.isfinite(alpha):  # pragma: no cover - checkpoints hold finite states
            raise ValueError("checkpoint: non-finite v")
        return {"A": self.xp.asarray(arrays["A"]), "alpha": alpha}
