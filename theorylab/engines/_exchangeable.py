"""Exact population risk for partition-symmetric states by exchangeability, problem (P).

State (Lemmas 4.1–4.2 as reconstructed in the digest §4.3): v = α·w*, A_ii = a (frozen),
A_ij = γ in the same set, ρ across sets. Then (DERIVED, digest §4.7), with S_a, S_γ, S_ρ the
three softmax values of a row,

    H_i = κ α [S_a c_i + S_γ (s_ℓ(i) − c_i) + S_ρ (T − s_ℓ(i))],   s_ℓ = Σ_{j∈S_ℓ} c_j, T = Σ_j c_j,

so F depends on the data only through the per-set count patterns (n₊, n₀, n₋) and T. The L−1
non-signal sets are i.i.d., so the expectation is an exact sum over histograms m of patterns
(multinomial weights), (L−1+P−1 choose P−1) terms with P = (C+1)(C+2)/2 patterns, instead of
2·L·3^{D−C} configurations. The gradient in γ (resp. ρ) is the sum of ∂L/∂A_ik over the D(C−1)
same-set (resp. D(D−C) cross-set) entries; a GD step on the full matrix moves each entry by
−lr·(that sum)/(number of entries), which is what [`apply`][] does, so trajectories coincide
with full-matrix GD from the same symmetric state.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special

from ..observables import symmetric_A
from ._base import Engine, Evaluation, iter_chunks

__all__ = ["ExchangeableEngine", "count_patterns", "histograms", "n_histograms"]


def count_patterns(C: int) -> np.ndarray:
    """All (n₊, n₀, n₋) with n₊ + n₀ + n₋ = C, shape (P, 3)."""
    return np.array(
        [(a, C - a - b, b) for a in range(C + 1) for b in range(C + 1 - a)], dtype=np.int64
    )


def n_histograms(n: int, P: int) -> int:
    """Number of ways to put n sets into P patterns: C(n+P−1, P−1)."""
    return math.comb(n + P - 1, P - 1)


@functools.lru_cache(maxsize=8)
def histograms(n: int, P: int) -> np.ndarray:
    """All m ∈ ℕ^P with Σ m = n, shape (C(n+P−1, P−1), P), dtype int16 (read-only, cached)."""
    # table[r] = compositions of r into the last j parts, built for j = 1..P
    table = [np.array([[r]], dtype=np.int16) for r in range(n + 1)]
    for _ in range(1, P):
        new = []
        for r in range(n + 1):
            blocks = []
            for k in range(r + 1):
                rest = table[r - k]
                blocks.append(
                    np.concatenate([np.full((rest.shape[0], 1), k, dtype=np.int16), rest], axis=1)
                )
            new.append(np.concatenate(blocks))
        table = new
    out = table[n]
    out.setflags(write=False)
    return out


class ExchangeableEngine(Engine):
    """Exact (P) on partition-symmetric states. ``params`` = {"gamma", "rho", "alpha"} floats."""

    name = "population-exchangeable"

    def __init__(self, cfg, xp, partition, wstar) -> None:
        super().__init__(cfg, xp, partition, wstar)
        D, C, L, q = self.D, partition.C, partition.L, cfg.data.q
        self.C, self.L = C, L
        pats = count_patterns(C)
        # log P(pattern) = log multinomial + (n₊ + n₋) log(q/2) + n₀ log(1 − q), with 0·log 0 = 0
        logp = (
            special.gammaln(C + 1)
            - special.gammaln(pats + 1).sum(axis=1)
            + special.xlogy(pats[:, 0] + pats[:, 2], q / 2)
            + special.xlogy(pats[:, 1], 1 - q)
        )
        positive = np.isfinite(logp)
        self.patterns = pats  # (P, 3): n₊, n₀, n₋
        self.s = pats[:, 0] - pats[:, 2]
        self.k_plus = int(np.flatnonzero(pats[:, 0] == C)[0])
        self.k_minus = int(np.flatnonzero(pats[:, 2] == C)[0])
        live = np.flatnonzero(positive)
        n_hist = n_histograms(L - 1, live.size)
        if n_hist > cfg.train.max_configs:
            raise ValueError(
                f"train.max_configs: the exchangeable engine needs {n_hist} histograms "
                f"(> max_configs={cfg.train.max_configs}); use method='montecarlo'"
            )
        Mlive = histograms(L - 1, live.size)
        M = np.zeros((Mlive.shape[0], pats.shape[0]), dtype=np.int16)
        M[:, live] = Mlive
        # t = Σ_k m_k s_k and log-weights, chunk by chunk (peak memory stays near the int16 table)
        t = np.empty(M.shape[0], dtype=np.int64)
        logw = np.empty(M.shape[0])
        for sl in iter_chunks(M.shape[0], 1 << 20):
            m = M[sl, :][:, live].astype(np.float64)
            t[sl] = M[sl] @ self.s
            logw[sl] = special.gammaln(L) - special.gammaln(m + 1).sum(axis=1) + m @ logp[live]
        self.n_configs = M.shape[0]
        # small tables live on the device in the compute dtype; large ones stay int16 on the host
        self._M_host = M
        self._M_dev = xp.asarray(M) if M.size <= 20_000_000 else None
        self.t = t
        self.w_half = xp.asarray(0.5 * np.exp(logw))  # y = ±1 with probability 1/2 each
        self.idx = {
            y: xp.asindex(t + y * C + D) for y in (1, -1)
        }  # rows of the T-tables, T ∈ [−D, D]

    # -- parameters -----------------------------------------------------------------------------
    def initial_params(self):
        t = self.cfg.train
        if t.init_v != "aligned" or t.offdiag0_std > 0:
            raise ValueError(
                "train.method: 'exchangeable' needs a partition-symmetric start: "
                "init_v='aligned' and offdiag0_std=0 (use 'brute' or 'montecarlo')"
            )
        return {"gamma": float(t.offdiag0), "rho": float(t.offdiag0), "alpha": float(t.alpha0)}

    def state(self, params):
        A = symmetric_A(self.D, self.partition, self.diag, params["gamma"], params["rho"])
        return A, params["alpha"] * self.wstar

    def params_from_arrays(self, arrays):
        from ..observables import gamma_rho, sym_dev

        A = np.asarray(arrays["A"])
        if sym_dev(A, self.partition) > 1e-12:
            raise ValueError("checkpoint: A is not partition-symmetric")
        g, r = gamma_rho(A, self.partition)
        return {"gamma": g, "rho": r, "alpha": float(np.asarray(arrays["v"]) @ self.wstar)}

    # -- the per-T tables -----------------------------------------------------------------------
    def tables(self, params, need_grad: bool):
        """Φ[T, k] = Σ_c n_{k,c} σ(z(c, s_k, T)) and dΦ/dθ for θ = α, γ, ρ.

        Shapes (2D+1, P), rows T = −D..D. Computed in float64 numpy (they are tiny).
        """
        D, C, tau = self.D, self.C, self.model.temperature
        kappa, act = self.model.value_scale, self.model.activation
        alpha, gamma, rho = params["alpha"], params["gamma"], params["rho"]
        logits = np.array([self.diag, gamma, rho]) / tau
        mult = np.array([1.0, C - 1.0, D - C])
        e = np.exp(logits - logits[mult > 0].max())
        Sa, Sg, Sr = e / (mult * e).sum()
        T = np.arange(-D, D + 1, dtype=np.float64)[:, None, None]  # (2D+1, 1, 1)
        s = self.s.astype(np.float64)[None, :, None]  # (1, P, 1)
        cv = np.array([1.0, 0.0, -1.0])[None, None, :]  # c = +1, 0, −1 (columns of patterns)
        n = self.patterns.astype(np.float64)[None, :, :]  # (1, P, 3)
        N = Sa * cv + Sg * (s - cv) + Sr * (T - s)
        z = kappa * alpha * N
        sig, dsig = act.value_and_grad(z)
        out = {"Phi": (n * sig).sum(-1)}
        if need_grad:
            dz = {
                "alpha": kappa * N,
                "gamma": kappa * alpha / tau * Sg * ((s - cv) - (C - 1) * N),
                "rho": kappa * alpha / tau * Sr * ((T - s) - (D - C) * N),
            }
            for k, v in dz.items():
                out["d" + k] = (n * dsig * v).sum(-1)
        return {k: self.xp.asarray(v) for k, v in out.items()}

    def evaluate(self, params, step, *, need_grad, record):
        xp = self.xp
        tab = self.tables(params, need_grad)
        P = self.patterns.shape[0]
        loss = error = ties = 0.0
        R = xp.zeros((2 * self.D + 1, P)) if need_grad else None
        # tie threshold of model.tie_scale: max_j |U_j| = |α| (the signal set is never 0)
        tie = self.tie_tol * self.D * self.model.activation.majorant()(
            self.model.value_scale * abs(params["alpha"])
        )
        for sl in iter_chunks(self.n_configs, self.chunk):
            Mc = self._M_dev[sl] if self._M_dev is not None else xp.asarray(self._M_host[sl])
            w = self.w_half[sl]
            for y, ky in ((1, self.k_plus), (-1, self.k_minus)):
                idx = self.idx[y][sl]
                Phi = tab["Phi"][idx]
                F = xp.sum(Mc * Phi, axis=1) + Phi[:, ky]
                m = y * F
                loss = loss + xp.sum(w * xp.softplus_neg(m))
                error = error + xp.sum(w * ((m <= tie) * 1.0))
                ties = ties + xp.sum(w * ((xp.abs(m) <= tie) * 1.0))
                if need_grad:
                    coef = -w * xp.sigmoid(-m) * y  # w ℓ'(m) y
                    contrib = coef[:, None] * Mc
                    contrib[:, ky] = contrib[:, ky] + coef
                    R = xp.index_add(R, idx, contrib)
        grads = None
        if need_grad:
            grads = {k: xp.item(xp.sum(R * tab["d" + k])) for k in ("alpha", "gamma", "rho")}
        return Evaluation(
            loss=xp.item(loss), error=xp.item(error), tie_mass=xp.item(ties), grads=grads
        )

    def apply(self, params, grads):
        D, C = self.D, self.C
        return {
            "gamma": params["gamma"] - self.lr_A * grads["gamma"] / (D * (C - 1))
            if C > 1
            else params["gamma"],
            "rho": params["rho"] - self.lr_A * grads["rho"] / (D * (D - C)),
            "alpha": params["alpha"] - self.lr_v * grads["alpha"],
        }

    def full_gradient(self, grads) -> tuple[np.ndarray, np.ndarray]:
        """The equivalent full-matrix gradient (∂L/∂A with zero diagonal, ∂L/∂v)."""
        D, C = self.D, self.C
        gA = symmetric_A(
            D, self.partition, 0.0, grads["gamma"] / (D * (C - 1)) if C > 1 else 0.0,
            grads["rho"] / (D * (D - C)),
        )
        return gA, grads["alpha"] * self.wstar
