"""Population GD from any start v⁰ in the reduced state (α, β, γ, ρ), batched over starts.

Reduction (DERIVED; paper notes §4.3 item (iii)). Write v = α w* + β e with e ⊥ w* a unit
vector. By Assumption 1, ⟨v, X_j⟩ = α c_j + β⟨e, ξ_j⟩ and ⟨e, ξ_j⟩ = σ g_j with g_j i.i.d.
N(0, 1), independent of (y, c); the other noise directions do not enter F. So the population
risk is a function L(α, β, A) of the two numbers α = ⟨v, w*⟩ and β = ‖v − α w*‖, its gradient in
v is ∂_α L w* + ∂_β L e, and population GD keeps v in span(w*, v⁰): from a partition-symmetric
A⁰ the state is exactly (α, β, γ, ρ) (A stays symmetric by the partition's symmetry, as in
[`ExchangeableEngine`][theorylab.jelassi2022.engines.ExchangeableEngine]).

Expectation. With S the symmetric softmax, G_i = Σ_j S_ij g_j is Gaussian with covariance
Q = S Sᵀ, which takes three values: Q_d (i = k), Q_s (same set), Q_x (different sets). For the
noise scale ε = σβ, f(ε) = ℓ(y F(κ(α N + ε G))) is even in g, so

    E_g f = ℓ(yF₀) + (κ²ε²/2)·[ℓ''(yF₀)·S₂ + y ℓ'(yF₀)·Q_d Σ_i σ''(z_i)] + O(ε⁴),
    S₂ = Σ_ik σ'(z_i) σ'(z_k) Q_ik
       = (Q_d − Q_s) Σ_i σ'(z_i)² + (Q_s − Q_x) Σ_ℓ (Σ_{i∈S_ℓ} σ'(z_i))² + Q_x (Σ_i σ'(z_i))²,

with F₀, z_i = κ α N_i the values at ε = 0. Every term is a sum over sets of a function of the
set's count pattern and of T = Σ_j c_j (or the square of such a sum), so the expectation over
(y, c) is the exact sum over histograms of set patterns of the exchangeable engine. This engine
evaluates that truncated loss exactly (float64) and its gradient in (α, β, γ, ρ) in closed
form (the chain rule through the per-T tables, as the exchangeable engine does; the tests check
it against finite differences). The truncation error is O(ε⁴) in the loss: relative O((κσβ)²) to the
β-terms kept (tests/jelassi2022/test_engine_reduced.py measures it against Gauss–Hermite
quadrature and against the Monte Carlo engine). At β = 0 the engine is the exchangeable engine
(equal to rounding).

The error reported is the fair-coin error of F₀ (ties F₀ = 0 count one half): the noise breaks
ties at random, and it moves F by O(σβ) elsewhere, which changes the error only on configurations
within O(σβ) of a tie.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from theorylab.core.jit import HAVE_NUMBA, njit

from ..config import setting_of
from ._exchangeable import histograms, offdiag_step, pattern_log_probs

__all__ = ["ReducedEngine", "reduced_start"]


def reduced_start(cfg, seeds) -> tuple[np.ndarray, np.ndarray]:
    """(α⁰, β⁰) of the engines' start v⁰ for each training seed: v⁰ = α⁰ w* (aligned) or
    v⁰ ~ N(0, v0_scale²·I_d) drawn exactly as [`Engine.initial_v`][] draws it (Gaussian), so a
    run of this engine and a run of the Monte Carlo or empirical engine with the same seed start
    from the same (α⁰, β⁰)."""
    from ..data import make_wstar

    cfg = setting_of(cfg).cfg
    t = cfg.train
    w = make_wstar(cfg.data)
    a, b = [], []
    for seed in seeds:
        if t.init_v == "aligned":
            a.append(t.alpha0)
            b.append(0.0)
            continue
        rng = np.random.default_rng(np.random.SeedSequence([int(seed), 12]))
        v = t.v0_scale * rng.standard_normal(w.shape[0])
        al = float(v @ w)
        a.append(al)
        b.append(float(np.linalg.norm(v - al * w)))
    return np.array(a), np.array(b)


def _horner_py(c, x):
    out = c[c.shape[0] - 1]
    for j in range(c.shape[0] - 2, -1, -1):
        out = out * x + c[j]
    return out


def _reduced_kernel_py(alpha, beta, gamma, rho, diag, tau, kappa, sigma, tie_tol_D, coef, major,
                    pats, s, M, rows, ksig, w, C, D, need_grad):
    """Loss, fair-coin error, tie mass and gradients of the truncated risk (see the module),
    one run per entry of `alpha`; plain loops, compiled by numba when it is present."""
    B = alpha.shape[0]
    P = pats.shape[0]
    R = M.shape[0]
    nT = 2 * D + 1
    loss = np.zeros(B)
    err = np.zeros(B)
    ties = np.zeros(B)
    g = np.zeros((4, B))
    cvals = np.array([1.0, 0.0, -1.0])
    tab = np.zeros((5, nT, P))  # F, A1 (Σσ'²), B (Σσ'), E4 (Σσ''), A2 (B²)
    dtab = np.zeros((3, 5, nT, P))  # derivatives in α, γ, ρ
    Rt = np.zeros((5, nT, P))
    X = np.zeros(5)
    for b in range(B):
        la, lg, lr = diag / tau, gamma[b] / tau, rho[b] / tau
        mx = max(la, max(lg, lr)) if C > 1 else max(la, lr)
        ea, eg, er = np.exp(la - mx), np.exp(lg - mx), np.exp(lr - mx)
        Z = ea + (C - 1) * eg + (D - C) * er
        Sa, Sg, Sr = ea / Z, eg / Z, er / Z
        al = alpha[b]
        tab[:] = 0.0
        dtab[:] = 0.0
        for t in range(nT):
            T = t - D
            for k in range(P):
                for ci in range(3):
                    cnt = pats[k, ci]
                    if cnt == 0.0:
                        continue
                    c = cvals[ci]
                    N = Sa * c + Sg * (s[k] - c) + Sr * (T - s[k])
                    z = kappa * al * N
                    f0 = _horner(coef[0], z)
                    f1 = _horner(coef[1], z)
                    f2 = _horner(coef[2], z)
                    f3 = _horner(coef[3], z)
                    tab[0, t, k] += cnt * f0
                    tab[1, t, k] += cnt * f1 * f1
                    tab[2, t, k] += cnt * f1
                    tab[3, t, k] += cnt * f2
                    if need_grad:
                        dzs = (kappa * N,
                               kappa * al * (Sg / tau) * ((s[k] - c) - (C - 1) * N),
                               kappa * al * (Sr / tau) * ((T - s[k]) - (D - C) * N))
                        for th in range(3):
                            dz = dzs[th]
                            dtab[th, 0, t, k] += cnt * f1 * dz
                            dtab[th, 1, t, k] += cnt * 2.0 * f1 * f2 * dz
                            dtab[th, 2, t, k] += cnt * f2 * dz
                            dtab[th, 3, t, k] += cnt * f3 * dz
                tab[4, t, k] = tab[2, t, k] * tab[2, t, k]
                if need_grad:
                    for th in range(3):
                        dtab[th, 4, t, k] = 2.0 * tab[2, t, k] * dtab[th, 2, t, k]
        Qd = Sa * Sa + (C - 1) * Sg * Sg + (D - C) * Sr * Sr
        Qs = 2 * Sa * Sg + (C - 2) * Sg * Sg + (D - C) * Sr * Sr
        Qx = 2 * Sa * Sr + 2 * (C - 1) * Sg * Sr + (D - 2 * C) * Sr * Sr
        e2 = (kappa * sigma * beta[b]) ** 2 / 2
        tie = tie_tol_D * _horner(major, kappa * abs(al))
        Rt[:] = 0.0
        sA1 = sA2 = sB2 = sE4 = L2sum = 0.0
        for side in range(2):
            y = 1.0 if side == 0 else -1.0
            ks = ksig[side]
            for r in range(R):
                t = rows[side, r]
                for j in range(5):
                    acc = tab[j, t, ks]
                    for k in range(P):
                        acc += M[r, k] * tab[j, t, k]
                    X[j] = acc
                m = y * X[0]
                pm = 0.5 * (1.0 + np.tanh(0.5 * m))
                l1 = pm - 1.0
                l2 = pm * (1.0 - pm)
                S2 = (Qd - Qs) * X[1] + (Qs - Qx) * X[4] + Qx * X[2] * X[2]
                L2 = l2 * S2 + y * l1 * Qd * X[3]
                wr = w[r]
                sp = max(-m, 0.0) + np.log1p(np.exp(-abs(m)))
                loss[b] += wr * (sp + e2 * L2)
                if m < -tie:
                    err[b] += wr
                if abs(m) <= tie:
                    ties[b] += wr
                if need_grad:
                    l3 = l2 * (1.0 - 2.0 * pm)
                    we = wr * e2
                    L2sum += wr * L2
                    sA1 += we * l2 * X[1]
                    sA2 += we * l2 * X[4]
                    sB2 += we * l2 * X[2] * X[2]
                    sE4 += we * y * l1 * X[3]
                    cf = (wr * y * l1 + we * (y * l3 * S2 + l2 * Qd * X[3]),
                          we * l2 * (Qd - Qs), we * l2 * 2.0 * Qx * X[2], we * y * l1 * Qd,
                          we * l2 * (Qs - Qx))
                    for j in range(5):
                        cj = cf[j]
                        Rt[j, t, ks] += cj
                        for k in range(P):
                            Rt[j, t, k] += cj * M[r, k]
        if not need_grad:
            continue
        for th in range(3):
            acc = 0.0
            for j in range(5):
                for t in range(nT):
                    for k in range(P):
                        acc += Rt[j, t, k] * dtab[th, j, t, k]
            g[0 if th == 0 else th + 1, b] = acc
        for th in range(2):  # γ, ρ move the covariances Q through the softmax weights
            if th == 0:
                kk, Sk = C - 1.0, Sg
                dSg = (Sg - Sg * kk * Sk) / tau
                dSr = (-Sr * kk * Sk) / tau
            else:
                kk, Sk = D - C + 0.0, Sr
                dSg = (-Sg * kk * Sk) / tau
                dSr = (Sr - Sr * kk * Sk) / tau
            dSa = -Sa * kk * Sk / tau
            dQd = 2 * Sa * dSa + 2 * (C - 1) * Sg * dSg + 2 * (D - C) * Sr * dSr
            dQs = 2 * (dSa * Sg + Sa * dSg) + 2 * (C - 2) * Sg * dSg + 2 * (D - C) * Sr * dSr
            dQx = (2 * (dSa * Sr + Sa * dSr) + 2 * (C - 1) * (dSg * Sr + Sg * dSr)
                   + 2 * (D - 2 * C) * Sr * dSr)
            g[2 + th, b] += sA1 * (dQd - dQs) + sA2 * (dQs - dQx) + sB2 * dQx + sE4 * dQd
        g[1, b] = (kappa * sigma) ** 2 * beta[b] * L2sum
    return loss, err + 0.5 * ties, ties, g


_horner = njit(_horner_py)
_reduced_kernel = njit(_reduced_kernel_py)


class ReducedEngine:
    """Exact-in-data, second-order-in-noise population GD in the state (α, β, γ, ρ).

    **Arguments:**

    - `cfg`: an [`ExperimentConfig`][theorylab.jelassi2022.config.ExperimentConfig] (data,
      model, learning rates, ``train.offdiag0``, ``train.tie_tol``); the start of v is given
      by `alpha0`, `beta0`.
    - `alpha0`, `beta0`: arrays (B,) of starts, one run each (see [`reduced_start`][]).

    All B runs share the data model and the learning rates and are computed together (numpy,
    float64).
    """

    def __init__(self, cfg, alpha0, beta0) -> None:
        from scipy import special

        st = setting_of(cfg)
        self.cfg = cfg = st.cfg
        D, C, L, q = st.D, st.C, st.partition.L, st.q
        self.D, self.C, self.L = D, C, L
        self.tau, self.kappa, self.diag, self.sigma = st.tau, st.kappa, st.diag, st.sigma
        act = st.activation
        self._c = [list(act.coeffs)]
        for _ in range(3):  # σ', σ'', σ'''
            prev = self._c[-1]
            self._c.append([k * c for k, c in enumerate(prev)][1:] or [0.0])
        self._major = act.majorant()
        self.lr_v, self.lr_A = st.lr_v, st.lr_A
        self.tie_tol = cfg.train.tie_tol
        pats, logp = pattern_log_probs(C, q)
        live = np.flatnonzero(np.isfinite(logp))
        m = histograms(L - 1, live.size).astype(np.int64)
        P = pats.shape[0]
        M = np.zeros((m.shape[0], P), dtype=np.int64)
        M[:, live] = m
        log_fact = special.gammaln(np.arange(L) + 1.0)
        logw = log_fact[L - 1] - log_fact[m].sum(axis=1) + (m * logp[live]).sum(axis=1)
        s = pats[:, 0] - pats[:, 2]
        t_rows = M @ s
        nT = 2 * D + 1
        R = M.shape[0]
        self.n_configs = R
        self.w = np.exp(logw) / 2  # y = ±1 w.p. 1/2 each
        k_plus = int(np.flatnonzero(pats[:, 0] == C)[0])
        k_minus = int(np.flatnonzero(pats[:, 2] == C)[0])
        # per sign of y: the T-row of every histogram, the histogram with the signal set's own
        # pattern added (R, P), and the one-hot (nT, R) that scatters rows back to T
        self._sides = []
        for y, k in ((1.0, k_plus), (-1.0, k_minus)):
            rows = t_rows + int(y) * C + D
            Mext = M.astype(np.float64)
            Mext[:, k] += 1.0
            OH = np.zeros((nT, R))
            OH[rows, np.arange(R)] = 1.0
            self._sides.append((y, rows, Mext, OH))
        self.s = s.astype(np.float64)[None, None, :, None]  # (1, 1, P, 1)
        self.n = pats.astype(np.float64)[None, None, :, :]  # (1, 1, P, 3): n₊, n₀, n₋
        self.cv = np.array([1.0, 0.0, -1.0])[None, None, None, :]
        self.T = np.arange(-D, D + 1, dtype=np.float64)[None, :, None, None]
        a0 = np.atleast_1d(np.asarray(alpha0, dtype=float))
        b0 = np.atleast_1d(np.asarray(beta0, dtype=float))
        if a0.shape != b0.shape or a0.ndim != 1:
            raise ValueError("alpha0, beta0: must be arrays of one shape (B,)")
        self.B = a0.size
        g0 = float(cfg.train.offdiag0)
        # the compiled kernel's inputs
        deg = max(len(c) for c in self._c)
        self._coef = np.zeros((4, deg))
        for i, c in enumerate(self._c):
            self._coef[i, :len(c)] = c
        self._major_c = np.array(self._major.coeffs, dtype=float)
        self._pats = pats.astype(np.float64)
        self._s1 = s.astype(np.float64)
        self._M = M.astype(np.float64)
        self._rows = np.stack([sd[1] for sd in self._sides]).astype(np.int64)
        self._ksig = np.array([k_plus, k_minus], dtype=np.int64)
        self.params = {"alpha": a0.copy(), "beta": b0.copy(), "gamma": np.full(self.B, g0),
                       "rho": np.full(self.B, g0)}

    @staticmethod
    def _poly(coeffs, x):
        out = np.full_like(x, coeffs[-1])
        for c in reversed(coeffs[:-1]):
            out = out * x + c
        return out

    def softmax_weights(self, gamma, rho):
        """(S_a, S_γ, S_ρ), arrays (B,): the three softmax values of a symmetric row."""
        D, C = self.D, self.C
        lg = np.stack([np.full_like(gamma, self.diag), gamma, rho], axis=-1) / self.tau
        mult = np.array([1.0, C - 1.0, D - C])
        lg = lg - np.where(mult > 0, lg, -np.inf).max(axis=-1, keepdims=True)
        e = np.exp(lg)
        S = e / (mult * e).sum(-1, keepdims=True)
        return S[:, 0], S[:, 1], S[:, 2]

    def evaluate(self, p, need_grad=True):
        """The truncated population risk of every run.

        **Returns:** ``(loss, error_fair, tie_mass, grads)``: arrays (B,), and with `need_grad`
        the gradients ``{"alpha", "beta", "gamma", "rho"}`` (arrays (B,)), else None. Compiled
        loops when numba is present, else the same sums as numpy array operations."""
        if not HAVE_NUMBA:
            return self.evaluate_numpy(p, need_grad)
        a, b, g, r = (np.ascontiguousarray(p[k], dtype=float)
                      for k in ("alpha", "beta", "gamma", "rho"))
        loss, ef, ties, gr = _reduced_kernel(
            a, b, g, r, float(self.diag), float(self.tau), float(self.kappa), float(self.sigma),
            float(self.tie_tol * self.D), self._coef, self._major_c, self._pats, self._s1,
            self._M, self._rows, self._ksig, self.w, self.C, self.D, bool(need_grad))
        grads = (dict(zip(("alpha", "beta", "gamma", "rho"), gr)) if need_grad else None)
        return loss, ef, ties, grads

    def _tables(self, p):
        """The per-T tables (F, A1, B, E4, A2; each (B, nT, P)), the activation's derivatives at
        z, N, the covariances (Q_d, Q_s, Q_x) and the softmax weights, for the numpy path."""
        D, C, kappa = self.D, self.C, self.kappa
        alpha, gamma, rho = (np.asarray(p[k], dtype=float) for k in ("alpha", "gamma", "rho"))
        Sa, Sg, Sr = self.softmax_weights(gamma, rho)
        ex = (slice(None), None, None, None)
        N = Sa[ex] * self.cv + Sg[ex] * (self.s - self.cv) + Sr[ex] * (self.T - self.s)
        z = kappa * alpha[ex] * N  # (B, nT, P, 3)
        sg = [self._poly(c, z) for c in self._c]  # σ, σ', σ'', σ'''
        n = self.n
        tabs = {"F": (n * sg[0]).sum(-1), "A1": (n * sg[1] ** 2).sum(-1),
                "B": (n * sg[1]).sum(-1), "E4": (n * sg[2]).sum(-1)}
        tabs["A2"] = tabs["B"] ** 2  # a set's (Σ_{i∈S} σ'(z_i))²: one pattern per set
        Qd = Sa * Sa + (C - 1) * Sg * Sg + (D - C) * Sr * Sr
        Qs = 2 * Sa * Sg + (C - 2) * Sg * Sg + (D - C) * Sr * Sr
        Qx = 2 * Sa * Sr + 2 * (C - 1) * Sg * Sr + (D - 2 * C) * Sr * Sr
        return tabs, sg, N, (Qd, Qs, Qx), (Sa, Sg, Sr)

    @staticmethod
    def _row_terms(X, y, Q):
        """Per row: the margin m, sigmoid(m), ℓ'(m), ℓ''(m), S₂ and the second-order term L₂."""
        Qd, Qs, Qx = Q
        m = y * X["F"]
        pm = 0.5 * (1.0 + np.tanh(0.5 * m))  # sigmoid(m), no overflow
        l1 = pm - 1.0  # ℓ'(m) = −sigmoid(−m)
        l2 = pm * (1.0 - pm)  # ℓ''(m)
        S2 = ((Qd - Qs)[:, None] * X["A1"] + (Qs - Qx)[:, None] * X["A2"]
              + Qx[:, None] * X["B"] ** 2)
        L2 = l2 * S2 + y * l1 * Qd[:, None] * X["E4"]
        return m, pm, l1, l2, S2, L2

    def noise_moments(self, p) -> dict[str, np.ndarray]:
        """Two expectations at β = 0 (arrays (B,)): ``L2`` = E[L₂], so that the curvature of the
        risk along any noise direction of v is ∂²L/∂β² = (κσ)²·E[L₂]; and ``V`` =
        E[ℓ'(yF)²·S₂], so that the gradient of one sample's loss along a unit noise direction
        has variance σ²κ²·V."""
        tabs, _, _, Q, _ = self._tables(p)
        L2m, Vm = np.zeros(self.B), np.zeros(self.B)
        for y, rows, Mext, _ in self._sides:
            X = {k: (v[:, rows, :] * Mext).sum(-1) for k, v in tabs.items()}
            _, _, l1, _, S2, L2 = self._row_terms(X, y, Q)
            L2m += (self.w * L2).sum(-1)
            Vm += (self.w * l1 * l1 * S2).sum(-1)
        return {"L2": L2m, "V": Vm}

    def evaluate_numpy(self, p, need_grad=True):
        """[`evaluate`][] with numpy array operations (the path without numba; the tests
        compare both)."""
        D, C, kappa, tau = self.D, self.C, self.kappa, self.tau
        alpha, beta = (np.asarray(p[k], dtype=float) for k in ("alpha", "beta"))
        tabs, sg, N, Q, (Sa, Sg, Sr) = self._tables(p)
        Qd, Qs, Qx = Q
        ex = (slice(None), None, None, None)
        n = self.n
        e2 = (kappa * self.sigma * beta) ** 2 / 2
        tie = self.tie_tol * D * self._major(kappa * np.abs(alpha))
        B = self.B
        loss, err, ties, L2sum = np.zeros(B), np.zeros(B), np.zeros(B), np.zeros(B)
        sums = {k: np.zeros(B) for k in ("A1", "A2", "B2", "E4")}
        Rtab = dict.fromkeys(tabs, 0.0)
        w = self.w
        for y, rows, Mext, OH in self._sides:
            X = {k: (v[:, rows, :] * Mext).sum(-1) for k, v in tabs.items()}  # (B, R)
            m, pm, l1, l2, S2, L2 = self._row_terms(X, y, Q)
            loss += (w * (np.logaddexp(0.0, -m) + e2[:, None] * L2)).sum(-1)
            err += (w * (m < -tie[:, None])).sum(-1)
            ties += (w * (np.abs(m) <= tie[:, None])).sum(-1)
            if not need_grad:
                continue
            l3 = l2 * (1.0 - 2.0 * pm)  # ℓ'''(m)
            L2sum += (w * L2).sum(-1)
            we = w * e2[:, None]
            sums["A1"] += (we * l2 * X["A1"]).sum(-1)
            sums["A2"] += (we * l2 * X["A2"]).sum(-1)
            sums["B2"] += (we * l2 * X["B"] ** 2).sum(-1)
            sums["E4"] += (we * y * l1 * X["E4"]).sum(-1)
            coef = {"F": w * (y * l1) + we * (y * l3 * S2 + l2 * Qd[:, None] * X["E4"]),
                    "A1": we * l2 * (Qd - Qs)[:, None], "A2": we * l2 * (Qs - Qx)[:, None],
                    "B": we * l2 * 2 * Qx[:, None] * X["B"], "E4": we * y * l1 * Qd[:, None]}
            for k, c in coef.items():  # scatter back to the T-tables: (B, nT, P)
                Rtab[k] = Rtab[k] + OH @ (c[:, :, None] * Mext)
        error_fair = err + 0.5 * ties
        if not need_grad:
            return loss, error_fair, ties, None
        # derivatives of z per parameter, and of the tables through σ', σ'', σ'''
        dN = {"gamma": (Sg / tau)[ex] * ((self.s - self.cv) - (C - 1) * N),
              "rho": (Sr / tau)[ex] * ((self.T - self.s) - (D - C) * N)}
        dz = {"alpha": kappa * N, **{k: kappa * alpha[ex] * v for k, v in dN.items()}}
        grads = {}
        for th, d in dz.items():
            dt = {"F": (n * sg[1] * d).sum(-1), "A1": (n * 2 * sg[1] * sg[2] * d).sum(-1),
                  "B": (n * sg[2] * d).sum(-1), "E4": (n * sg[3] * d).sum(-1)}
            dt["A2"] = 2 * tabs["B"] * dt["B"]
            grads[th] = sum((Rtab[k] * dt[k]).sum((1, 2)) for k in tabs)
        # the covariances Q depend on γ and ρ through the softmax weights
        for th, k, Sk in (("gamma", C - 1.0, Sg), ("rho", D - C, Sr)):
            dSa = -Sa * k * Sk / tau
            dSg = ((th == "gamma") * Sg - Sg * k * Sk) / tau
            dSr = ((th == "rho") * Sr - Sr * k * Sk) / tau
            dQd = 2 * Sa * dSa + 2 * (C - 1) * Sg * dSg + 2 * (D - C) * Sr * dSr
            dQs = (2 * (dSa * Sg + Sa * dSg) + 2 * (C - 2) * Sg * dSg
                   + 2 * (D - C) * Sr * dSr)
            dQx = (2 * (dSa * Sr + Sa * dSr) + 2 * (C - 1) * (dSg * Sr + Sg * dSr)
                   + 2 * (D - 2 * C) * Sr * dSr)
            grads[th] = grads[th] + (sums["A1"] * (dQd - dQs) + sums["A2"] * (dQs - dQx)
                                     + sums["B2"] * dQx + sums["E4"] * dQd)
        grads["beta"] = (kappa * self.sigma) ** 2 * beta * L2sum
        return loss, error_fair, ties, grads

    def apply(self, p, g):
        """One GD step: v by lr_v in (α, β); every off-diagonal entry of A by lr_A (the γ and ρ
        gradients are sums over D(C − 1) and D(D − C) entries)."""
        return {"alpha": p["alpha"] - self.lr_v * g["alpha"],
                "beta": p["beta"] - self.lr_v * g["beta"],
                **offdiag_step(p, g, self.lr_A, self.D, self.C)}

    def run(self, steps: int, stop=None) -> pd.DataFrame:
        """GD for at most `steps` steps from the starts, every step kept.

        **Arguments:**

        - `steps`: the horizon.
        - `stop`: ``stop(step, alpha, beta, gamma, rho) -> bool array (B,)``: a run whose
          entry is True ends at that step (no later rows); None: every run goes to `steps`.

        **Returns:** one row per (run, step): run, step, alpha, beta, gamma, rho, loss,
        error_fair and tie_mass (the population values at the parameters of that step), from
        which phase times are read to the step.
        """
        keys = ("alpha", "beta", "gamma", "rho")
        cols = (*keys, "loss", "error_fair", "tie_mass")
        B = self.B
        hist = np.full((steps + 1, B, len(cols)), np.nan)
        alive = np.ones(B, dtype=bool)
        last = np.full(B, steps)
        p = {k: v.copy() for k, v in self.params.items()}
        with np.errstate(over="ignore", under="ignore"):
            for step in range(steps + 1):
                cur = np.stack([p[k] for k in keys], axis=-1)
                if stop is not None:
                    hit = np.asarray(stop(step, *cur.T), dtype=bool) & alive
                    last[hit] = step
                    now = alive.copy()
                    alive &= ~hit
                else:
                    now = alive
                final = step == steps or not alive.any()
                loss, err, ties, g = self.evaluate(p, need_grad=not final)
                hist[step, now] = np.column_stack([cur, loss, err, ties])[now]
                if final:
                    last[alive] = step
                    break
                new = self.apply(p, g)
                p = {k: np.where(alive, new[k], p[k]) for k in keys}
        parts = [pd.DataFrame({"run": b, "step": np.arange(last[b] + 1),
                               **{c: hist[:last[b] + 1, b, i] for i, c in enumerate(cols)}})
                 for b in range(B)]
        return pd.concat(parts, ignore_index=True)
