"""Monte Carlo estimate of the population risk (P), with standard errors, for any state.

For v = α w* + β e with e ⊥ w* a unit vector, ⟨v, X_j⟩ = α c_j + β z_j where
z_j = ⟨e, ξ_j⟩ ~ N(0, σ²) i.i.d., independent of (y, c) (DERIVED from Assumption 1: ξ ~
N(0, σ²(I − w*w*ᵀ))). The remaining noise directions are independent of F, so
∂L/∂v = E[Σ_j ∂L/∂U_j c_j]·w* + E[Σ_j ∂L/∂U_j z_j]·e exactly: population GD keeps v in
span(w*, v⁰) (the digest's item (iii), §4.3). One evaluation samples M draws of (y, ℓ, δ, z),
costs O(M·D²) and does not depend on d.
"""

from __future__ import annotations

import math

import numpy as np

from ..data import sample_c
from ..model import evaluate_projections
from ._base import ChunkSums, Engine, Evaluation, iter_chunks, standard_error

__all__ = ["MonteCarloEngine"]


class MonteCarloEngine(Engine):
    """Estimates (P) by sampling. ``params`` = {"A": (D, D) array, "v": (d,) float64 array}."""

    name = "population-montecarlo"

    def __init__(self, cfg, xp, partition, wstar) -> None:
        super().__init__(cfg, xp, partition, wstar)
        self.M = cfg.train.mc_samples
        self.resample = cfg.train.mc_resample
        self.sigma = cfg.data.sigma_value
        self._fixed = None if self.resample else self._draw(0)

    def _draw(self, step: int):
        """All M draws for one evaluation, as backend chunks [(c, y, z), ...]."""
        rng = np.random.default_rng(np.random.SeedSequence([self.cfg.train.seed, 13, step]))
        out = []
        for sl in iter_chunks(self.M, self.chunk):
            n = sl.stop - sl.start
            c, y, _ = sample_c(self.partition, self.cfg.data.q, n, rng)
            z = self.sigma * rng.standard_normal((n, self.D))
            out.append((self.xp.asarray(c), self.xp.asarray(y), self.xp.asarray(z)))
        return out

    def initial_params(self):
        return {"A": self.xp.asarray(self.initial_A()), "v": self.initial_v()}

    def split_v(self, v: np.ndarray) -> tuple[float, float, np.ndarray]:
        alpha = float(v @ self.wstar)
        perp = v - alpha * self.wstar
        beta = float(np.linalg.norm(perp))
        e = perp / beta if beta > 0 else np.zeros_like(perp)
        return alpha, beta, e

    def evaluate(self, params, step, *, need_grad, record):
        xp = self.xp
        alpha, beta, e = self.split_v(params["v"])
        S = self.attention(params["A"])
        draws = self._fixed if self._fixed is not None else self._draw(step)
        w = 1.0 / self.M
        sums = ChunkSums()
        g_alpha = g_beta = 0.0
        for c, y, z in draws:
            U = alpha * c + beta * z
            ev = evaluate_projections(
                U, y, w, S, self.model, xp, need_grad=need_grad, tie_tol=self.tie_tol
            )
            sums.add(ev)
            if need_grad:
                g_alpha = g_alpha + xp.sum(ev.dU * c)
                if beta > 0:
                    g_beta = g_beta + xp.sum(ev.dU * z)
        loss, loss_sq, err = xp.item(sums.loss), xp.item(sums.loss_sq), xp.item(sums.error)
        grads = None
        if need_grad:
            gv = float(g_alpha) * self.wstar + float(g_beta) * e
            grads = {"A": self.grad_A(S, sums.dS), "v": gv}
        return Evaluation(
            loss=loss,
            error=err,
            tie_mass=xp.item(sums.ties),
            loss_se=standard_error(loss_sq, loss, self.M),
            error_se=math.sqrt(max(err * (1 - err), 0.0) / max(self.M - 1, 1)),
            grads=grads,
        )

    def apply(self, params, grads):
        return {
            "A": params["A"] - self.lr_A * grads["A"],
            "v": params["v"] - self.lr_v * grads["v"],
        }

    def state(self, params):
        return self.xp.to_numpy(params["A"]).astype(np.float64), np.array(params["v"], dtype=float)

    def params_from_arrays(self, arrays):
        return {"A": self.xp.asarray(arrays["A"]), "v": np.asarray(arrays["v"], dtype=float)}
