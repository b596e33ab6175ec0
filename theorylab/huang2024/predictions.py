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

from theorylab.core.trainer import first_step

from .config import ExperimentConfig
from .data import AreaStructure, zlaw_nodes

__all__ = ["ZMoments", "z_moments", "count_law", "initial_rates", "leading_rates",
           "initial_rate_matrix", "lemma51_ratio", "has_phase_one", "REDUCED_COORDS",
           "QueryClass", "query_classes", "reduced_expectation", "reduced_gradient",
           "rest_variance", "stop_reached", "own_attention_target", "reduced_gd",
           "phase_readings", "phase_one_prediction"]


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
    out = np.ones_like(np.asarray(x, dtype=np.float64))
    for i in range(r):
        out = out * (np.asarray(x, dtype=np.float64) - i)
    return out


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


@dataclass(frozen=True)
class _Setting:
    P: int
    sizes: tuple  # area sizes, area 0 global
    j: int  # the query's area
    gamma: float
    mask: str
    mask_size: int
    mask_keys: bool
    loss_norm: str
    K: int

    @property
    def counts(self) -> np.ndarray:
        c = np.asarray(self.sizes, dtype=np.float64).copy()
        c[self.j] -= 1.0  # the query itself is masked
        return c

    @property
    def p_masked(self) -> float:
        return self.gamma if self.mask == "bernoulli" else self.mask_size / self.P


def _norm(loss_norm: str, P: int, n: np.ndarray) -> np.ndarray:
    if loss_norm == "P":
        return np.full(n.shape, 1.0 / P)
    if loss_norm == "mask":
        return 1.0 / (P - n)  # |ℳ| = 1 (the query) + the masked other keys
    return np.ones(n.shape)


def _setting(P, sizes, j, gamma, mask, mask_size, mask_keys, loss_norm, K) -> _Setting:
    sizes = tuple(int(x) for x in sizes)
    if sum(sizes) != P or min(sizes) < 1:
        raise ValueError(f"sizes: area sizes {sizes} must be positive and sum to P = {P}")
    if not 0 <= j < len(sizes):
        raise ValueError(f"j: the query's area {j} is not one of the {len(sizes)} areas")
    if loss_norm not in ("P", "mask", "none"):
        raise ValueError(f"loss_norm: {loss_norm!r} is not one of 'P', 'mask', 'none'")
    return _Setting(P, sizes, j, float(gamma), mask, int(mask_size), bool(mask_keys), loss_norm,
                    int(K))


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
    st = _setting(P, sizes, j, gamma, mask, mask_size, mask_keys, loss_norm, K)
    c = st.counts
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
    return -(st.p_masked / K) * g


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
    st = _setting(P, sizes, j, gamma, mask, mask_size, mask_keys, loss_norm, K)
    c = st.counts
    n_mean = (1.0 - gamma) * (P - 1) if mask == "bernoulli" else float(P - mask_size)
    a = c * n_mean / ((P - 1) * P) if mask_keys else c / (P - 1)
    w = st.p_masked * float(_norm(loss_norm, P, np.array([n_mean]))[0]) / K
    sq = a * a
    r = np.empty(len(c))
    m12 = mu.mu1 * mu.mu2
    for m in range(len(c)):
        if m == j:
            r[m] = w * (mu.mu3 * a[j] * (1 - a[j]) ** 2 + m12 * a[j] * (sq.sum() - sq[j]))
        else:
            rest = sq.sum() - sq[j] - sq[m]
            r[m] = w * (-mu.mu3 * sq[m] * (1 - a[m]) + m12 * a[m] * rest
                        - m12 * a[m] * a[j] * (1 - a[j]))
    return r


def _cluster_sizes(structure: AreaStructure, k: int) -> np.ndarray:
    return np.bincount(structure.labels[k], minlength=int(structure.n_areas[k]))


def initial_rate_matrix(cfg: ExperimentConfig, structure: AreaStructure | None = None, *,
                        leading: bool = False, mu: ZMoments | None = None) -> np.ndarray:
    """The rates −∂L/∂Φ at Q⁰ = 0 as a (P, F) array in the engines' layout (row p, column
    the feature ``offset_k + m`` of area m of cluster k), the same quantity as
    ``-engine.evaluate(engine.initial_params(), ...).grads["Phi"]`` for an MAE config.

    **Arguments:**

    - `cfg`: a resolved MAE experiment config (``cfg.resolved()``).
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
        sizes = _cluster_sizes(s, k)
        off = int(s.offset[k])
        cache: dict[int, np.ndarray] = {}
        for p in range(s.P):
            j = int(s.labels[k, p])
            if j not in cache:
                cache[j] = fn(s.P, sizes, j, mu, **kw)
            out[p, off:off + len(sizes)] = cache[j]
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


# ---------------------------------------------------------------------------------------------
# Reduced population dynamics of one query (Phase I and Phase II, DERIVED)
# ---------------------------------------------------------------------------------------------

#: The seven coordinates of a query's reduced state, in order: the FP correlations to its own
#: area, to the tracked area (the global one, for a local query) and to every other area; the
#: positional correlations to itself, to its own area's other keys, to the tracked area's keys
#: and to every other key.
REDUCED_COORDS = ("phi_own", "phi_trk", "phi_rest", "ups_self", "ups_own", "ups_trk",
                  "ups_rest")


@dataclass(frozen=True)
class QueryClass:
    """The keys a masked query p sees, by class: `c_own` other keys of its own area, `c_trk`
    keys of the tracked area (the global area for a local query, none for a global one) and
    `n_rest` further areas of `c_rest` keys each (all other areas)."""

    c_own: int
    c_trk: int
    n_rest: int
    c_rest: int

    @property
    def sizes(self) -> tuple[int, int, int, int]:
        """Keys per positional class (self, own, tracked, rest)."""
        return (1, self.c_own, self.c_trk, self.n_rest * self.c_rest)


def _reduced_premise(cfg: ExperimentConfig) -> tuple[int, int, int]:
    """(P, C1, C) of a config the reduced dynamics covers, else ValueError."""
    d, m = cfg.data, cfg.model
    if d.K != 1:
        raise ValueError(f"data.K: the reduced dynamics needs one cluster (got {d.K})")
    if m.mask != "bernoulli" or not m.mask_keys or m.loss_norm != "P":
        raise ValueError("model: the reduced dynamics needs Bernoulli masks, masked keys in the "
                         "softmax and loss_norm = 'P'")
    P, C1, C = int(d.P), int(d.C1), int(d.C)
    if (P - C1) % C or P - C1 < C:
        raise ValueError(f"data: P − C1 = {P - C1} must be a positive multiple of C = {C}")
    return P, C1, C


def query_classes(P: int, C1: int, C: int) -> dict[str, QueryClass]:
    """The two query classes of one cluster with a global area of C1 and (P − C1)/C local
    areas of C: ``"local"`` (tracked area: the global one) and ``"global"`` (no tracked
    area; the rest are the local areas)."""
    M = (P - C1) // C
    return {"local": QueryClass(C - 1, C1, M - 1, C), "global": QueryClass(C1 - 1, 0, M, C)}


#: Gauss–Legendre nodes for a uniform coefficient law when the config sets no
#: ``train.z_nodes`` (the ladder's 6 nodes change Φ after 30 steps by < 1e-10 against 8).
DEFAULT_Z_NODES = 8


def _z_rule(cfg: ExperimentConfig) -> tuple[np.ndarray, np.ndarray]:
    """The coefficient law's nodes and weights: the config's ``train.z_nodes`` Gauss–Legendre
    nodes for a uniform law (``DEFAULT_Z_NODES`` when unset), the finite law otherwise."""
    d = cfg.data
    n = int(cfg.train.z_nodes) or DEFAULT_Z_NODES
    return zlaw_nodes(d.z_law, d.L, d.U, d.z_values, d.z_probs, n)


def reduced_expectation(theta, qc: QueryClass, gamma: float, z_nodes, z_probs,
                        grad: bool = False):
    """E[½‖F_p − x_p‖² | p masked], E[attention on the unmasked own-area keys | p masked] and
    the mean softmax denominator E D (keys weighted e^{logit}, one per key at Q = 0) of a
    query of class `qc` in the reduced state `theta` (the seven [`REDUCED_COORDS`][]),
    Bernoulli masks with probability γ, masked keys in the softmax (DERIVED); with `grad`,
    also the gradient of the first with respect to the seven coordinates (each class's
    coordinate shared by all its keys or areas).

    Logits: z_o Φ_own + Υ_own on the n_o unmasked own keys, Υ_own on its c_own − n_o masked
    ones; z_t Φ_trk + Υ_trk and Υ_trk on the tracked area's; Υ_self on p itself (masked); z_m
    Φ_rest + Υ_rest and Υ_rest on the rest. With S_t, S_o the tracked and own unmasked masses,
    ℓ = ½[z_t² S_t² + z_o² (S_o − 1)² + Σ_m z_m² S_m²]. The counts n_o ~ Bin(c_own, 1 − γ),
    n_t ~ Bin(c_trk, 1 − γ) and the coefficients z_o, z_t are summed exactly. The rest areas
    enter D only through Σ_m [n_m e^{z_m Φ_rest} + (c_rest − n_m)] e^{Υ_rest} and ℓ through
    Σ_m z_m² n_m² e^{2 z_m Φ_rest + 2Υ_rest} / D²; both are replaced by their means: exact
    when Φ_rest = 0 (the first is then the constant n_rest·c_rest·e^{Υ_rest}, masked or not,
    and the second is independent of D), otherwise off by the fluctuation of the rest's share
    of D ([`rest_variance`][]). Derivative of ℓ along a coordinate that moves D by dD, the
    tracked and own weights by de_t, de_o and the rest numerator by dq:
    dℓ = z_t² S_t (de_t − S_t dD)/D + z_o² (S_o − 1)(de_o − S_o dD)/D + dq/(2D²) − q dD/D³
    (checked symbolically in proofs_checks/huang2024/check_h24_reduced_dynamics.py)."""
    phi_o, phi_t, phi_x, u_s, u_o, u_t, u_x = (float(v) for v in theta)
    no, pno = count_law(qc.c_own + 1, gamma=gamma)
    nt, pnt = count_law(qc.c_trk + 1, gamma=gamma)
    zn, zp = np.asarray(z_nodes, dtype=np.float64), np.asarray(z_probs, dtype=np.float64)
    # grid (n_t, n_o, z_t, z_o)
    NT = nt.astype(np.float64)[:, None, None, None]
    NO = no.astype(np.float64)[None, :, None, None]
    ZT = zn[None, None, :, None]
    ZO = zn[None, None, None, :]
    W = (pnt[:, None, None, None] * pno[None, :, None, None] * zp[None, None, :, None]
         * zp[None, None, None, :])
    e_t = NT * np.exp(ZT * phi_t + u_t)
    e_o = NO * np.exp(ZO * phi_o + u_o)
    m_t = (qc.c_trk - NT) * math.exp(u_t)
    m_o = (qc.c_own - NO) * math.exp(u_o)
    ezx = np.exp(zn * phi_x)
    n_x = qc.n_rest * qc.c_rest
    z_x = n_x * math.exp(u_x) * (gamma + (1 - gamma) * float(zp @ ezx))
    D = e_t + m_t + e_o + m_o + math.exp(u_s) + z_x
    en2 = qc.c_rest * (1 - gamma) * (gamma + qc.c_rest * (1 - gamma))
    q_x = qc.n_rest * en2 * float(zp @ (zn ** 2 * ezx ** 2)) * math.exp(2 * u_x)
    s_t, s_o = e_t / D, e_o / D
    ell = 0.5 * (ZT ** 2 * s_t ** 2 + ZO ** 2 * (s_o - 1) ** 2 + q_x / D ** 2)
    out = (float(np.sum(W * ell)), float(np.sum(W * s_o)), float(np.sum(W * D)))
    if not grad:
        return out
    zero = 0.0
    dzx_phi = n_x * math.exp(u_x) * (1 - gamma) * float(zp @ (zn * ezx))
    dq_phi = qc.n_rest * en2 * float(zp @ (2 * zn ** 3 * ezx ** 2)) * math.exp(2 * u_x)
    moves = (  # (dD, de_t, de_o, dq) per coordinate
        (ZO * e_o, zero, ZO * e_o, zero),
        (ZT * e_t, ZT * e_t, zero, zero),
        (dzx_phi, zero, zero, dq_phi),
        (math.exp(u_s), zero, zero, zero),
        (e_o + m_o, zero, e_o, zero),
        (e_t + m_t, e_t, zero, zero),
        (z_x, zero, zero, 2 * q_x),
    )
    g = np.empty(len(moves))
    for i, (dD, de_t, de_o, dq) in enumerate(moves):
        dl = (ZT ** 2 * s_t * (de_t - s_t * dD) / D + ZO ** 2 * (s_o - 1) * (de_o - s_o * dD) / D
              + dq / (2 * D ** 2) - q_x * dD / D ** 3)
        g[i] = float(np.sum(W * dl))
    return out + (g,)


def reduced_gradient(theta: np.ndarray, qc: QueryClass, gamma: float, z_nodes,
                     z_probs) -> tuple[float, float, np.ndarray, float]:
    """(E ℓ, E attn_own, ∇, E D) at the reduced state `theta` ([`reduced_expectation`][]), the
    gradient per coordinate: ∂E ℓ/∂Φ for the own and tracked FP correlations and for the FP
    correlation to one rest area (the class total divided by their number), and
    ∂E ℓ/∂Υ_{p→q} of one key q of the class for the four positional ones (the class total
    divided by its size), i.e. the engines' gradient entries divided by the query's weight
    P[p masked]·norm/K."""
    ell, attn, den, g = reduced_expectation(theta, qc, gamma, z_nodes, z_probs, grad=True)
    g = g.copy()
    g[2] = g[2] / qc.n_rest if qc.n_rest else 0.0  # one rest area's Φ
    for i, size in enumerate(qc.sizes):
        g[3 + i] = g[3 + i] / size if size else 0.0
    return ell, attn, g, den


def rest_variance(theta, qc: QueryClass, gamma: float, z_nodes, z_probs,
                  mean_den: float) -> float:
    """Var(Σ_m n_m (e^{z_m Φ_rest} − 1) e^{Υ_rest}) / (E D)²: the relative variance of the rest
    areas' share of the softmax denominator D that [`reduced_expectation`][] replaces by its
    mean (`mean_den` = E D from [`reduced_gradient`][]). The mean-field step changes each
    expectation by a relative amount of this order (the second-order Taylor term; the first
    averages out); it is 0 while Φ_rest = 0."""
    zn, zp = np.asarray(z_nodes, dtype=np.float64), np.asarray(z_probs, dtype=np.float64)
    d = np.exp(zn * float(theta[2])) - 1.0
    c, q = qc.c_rest, 1.0 - gamma
    en, en2 = c * q, c * q * (gamma + c * q)
    var = qc.n_rest * math.exp(2 * float(theta[6])) * (en2 * np.dot(zp, d * d)
                                                       - (en * np.dot(zp, d)) ** 2)
    return float(var / mean_den ** 2)


def stop_reached(rows: list[dict], target: float, eps_rel: float) -> bool:
    """The stopping rule of the ladder runs (both engine and reduced): L − L* ≤ eps_rel·(L⁰ −
    L*), own-area attention of local queries ≥ `target` and, at the last step, the own-area
    Φ growing no slower than the global one falls."""
    if len(rows) < 3:
        return False
    row, prev = rows[-1], rows[-2]
    return bool(row["excess_loss"] <= eps_rel * rows[0]["excess_loss"]
                and row["attn_own_lq"] >= target
                and (row["phi_own_lq"] - prev["phi_own_lq"])
                >= -(row["phi_glob_lq"] - prev["phi_glob_lq"]))


def own_attention_target(C: int, gamma: float) -> float:
    """Half the largest own-area attention a masked local query can have, ½(1 − γ^{C−1}):
    the unmasked keys of its own area exist with probability 1 − γ^{C−1} (the end of
    Phase II)."""
    return 0.5 * (1.0 - gamma ** (C - 1))


def reduced_gd(cfg: ExperimentConfig, max_steps: int, eps_rel: float = 0.05):
    """Population gradient descent on the reduced state of the two query classes
    ([`reduced_gradient`][]) from Q⁰ = 0 with the config's step size η (DERIVED): one row per
    step with the engines' trajectory columns ``loss``, ``loss_star``, ``excess_loss``,
    ``phi_own_lq``, ``phi_glob_lq``, ``attn_own_lq``, ``phi_own_gq``, plus ``rest_var`` (the
    largest [`rest_variance`][] of the two classes: the relative order of what the
    mean-field step neglects) and ``rel_excess``; stopped by [`stop_reached`][] or at
    `max_steps`.

    Exact population GD keeps every query's row of (Φ, Υ) exchangeable within the key classes
    of [`query_classes`][] (the loss of query p depends on row p only, and the classes are
    permuted among themselves by the symmetries of the data law), so the engines' state is
    this reduced state; the only approximation is the mean-field rest of
    [`reduced_expectation`][]. Needs one cluster, Bernoulli masks, masked keys in the softmax
    and loss_norm = 'P' (else ValueError); all local areas of size C. A run longer than a few
    seconds says, two seconds in, how long it will take at most
    ([`Progress`][theorylab.core.cost.Progress]; P = 4096 took minutes)."""
    import pandas as pd

    from theorylab.core.cost import Progress

    from .engines import population_lstar

    P, C1, C = _reduced_premise(cfg)
    gamma = float(cfg.model.gamma)
    zn, zp = _z_rule(cfg)
    qcs = query_classes(P, C1, C)
    lstar = population_lstar(cfg, cfg.data.make_structure())
    step_size = float(cfg.train.lr) * gamma / P
    theta = {k: np.zeros(len(REDUCED_COORDS)) for k in qcs}
    target = own_attention_target(C, gamma)
    rows: list[dict] = []
    progress = Progress("predictions.reduced_gd", max_steps + 1)
    for step in range(max_steps + 1):
        progress.tick()
        ev = {k: reduced_gradient(theta[k], qc, gamma, zn, zp) for k, qc in qcs.items()}
        loss = (gamma / P) * (C1 * ev["global"][0] + (P - C1) * ev["local"][0])
        rows.append({"step": step, "loss": loss, "loss_star": lstar, "excess_loss": loss - lstar,
                     "phi_own_lq": theta["local"][0], "phi_glob_lq": theta["local"][1],
                     "attn_own_lq": ev["local"][1], "phi_own_gq": theta["global"][0],
                     "rest_var": max(rest_variance(theta[k], qcs[k], gamma, zn, zp, ev[k][3])
                                     for k in qcs)})
        if stop_reached(rows, target, eps_rel) or step == max_steps:
            break
        for k in qcs:
            theta[k] = theta[k] - step_size * ev[k][2]
    progress.close()
    tr = pd.DataFrame(rows)
    tr["rel_excess"] = tr.excess_loss / tr.excess_loss.iloc[0]
    return tr


def phase_readings(tr, C: int, gamma: float, eps_rel: float) -> dict:
    """The phase readings of one run (a trajectory with ``step``, ``phi_glob_lq``,
    ``phi_own_lq``, ``attn_own_lq`` and ``rel_excess``; engine or derived), local queries:
    with dΦ(t) = Φ(t) − Φ(t−1), ``t_I`` = first step t ≥ 1 with dΦ_own ≥ −dΦ_glob,
    ``phase_I`` = (t_I ≥ 2), ``phi_glob_end_I`` = Φ_glob(t_I); ``t_II`` = first step with
    attn_own_lq ≥ [`own_attention_target`][]; ``T_star`` = first step with rel_excess ≤
    `eps_rel`; ``dphi_glob_1``, ``dphi_own_1`` the first increments. NaN where not reached."""
    step = tr.step.to_numpy()
    g, o = tr.phi_glob_lq.to_numpy(), tr.phi_own_lq.to_numpy()
    dg, do = np.diff(g), np.diff(o)
    t_I = first_step(step[1:], do >= -dg)
    return {"t_I": t_I, "phase_I": bool(np.isfinite(t_I) and t_I >= 2),
            "phi_glob_end_I": float(g[int(t_I)]) if np.isfinite(t_I) else math.nan,
            "t_II": first_step(step, tr.attn_own_lq.to_numpy() >= own_attention_target(C, gamma)),
            "T_star": first_step(step, tr.rel_excess.to_numpy() <= eps_rel),
            "dphi_glob_1": float(dg[0]) if dg.size else math.nan,
            "dphi_own_1": float(do[0]) if do.size else math.nan}


def phase_one_prediction(cfg: ExperimentConfig, max_steps: int | None = None,
                         eps_rel: float = 0.05) -> dict:
    """The derived phase readings of an MAE config ([`reduced_gd`][] read with the ladder
    claims' definitions, [`phase_readings`][]): ``phase_I`` (the first
    step has −dΦ_glob > dΦ_own), ``t_I`` (the first step with dΦ_own ≥ −dΦ_glob),
    ``phi_glob_end_I`` = Φ_glob(t_I) of local queries, ``t_II`` (own-area attention reaches
    ½(1 − γ^{C−1})), ``T_star`` (L − L* ≤ eps_rel·(L⁰ − L*)) and ``neglect`` (the largest
    √[`rest_variance`][] along the run); NaN where the run did not get there.

    **Arguments:**

    - `cfg`: a resolved MAE config with one cluster, Bernoulli masks, masked keys in the
      softmax and loss_norm = 'P' (else ValueError); its ``train.lr`` is the step size η.
    - `max_steps`: the step cap (default ``cfg.train.steps`` when positive, else
      40 (P/C)/η_q + 40 with η_q = η/P).
    - `eps_rel`: the relative excess loss that defines T*."""
    P, C1, C = _reduced_premise(cfg)
    if max_steps is None:
        eta_q = float(cfg.train.lr) / P
        max_steps = int(cfg.train.steps) if cfg.train.steps > 0 else \
            int(math.ceil(40 * (P / C) / max(eta_q, 1e-12))) + 40
    tr = reduced_gd(cfg, max_steps, eps_rel)
    r = phase_readings(tr, C, float(cfg.model.gamma), eps_rel)
    out = {k: r[k] for k in ("phase_I", "t_I", "phi_glob_end_I", "t_II", "T_star")}
    out["neglect"] = float(np.sqrt(tr.rest_var.max()))
    return out
