"""Exact population risk for partition-symmetric states by exchangeability, problem (P).

State (Lemmas 4.1–4.2 as reconstructed in the paper notes §4.3): v = α·w*, A_ii = a (frozen),
A_ij = γ in the same set, ρ across sets. Then (DERIVED, notes §4.7), with S_a, S_γ, S_ρ the
three softmax values of a row,

    H_i = κ α [S_a c_i + S_γ (s_ℓ(i) − c_i) + S_ρ (T − s_ℓ(i))],   s_ℓ = Σ_{j∈S_ℓ} c_j, T = Σ_j c_j,

so F depends on the data only through the per-set count patterns (n₊, n₀, n₋) and T. The L−1
non-signal sets are i.i.d., so the expectation is an exact sum over histograms m of patterns
(multinomial weights), (L−1+P−1 choose P−1) terms with P = (C+1)(C+2)/2 patterns, instead of
2·L·3^{D−C} configurations. The gradient in γ (resp. ρ) is the sum of ∂L/∂A_ik over the D(C−1)
same-set (resp. D(D−C) cross-set) entries; a GD step on the full matrix moves each entry by
−lr·(that sum)/(number of entries), which is what [`apply`][] does, so trajectories coincide
with full-matrix GD from the same symmetric state.

Layout: the histogram table is kept as int8/int16 (on the device when it fits) and
sorted by t = Σ_k m_k s_k. Within a block of equal t every histogram reads the same rows
Φ[t ± C] of the T-tables, so F = M_block @ Φ[t ± C]ᵀ and R[t ± C] += M_blockᵀ @ coef are one
matrix product each (both y at once); the table is converted to the compute dtype one chunk at
a time. On CPU this is 1.1–2× faster than gathering Φ per row and scattering with index_add
(D = 32 and 64, C = 2; docs/performance.md). The signal set is an extra column of ones in the
table (its pattern is k₊ for y = +1 and k₋ for y = −1, read from the same rows Φ[t ± C]), so no
per-row index is stored: 1 byte per histogram instead of 24 (int64 t and two row indices), and
another 10–20 % faster on CPU.
"""

from __future__ import annotations

import functools
import math

import numpy as np
from scipy import special

from ..observables import symmetric_A
from ._base import Engine, Evaluation, iter_chunks

__all__ = ["ExchangeableEngine", "count_patterns", "histograms", "n_histograms",
           "pattern_log_probs"]


def count_patterns(C: int) -> np.ndarray:
    """All (n₊, n₀, n₋) with n₊ + n₀ + n₋ = C, shape (P, 3)."""
    return np.array(
        [(a, C - a - b, b) for a in range(C + 1) for b in range(C + 1 - a)], dtype=np.int64
    )


def pattern_log_probs(C: int, q: float) -> tuple[np.ndarray, np.ndarray]:
    """The count patterns of a set of C patches ([`count_patterns`][]) and the log probability
    of each: log multinomial + (n₊ + n₋) log(q/2) + n₀ log(1 − q), with 0·log 0 = 0 (−inf for
    a pattern of probability 0)."""
    pats = count_patterns(C)
    return pats, (special.gammaln(C + 1) - special.gammaln(pats + 1).sum(axis=1)
                  + special.xlogy(pats[:, 0] + pats[:, 2], q / 2)
                  + special.xlogy(pats[:, 1], 1 - q))


def offdiag_step(p, g, lr_A, D: int, C: int) -> dict:
    """One GD step of γ and ρ of a partition-symmetric A: every off-diagonal entry moves by
    ``lr_A`` (the gradients in γ and ρ are sums over its D(C − 1) and D(D − C) entries; with
    C = 1 there is no γ entry)."""
    return {"gamma": p["gamma"] - lr_A * g["gamma"] / (D * (C - 1)) if C > 1 else p["gamma"],
            "rho": p["rho"] - lr_A * g["rho"] / (D * (D - C))}


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


#: rows of the largest sub-table of [`histograms`][] enumerated at once by [`_sorted_table`][]
_BLOCK_ROWS = 1 << 18


def _prefix_blocks(n: int, P: int, max_rows: int | None = None):
    """The compositions of n into P parts in the order of [`histograms`][]``(n, P)``, as blocks
    ``(prefix, r, k)``: the rows that start with ``prefix`` followed by ``histograms(r, k)``, each
    at most ``max_rows`` (default [`_BLOCK_ROWS`][]) rows, or k = 1."""
    max_rows = _BLOCK_ROWS if max_rows is None else max_rows

    def rec(prefix, r, k):
        if k == 1 or n_histograms(r, k) <= max_rows:
            yield prefix, r, k
            return
        for a in range(r + 1):  # histograms() puts the first part in increasing order
            yield from rec(prefix + (a,), r - a, k - 1)

    yield from rec((), n, P)


def _sorted_table(L: int, P: int, live: np.ndarray, s: np.ndarray, logp: np.ndarray, small):
    """The histogram table of the L − 1 non-signal sets, stably sorted by t = Σ_k m_k s_k, with
    a last column of ones (the signal set), and each row's log multinomial weight.

    Built in two passes over blocks of [`_prefix_blocks`][] (a counting sort by t), so the peak
    is the table itself (n_hist·(P + 1) bytes in ``small``) plus n_hist float64 weights and one
    block, instead of ~125 bytes per histogram for sorting a full int16 copy. The order equals
    ``histograms(L − 1, live)`` sorted stably by t; table and weights do not depend on the block
    size (tests/jelassi2022/test_engines.py). Returns (table, log-weights, counts of each
    t from t_min to t_max, t_min)."""
    n, k_live = L - 1, live.size
    s_live = s[live]
    logp_live = logp[live]
    log_fact = special.gammaln(np.arange(L) + 1.0)  # log m! for m = 0..L−1, looked up
    sub: dict[tuple[int, int], np.ndarray] = {}

    def block(prefix, r, k):
        if (r, k) not in sub:  # a local cache: histograms()' own keeps only 8 tables
            sub[(r, k)] = histograms(r, k)
        rest = sub[(r, k)]
        head = np.broadcast_to(np.array(prefix, dtype=np.int16), (rest.shape[0], len(prefix)))
        return np.concatenate([head, rest], axis=1)  # (rows, k_live), int16

    t_lo = -n * int(np.abs(s_live).max()) if k_live else 0
    n_t = 2 * (-t_lo) + 1
    counts = np.zeros(n_t, dtype=np.int64)
    for pre, r, k in _prefix_blocks(n, k_live):  # pass 1: how many rows of each t
        counts += np.bincount(block(pre, r, k) @ s_live - t_lo, minlength=n_t)
    nz = np.flatnonzero(counts)
    counts = counts[nz[0]:nz[-1] + 1]
    t_min = t_lo + int(nz[0])
    n_hist = int(counts.sum())
    table = np.zeros((n_hist, P + 1), dtype=small)  # patterns of probability 0 stay at 0
    table[:, P] = 1
    logw = np.empty(n_hist)
    nxt = np.r_[0, np.cumsum(counts)[:-1]]  # next free row of each t
    for pre, r, k in _prefix_blocks(n, k_live):  # pass 2: place the rows, stably by t
        m = block(pre, r, k)
        tb = m @ s_live - t_min
        order = np.argsort(tb, kind="stable")
        sorted_t = tb[order]
        first = np.r_[0, np.flatnonzero(sorted_t[1:] != sorted_t[:-1]) + 1]
        rank = np.arange(tb.size) - np.repeat(first, np.diff(np.r_[first, tb.size]))
        pos = np.empty(tb.size, dtype=np.int64)
        pos[order] = nxt[sorted_t] + rank
        nxt += np.bincount(tb, minlength=counts.size)
        table[np.ix_(pos, live)] = m
        # row by row, in a fixed order (a BLAS product's rounding could depend on the block)
        logw[pos] = log_fact[n] - log_fact[m].sum(axis=1) + (m * logp_live).sum(axis=1)
    return table, logw, counts, t_min


class ExchangeableEngine(Engine):
    """Exact (P) on partition-symmetric states. ``params`` = {"gamma", "rho", "alpha"} floats."""

    name = "population-exchangeable"

    def __init__(self, cfg, xp, partition, wstar) -> None:
        super().__init__(cfg, xp, partition, wstar)
        C, L, q = partition.C, partition.L, cfg.data.q
        self.C, self.L = C, L
        pats, logp = pattern_log_probs(C, q)
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
        self.n_configs = n_hist
        P = pats.shape[0]
        small = np.int8 if L - 1 <= np.iinfo(np.int8).max else np.int16
        # sorted by t (group-by-t layout): within a block of equal t every row reads the same rows
        # Φ[t ± C] of the T-tables, so F = M_block @ Φ[t ± C]ᵀ and R[t ± C] += M_blockᵀ @ coef.
        # Column P is the signal set (count 1): its own pattern is k₊ (y = +1) or k₋ (y = −1),
        # so F and the gradient's scatter of the signal set are part of the same matmuls.
        Mt, logw, t_counts, t_min = _sorted_table(L, P, live, self.s, logp, small)
        self._t_min = t_min
        self._n_t = t_counts.size
        self._int_dtype = np.dtype(small).name
        item = xp.itemsize()
        # the compact table lives on the device when it fits in half of the free memory; otherwise
        # it stays on the host (page-locked for CUDA) and is copied block by block
        self._M_on_device = Mt.nbytes < 0.5 * xp.free_bytes()
        self._M = xp.asarray(Mt, dtype=self._int_dtype) if self._M_on_device else xp.to_host(Mt)
        del Mt
        np.exp(logw, out=logw)
        logw *= 0.5
        self.w_half = xp.asarray(logw)  # y = ±1 with probability 1/2 each
        del logw
        # a block's float copy of M and ~8 length-2 arrays per row: P + 17 values per row
        self.chunk = self.chunk_rows(item * (P + 17), self.n_configs)
        # chunks of rows, each cut into blocks of equal t: (chunk slice, [(a, b)], [row of t],
        # the same rows as a device index); no per-row t is kept: the rows of t = t_min + i are
        # starts[i]..starts[i + 1]
        starts = np.r_[0, np.cumsum(t_counts)]
        present = starts[:-1][t_counts > 0]  # first row of each t that occurs
        self.chunks = []
        for sl in iter_chunks(self.n_configs, self.chunk):
            cut = np.unique(np.r_[sl.start, present[(present > sl.start) & (present < sl.stop)],
                                  sl.stop])
            blocks = [(int(x - sl.start), int(y - sl.start)) for x, y in zip(cut[:-1], cut[1:])]
            tb = np.searchsorted(starts, cut[:-1], side="right") - 1  # each block's t − t_min
            self.chunks.append((sl, blocks, tb.tolist(), xp.asindex(tb)))

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

    def flow_arrays(self, params):
        """The flow's coordinates: γ, ρ and α themselves (an adaptive solver on the full A
        keeps its partition symmetry only to its tolerance)."""
        return {k: np.array(float(params[k])) for k in ("gamma", "rho", "alpha")}

    def flow_params(self, arrays):
        return {k: float(arrays[k]) for k in ("gamma", "rho", "alpha")}

    def params_from_arrays(self, arrays):
        from ..observables import gamma_rho, sym_dev

        A = np.asarray(arrays["A"], dtype=np.float64)
        # relative to the size of A: γ and ρ are stored through A = f(γ, ρ), so rounding is
        # relative (an absolute 1e-12 refused valid runs with large entries of A)
        scale = max(1.0, float(np.abs(A).max())) if A.size else 1.0
        if sym_dev(A, self.partition) > 1e-12 * scale:
            raise ValueError("resume: the checkpoint's A is not partition-symmetric "
                             f"(deviation {sym_dev(A, self.partition):.3g} at scale {scale:.3g})")
        g, r = gamma_rho(A, self.partition)
        return {"gamma": g, "rho": r, "alpha": float(np.asarray(arrays["v"]) @ self.wstar)}

    # -- the per-T tables -----------------------------------------------------------------------
    def tables(self, params, need_grad: bool):
        """Φ[T, k] = Σ_c n_{k,c} σ(z(c, s_k, T)) and dΦ/dθ for θ = α, γ, ρ.

        Shapes (2D+1, P), rows T = −D..D; float64 numpy arrays (they are tiny).
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
        return out

    def _block(self, sl):
        """Rows ``sl`` of the histogram table on the device, in the compute dtype."""
        xp = self.xp
        if self._M_on_device:
            return xp.cast(self._M[sl])
        return xp.chunk_to_device(self._M, sl)

    def evaluate(self, params, step, *, need_grad, record):
        # subnormal products w·σ(−m) (tiny weights, large margins) are flushed to zero: the slow
        # path of the CPU is avoided, the sums change by < 1e-300 (theorylab.core.backend)
        with self.flushing():
            return self._evaluate(params, need_grad)

    def _evaluate(self, params, need_grad):
        xp = self.xp
        tab = self.tables(params, need_grad)
        D, C, P = self.D, self.C, self.patterns.shape[0]
        kp, km = self.k_plus, self.k_minus
        # rows T = t + C (y = +1) and T = t − C (y = −1) of the T-tables for every t of the table
        t_all = np.arange(self._n_t) + self._t_min + D
        rows = (t_all + C, t_all - C)
        Phi = tab["Phi"]
        # Φ_pm[t] = (P + 1, 2): the L − 1 other sets' patterns, then the signal set's own pattern
        Phi_pm = xp.asarray(np.stack([
            np.concatenate([Phi[rows[0]], Phi[rows[0], kp, None]], axis=1),
            np.concatenate([Phi[rows[1]], Phi[rows[1], km, None]], axis=1),
        ], axis=-1))
        loss = error = ties = 0.0
        G = xp.zeros((self._n_t, 2 * (P + 1))) if need_grad else None
        tie = self.tie_tol * D * self.model.activation.majorant()(
            self.model.value_scale * abs(params["alpha"])
        )
        ys = xp.asarray([1.0, -1.0])
        nys = -ys
        for sl, blocks, tb_list, tb in self.chunks:
            Mc = self._block(sl)  # (n_c, P + 1)
            F = xp.concatenate([Mc[a:b] @ Phi_pm[j]
                                for (a, b), j in zip(blocks, tb_list)])  # (n_c, 2)
            w = self.w_half[sl]
            m = ys * F
            # weighted sums over the chunk's rows as (n_c,) @ (n_c, 2) products: no (n_c, 2)
            # temporaries of w times each term
            loss = loss + xp.sum(w @ xp.softplus_neg(m))
            error = error + xp.sum(w @ xp.cast(m <= tie))
            ties = ties + xp.sum(w @ xp.cast(xp.abs(m) <= tie))
            if need_grad:
                coef = w[:, None] * xp.sigmoid(-m) * nys  # w ℓ'(m) y, (n_c, 2)
                Rb = xp.stack([xp.swap(Mc[a:b]) @ coef[a:b] for a, b in blocks])
                G = xp.index_add(G, tb, Rb.reshape(len(blocks), 2 * (P + 1)))
        grads = None
        if need_grad:
            # ∂L/∂Φ[T, k]: scatter the per-t sums back to the rows T = t ± C of the T-tables
            G = xp.to_numpy(G).reshape(self._n_t, P + 1, 2)
            R = np.zeros((2 * D + 1, P))
            for col, (r, k_own) in enumerate(zip(rows, (kp, km))):
                R[r] += G[:, :P, col]  # the rows r are distinct
                R[r, k_own] += G[:, P, col]
            grads = {k: float(np.sum(R * tab["d" + k])) for k in ("alpha", "gamma", "rho")}
        return Evaluation(
            loss=xp.item(loss), error=xp.item(error), tie_mass=xp.item(ties), grads=grads
        )

    def apply(self, params, grads):
        return {"alpha": params["alpha"] - self.lr_v * grads["alpha"],
                **offdiag_step(params, grads, self.lr_A, self.D, self.C)}

    def full_gradient(self, grads) -> tuple[np.ndarray, np.ndarray]:
        """The equivalent full-matrix gradient (∂L/∂A with zero diagonal, ∂L/∂v)."""
        D, C = self.D, self.C
        gA = symmetric_A(
            D, self.partition, 0.0, grads["gamma"] / (D * (C - 1)) if C > 1 else 0.0,
            grads["rho"] / (D * (D - C)),
        )
        return gA, grads["alpha"] * self.wstar
