"""The reduced population dynamics of Huang et al. (2025)'s MAE problem as an engine
(``train.engine = "population-reduced"``): exact population gradient descent from Q⁰ = 0 on
the seven numbers per query class that the symmetries of the data law leave free, at any P.

**Reduction** (DERIVED; docs/papers/huang2024.md §4.5, checked in
proofs_checks/huang2024/check_exchangeable.py). The loss of a masked query p depends on
row p of (Φ, Υ) only, and with one cluster the data and mask laws are invariant under permuting
the keys within a class (for a local p: p itself, the other C − 1 keys of its area, the global
area's keys, every other key; the other local areas among themselves). Population GD from
Q⁰ = 0 therefore keeps each row constant on these classes, and a local and a global query carry
the seven [`REDUCED_COORDS`][] each (φ_own, φ_trk, φ_rest, υ_self, υ_own, υ_trk, υ_rest; the
tracked area is the global one for a local query, none for a global one).

**What is summed and what is neglected.** For a query of class (c_own, c_trk, n_rest, c_rest)
the softmax denominator is

    D = n_t e^{z_t φ_trk + υ_trk} + [c_trk − n_t] e^{υ_trk} + n_o e^{z_o φ_own + υ_own}
        + [c_own − n_o] e^{υ_own} + [e^{υ_self}] + Z_rest,

the bracketed terms only with masked keys in the softmax (``model.mask_keys``), and
ℓ = ½[z_t² S_t² + z_o² (S_o − 1)² + q_rest/D²] with S_t = n_t e^{…}/D, S_o likewise. The
unmasked counts n_t ~ Bin(c_trk, 1 − γ), n_o ~ Bin(c_own, 1 − γ) and the coefficients z_t, z_o
(the config's coefficient nodes) are summed. The rest areas enter through their share Z_rest of
D and their numerator q_rest = Σ_m z_m² n_m² e^{2 z_m φ_rest + 2υ_rest}:

- masked keys in: Z_rest = n_rest c_rest e^{υ_rest}(γ + (1 − γ) E e^{zφ_rest}) and q_rest by
  their means. Exact while φ_rest = 0 (the rest's share of D is then the constant
  n_rest c_rest e^{υ_rest}, masked or not; q_rest is independent of D);
- masked keys out: the rest's unmasked count N_x ~ Bin(n_rest c_rest, 1 − γ) is summed too
  (by a Gauss rule of at most ``REST_COUNT_NODES`` nodes when ``train.count_nodes`` > 0),
  and given N_x the rest's coefficients and the split of N_x among its areas enter by their
  conditional means (multivariate hypergeometric second moment). Exact while φ_rest = 0.

What is neglected otherwise is the fluctuation of the rest's share of D given the summed counts,
of relative size √v ([`rest_variance`][]; recorded as ``neglect``), and a relative O(1/n_rest)
error in φ_rest's own rate (docs/papers/huang2024.md §4.5).

**Counts: exact sums or a Gauss rule** (``train.count_nodes`` = m). A count with at most m + 1
values is summed exactly. A larger one (the global area's keys: C1 ≈ P^κ_s of them) is summed
with the m-node Gauss rule of its own binomial law (Golub–Welsch on the Krawtchouk recurrence:
exact for every polynomial of degree < 2m in the count). The summands are rational in the count
with their poles at distance O(P) from the binomial's bulk of width O(√C1), so the rule
converges geometrically; its error against the exact sums is measured on the overlap
(tests/huang2024/test_engines_reduced.py and the ``population-reduced`` benchmark). With
m = 0 every count is summed exactly, its pmf cut where it falls below ``PMF_CUT`` of its
largest value (a relative mass below (c + 1)·``PMF_CUT``).

Backends (``train.backend``): numpy, or torch on ``train.device`` (CUDA when present); the
same code path (theorylab.core.backend). The state is the two classes' seven numbers; the full
(Φ, Υ) arrays are built only when asked ([`ReducedParams`][]) and only up to ``EXPAND_MAX_P``
patches (above it a run's ``RunResult.Phi`` and ``Ups`` are None; ``final_state.npz`` holds
the seven numbers of each class).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property

import numpy as np
from scipy.linalg import eigh_tridiagonal
from scipy.special import gammaln

from theorylab.core.backend import get_backend
from theorylab.core.engine import Engine

from ..config import ExperimentConfig
from ..data import zlaw_nodes

__all__ = ["REDUCED_COORDS", "PMF_CUT", "EXPAND_MAX_P", "DEFAULT_COUNT_NODES",
           "REST_COUNT_NODES", "QueryClass",
           "query_classes", "count_rule", "reduced_premise", "reduced_lstar", "ReducedParams",
           "ReducedEvaluation", "ReducedEngine", "class_terms", "rest_variance"]

#: The seven coordinates of a query's reduced state, in order.
REDUCED_COORDS = ("phi_own", "phi_trk", "phi_rest", "ups_self", "ups_own", "ups_trk",
                  "ups_rest")
#: Exact count sums drop the binomial pmf where it falls below this fraction of its largest
#: value (at P = 576 the readings agree with the uncut sums to every printed digit).
PMF_CUT = 1e-18
#: Largest P whose full (Φ, Υ) arrays [`ReducedParams`][] builds on request (Υ is P×P).
EXPAND_MAX_P = 4096
#: ``train.count_nodes`` when the config leaves it at 0 for this engine is *exact sums*; the
#: ladders use this many nodes (error against the exact sums measured, module docstring).
DEFAULT_COUNT_NODES = 24
#: With masked keys left out, the rest areas' unmasked count (≈ P keys, relative spread
#: 1/√P) is summed with at most this many Gauss nodes: against 24 nodes, Φ after 300 steps
#: moves by ≤ 3e−13 at P = 1296 and ≤ 4e−16 at P = 20736 (measured), and a step is ~30×
#: cheaper.
REST_COUNT_NODES = 6


@dataclass(frozen=True)
class QueryClass:
    """The keys a masked query sees, by class: `c_own` other keys of its own area, `c_trk` keys
    of the tracked area (the global one for a local query; 0 for a global query) and `n_rest`
    further areas of `c_rest` keys each."""

    c_own: int
    c_trk: int
    n_rest: int
    c_rest: int

    @property
    def sizes(self) -> tuple[int, int, int, int]:
        """Keys per positional class (self, own, tracked, rest)."""
        return (1, self.c_own, self.c_trk, self.n_rest * self.c_rest)


def query_classes(P: int, C1: int, C: int) -> dict[str, QueryClass]:
    """The two query classes of one cluster with a global area of C1 and (P − C1)/C local
    areas of C: ``"local"`` (tracked: the global area) and ``"global"`` (rest: the locals)."""
    M = (P - C1) // C
    return {"local": QueryClass(C - 1, C1, M - 1, C), "global": QueryClass(C1 - 1, 0, M, C)}


def _binom_pmf(N: int, q: float) -> tuple[np.ndarray, np.ndarray]:
    n = np.arange(N + 1, dtype=np.float64)
    if q >= 1.0:
        return n[-1:], np.ones(1)
    if q <= 0.0:
        return n[:1], np.ones(1)
    logp = (gammaln(N + 1) - gammaln(n + 1) - gammaln(N - n + 1) + n * math.log(q)
            + (N - n) * math.log1p(-q))
    p = np.exp(logp - logp.max())
    keep = p >= PMF_CUT
    p = p[keep]
    return n[keep], p / p.sum()


def count_rule(N: int, q: float, nodes: int) -> tuple[np.ndarray, np.ndarray]:
    """(values, weights) summing a function of n ~ Bin(N, q): the exact pmf (cut at
    ``PMF_CUT``) when `nodes` is 0 or N + 1 ≤ `nodes` + 1, else the `nodes`-point Gauss rule of
    the binomial law (Golub–Welsch on the monic Krawtchouk recurrence α_k = Nq + k(1 − 2q),
    β_k = k q(1 − q)(N − k + 1); exact for polynomials of degree < 2·nodes).

    **Arguments:**

    - `N`: the number of keys; `q`: the probability that a key is unmasked (1 − γ).
    - `nodes`: m (0: exact sums)."""
    if N <= 0 or q in (0.0, 1.0):
        return np.array([float(max(N, 0)) * (q >= 1.0)]), np.ones(1)
    if nodes <= 0 or N <= nodes:
        return _binom_pmf(N, q)
    k = np.arange(nodes, dtype=np.float64)
    alpha = N * q + k * (1.0 - 2.0 * q)
    beta = k[1:] * q * (1.0 - q) * (N - k[1:] + 1.0)
    x, v = eigh_tridiagonal(alpha, np.sqrt(beta))
    w = v[0] ** 2
    return x, w / w.sum()


def reduced_premise(cfg: ExperimentConfig) -> tuple[int, int, int]:
    """(P, C1, C) of a config the reduction covers, else ``ValueError`` naming the field: one
    cluster, Bernoulli masks, loss normalised by 1/P or not at all, Q⁰ = 0."""
    d, m, t = cfg.data, cfg.model, cfg.train
    if d.K != 1:
        raise ValueError(f"data.K: population-reduced needs one cluster (got {d.K})")
    if m.objective != "mae":
        raise ValueError("model.objective: population-reduced is an MAE engine")
    if m.mask != "bernoulli":
        raise ValueError("model.mask: population-reduced needs Bernoulli masks (the counts are "
                         "binomial)")
    if m.loss_norm not in ("P", "none"):
        raise ValueError("model.loss_norm: population-reduced needs 'P' or 'none' (1/|ℳ| "
                         "couples the queries' counts)")
    if t.init != "zero" or t.init_scale > 0:
        raise ValueError("train.init: population-reduced starts from Q⁰ = 0 (the reduction "
                         "needs the exchangeable start)")
    return int(d.P), int(d.global_size), int(d.local_size)


def _ez2(z: np.ndarray, w: np.ndarray) -> float:
    return float(w @ (z * z))


def _conditional_min(qc: QueryClass, gamma: float, z: np.ndarray, w: np.ndarray,
                     nodes: int) -> float:
    """min over the reduced state of the expected loss of a query of class `qc` given that
    every other key of its own area is masked, masked keys left out of the softmax: the
    output is then a mixture of the other areas' features, ½ z_o² + ½ E[z_t² S_t² + q/D²],
    minimised over (φ_trk, φ_rest, υ_trk, υ_rest) in [−40, 40] (L-BFGS-B from three starts,
    the gradient of [`class_terms`][])."""
    from scipy.optimize import minimize

    cq = QueryClass(0, qc.c_trk, qc.n_rest, qc.c_rest)
    grid = _ClassGrid(cq, gamma, z, w, False, nodes, get_backend("numpy"))
    free = (1, 2, 5, 6)
    scale = np.array([1.0, max(cq.n_rest, 1), max(cq.c_trk, 1), max(cq.n_rest * cq.c_rest, 1)])

    def f(x):
        th = np.zeros(len(REDUCED_COORDS))
        th[list(free)] = x
        t = class_terms(grid, th, True)
        return t["ell"], t["grad"][list(free)] * scale

    best = math.inf
    for x0 in (np.zeros(4), np.array([-2.0, 0.0, 0.0, 0.0]), np.array([0.0, 0.0, -5.0, 0.0])):
        r = minimize(f, x0, jac=True, method="L-BFGS-B", bounds=[(-40.0, 40.0)] * 4)
        best = min(best, float(r.fun))
    return best


def reduced_lstar(cfg: ExperimentConfig, z: np.ndarray, w: np.ndarray) -> float:
    """The infimum L* of the population loss (one cluster). Masked keys in the softmax:
    ½ E z² · Σ_areas C γ^C · norm (``engine_base.population_lstar``'s formula, closed form:
    a query whose own area is fully masked attends its masked self key). Masked keys left
    out: a query with an unmasked own key reaches loss 0 (φ_own → ∞); one whose own keys are
    all masked (probability γ^{c_own}) must spread its attention over the other areas, and its
    least expected loss is computed over the reduced state ([`_conditional_min`][]; the
    infimum within the exchangeable family, which carries the mean-field rest of the engine:
    declared, not proved, to be the full model's)."""
    P, C1, C = reduced_premise(cfg)
    g = float(cfg.model.gamma)
    norm = 1.0 / P if cfg.model.loss_norm == "P" else 1.0
    if not cfg.model.mask_keys:
        qcs = query_classes(P, C1, C)
        nodes = int(cfg.train.count_nodes)
        total = 0.0
        for k, count in (("global", C1), ("local", P - C1)):
            qc = qcs[k]
            p_all = g ** qc.c_own
            if p_all > 1e-300:
                total += count * p_all * _conditional_min(qc, g, z, w, nodes)
        return g * norm * total
    M = (P - C1) // C
    return 0.5 * _ez2(z, w) * norm * (C1 * g ** C1 + M * C * g ** C)


@dataclass
class ReducedParams:
    """The reduced state: ``theta[cls]`` the seven [`REDUCED_COORDS`][] of query class ``cls``
    (``"local"``, ``"global"``), with the sizes needed to build the full arrays."""

    theta: dict
    P: int
    C1: int
    C: int

    def _labels(self) -> np.ndarray:
        # area 0 the global area (first C1 patches), then local areas of C in order: the
        # engine's own layout (with one cluster any relabelling gives the same dynamics)
        lab = np.zeros(self.P, dtype=np.int64)
        lab[self.C1:] = 1 + np.arange(self.P - self.C1) // self.C
        return lab

    @property
    def Phi(self) -> np.ndarray | None:
        """Φ (P, F) in the layout of ``_labels`` (F = number of areas); None above
        ``EXPAND_MAX_P`` patches (the state is ``theta``)."""
        if self.P > EXPAND_MAX_P:
            return None
        lab = self._labels()
        F = int(lab.max()) + 1
        out = np.empty((self.P, F))
        for p in range(self.P):
            th = self.theta["global" if lab[p] == 0 else "local"]
            out[p, :] = th[2]
            out[p, lab[p]] = th[0]
            if lab[p] != 0:
                out[p, 0] = th[1]
        return out

    @property
    def Ups(self) -> np.ndarray | None:
        """Υ (P, P) in the layout of ``_labels``; None above ``EXPAND_MAX_P`` patches."""
        if self.P > EXPAND_MAX_P:
            return None
        lab = self._labels()
        out = np.empty((self.P, self.P))
        for p in range(self.P):
            th = self.theta["global" if lab[p] == 0 else "local"]
            row = np.full(self.P, th[6])
            row[lab == lab[p]] = th[4]
            if lab[p] != 0:
                row[lab == 0] = th[5]
            row[p] = th[3]
            out[p] = row
        return out


@dataclass
class ReducedEvaluation:
    """One evaluation: the population loss, L*, the gradients per class (seven coordinates),
    the attention masses and the neglected order."""

    loss: float
    loss_star: float
    grads: dict | None
    terms: dict
    neglect: float


class _ClassGrid:
    """The summation grid of one query class on a backend: axes (n_t, n_o, N_x, z_t, z_o)."""

    def __init__(self, qc: QueryClass, gamma: float, z: np.ndarray, pz: np.ndarray,
                 mask_keys: bool, nodes: int, xp) -> None:
        self.qc, self.gamma, self.mask_keys, self.xp = qc, gamma, mask_keys, xp
        q = 1.0 - gamma
        nt, wt = count_rule(qc.c_trk, q, nodes)
        no, wo = count_rule(qc.c_own, q, nodes)
        n_x = qc.n_rest * qc.c_rest
        if mask_keys:
            nx, wx = np.zeros(1), np.ones(1)
        else:
            nx, wx = count_rule(n_x, q, min(nodes, REST_COUNT_NODES) if nodes else 0)
        nz = len(z)
        sh = (len(nt), len(no), len(nx), nz, nz)
        self.shape = sh
        self.NT = xp.asarray(nt.reshape(-1, 1, 1, 1, 1))
        self.NO = xp.asarray(no.reshape(1, -1, 1, 1, 1))
        self.ZT = xp.asarray(z.reshape(1, 1, 1, -1, 1))
        self.ZO = xp.asarray(z.reshape(1, 1, 1, 1, -1))
        W = (wt.reshape(-1, 1, 1, 1, 1) * wo.reshape(1, -1, 1, 1, 1)
             * wx.reshape(1, 1, -1, 1, 1) * pz.reshape(1, 1, 1, -1, 1)
             * pz.reshape(1, 1, 1, 1, -1))
        self.W = xp.asarray(W)
        self.z, self.pz = z, pz
        # the rest's count N_x (keys out) and Σ_m E[n_m² | N_x] (multivariate hypergeometric)
        if mask_keys:
            self.NX = None
            self.R2 = None
        else:
            n_rest = qc.n_rest
            if n_rest > 0 and n_x > 1:
                pi = 1.0 / n_rest
                r2 = n_rest * (nx * pi * (1 - pi) * (n_x - nx) / (n_x - 1) + (nx * pi) ** 2)
            else:
                r2 = nx * nx
            self.NX = xp.asarray(nx.reshape(1, 1, -1, 1, 1))
            self.R2 = xp.asarray(r2.reshape(1, 1, -1, 1, 1))
            self.ENX = float(wx @ nx)
            self.ER2 = float(wx @ r2)
        self.n_x = n_x


def class_terms(grid: _ClassGrid, theta, grad: bool) -> dict:
    """E ℓ, the attention masses (own, tracked, masked keys), E D and, with `grad`, ∂E ℓ/∂θ of
    one query class at the reduced state `theta` (module docstring; the derivative along a
    coordinate that moves D by dD, the tracked and own weights by de_t, de_o and the rest's
    numerator by dq is dℓ = z_t² S_t (de_t − S_t dD)/D + z_o² (S_o − 1)(de_o − S_o dD)/D
    + dq/(2D²) − q dD/D³, checked symbolically in
    proofs_checks/huang2024/check_reduced_dynamics.py)."""
    xp = grid.xp
    qc, g = grid.qc, grid.gamma
    phi_o, phi_t, phi_x, u_s, u_o, u_t, u_x = (float(v) for v in theta)
    z, pz = grid.z, grid.pz
    ezx = np.exp(z * phi_x)
    M1 = float(pz @ ezx)
    M1d = float(pz @ (z * ezx))
    M2 = float(pz @ (z * z * ezx * ezx))
    M2d = float(pz @ (2 * z ** 3 * ezx * ezx))
    Eut, Euo, Eux = math.exp(u_t), math.exp(u_o), math.exp(u_x)
    NT, NO, ZT, ZO, W = grid.NT, grid.NO, grid.ZT, grid.ZO, grid.W
    e_t = NT * xp.exp(ZT * phi_t) * Eut
    e_o = NO * xp.exp(ZO * phi_o) * Euo
    if grid.mask_keys:
        m_t = (qc.c_trk - NT) * Eut
        m_o = (qc.c_own - NO) * Euo
        s = math.exp(u_s)
        masked_rest = grid.n_x * g * Eux
        Zx = grid.n_x * Eux * (g + (1 - g) * M1)
        en2 = qc.c_rest * (1 - g) * (g + qc.c_rest * (1 - g))
        qx = qc.n_rest * en2 * M2 * Eux * Eux
        dZx = grid.n_x * Eux * (1 - g) * M1d
        dqx = qc.n_rest * en2 * M2d * Eux * Eux
        D = e_t + m_t + e_o + m_o + (s + Zx)
        masked = m_t + m_o + (s + masked_rest)
    else:
        m_t = m_o = 0.0
        s = 0.0
        Zx = grid.NX * (Eux * M1)
        qx = grid.R2 * (M2 * Eux * Eux)
        dZx = grid.NX * (Eux * M1d)
        dqx = grid.R2 * (M2d * Eux * Eux)
        D = e_t + e_o + Zx
        masked = 0.0
    pos = D > 0
    Ds = D + (~pos) * 1.0  # no key left (keys out): F_p = 0, ℓ = ½ z_o²
    S_t, S_o = e_t / Ds, e_o / Ds
    ZT2, ZO2 = ZT * ZT, ZO * ZO
    ell = 0.5 * (ZT2 * S_t * S_t + ZO2 * (S_o - 1) ** 2 + qx / (Ds * Ds))
    out = {"ell": float(xp.sum(W * ell)), "attn_own": float(xp.sum(W * S_o)),
           "attn_trk": float(xp.sum(W * S_t)),
           "attn_masked": float(xp.sum(W * (masked / Ds))) if grid.mask_keys else 0.0,
           "mean_den": float(xp.sum(W * D))}
    if not grad:
        return out
    # dℓ along each coordinate, summed with the weights (the moves (dD, de_t, de_o, dq) of
    # φ_own, φ_trk, φ_rest, υ_self, υ_own, υ_trk, υ_rest are (z_o e_o, 0, z_o e_o, 0),
    # (z_t e_t, z_t e_t, 0, 0), (dZ_rest, 0, 0, dq_rest), (e^{υ_self}, 0, 0, 0),
    # (e_o + m_o, 0, e_o, 0), (e_t + m_t, e_t, 0, 0), (Z_rest, 0, 0, 2 q_rest))
    WP = W * pos
    A_t = ZT2 * S_t / Ds
    A_o = ZO2 * (S_o - 1) / Ds
    WB = WP * (A_t * S_t + A_o * S_o + qx / (Ds * Ds * Ds))
    Wi = WP * (0.5 / (Ds * Ds))
    Wo = WP * A_o * e_o - WB * e_o
    Wt = WP * A_t * e_t - WB * e_t
    sB = float(xp.sum(WB))
    gr = np.empty(7)
    gr[0] = float(xp.sum(Wo * ZO))
    gr[1] = float(xp.sum(Wt * ZT))
    if grid.mask_keys:
        gr[2] = -dZx * sB + dqx * float(xp.sum(Wi))
        gr[3] = -s * sB
        gr[4] = float(xp.sum(Wo)) - float(xp.sum(WB * m_o))
        gr[5] = float(xp.sum(Wt)) - float(xp.sum(WB * m_t))
        gr[6] = -Zx * sB + 2 * qx * float(xp.sum(Wi))
    else:
        gr[2] = float(xp.sum(Wi * dqx - WB * dZx))
        gr[3] = 0.0
        gr[4] = float(xp.sum(Wo))
        gr[5] = float(xp.sum(Wt))
        gr[6] = float(xp.sum(Wi * (2 * qx) - WB * Zx))
    # per coordinate: one rest area's Φ, one key's Υ (the class total over its members)
    gr[2] = gr[2] / qc.n_rest if qc.n_rest else 0.0
    for i, size in enumerate(qc.sizes):
        gr[3 + i] = gr[3 + i] / size if size else 0.0
    out["grad"] = gr
    return out


def rest_variance(grid: _ClassGrid, theta, mean_den: float) -> float:
    """The relative variance v of the rest areas' share of D that the reduction replaces by its
    (conditional) mean, over (E D)²: with masked keys in Var(Σ_m n_m (e^{z_m φ_rest} − 1))
    e^{2υ_rest} over independent binomial n_m and coefficients; with them out, given the summed
    rest count N_x, E[Σ_m n_m² | N_x] Var(e^{zφ_rest}) e^{2υ_rest}. 0 while φ_rest = 0."""
    qc, g = grid.qc, grid.gamma
    z, pz = grid.z, grid.pz
    d = np.exp(z * float(theta[2])) - 1.0
    e2u = math.exp(2 * float(theta[6]))
    if grid.mask_keys:
        c, q = qc.c_rest, 1.0 - g
        en, en2 = c * q, c * q * (g + c * q)
        var = qc.n_rest * e2u * (en2 * float(pz @ (d * d)) - (en * float(pz @ d)) ** 2)
    else:
        var = grid.ER2 * e2u * max(float(pz @ (d * d)) - float(pz @ d) ** 2, 0.0)
    return float(var / mean_den ** 2) if mean_den > 0 else 0.0


class ReducedEngine(Engine):
    """``population-reduced``: population GD on the reduced state (module docstring)."""

    name = "population-reduced"

    def __init__(self, cfg: ExperimentConfig, structure=None) -> None:
        P, C1, C = reduced_premise(cfg)
        self.cfg, self.P, self.C1, self.C = cfg, P, C1, C
        d, m, t = cfg.data, cfg.model, cfg.train
        self.gamma = float(m.gamma)
        self.mask_keys = bool(m.mask_keys)
        self.z, self.pz = zlaw_nodes(d.z_law, d.L, d.U, d.z_values, d.z_probs, t.z_nodes)
        self.xp = get_backend(t.backend, t.dtype, t.device)
        self.nodes = int(t.count_nodes)
        self.classes = query_classes(P, C1, C)
        self.grids = {k: _ClassGrid(qc, self.gamma, self.z, self.pz, self.mask_keys,
                                    self.nodes, self.xp) for k, qc in self.classes.items()}
        norm = 1.0 / P if m.loss_norm == "P" else 1.0
        #: the weight of one masked query's expected loss: P[p masked]·norm (K = 1)
        self.query_weight = self.gamma * norm
        self.lr = float(t.lr)
        self.lstar = reduced_lstar(cfg, self.z, self.pz)
        self._structure = structure

    @cached_property
    def structure(self):
        """The area structure of the config (built on first use)."""
        return self._structure or self.cfg.data.make_structure()

    def initial_params(self) -> ReducedParams:
        return ReducedParams({k: np.zeros(len(REDUCED_COORDS)) for k in self.classes},
                             self.P, self.C1, self.C)

    def evaluate(self, params: ReducedParams, step: int, *, need_grad: bool,
                 record: bool) -> ReducedEvaluation:
        terms = {k: class_terms(self.grids[k], params.theta[k], need_grad)
                 for k in self.classes}
        P, C1 = self.P, self.C1
        loss = self.query_weight * (C1 * terms["global"]["ell"]
                                    + (P - C1) * terms["local"]["ell"])
        grads = ({k: self.query_weight * terms[k]["grad"] for k in self.classes}
                 if need_grad else None)
        neglect = math.sqrt(max(rest_variance(self.grids[k], params.theta[k],
                                              terms[k]["mean_den"]) for k in self.classes))
        return ReducedEvaluation(loss, self.lstar, grads, terms, neglect)

    def apply(self, params: ReducedParams, grads) -> ReducedParams:
        return ReducedParams({k: params.theta[k] - self.lr * grads[k] for k in self.classes},
                             params.P, params.C1, params.C)

    def watched(self, ev: ReducedEvaluation) -> dict[str, object]:
        return {"loss": ev.loss}

    def record(self, params: ReducedParams, step: int, ev: ReducedEvaluation) -> dict:
        lq, gq = params.theta["local"], params.theta["global"]
        tl, tg = ev.terms["local"], ev.terms["global"]
        return {"loss": ev.loss, "loss_se": math.nan, "loss_star": ev.loss_star,
                "excess_loss": ev.loss - ev.loss_star,
                "phi_own_gq": float(gq[0]), "phi_glob_gq": float(gq[0]),
                "phi_own_lq": float(lq[0]), "phi_glob_lq": float(lq[1]),
                "attn_own_gq": tg["attn_own"], "attn_glob_gq": tg["attn_own"],
                "attn_masked_gq": tg["attn_masked"],
                "attn_own_lq": tl["attn_own"], "attn_glob_lq": tl["attn_trk"],
                "attn_masked_lq": tl["attn_masked"], "engine": self.name}

    def params_to_arrays(self, params: ReducedParams) -> dict[str, np.ndarray]:
        return {f"theta_{k}": np.asarray(v, dtype=np.float64) for k, v in params.theta.items()}

    def params_from_arrays(self, arrays) -> ReducedParams:
        return ReducedParams({k: np.asarray(arrays[f"theta_{k}"], np.float64)
                              for k in self.classes}, self.P, self.C1, self.C)
