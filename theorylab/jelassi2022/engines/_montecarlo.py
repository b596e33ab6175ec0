"""Monte Carlo estimate of the population risk (P), with standard errors, for any state.

For v = α w* + β e with e ⊥ w* a unit vector, ⟨v, X_j⟩ = α c_j + β z_j where
z_j = ⟨e, ξ_j⟩ ~ N(0, σ²) i.i.d., independent of (y, c) (DERIVED from Assumption 1: ξ ~
N(0, σ²(I − w*w*ᵀ))). The remaining noise directions are independent of F, so
∂L/∂v = E[Σ_j ∂L/∂U_j c_j]·w* + E[Σ_j ∂L/∂U_j z_j]·e exactly: population GD keeps v in
span(w*, v⁰) (item (iii) of the paper notes, §4.3). One evaluation samples M draws of (y, ℓ, δ, z),
costs O(M·D²) and does not depend on d. When v = α·w* (β = 0, which population GD keeps
from an aligned start) the noise z is not drawn and ∂L/∂α = ⟨S, ∂L/∂S⟩/α (as U = α·c), so a
chunk costs two (n, D)×(D, D) products instead of three.

Sampling: the backend's generator (``Backend.rng``) seeded by ``SeedSequence([seed, 13, step])``
draws on the backend's own device, so CUDA runs never copy samples from the host (the numpy and
torch draws differ, their laws agree).
Draws are made chunk by chunk inside each evaluation; fixed samples (``mc_resample = False``)
are the step-0 draws, kept on the device when they fit in a quarter of its free memory and
drawn again from the same seed otherwise.
"""

from __future__ import annotations

import numpy as np

from ..model import evaluate_projections
from ._base import ChunkSums, Engine, iter_chunks

__all__ = ["MonteCarloEngine"]


class MonteCarloEngine(Engine):
    """Estimates (P) by sampling. ``params`` = {"A": (D, D) array, "v": (d,) float64 array}."""

    name = "population-montecarlo"

    def __init__(self, cfg, xp, partition, wstar) -> None:
        super().__init__(cfg, xp, partition, wstar)
        self.M = cfg.train.mc_samples
        self.resample = cfg.train.mc_resample
        self.sigma = cfg.data.sigma_value
        item = xp.itemsize()
        # working set of one draw: c, z and ~10 length-D arrays of evaluate_projections
        self.chunk = self.chunk_rows(12 * self.D * item, self.M)
        self._fixed = None
        if not self.resample and (
            xp.name == "numpy" or 2 * self.M * self.D * item < 0.25 * xp.free_bytes()
        ):
            self._fixed = list(self._draw(0))

    def _draw(self, step: int, with_z: bool = True):
        """The M draws of one evaluation, chunk by chunk, on the backend's device
        ([`sample_c`][theorylab.jelassi2022.data.sample_c]'s law, and z ~ N(0, σ²)): yields
        (c, y, z); z is None when not ``with_z`` (v = α·w*: F does not depend on the noise, so
        it is not drawn)."""
        xp, q = self.xp, self.cfg.data.q
        rng = xp.rng(np.random.SeedSequence([self.cfg.train.seed, 13, step]))
        labels = xp.asindex(np.array(self.partition.labels))
        for sl in iter_chunks(self.M, self.chunk):
            n = sl.stop - sl.start
            y = 2 * xp.cast(rng.integers(2, n)) - 1
            ell = rng.integers(self.partition.L, n)
            u = rng.random((n, self.D))
            c = xp.cast(u < q) - 2 * xp.cast(u < q / 2)  # −1 w.p. q/2, +1 w.p. q/2, else 0
            c = xp.where(labels[None, :] == ell[:, None], y[:, None], c)
            yield c, y, xp.asarray(self.sigma * rng.normal((n, self.D))) if with_z else None

    def initial_params(self):
        return {"A": self.xp.asarray(self.initial_A()), "v": self.initial_v()}

    def split_v(self, v: np.ndarray) -> tuple[float, float, np.ndarray]:
        alpha = float(v @ self.wstar)
        perp = v - alpha * self.wstar
        beta = float(np.linalg.norm(perp))
        e = perp / beta if beta > 0 else np.zeros_like(perp)
        return alpha, beta, e

    def evaluate(self, params, step, *, need_grad, record):
        # subnormal factors σ'(H)·ℓ' at large margins are flushed to zero on a CPU (sums change
        # by < 1e-300; theorylab.core.backend.flush_denormals)
        with self.flushing():
            return self._evaluate(params, step, need_grad)

    def _evaluate(self, params, step, need_grad):
        xp = self.xp
        alpha, beta, e = self.split_v(params["v"])
        S = self.attention(params["A"])
        # v = α·w* (β = 0, α ≠ 0): U = α·c, so Σ_nj dU_nj c_nj = ⟨S, dS⟩ / α (dS = κ Gᵀ U):
        # no noise draws and no dU = κ G S product (2 matrix products per chunk instead of 3)
        aligned = beta == 0.0 and alpha != 0.0
        if self._fixed is not None:
            draws = self._fixed
        else:
            draws = self._draw(step if self.resample else 0, with_z=not aligned)
        w = 1.0 / self.M
        sums = ChunkSums()
        g_alpha = g_beta = 0.0
        for c, y, z in draws:
            U = alpha * c if aligned else alpha * c + beta * z
            ev = evaluate_projections(
                U, y, w, S, self.model, xp, need_grad=need_grad, tie_tol=self.tie_tol,
                need_dU=not aligned,
            )
            sums.add(ev)
            if need_grad and not aligned:
                g_alpha = g_alpha + xp.sum(ev.dU * c)
                if beta > 0:
                    g_beta = g_beta + xp.sum(ev.dU * z)
        grads = None
        if need_grad:
            if aligned:
                g_alpha = xp.item(xp.sum(S * sums.dS)) / alpha
            gv = float(g_alpha) * self.wstar + float(g_beta) * e
            grads = {"A": self.grad_A(S, sums.dS), "v": gv}
        return sums.evaluation(xp, n=self.M, grads=grads)

    def state(self, params):
        return self.xp.to_numpy(params["A"]).astype(np.float64), np.array(params["v"], dtype=float)

    def params_from_arrays(self, arrays):
        return {"A": self.xp.asarray(arrays["A"]), "v": np.asarray(arrays["v"], dtype=float)}
