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

**The expectation over the n negatives, exactly.** Given the anchor's coefficient z, the n
negatives contribute i.i.d. terms X_i: e^{S(z, z')} (z' from the law) with probability 1/K, 1
(another cluster: similarity 0) otherwise. With a = e^{S(z,z)} and Y = a + Σ_i X_i the loss is

    L_n(φ) = E_z[ −S(z, z) + E log Y ],

and since log y = ∫_0^∞ (e^{−t} − e^{−ty}) dt/t and 1/y = ∫_0^∞ e^{−ty} dt (y > 0), the
expectation over the negatives is a one-dimensional integral of their Laplace transform
Λ(t) = E e^{−tX} = (1 − 1/K) e^{−t} + (1/K) E_{z'} e^{−t e^{S(z, z')}}:

    E log Y = ∫_0^∞ (e^{−t} − e^{−ta} Λ(t)^n) dt/t,
    dL_n/dφ = E_z[ −dS(z, z) + ∫_0^∞ e^{−ta} Λ(t)^{n−1} (a dS(z, z) Λ(t) + n Λ_1(t)) dt ],
    Λ_1(t) = (1/K) E_{z'} dS(z, z') e^{S(z, z')} e^{−t e^{S(z, z')}},
    dS(z, z') = (g'(z) g(z') + g(z) g'(z'))/τ,   g'(z) = z² A(z)(1 − A(z))

(the second line is E[Y'/Y] = ∫_0^∞ E[Y' e^{−tY}] dt; checked against sympy's derivative of
the enumerated expectation, proofs_checks/huang2024/check_cl_plateau.py). The integral
runs over u = ln t with the trapezoid rule of step ``T_STEP`` = 0.3 (the integrands are
analytic in a strip around the real axis and decay on both sides, so its error falls like
e^{−c/h}: halving the step moves dL_n/dφ by < 1e−13 relative on the claims' settings,
doubling it by up to 5e−6, tests/huang2024/test_cl_predictions.py) from
u = −(max S + ln(n + 1) + 37) (below it the integral's share is < e^{−37}) to u = ln 40
(e^{−t} < 5e−18 beyond). Only the quadrature of z (Gauss–Legendre, ``Z_NODES``) stands between
this and the expectation in the reduced model.

**Leading order in 1/n ("Jensen")**: the earlier derivation replaced the sum over the
negatives by its mean n m(z), m(z) = E X = (1/K) E_{z'} e^{S(z, z')} + 1 − 1/K:

    L_n^J(φ) = E_z[ −S(z, z) + log(e^{S(z,z)} + n m(z)) ]        (n = ∞: log m(z), less log n)

an upper bound of L_n (log is concave) whose error is relative order 1/n but not small at
n = 15 near τ_c: it moves τ_c up by ≈ 0.04 and the plateau at τ = 0.2 down by ≈ 0.1. It is kept
as a named wrong formula (``expectation="jensen"``), the counterfactual the claims reject. Its
hand-derived gradient is

    dL_n^J/dφ = E_z[ (1 − q(z)) (Σ_{z'} W(z, z') dS(z, z') − dS(z, z)) ],
    q = e^{S(z,z)} / (e^{S(z,z)} + n m(z)),   W(z, z') = w(z') e^{S(z, z')} / (K m(z)),

(w the weights of the z law). For n → ∞ both give the same limit (the sum over the negatives
concentrates at n m(z)).

**The plateau.** φ* is the first root of dL_n/dφ where it turns from − to + (at φ = 0 the
gradient is negative: φ grows). The attention that the claim reads, on clean images (no masked
keys), of a local query on the global area is then

    a*_glob = E_z[ e^{zφ*} / (e^{zφ*} + (1 − ρ)/ρ) ],

strictly below 1, and it does not tend to 1 as P grows with κ_s < 1: ρ = P^{κ_s − 1} → 0 and
the plateau falls. The local correlations then drift slowly (each at a rate O(C/P)); their sign
is not derived here, so the long-time limit past that drift is not predicted.

Neglected orders (the claim's tolerance): the fluctuation of the masked-key counts (relative
O(1/((1 − γ)C_1)) on A, and the two views' counts differ), the local areas' share of the
representation (O(C/P) on g) and the drift of φ_l. The negatives are not an approximation
(exact above; the Jensen step was one).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy.optimize import brentq, minimize_scalar
from scipy.special import logsumexp

from ..config import ExperimentConfig
from ..data import zlaw_nodes

__all__ = ["CLPlateau", "EXPECTATIONS", "PHI_MAX", "PHI_STEP", "T_STEP", "cl_omega",
           "cl_reduced_loss", "cl_reduced_grad", "cl_plateau", "cl_critical_temperature"]

#: How the expectation over the n negatives is taken: ``exact`` (the Laplace-transform integral
#: of the module docstring) or ``jensen`` (the sum replaced by n × its mean: the earlier
#: leading-order formula, kept as a named wrong formula).
EXPECTATIONS = ("exact", "jensen")

#: Gauss–Legendre nodes for a uniform coefficient law (the integrands are smooth: against 64
#: nodes, 24 change dL_n/dφ by ≤ 1.3e−15 absolute and ≤ 1e−3 relative on φ ∈ [0, 60] at
#: P = 128, τ = 0.25, never its sign; 32 keep a margin).
Z_NODES = 32

#: Step of the trapezoid rule in u = ln t for the exact expectation over the negatives (halving
#: it moves dL_n/dφ by < 1e−13 relative on the claims' settings; module docstring).
T_STEP = 0.3
#: The u-range: from −(max S + ln(n + 1) + T_LEFT) to ln T_RIGHT.
T_LEFT, T_RIGHT = 37.0, 40.0


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
    - `expectation`: ``exact`` or ``jensen`` ([`EXPECTATIONS`][]).
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
    expectation: str
    masked_glob: float
    clean_glob: float
    clean_own: float
    init_grad: float


def cl_omega(rho: float, gamma: float) -> float:
    """ω = (γ + (1 − γ)(1 − ρ)) / ((1 − γ)ρ): the mass of the keys at logit 0 (masked, and
    unmasked local) per unit of unmasked global keys, at leading order in P."""
    return (gamma + (1.0 - gamma) * (1.0 - rho)) / ((1.0 - gamma) * rho)


def _check_expectation(expectation: str) -> None:
    if expectation not in EXPECTATIONS:
        raise ValueError(f"expectation: must be one of {list(EXPECTATIONS)} (got "
                         f"{expectation!r})")


def _similarities(phis, z, omega, tau):
    """S (nφ, nz, nz) and dS/dφ at every φ of `phis`."""
    ph = np.asarray(phis, dtype=np.float64)[:, None]
    A = 1.0 / (1.0 + omega * np.exp(-z[None, :] * ph))  # (nφ, nz)
    g = z[None, :] * A
    dg = z[None, :] ** 2 * A * (1.0 - A)
    S = g[:, :, None] * g[:, None, :] / tau
    dS = (dg[:, :, None] * g[:, None, :] + g[:, :, None] * dg[:, None, :]) / tau
    return S, dS


def _log_mean(S, w, K):
    """log m(z) = log((1/K) E_{z'} e^{S(z, z')} + 1 − 1/K), (nφ, nz)."""
    return np.logaddexp(math.log(1.0 / K) + logsumexp(S + np.log(w), axis=-1),
                        math.log1p(-1.0 / K) if K > 1 else -np.inf)


def _u_nodes(S, n: float) -> np.ndarray:
    lo = -(float(S.max()) + math.log(n + 1.0) + T_LEFT)
    return np.arange(lo, math.log(T_RIGHT) + T_STEP, T_STEP)


def _laplace(S, w, K, t):
    """Λ(t) (nφ, nz, nt) and the factors e^{−tX}, tX (nφ, nz, nz, nt) of a same-cluster
    negative."""
    tX = np.exp(np.log(t)[None, None, None, :] + S[..., None])
    e = np.exp(-tX)
    lam = (1.0 - 1.0 / K) * np.exp(-t) + np.einsum("fijk,j->fik", e, w) / K
    return lam, e, tX


def _exact_grads(phis, z, w, omega, tau, K, n):
    S, dS = _similarities(phis, z, omega, tau)
    u = _u_nodes(S, n)
    t = np.exp(u)
    lam, e, tX = _laplace(S, w, K, t)
    Sd = np.diagonal(S, axis1=1, axis2=2)
    dSd = np.diagonal(dS, axis1=1, axis2=2)
    ta = np.exp(u[None, None, :] + Sd[..., None])
    lam1 = np.einsum("fijk,j->fik", dS[..., None] * tX * e, w) / K  # t Λ_1(t)
    body = np.exp(-ta) * lam ** (n - 1.0) * (dSd[..., None] * ta * lam + n * lam1)
    return (T_STEP * body.sum(axis=-1) - dSd) @ w


def _jensen_grads(phis, z, w, omega, tau, K, n):
    S, dS = _similarities(phis, z, omega, tau)
    logm = _log_mean(S, w, K)
    Sd = np.diagonal(S, axis1=1, axis2=2)
    q = (np.zeros_like(Sd) if math.isinf(n)
         else np.exp(Sd - np.logaddexp(Sd, math.log(n) + logm)))
    W = np.exp(S + np.log(w) - math.log(K) - logm[..., None])
    inner = (W * dS).sum(axis=-1) - np.diagonal(dS, axis1=1, axis2=2)
    return ((1.0 - q) * inner) @ w


def _grads(phis, z, w, *, omega: float, tau: float, K: int, negatives: float,
           expectation: str = "exact") -> np.ndarray:
    """dL_n/dφ at every φ of `phis` at once (n = ∞: the common limit, the Jensen formula)."""
    _check_expectation(expectation)
    z, w = np.asarray(z, dtype=np.float64), np.asarray(w, dtype=np.float64)
    n = float(negatives)
    f = _jensen_grads if expectation == "jensen" or math.isinf(n) else _exact_grads
    return f(np.atleast_1d(np.asarray(phis, dtype=np.float64)), z, w, omega, tau, K, n)


def cl_reduced_loss(phi: float, z, w, *, omega: float, tau: float, K: int,
                    negatives: float, expectation: str = "exact") -> float:
    """L_n(φ) of the module docstring (for n = ∞ without the constant log n).

    **Arguments:** `phi` the global FP correlation; `z`, `w` the nodes and weights of the
    coefficient law; `omega` ([`cl_omega`][]); `tau` the temperature; `K` the clusters;
    `negatives` n (``math.inf`` allowed); `expectation` ``exact`` or ``jensen``
    ([`EXPECTATIONS`][])."""
    _check_expectation(expectation)
    z, w = np.asarray(z, dtype=np.float64), np.asarray(w, dtype=np.float64)
    n = float(negatives)
    S, _ = _similarities([phi], z, omega, tau)
    Sd = np.diagonal(S, axis1=1, axis2=2)[0]
    if expectation == "jensen" or math.isinf(n):
        logm = _log_mean(S, w, K)[0]
        logden = logm if math.isinf(n) else np.logaddexp(Sd, math.log(n) + logm)
        return float(w @ (logden - Sd))
    u = _u_nodes(S, n)
    t = np.exp(u)
    lam = _laplace(S, w, K, t)[0][0]
    ta = np.exp(u[None, :] + Sd[:, None])
    elog = T_STEP * (np.exp(-t)[None, :] - np.exp(-ta) * lam ** n).sum(axis=-1)
    return float(w @ (elog - Sd))


def cl_reduced_grad(phi: float, z, w, *, omega: float, tau: float, K: int,
                    negatives: float, expectation: str = "exact") -> float:
    """dL_n/dφ of the module docstring (same arguments as [`cl_reduced_loss`][])."""
    return float(_grads([phi], z, w, omega=omega, tau=tau, K=K, negatives=negatives,
                        expectation=expectation)[0])


def _z_law(cfg: ExperimentConfig):
    """Nodes and weights of `cfg`'s coefficient law (Z_NODES Gauss–Legendre nodes if uniform)."""
    d = cfg.data
    return zlaw_nodes(d.z_law, d.L, d.U, d.z_values, d.z_probs, Z_NODES)


#: The scan of dL_n/dφ for its first sign change covers φ ∈ [0, PHI_MAX]: in steps of PHI_STEP
#: up to PHI_FINE, of PHI_STEP_FAR beyond. At φ = PHI_MAX every coefficient of the law (z ≥ L =
#: 0.5 in the claims) puts e^{zφ}/(e^{zφ} + ω) ≥ 1 − 1e−11 on the global keys (ω ≤ 40 on the
#: ladder): a plateau beyond it is attention 1 to every digit a run can show. A narrow band
#: where dL_n/dφ turns positive between two scan points (near τ_c, where the plateau's root and
#: the basin's edge merge) is found by maximising dL_n/dφ around each interior local maximum of
#: the scan that lies within REFINE_FRACTION·|dL_n/dφ(0)| below 0; the root is then found by
#: bisection to 1e−13.
PHI_MAX = 60.0
PHI_STEP, PHI_FINE, PHI_STEP_FAR = 0.1, 20.0, 0.5
REFINE_FRACTION = 0.2


def _scan() -> np.ndarray:
    return np.concatenate([np.arange(0.0, PHI_FINE, PHI_STEP),
                           np.arange(PHI_FINE, PHI_MAX + PHI_STEP_FAR / 2, PHI_STEP_FAR)])


def _first_root(grad_many, grad_one, chunk: int = 16) -> tuple[float, float]:
    """(g0, φ*): dL_n/dφ at 0 and its first − → + root on the scan (NaN: none)."""
    phis = _scan()
    grads = np.empty(0)
    g0 = math.nan
    tried: set[int] = set()
    for i0 in range(0, len(phis), chunk):
        grads = np.concatenate([grads, grad_many(phis[i0:i0 + chunk])])
        if i0 == 0:
            g0 = float(grads[0])
            if g0 >= 0:
                return g0, 0.0
        up = np.flatnonzero((grads[:-1] < 0) & (grads[1:] >= 0))
        peaks = [i for i in range(1, len(grads) - 1)
                 if grads[i] >= grads[i - 1] and grads[i] >= grads[i + 1]
                 and -REFINE_FRACTION * abs(g0) < grads[i] < 0 and i not in tried]
        first_up = int(up[0]) if up.size else len(grads)
        for i in (p for p in peaks if p < first_up):
            tried.add(i)
            r = minimize_scalar(lambda f: -grad_one(f), bounds=(phis[i - 1], phis[i + 1]),
                                method="bounded", options={"xatol": 1e-7})
            if -r.fun > 0:
                return g0, float(brentq(grad_one, phis[i - 1], r.x, xtol=1e-13, rtol=1e-13))
        if up.size:
            i = int(up[0])
            if grads[i + 1] == 0:
                return g0, float(phis[i + 1])
            return g0, float(brentq(grad_one, phis[i], phis[i + 1], xtol=1e-13, rtol=1e-13))
    return g0, math.nan


def cl_plateau(cfg: ExperimentConfig, negatives: float | None = None, *,
               tau: float | None = None, expectation: str = "exact") -> CLPlateau:
    """The derived plateau of CL's global FP correlation and attention for `cfg` (P, C_1, C,
    K, the coefficient law, γ, τ; Bernoulli masks, masked keys in the softmax, mean pooling):
    the first φ > 0 at which dL_n/dφ changes sign from − to + (GD from φ = 0 stops there), or
    no plateau when dL_n/dφ < 0 on the whole scan (φ grows on: the attention on the global
    area tends to 1). dL_n/dφ is scanned on [0, ``PHI_MAX``] and the root refined by
    bisection.

    **Arguments:**

    - `cfg`: an experiment config (its data block; ``model.gamma`` and the temperature).
    - `negatives`: n; default ``cfg.cl_negatives`` for a CL config; ``math.inf`` for the
      n → ∞ limit.
    - `tau`: the temperature (default the config's).
    - `expectation`: ``exact`` (default) or ``jensen``, the earlier leading-order formula
      ([`EXPECTATIONS`][]).

    **Returns:** a [`CLPlateau`][]. Raises ``ValueError`` when the masks are not Bernoulli or
    masked keys are left out of the softmax (the reduction assumes both)."""
    _check_expectation(expectation)
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
    kw = {"omega": omega, "tau": tau, "K": d.K, "negatives": n, "expectation": expectation}
    g0, phi = _first_root(lambda f: _grads(f, z, w, **kw),
                          lambda f: cl_reduced_grad(f, z, w, **kw))
    if math.isnan(phi):
        return CLPlateau(False, math.inf, rho, omega, n, tau, expectation, 1.0, 1.0, 0.0, g0)
    e = np.exp(z * phi)
    glob = float(w @ (e / (e + (1.0 - rho) / rho)))
    return CLPlateau(exists=True, phi=float(phi), rho=rho, omega=omega, negatives=n, tau=tau,
                     expectation=expectation, masked_glob=float(w @ (e / (e + omega))),
                     clean_glob=glob, clean_own=(1.0 - glob) * C / (P - C1), init_grad=g0)


def cl_critical_temperature(cfg: ExperimentConfig, negatives: float | None = None, *,
                            lo: float = 0.02, hi: float = 2.0, grid: int = 25,
                            expectation: str = "exact") -> dict:
    """τ_c: the temperature above which the reduced CL model has no plateau
    ([`cl_plateau`][] ``exists`` false), for `cfg`'s sizes, clusters, γ, coefficient law and n
    negatives (DERIVED), with the expectation over the negatives `expectation` (``exact`` or
    ``jensen``). A log-spaced scan of `grid` temperatures on [`lo`, `hi`] checks that
    {τ: a plateau exists} is one interval (lo, τ_c] (else ``ValueError``); τ_c is then
    bisected to 1e−4 relative. Returns ``tau_c``, the plateau just below it (``phi_below``,
    ``glob_below``) and the scan (``taus``, ``exists``).

    What happens at τ_c: the plateau's basin (the first zero of dL_n/dφ, a minimum, and the
    next one, a maximum) closes: the two roots merge and GD from φ = 0 no longer stops. Its
    value depends on ρ = C_1/P (through ω), on K, n, γ and the coefficient law."""
    taus = np.geomspace(lo, hi, grid)
    ex = np.array([cl_plateau(cfg, negatives, tau=float(t), expectation=expectation).exists
                   for t in taus])
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
        if cl_plateau(cfg, negatives, tau=mid, expectation=expectation).exists:
            a = mid
        else:
            b = mid
    below = cl_plateau(cfg, negatives, tau=a, expectation=expectation)
    return {"tau_c": 0.5 * (a + b), "phi_below": below.phi, "glob_below": below.clean_glob,
            "taus": taus, "exists": ex}
