"""The plateau of CL's attention on the global area (Theorem 4.4, RECONSTRUCTED), derived in the
reduced contrastive model of [`cl`][theorylab.huang2024.cl] to leading order in P.

Model (docs/papers/huang2024.md §3; the paper's CL definitions were not read, so everything
here is DERIVED in the reconstruction): two views of an image by independent masks (each patch
masked with probability γ, masked keys in the softmax with logit Υ), mean pooling, the InfoNCE
loss with temperature τ and n negatives drawn from K equally likely clusters (a negative of
another cluster has similarity 0: its features are orthogonal).

**Reduction.** From Q⁰ = 0 every query is a positional e_p and the mean pooling weighs them
alike, so every row of (Φ, Υ) gets the same gradient: the rows stay equal, and by the symmetry
of the K clusters the state is one global FP correlation φ = Φ_{p→v_{k,1}} (every p, every k)
and the local ones φ_l = Φ_{p→v_{k,m}}, m ≥ 2. Each local correlation is a separate parameter
whose gradient carries its area's share O(C/P) of the output, so on the time scale on which φ
settles the local ones stay at φ_l = O(C/P) (measured: |φ_l| < 0.03 over 300 steps at P = 81);
we set φ_l = 0 and Υ = 0.

**Leading order in P** (ρ = C_1/P fixed, C/P → 0): the numbers of unmasked keys concentrate, so
every query of a view puts the mass

    A(z) = e^{zφ} / (e^{zφ} + ω),   ω = (γ + (1 − γ)(1 − ρ)) / ((1 − γ) ρ)

on the unmasked global keys (z = z_1, the image's global coefficient; γP masked and (1 − γ)(P −
C_1) unmasked local keys at logit 0 against (1 − γ)C_1 global keys at logit zφ). The
representation's coordinate on v_{k,1} is g(z) = z A(z); its local coordinates are O(C/P) and
drop out. Both views give the same g(z), so with S(z, z') = g(z) g(z')/τ the loss of an image
(either view as anchor) is −S(z, z) + log(e^{S(z,z)} + Σ_negatives e^{S(z, z'_i)} [same cluster]
+ #[other cluster]).

**Leading order in 1/n**: the n negatives' sum is replaced by its mean n m(z),

    m(z) = (1/K) E_{z'} e^{S(z, z')} + 1 − 1/K,
    L_n(φ) = E_z[ −S(z, z) + log(e^{S(z,z)} + n m(z)) ]        (n = ∞: log m(z), less log n)

(neglected: the fluctuation of that sum, relative order 1/n). With the hand-derived gradient
(checked in sympy, proofs_checks/huang2024/check_cl_plateau.py)

    dL_n/dφ = E_z[ (1 − q(z)) (Σ_{z'} W(z, z') dS(z, z') − dS(z, z)) ],
    q = e^{S(z,z)} / (e^{S(z,z)} + n m(z)),   W(z, z') = w(z') e^{S(z, z')} / (K m(z)),
    dS(z, z') = (g'(z) g(z') + g(z) g'(z'))/τ,   g'(z) = z² A(z)(1 − A(z)),

(w the weights of the z law) the plateau φ* is the root of dL_n/dφ (at φ = 0 the gradient is
negative: φ grows). The attention that the claim reads, on clean images (no masked keys), of a
local query on the global area is then

    a*_glob = E_z[ e^{zφ*} / (e^{zφ*} + (1 − ρ)/ρ) ],

strictly below 1, and it does not tend to 1 as P grows with κ_s < 1: ρ = P^{κ_s − 1} → 0 and
the plateau falls. The local correlations then drift slowly (each at a rate O(C/P)); their sign
is not derived here, so the long-time limit past that drift is not predicted.

Neglected orders (the claim's tolerance): the fluctuation of the masked-key counts (relative
O(1/((1 − γ)C_1)) on A), the local areas' share of the representation (O(C/P) on g), the
negatives' fluctuation (O(1/n)) and the drift of φ_l.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq
from scipy.special import logsumexp

from ..config import ExperimentConfig
from ..data import zlaw_nodes

__all__ = ["CLPlateau", "PHI_MAX", "PHI_STEP", "cl_omega", "cl_reduced_loss", "cl_reduced_grad",
           "cl_plateau", "cl_critical_temperature"]

#: Gauss–Legendre nodes for a uniform coefficient law (the integrands are smooth: against 64
#: nodes, 24 change dL_n/dφ by ≤ 1.3e−15 absolute and ≤ 1e−3 relative on φ ∈ [0, 60] at
#: P = 128, τ = 0.25, never its sign; 32 keep a margin).
Z_NODES = 32


@dataclass(frozen=True)
class CLPlateau:
    """The derived plateau of the reduced CL dynamics ([`cl_plateau`][]).

    - `exists`: whether GD from φ = 0 stops at a finite φ* (the first sign change of dL_n/dφ
      from − to + below ``PHI_MAX``); if not, φ grows without bound and the attention on the
      global area tends to 1 (``phi`` = ∞, ``clean_glob`` = ``masked_glob`` = 1).
    - `phi`: the global FP correlation φ* at the plateau.
    - `rho`, `omega`: C_1/P and ω of the module docstring.
    - `negatives`: n (``math.inf`` for the n → ∞ limit).
    - `tau`: the temperature.
    - `masked_glob`: E_z A(z), the global mass of a query on a masked view.
    - `clean_glob`: a*_glob, a local query's attention on the global area of a clean image.
    - `clean_own`: a local query's attention on its own area of a clean image.
    - `init_grad`: dL_n/dφ at φ = 0 (negative: the global correlation grows first)."""

    exists: bool
    phi: float
    rho: float
    omega: float
    negatives: float
    tau: float
    masked_glob: float
    clean_glob: float
    clean_own: float
    init_grad: float


def cl_omega(rho: float, gamma: float) -> float:
    """ω = (γ + (1 − γ)(1 − ρ)) / ((1 − γ)ρ): the mass of the keys at logit 0 (masked, and
    unmasked local) per unit of unmasked global keys, at leading order in P."""
    return (gamma + (1.0 - gamma) * (1.0 - rho)) / ((1.0 - gamma) * rho)


def _terms(phi, z, w, omega, tau, K, negatives):
    A = 1.0 / (1.0 + omega * np.exp(-z * phi))
    g = z * A
    dg = z * z * A * (1.0 - A)
    S = np.outer(g, g) / tau
    dS = (np.outer(dg, g) + np.outer(g, dg)) / tau
    logm = np.logaddexp(math.log(1.0 / K) + logsumexp(S + np.log(w)[None, :], axis=1),
                        math.log1p(-1.0 / K) if K > 1 else -np.inf)
    Sd = np.diag(S)
    if math.isinf(negatives):
        logden, q = logm, np.zeros_like(Sd)
    else:
        logden = np.logaddexp(Sd, math.log(negatives) + logm)
        q = np.exp(Sd - logden)
    return S, dS, Sd, logm, logden, q


def cl_reduced_loss(phi: float, z, w, *, omega: float, tau: float, K: int,
                    negatives: float) -> float:
    """L_n(φ) of the module docstring (for n = ∞ without the constant log n).

    **Arguments:** `phi` the global FP correlation; `z`, `w` the nodes and weights of the
    coefficient law; `omega` ([`cl_omega`][]); `tau` the temperature; `K` the clusters;
    `negatives` n (``math.inf`` allowed)."""
    z, w = np.asarray(z, dtype=np.float64), np.asarray(w, dtype=np.float64)
    _, _, Sd, _, logden, _ = _terms(phi, z, w, omega, tau, K, negatives)
    return float(w @ (logden - Sd))


def cl_reduced_grad(phi: float, z, w, *, omega: float, tau: float, K: int,
                    negatives: float) -> float:
    """dL_n/dφ, the hand-derived gradient of the module docstring (same arguments as
    [`cl_reduced_loss`][])."""
    z, w = np.asarray(z, dtype=np.float64), np.asarray(w, dtype=np.float64)
    S, dS, _, logm, _, q = _terms(phi, z, w, omega, tau, K, negatives)
    W = np.exp(S + np.log(w)[None, :] - math.log(K) - logm[:, None])
    return float(w @ ((1.0 - q) * ((W * dS).sum(axis=1) - np.diag(dS))))


def _grads(phis: np.ndarray, z, w, *, omega: float, tau: float, K: int,
           negatives: float) -> np.ndarray:
    """dL_n/dφ at every φ of `phis` at once ([`cl_reduced_grad`][] vectorised over φ)."""
    z, w = np.asarray(z, dtype=np.float64), np.asarray(w, dtype=np.float64)
    ph = np.asarray(phis, dtype=np.float64)[:, None]
    A = 1.0 / (1.0 + omega * np.exp(-z[None, :] * ph))  # (nφ, nz)
    g = z[None, :] * A
    dg = z[None, :] ** 2 * A * (1.0 - A)
    S = g[:, :, None] * g[:, None, :] / tau  # (nφ, nz, nz)
    dS = (dg[:, :, None] * g[:, None, :] + g[:, :, None] * dg[:, None, :]) / tau
    lw = np.log(w)
    logm = np.logaddexp(math.log(1.0 / K) + logsumexp(S + lw[None, None, :], axis=2),
                        math.log1p(-1.0 / K) if K > 1 else -np.inf)
    Sd = np.diagonal(S, axis1=1, axis2=2)
    q = (np.zeros_like(Sd) if math.isinf(negatives)
         else np.exp(Sd - np.logaddexp(Sd, math.log(negatives) + logm)))
    W = np.exp(S + lw[None, None, :] - math.log(K) - logm[:, :, None])
    inner = (W * dS).sum(axis=2) - np.diagonal(dS, axis1=1, axis2=2)
    return ((1.0 - q) * inner) @ w


def _z_law(cfg: ExperimentConfig):
    d = cfg.data
    if d.z_law == "uniform":
        return zlaw_nodes("uniform", d.L, d.U, None, None, Z_NODES)
    return zlaw_nodes(d.z_law, d.L, d.U, d.z_values, d.z_probs)


#: The scan of dL_n/dφ for its first sign change covers φ ∈ [0, PHI_MAX] in steps of PHI_STEP.
#: At φ = PHI_MAX every coefficient of the law (z ≥ L = 0.5 in the claims) puts
#: e^{zφ}/(e^{zφ} + ω) ≥ 1 − 1e−11 on the global keys (ω ≤ 40 on the ladder): a plateau beyond
#: it is attention 1 to every digit a run can show, and dL_n/dφ is still far from underflow
#: (the factors A(1 − A) ≥ e^{−zφ}/ω ≳ 1e−23). The step resolves the pairs of roots that
#: bound a plateau's basin near τ_c (0.45 apart at τ = 0.25, P = 128; the root is then found
#: by bisection to 1e−13).
PHI_MAX = 60.0
PHI_STEP = 0.02


def cl_plateau(cfg: ExperimentConfig, negatives: float | None = None, *,
               tau: float | None = None) -> CLPlateau:
    """The derived plateau of CL's global FP correlation and attention for `cfg` (P, C_1, C,
    K, the coefficient law, γ, τ; Bernoulli masks, masked keys in the softmax, mean pooling):
    the first φ > 0 at which dL_n/dφ changes sign from − to + (GD from φ = 0 stops there), or
    no plateau when dL_n/dφ < 0 on the whole scan (φ grows on: the attention on the global
    area tends to 1). dL_n/dφ is scanned on [0, ``PHI_MAX``] with step ``PHI_STEP`` and the
    root refined by bisection.

    **Arguments:**

    - `cfg`: an experiment config (its data block; ``model.gamma`` and the temperature).
    - `negatives`: n; default ``cfg.cl_negatives`` for a CL config; ``math.inf`` for the
      n → ∞ limit.
    - `tau`: the temperature (default the config's).

    **Returns:** a [`CLPlateau`][]. Raises ``ValueError`` when the masks are not Bernoulli or
    masked keys are left out of the softmax (the reduction assumes both)."""
    m = cfg.model
    if m.mask != "bernoulli" or not m.mask_keys:
        raise ValueError("model.mask: the CL plateau is derived for Bernoulli masks with masked "
                         "keys in the softmax")
    d = cfg.data
    P, C1, C = d.P, d.global_size, d.local_size
    if negatives is None:
        negatives = cfg.cl_negatives if m.objective == "cl" else math.inf
    n = float(negatives)
    tau = float(m.temperature if tau is None else tau)
    rho = C1 / P
    omega = cl_omega(rho, m.gamma)
    z, w = _z_law(cfg)
    kw = {"omega": omega, "tau": tau, "K": d.K, "negatives": n}
    phis = np.arange(0.0, PHI_MAX + PHI_STEP / 2, PHI_STEP)
    grads = np.concatenate([_grads(phis[i:i + 500], z, w, **kw)
                            for i in range(0, len(phis), 500)])
    up = np.flatnonzero((grads[:-1] < 0) & (grads[1:] >= 0))
    g0 = float(grads[0])
    if g0 >= 0:
        phi = 0.0
    elif up.size:
        i = int(up[0])
        phi = (float(phis[i + 1]) if grads[i + 1] == 0 else
               float(brentq(lambda f: cl_reduced_grad(f, z, w, **kw), phis[i], phis[i + 1],
                            xtol=1e-13, rtol=1e-13)))
    else:
        return CLPlateau(False, math.inf, rho, omega, n, tau, 1.0, 1.0, 0.0, g0)
    e = np.exp(z * phi)
    glob = float(w @ (e / (e + (1.0 - rho) / rho)))
    return CLPlateau(exists=True, phi=float(phi), rho=rho, omega=omega, negatives=n, tau=tau,
                     masked_glob=float(w @ (e / (e + omega))), clean_glob=glob,
                     clean_own=(1.0 - glob) * C / (P - C1), init_grad=g0)


def cl_critical_temperature(cfg: ExperimentConfig, negatives: float | None = None, *,
                            lo: float = 0.02, hi: float = 2.0, grid: int = 25) -> dict:
    """τ_c: the temperature above which the reduced CL model has no plateau
    ([`cl_plateau`][] ``exists`` false), for `cfg`'s sizes, clusters, γ, coefficient law and n
    negatives (DERIVED). A log-spaced scan of `grid` temperatures on [`lo`, `hi`] checks that
    {τ: a plateau exists} is one interval (lo, τ_c] (else ``ValueError``); τ_c is then
    bisected to 1e−4 relative. Returns ``tau_c``, the plateau just below it (``phi_below``,
    ``glob_below``) and the scan (``taus``, ``exists``).

    What happens at τ_c: the plateau's basin (the first zero of dL_n/dφ, a minimum, and the
    next one, a maximum) closes: the two roots merge and GD from φ = 0 no longer stops. Its
    value depends on ρ = C_1/P (through ω), on K, n, γ and the coefficient law."""
    taus = np.geomspace(lo, hi, grid)
    ex = np.array([cl_plateau(cfg, negatives, tau=float(t)).exists for t in taus])
    if not ex[0]:
        raise ValueError(f"model.cl_temperature: no plateau even at τ = {lo:g}")
    k = int(np.argmin(ex)) if not ex.all() else len(ex)
    if ex[k:].any():
        raise ValueError("model.cl_temperature: the temperatures with a plateau are not one "
                         "interval on the scan")
    if k == len(ex):
        return {"tau_c": math.inf, "phi_below": math.nan, "glob_below": math.nan,
                "taus": taus, "exists": ex}
    a, b = float(taus[k - 1]), float(taus[k])
    while b - a > 1e-4 * a:
        mid = 0.5 * (a + b)
        if cl_plateau(cfg, negatives, tau=mid).exists:
            a = mid
        else:
            b = mid
    below = cl_plateau(cfg, negatives, tau=a)
    return {"tau_c": 0.5 * (a + b), "phi_below": below.phi, "glob_below": below.clean_glob,
            "taus": taus, "exists": ex}
