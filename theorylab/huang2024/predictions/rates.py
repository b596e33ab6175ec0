"""Predictions derived in the reconstructed model of Huang et al. (2025): the FP-correlation
rates at initialisation (Lemma 5.1, RECONSTRUCTED), exactly and to leading order in P.

Model and notation: docs/papers/huang2024.md §1–§2 and §4.5 (the paper's text was not read;
everything here is DERIVED in the reconstruction). A masked query patch p of area j of a sample
of cluster k has, at Q⁰ = 0, every logit equal to 0, so its attention on the unmasked keys of
area m is

    s_m = n_m / D,   D = P (masked keys in the softmax) or D = n (left out),

with n_m the number of unmasked keys of area m other than p and n = Σ_m n_m. With
resid = F_p − x_p, the softmax backward gives (notes §4.5)

    ∂ℓ_p/∂Φ_{p→v_m} = s_m z_m (z_m resid_m − H),   H = Σ_l s_l z_l resid_l,

which, with resid_m = z_m s_m − z_j [m = j], is

    g_j = −z_j³ s_j (1 − s_j)² − z_j s_j Σ_{l≠j} z_l² s_l²                     (own area),
    g_m = z_m³ s_m² (1 − s_m) − z_m s_m Σ_{l≠j,m} z_l² s_l² + z_m z_j² s_m s_j (1 − s_j)
                                                                              (m ≠ j).

The rate of a correlation is r = −∂L/∂Φ = −(P[p masked]/K) E[norm · g | p masked]: the per-
step change of Φ under gradient descent divided by η. The coefficients z are i.i.d. and
independent of the mask, so E[g] needs only the moments μ_1, μ_2, μ_3 of the coefficient law
and mixed moments of the counts. Given the number n of unmasked keys among the other P − 1
patches, the unmasked set is uniform (Bernoulli or fixed-size masks alike), so the counts are
multivariate hypergeometric with the factorial moments

    E[Π_a n_a^{(r_a)} | n] = Π_a c_a^{(r_a)} · n^{(R)} / (P − 1)^{(R)},   R = Σ_a r_a,

(x^{(r)} the falling factorial, c_a the number of keys of area a other than p), and the exact
rate is a sum over n alone ([`initial_rates`][]): n ~ Bin(P − 1, 1 − γ) for Bernoulli masks, n =
P − |ℳ| for fixed-size ones. It equals the engines' gradient at Q⁰ = 0 to rounding
(tests/huang2024/test_predictions.py).

Leading order ([`leading_rates`][]): the counts concentrate, s_m → a_m := E[s_m] (a_m =
(1 − γ) c_m / P with masked keys in, c_m/(P − 1) with them left out), and the rates are g at
s = a (with fixed-size masks, a_m = c_m (P − |ℳ|) / ((P − 1) P) with masked keys in). Nothing
else is dropped: the factors (1 − a_1) and (1 − a_j), the cross terms through
Σ a_l² and the C − 1 own-area keys all stay. What is neglected is the fluctuation of the
counts: relative corrections O(1/(P a_m)) = O(1/C_m) for a rate led by area m's mass, so for
the global rate of a local query (led by a_1²) O(P^{−κ_s}) and for the own rate O(1/P)
(its leading term is linear in s_j, whose mean is exact). [`lemma51_ratio`][] gives the rate
ratio |r_glob| / r_own of a local query both ways.

What the notes' earlier statement of Lemma 5.1 got wrong ("the global area at order a_1² for a
local p, other local areas [negative] at order a_m²"): for another local area m the leading
term of g_m is the cross term −μ_1μ_2 a_m a_1² (the global area's share of the output), so
its rate is **positive**, of order a_m a_1², whenever a_1² ≫ a_m (every Δ > 0 at large P);
and the ratio a_1²/a_j misses the factor (1 − a_1) of the global rate (0.17 at P = 64,
C_1 = 52 with masked keys out), the cross terms and the C − 1 own-area keys.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..config import ExperimentConfig
from ..data import AreaStructure, information_gap, zlaw_nodes

__all__ = ["ZMoments", "z_moments", "count_law", "initial_rates", "leading_rates",
           "initial_rate_matrix", "lemma51_ratio", "has_phase_one", "local_query_leading",
           "other_rate_boundary", "phase_one_boundary", "sign_grid"]


@dataclass(frozen=True)
class ZMoments:
    """The moments μ_1 = E z, μ_2 = E z², μ_3 = E z³ of the area-coefficient law."""

    mu1: float
    mu2: float
    mu3: float


def z_moments(cfg: ExperimentConfig) -> ZMoments:
    """μ_1, μ_2, μ_3 of ``cfg.data``'s coefficient law: exact for the uniform law on [L, U]
    (a Gauss–Legendre rule of ≥ 2 nodes, as the engines use, integrates z³ exactly) and for a
    finite law (``z_law = "values"``).

    **Arguments:**

    - `cfg`: an experiment config (only its ``data`` block is read)."""
    d = cfg.data
    if d.z_law == "values":
        v, p = zlaw_nodes("values", d.L, d.U, d.z_values, d.z_probs)
        return ZMoments(*(float(np.dot(p, v ** k)) for k in (1, 2, 3)))
    L, U = float(d.L), float(d.U)

    def mom(k: int) -> float:
        return L ** k if U == L else (U ** (k + 1) - L ** (k + 1)) / ((k + 1) * (U - L))

    return ZMoments(mom(1), mom(2), mom(3))


def _falling(x, r: int):
    """The falling factorial x^{(r)} = x (x − 1) ⋯ (x − r + 1), r ≥ 1."""
    x = np.asarray(x, dtype=np.float64)
    return np.prod([x - i for i in range(r)], axis=0)


def count_law(P: int, mask: str = "bernoulli", gamma: float = 0.5,
              mask_size: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """(n, P[n]): the law of the number n of unmasked keys among the P − 1 patches other than
    a masked query p (Huang et al. (2025), Def. 2.5, RECONSTRUCTED).

    **Arguments:**

    - `P`: the number of patches.
    - `mask`: ``"bernoulli"`` (each patch masked with probability γ: n ~ Bin(P − 1, 1 − γ)) or
      ``"fixed"`` (a uniform set of `mask_size` patches: n = P − mask_size).
    - `gamma`: the masking probability γ (Bernoulli masks).
    - `mask_size`: |ℳ| (fixed-size masks)."""
    N = P - 1
    if mask == "fixed":
        return np.array([P - mask_size]), np.array([1.0])
    n = np.arange(N + 1)
    if gamma <= 0.0:
        return n, (n == N).astype(np.float64)
    if gamma >= 1.0:
        return n, (n == 0).astype(np.float64)
    lb = np.array([math.lgamma(N + 1) - math.lgamma(k + 1) - math.lgamma(N - k + 1) for k in n])
    return n, np.exp(lb + n * math.log1p(-gamma) + (N - n) * math.log(gamma))


def _norm(loss_norm: str, P: int, n: np.ndarray) -> np.ndarray:
    if loss_norm == "P":
        return np.full(n.shape, 1.0 / P)
    if loss_norm == "mask":
        return 1.0 / (P - n)  # |ℳ| = 1 (the query) + the masked other keys
    return np.ones(n.shape)


def _counts(P, sizes, j, gamma, mask, mask_size, loss_norm) -> tuple[np.ndarray, float]:
    """(c, P[p masked]): the keys of each area other than the query p (area `j`) and the
    probability that p is masked; ``ValueError`` naming the argument that is out of range."""
    sizes = tuple(int(x) for x in sizes)
    if sum(sizes) != P or min(sizes) < 1:
        raise ValueError(f"sizes: area sizes {sizes} must be positive and sum to P = {P}")
    if not 0 <= j < len(sizes):
        raise ValueError(f"j: the query's area {j} is not one of the {len(sizes)} areas")
    if loss_norm not in ("P", "mask", "none"):
        raise ValueError(f"loss_norm: {loss_norm!r} is not one of 'P', 'mask', 'none'")
    c = np.asarray(sizes, dtype=np.float64)
    c[j] -= 1.0  # the query itself is masked
    return c, float(gamma) if mask == "bernoulli" else int(mask_size) / P


def initial_rates(P: int, sizes, j: int, mu: ZMoments, *, gamma: float = 0.5,
                  mask: str = "bernoulli", mask_size: int = 0, mask_keys: bool = True,
                  loss_norm: str = "P", K: int = 1) -> np.ndarray:
    """The exact rates r_m = −∂L/∂Φ_{p→v_m} at Q⁰ = 0 of a masked query p of area j, for
    every area m of its cluster (DERIVED; the module docstring gives the sum).

    **Arguments:**

    - `P`: the number of patches.
    - `sizes`: the area sizes C_1, …, C_N of the query's cluster (area 0 the global area);
      they sum to P.
    - `j`: the query's area (0: the global area).
    - `mu`: the coefficient moments ([`z_moments`][]).
    - `gamma`, `mask`, `mask_size`: the mask law ([`count_law`][]).
    - `mask_keys`: masked keys stay in the softmax (with logit 0 at Q⁰ = 0) or are left out.
    - `loss_norm`: the loss normalisation, ``"P"`` (1/P), ``"mask"`` (1/|ℳ|) or ``"none"``.
    - `K`: the number of equally likely clusters (the rate carries the cluster's weight 1/K).

    **Returns:** an array of N rates, ``r[j]`` the own area's."""
    c, p_masked = _counts(P, sizes, j, gamma, mask, mask_size, loss_norm)
    N = P - 1
    n, pn = count_law(P, mask, gamma, mask_size)
    keep = pn > 0
    n, pn = n[keep].astype(np.float64), pn[keep]
    D = np.full(n.shape, float(P)) if mask_keys else np.maximum(n, 1.0)
    F = {r: (_falling(n, r) / _falling(N, r) if N >= r else np.zeros_like(n)) for r in (1, 2, 3)}
    c1, c2, c3 = c, _falling(c, 2), _falling(c, 3)

    # conditional expectations given n (arrays over n), divided by the powers of D
    def s1(a):  # E[s_a]
        return c1[a] * F[1] / D

    def s2(a):  # E[s_a²]
        return (c2[a] * F[2] + c1[a] * F[1]) / D ** 2

    def s3(a):  # E[s_a³]
        return (c3[a] * F[3] + 3 * c2[a] * F[2] + c1[a] * F[1]) / D ** 3

    def s11(a, b):  # E[s_a s_b], a ≠ b
        return c1[a] * c1[b] * F[2] / D ** 2

    def s12(a, sum_c2, sum_c1):  # Σ_b E[s_a s_b²] over a set of areas b ∌ a
        return c1[a] * (sum_c2 * F[3] + sum_c1 * F[2]) / D ** 3

    tot1, tot2 = c1.sum(), c2.sum()
    g = np.empty(len(c))
    w = pn * _norm(loss_norm, P, n)
    done: dict[float, float] = {}  # areas m ≠ j with the same count have the same rate
    for m in range(len(c)):
        if m != j and c[m] in done:
            g[m] = done[c[m]]
            continue
        if m == j:
            cross = s12(j, tot2 - c2[j], tot1 - c1[j])
            gm = -mu.mu3 * (s1(j) - 2 * s2(j) + s3(j)) - mu.mu1 * mu.mu2 * cross
        else:
            cross = s12(m, tot2 - c2[j] - c2[m], tot1 - c1[j] - c1[m])
            gm = (mu.mu3 * (s2(m) - s3(m)) - mu.mu1 * mu.mu2 * cross
                  + mu.mu1 * mu.mu2 * (s11(m, j) - c1[m] * (c2[j] * F[3] + c1[j] * F[2])
                                       / D ** 3))
        g[m] = float(np.dot(w, gm))
        if m != j:
            done[c[m]] = g[m]
    return -(p_masked / K) * g


def leading_rates(P: int, sizes, j: int, mu: ZMoments, *, gamma: float = 0.5,
                  mask: str = "bernoulli", mask_size: int = 0, mask_keys: bool = True,
                  loss_norm: str = "P", K: int = 1) -> np.ndarray:
    """The leading order in P of [`initial_rates`][] (DERIVED): the rates at the mean
    attention masses s_m = a_m,

        r_j = w μ_3 a_j (1 − a_j)² + w μ_1μ_2 a_j Σ_{l≠j} a_l²,
        r_m = −w μ_3 a_m² (1 − a_m) + w μ_1μ_2 a_m Σ_{l≠j,m} a_l² − w μ_1μ_2 a_m a_j (1 − a_j),

    with w = P[p masked] · norm / K and a_m = E[s_m]: c_m n̄ / ((P − 1) P) with masked keys in
    (n̄ = E n; (1 − γ) c_m / P for Bernoulli masks), c_m / (P − 1) with them left out; c_m the
    keys of area m other than p; norm taken at n̄. The neglected fluctuations of the counts are
    relatively O(1/(P a_m)) for a rate led by area m's mass (module docstring). Same arguments
    as [`initial_rates`][]."""
    c, p_masked = _counts(P, sizes, j, gamma, mask, mask_size, loss_norm)
    n_mean = (1.0 - gamma) * (P - 1) if mask == "bernoulli" else float(P - mask_size)
    a = c * n_mean / ((P - 1) * P) if mask_keys else c / (P - 1)
    w = p_masked * float(_norm(loss_norm, P, np.array([n_mean]))[0]) / K
    sq = a * a
    m12 = mu.mu1 * mu.mu2
    rest = sq.sum() - sq[j] - sq  # Σ_{l≠j,m} a_l² for every m
    r = w * (-mu.mu3 * sq * (1 - a) + m12 * a * rest - m12 * a * a[j] * (1 - a[j]))
    r[j] = w * (mu.mu3 * a[j] * (1 - a[j]) ** 2 + m12 * a[j] * (sq.sum() - sq[j]))
    return r


def initial_rate_matrix(cfg: ExperimentConfig, structure: AreaStructure | None = None, *,
                        leading: bool = False, mu: ZMoments | None = None) -> np.ndarray:
    """The rates −∂L/∂Φ at Q⁰ = 0 as a (P, F) array in the engines' layout (row p, column
    the feature ``offset_k + m`` of area m of cluster k), the same quantity as
    ``-engine.evaluate(engine.initial_params(), ...).grads["Phi"]`` for an MAE config.

    **Arguments:**

    - `cfg`: an MAE experiment config.
    - `structure`: its area structure (default ``cfg.data.make_structure()``).
    - `leading`: the leading order ([`leading_rates`][]) instead of the exact rates.
    - `mu`: the coefficient moments (default [`z_moments`][] of `cfg`)."""
    s = structure or cfg.data.make_structure()
    mu = mu or z_moments(cfg)
    m = cfg.model
    kw = {"gamma": m.gamma, "mask": m.mask, "mask_size": cfg.mask_size,
          "mask_keys": m.mask_keys, "loss_norm": m.loss_norm, "K": s.K}
    fn = leading_rates if leading else initial_rates
    out = np.zeros((s.P, s.F))
    for k in range(s.K):
        sizes = np.bincount(s.labels[k], minlength=int(s.n_areas[k]))
        rates = np.array([fn(s.P, sizes, j, mu, **kw) for j in range(len(sizes))])  # [j, m]
        off = int(s.offset[k])
        out[:, off:off + len(sizes)] = rates[s.labels[k]]  # row p: the rates of p's area
    return out


def lemma51_ratio(P: int, C1: int, C: int, mu: ZMoments, *, gamma: float = 0.5,
                  mask_keys: bool = True, loss_norm: str = "P") -> dict[str, float]:
    """|r_glob| / r_own of a masked local-area query at Q⁰ = 0 (one cluster, Bernoulli
    masks, a global area of C1 and (P − C1)/C local areas of C patches), exact and to leading
    order, with the notes' earlier heuristic a_1²/a_j (a_m = (1 − γ) C_m/P with masked keys
    in, C_m/P out) for comparison.

    **Arguments:**

    - `P`, `C1`, `C`: the number of patches and the area sizes; C divides P − C1.
    - `mu`: the coefficient moments ([`z_moments`][]).
    - `gamma`, `mask_keys`, `loss_norm`: as in [`initial_rates`][].

    **Returns:** ``{"exact", "leading", "notes"}`` and the exact rates ``own``, ``glob``,
    ``other`` (another local area; NaN when there is none)."""
    if C < 1 or C1 < 1 or (P - C1) % C or P - C1 < C:
        raise ValueError(f"sizes: P − C1 = {P - C1} must be a positive multiple of C = {C}")
    sizes = [C1] + [C] * ((P - C1) // C)
    kw = {"gamma": gamma, "mask_keys": mask_keys, "loss_norm": loss_norm}
    ex = initial_rates(P, sizes, 1, mu, **kw)
    ld = leading_rates(P, sizes, 1, mu, **kw)
    sc = (1 - gamma) if mask_keys else 1.0
    return {"exact": -ex[0] / ex[1], "leading": -ld[0] / ld[1],
            "notes": (sc * C1 / P) ** 2 / (sc * C / P), "own": float(ex[1]),
            "glob": float(ex[0]), "other": float(ex[2]) if len(sizes) > 2 else math.nan}


def has_phase_one(P: int, C1: int, C: int, mu: ZMoments, *, gamma: float = 0.5,
                  mask_keys: bool = True, loss_norm: str = "P", leading: bool = False) -> bool:
    """Whether a local query's global FP correlation falls faster than its own one grows at the
    first gradient step from Q⁰ = 0: |r_glob| > r_own, i.e. [`lemma51_ratio`][] > 1 (DERIVED).

    This is the start of the decoupling Phase I (notes §4.5) as the huang2024 claims read it
    (a Phase I exists when the first step has −ΔΦ_glob > ΔΦ_own, means over local patches; one
    cluster, so every local patch has the same rates at Q⁰ = 0). Its boundary is not Δ = 0 at
    finite P: at P = 256, C = 4, γ = 0.5 it lies between C1 = 36 and 40 (Δ = 0.04 to 0.08) with
    masked keys in, and between C1 = 28 and 32 (Δ = −0.05 to 0) with them left out.

    **Arguments:** as [`lemma51_ratio`][]; `leading`: decide with the leading-order ratio."""
    r = lemma51_ratio(P, C1, C, mu, gamma=gamma, mask_keys=mask_keys, loss_norm=loss_norm)
    return bool(r["leading" if leading else "exact"] > 1.0)


# -- the two sign boundaries near Δ = 0 (one cluster, a local query) ----------------------------
def local_query_leading(P: float, C1: float, C: float, mu: ZMoments, *, gamma: float = 0.5,
                        mask_keys: bool = True) -> dict[str, float]:
    """The leading-order rates ([`leading_rates`][], up to the common positive factor w) of a
    masked local query in one cluster with a global area of C1 and M = (P − C1)/C local areas
    of C, for continuous C1 (DERIVED): with a_1, a, a_j the mean masses of the global area, of
    another local area and of the query's own C − 1 keys (a_m = s·c_m, s = (1 − γ)/P with
    masked keys in, 1/(P − 1) without),

        own   = μ_3 a_j (1 − a_j)² + μ_1μ_2 a_j [a_1² + (M − 1) a²],
        glob  = −μ_3 a_1² (1 − a_1) + μ_1μ_2 a_1 (M − 1) a² − μ_1μ_2 a_1 a_j (1 − a_j),
        other = μ_1μ_2 a [a_1² + (M − 2) a²] − μ_3 a² (1 − a) − μ_1μ_2 a a_j (1 − a_j)."""
    s = (1.0 - gamma) / P if mask_keys else 1.0 / (P - 1.0)
    a1, a, aj = s * C1, s * C, s * (C - 1.0)
    M = (P - C1) / C
    m12 = mu.mu1 * mu.mu2
    return {"own": mu.mu3 * aj * (1 - aj) ** 2 + m12 * aj * (a1 * a1 + (M - 1) * a * a),
            "glob": -mu.mu3 * a1 * a1 * (1 - a1) + m12 * a1 * (M - 1) * a * a
            - m12 * a1 * aj * (1 - aj),
            "other": m12 * a * (a1 * a1 + (M - 2) * a * a) - mu.mu3 * a * a * (1 - a)
            - m12 * a * aj * (1 - aj)}


def _boundary_C1(f, P: float, C: float) -> float:
    """The root in C1 ∈ (C, P − 2C) of a function increasing in C1 (NaN if none)."""
    from scipy.optimize import brentq

    lo, hi = float(C), float(P - 2 * C)
    if not (hi > lo) or f(lo) > 0 or f(hi) < 0:
        return math.nan
    return float(brentq(f, lo, hi, xtol=1e-10, rtol=1e-14))


def other_rate_boundary(P: int, C: int, mu: ZMoments, *, gamma: float = 0.5,
                        mask_keys: bool = True) -> dict[str, float]:
    """Where the rate of *another* local area's FP correlation of a masked local query changes
    sign at Q⁰ = 0 (Lemma 5.1 as RECONSTRUCTED; DERIVED): the leading-order rate
    ([`local_query_leading`][] ``other``) is increasing in C1 and vanishes at

        μ_1μ_2 [a_1² + (M − 2) a²] = μ_3 a (1 − a) + μ_1μ_2 a_j (1 − a_j),

    a quadratic in C1 (M = (P − C1)/C). Returns ``C1`` (continuous), ``delta0`` = Δ there
    and ``delta0_asymptotic`` = ln κ / ln P, the same root when a, a_j → 0 with C1²/(PC)
    fixed: κ = [μ_3/(μ_1μ_2) + 1 − (1 − γ)(1 − ρ)]/(1 − γ) with masked keys in and
    μ_3/(μ_1μ_2) + ρ without (ρ = C1/P at the root). The rate is negative for Δ < Δ₀ and
    positive above it, and Δ₀ → 0⁺ like 1/ln P: the notes' "positive for Δ > 0" holds only in
    the limit. ``band``: the neglected order of Δ₀, the shift of the root that the terms'
    count fluctuations (relatively γ/((1 − γ)c) for an area of c keys) can cause, divided by
    the slope of the rate in Δ."""
    m12 = mu.mu1 * mu.mu2
    s = (1.0 - gamma) / P if mask_keys else 1.0 / (P - 1.0)
    a, aj = s * C, s * (C - 1.0)
    rhs = mu.mu3 * a * (1 - a) + m12 * aj * (1 - aj)
    # μ12 s² [C1² − C·C1 + C(P − 2C)] = rhs
    cc = C * (P - 2 * C) - rhs / (m12 * s * s)
    disc = C * C - 4 * cc
    C1 = (C + math.sqrt(disc)) / 2 if disc >= 0 else math.nan
    ok = math.isfinite(C1) and C < C1 < P - C
    rho = C1 / P if ok else math.nan
    kap = ((mu.mu3 / m12 + 1 - (1 - gamma) * (1 - rho)) / (1 - gamma) if mask_keys
           else mu.mu3 / m12 + rho)
    out = {"C1": C1 if ok else math.nan, "delta0": information_gap(P, C1, C) if ok else math.nan,
           "delta0_asymptotic": math.log(kap) / math.log(P) if kap > 0 else math.nan,
           "band": math.nan}
    if ok:
        # the neglected order: the count fluctuations of the squared masses, relatively
        # Var n/(E n)² = γ/((1 − γ)c) for an area of c keys (binomial counts), move the root
        # by the size of the terms they correct divided by the rate's slope
        q = 1.0 - gamma
        a1 = s * C1
        M = (P - C1) / C
        terms = (gamma / (q * C) * (m12 * a * (M - 2) * a * a + mu.mu3 * a * a * (1 - a))
                 + gamma / (q * C1) * m12 * a * a1 * a1)
        r = local_query_leading(P, C1, C, mu, gamma=gamma, mask_keys=mask_keys)
        h = 1e-4 * C1
        dC1 = (local_query_leading(P, C1 + h, C, mu, gamma=gamma, mask_keys=mask_keys)["other"]
               - r["other"]) / h
        # dΔ/dC1 = 2/(C1 ln P)
        out["band"] = float(terms / abs(dC1) * 2 / (C1 * math.log(P)))
    return out


def phase_one_boundary(P: int, C: int, mu: ZMoments, *, gamma: float = 0.5,
                       mask_keys: bool = True) -> dict[str, float]:
    """Where a first GD step from Q⁰ = 0 starts a Phase I (|r_glob| = r_own for a masked local
    query; DERIVED at leading order, [`local_query_leading`][]): ``C1`` (continuous) and
    ``delta_b`` = Δ there. Phase I appears for Δ > Δ_b(P), and Δ_b(P) → 0 like 1/ln P: from
    a_1² ≈ a_j/(1 − γ)·μ_3-weighted factors, (1 − γ)C1²/(PC) ≈ κ_b = O(1), so
    Δ_b ≈ ln(κ_b/(1 − γ))/ln P (masked keys in)."""
    def f(c1: float) -> float:
        r = local_query_leading(P, c1, C, mu, gamma=gamma, mask_keys=mask_keys)
        return -r["glob"] - r["own"]

    C1 = _boundary_C1(f, P, C)
    return {"C1": C1, "delta_b": information_gap(P, C1, C) if math.isfinite(C1) else math.nan}


def sign_grid(P: int, C: int, mu: ZMoments, *, gamma: float = 0.5, mask_keys: bool = True,
              center: float, half_width: float) -> list[dict]:
    """The exact rates of a masked local query at Q⁰ = 0 ([`initial_rates`][]) on every
    admissible global size C1 (C dividing P − C1, C ≤ C1 ≤ P − 2C) whose Δ lies within
    `half_width` of `center`: one dict per C1 with ``C1``, ``delta``, ``own``, ``glob``,
    ``other`` (another local area) and ``ratio`` = |r_glob|/r_own."""
    out = []
    for C1 in range(C, P - 2 * C + 1):
        d = information_gap(P, C1, C)
        if (P - C1) % C or abs(d - center) > half_width:
            continue
        sizes = [C1] + [C] * ((P - C1) // C)
        r = initial_rates(P, sizes, 1, mu, gamma=gamma, mask_keys=mask_keys)
        out.append({"C1": C1, "delta": d, "own": float(r[1]), "glob": float(r[0]),
                    "other": float(r[2]), "ratio": float(-r[0] / r[1])})
    return out
