"""The leading orders in P that Theorems 4.1 and 4.2 state (as RECONSTRUCTED in
docs/papers/huang2024.md §4.2–§4.5), and how a ladder of P reads them: local slopes per
sub-ladder, their drift, and what polylog(P) factors can add.

**Statements** (paper statement, reconstructed; the paper's text was not read):

- the end of Phase I: Φ_glob(t_I) = −(Δ/2) ln P + lower order ([`crossing_value`][]): in
  attention terms, a local query's attention on the global area has fallen to about the own
  area's share, attn_glob(t_I)² ≈ C/P, i.e. ln attn_glob(t_I) ∝ −((1 − κ_c)/2) ln P
  ([`crossing_attention_exponent`][]);
- the phase lengths and T*: ∝ P^{1−κ_c}/η up to polylog(P) factors, i.e. exponent 1 against
  x = (P/C)/η_q, with the per-query step η_q = η/P (setups' step-size convention);
- the learned correlation: Φ_own(T*) = Θ(log P) (exponent 1 of Φ_own(T*) in ln P);
- Phase I for Δ ≥ Ω(1), none for Δ ≤ −Ω(1).

**What the coefficient law changes** (DERIVED). With z ≡ 1 the crossing value is −(Δ/2) ln P
plus lower order. For a law with support [L, U], L < U, the global attention is
a_1 E_z e^{zΦ}; once |Φ|(U − L) ≫ 1 the expectation is led by the lowest coefficients, so the
crossing heads for Φ ≈ −(Δ/(2L)) ln P ([`crossing_value`][] with `L`), but slowly: the local
slope of Φ·L/(Δ/2) is −1 + 1/y + 2/y² + O(y⁻³), y = 2L|Φ| (about 4 at P = 10⁶). The
finite-P crossing law ([`crossing_balance`][], [`crossing_law`][]) keeps the exact expectation
over z and the softmax's denominator, with one constant fitted on a ladder; a claim judges a
limit on the measured local slopes less the law's correction ([`law_corrected_slopes`][]).
The attention form's limit does not depend on the law (a spread law adds (ln P)^{−1/2}).

**Reading a ladder.** [`sub_ladders`][] cuts a ladder into consecutive sub-ladders of equal
length in ln P; [`local_slopes`][] gives the least-squares slope of y against x on each, the
top one and the drift (top − the one below). A statement's slope is compared with the top
slope within the drift plus what the neglected orders can add (a factor (ln P)^k moves a
log-log slope against x by at most k·ln(ln P_max/ln P_min)/ln(x_max/x_min)).
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["crossing_value", "crossing_attention_exponent", "crossing_balance", "crossing_law",
           "crossing_constant", "crossing_law_fit", "law_corrected_slopes", "own_log_odds",
           "phase_one_length", "sub_ladders", "local_slopes"]


def crossing_value(P, Delta, L: float = 1.0):
    """−(Δ/(2L)) ln P: the notes' end of Phase I (L = 1: the coefficients z ≡ 1) or its
    asymptote for a coefficient law whose support starts at L (module docstring)."""
    return -(np.asarray(Delta) / (2.0 * L)) * np.log(np.asarray(P, dtype=np.float64))


def crossing_attention_exponent(kappa_c: float) -> float:
    """−(1 − κ_c)/2: the exponent of P in a local query's attention on the global area at the
    end of Phase I (attn_glob² ≈ C/P, the notes' crossing criterion)."""
    return -(1.0 - kappa_c) / 2.0


def sub_ladders(P, n: int = 3) -> list[np.ndarray]:
    """Indices of `n` consecutive sub-ladders of the ladder `P` (sorted), each spanning an
    equal share of ln P_max − ln P_min; neighbours share their end rung. A sub-ladder has at
    least 3 rungs (fewer sub-ladders are returned when the ladder is short)."""
    P = np.asarray(P, dtype=np.float64)
    order = np.argsort(P)
    lp = np.log(P[order])
    while n > 0:
        edges = np.linspace(lp[0], lp[-1], n + 1)
        groups = [order[(lp >= lo - 1e-9) & (lp <= hi + 1e-9)]
                  for lo, hi in zip(edges[:-1], edges[1:])]
        if all(len(g) >= 3 for g in groups):
            return groups
        n -= 1
    return []


def local_slopes(x, y, groups, *, log_x: bool = True, log_y: bool = True) -> dict:
    """Least-squares slopes of y against x (each axis in logs when asked) on each sub-ladder
    of `groups` ([`sub_ladders`][]): ``slopes`` (bottom to top), ``top``, ``drift`` = top − the
    one below (NaN with one sub-ladder), and each sub-ladder's range ``ranges`` of x. Points
    that are not finite (or not positive on a log axis) are left out; a sub-ladder with fewer
    than 3 left gives NaN."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    slopes, ranges = [], []
    for g in groups:
        xx, yy = x[g], y[g]
        # finite, and positive on a log axis
        ok = np.isfinite(xx) & np.isfinite(yy) & ((xx > 0) | (not log_x)) & ((yy > 0) | (not log_y))
        if ok.sum() < 3:
            slopes.append(math.nan)
            ranges.append((math.nan, math.nan))
            continue
        X = np.log(xx[ok]) if log_x else xx[ok]
        Y = np.log(yy[ok]) if log_y else yy[ok]
        slopes.append(float(np.polyfit(X, Y, 1)[0]))
        ranges.append((float(xx[ok].min()), float(xx[ok].max())))
    top = slopes[-1] if slopes else math.nan
    drift = slopes[-1] - slopes[-2] if len(slopes) >= 2 else math.nan
    return {"slopes": slopes, "top": top, "drift": drift, "ranges": ranges}


# -- the finite-P crossing law -------------------------------------------------------------------

def _z_rule(L: float, U: float, n: int = 48) -> tuple[np.ndarray, np.ndarray]:
    """Gauss–Legendre nodes and weights of the uniform law on [L, U] (one node for L = U)."""
    if U == L:
        return np.array([float(L)]), np.array([1.0])
    x, w = np.polynomial.legendre.leggauss(n)
    return L + (U - L) * (x + 1.0) / 2.0, w / 2.0


def crossing_balance(phi, P, C1, C, L: float, U: float, gamma: float,
                     mask_keys: bool = True) -> tuple[float, float]:
    """The leading-order balance of the end of Phase I at the global correlation Φ = `phi`:
    ``(ln(|r_glob|/r_own), attn_glob)`` for a local query, the counts at their means (shares
    a_1 = (1 − γ)C1/P and a_j = (1 − γ)(C − 1)/P with masked keys in the softmax, C1/(P − 1) and
    (C − 1)/(P − 1) without), the coefficients z uniform on [L, U] (a point law for L = U) and
    every other logit at 0. With S_t = a_1 e^{zΦ}/d, S_o = a_j/d and
    d = 1 − a_1(1 − E_z e^{zΦ}) (the softmax's denominator over P):

        |r_glob| ∝ E_z[z³ S_t² (1 − S_t)],   r_own ∝ μ_3 S_o (1 − S_o)²,   attn_glob = E_z S_t

    (the leading terms of the notes' §4.5 rates at this state; the cross terms are smaller by
    a factor attn_glob at the crossing). The exact expectation over z keeps the whole series
    in 1/(z_min|Φ|) that a spread law adds (docs/papers/huang2024.md §4.5,
    ``proofs_checks/huang2024/check_crossing.py``)."""
    z, w = _z_rule(float(L), float(U))
    a1, aj = _share(P, C1, gamma, mask_keys), _share(P, float(C) - 1, gamma, mask_keys)
    St, d = _global_mass(float(phi), z, w, a1)
    So = aj / d
    glob = float(w @ (z ** 3 * St ** 2 * (1.0 - St)))
    own = float(w @ z ** 3) * So * (1.0 - So) ** 2
    return math.log(glob / own), float(w @ St)


def _share(P, c, gamma: float, mask_keys: bool) -> float:
    """The mean attention share of c keys at zero logits: (1 − γ)c/P with masked keys in the
    softmax, c/(P − 1) without."""
    P, c = float(P), float(c)
    return (1 - gamma) * c / P if mask_keys else c / (P - 1)


def _global_mass(phi: float, z: np.ndarray, w: np.ndarray, a1: float):
    """(S_t, d) of [`crossing_balance`][] at Φ = `phi`: the global keys' mass a_1 e^{zΦ}/d at
    each node z and the denominator d = 1 − a_1(1 − E_z e^{zΦ})."""
    e = np.exp(z * phi)
    d = 1.0 - a1 * (1.0 - float(w @ e))
    return a1 * e / d, d


def crossing_law(P, C1, C, L: float, U: float, gamma: float, constant: float,
                 mask_keys: bool = True) -> tuple[float, float]:
    """``(Φ_glob(t_I), attn_glob(t_I))`` of the finite-P crossing law: the Φ < 0 at which
    ln(|r_glob|/r_own) of [`crossing_balance`][] equals `constant` (the one constant the law
    leaves free: the own-area growth and the positional logits by t_I, fitted on a ladder by
    [`crossing_constant`][]). As P → ∞ at fixed Δ it gives Φ_glob(t_I) ≈ −(Δ/(2L)) ln P and
    attn_glob(t_I) ∝ P^{−(1−κ_c)/2} up to a (ln P)^{−1/2} for a spread law
    ([`crossing_attention_exponent`][])."""
    from scipy.optimize import brentq

    f = lambda x: crossing_balance(x, P, C1, C, L, U, gamma, mask_keys)[0] - constant  # noqa: E731
    lo = -1.0
    while f(lo) > 0 and lo > -1e4:
        lo *= 2.0
    if not (f(lo) <= 0.0 <= f(0.0)):
        return math.nan, math.nan  # no crossing at Φ < 0 (the global rate below the own one)
    phi = float(brentq(f, lo, 0.0, xtol=1e-12, rtol=1e-14))
    return phi, crossing_balance(phi, P, C1, C, L, U, gamma, mask_keys)[1]


def crossing_constant(P, C1, C, phi, L: float, U: float, gamma: float,
                      mask_keys: bool = True) -> np.ndarray:
    """ln(|r_glob|/r_own) of [`crossing_balance`][] at each measured Φ_glob(t_I) (one per
    rung): constant along a ladder where the law holds exactly; its mean is the law's constant."""
    return np.array([crossing_balance(f, p, c1, c, L, U, gamma, mask_keys)[0]
                     for p, c1, c, f in zip(P, C1, C, phi)])


def crossing_law_fit(P, C1, C, phi, L: float, U: float, gamma: float,
                     mask_keys: bool = True) -> dict[str, np.ndarray | float]:
    """The finite-P crossing law fitted on a ladder of measured crossings Φ_glob(t_I) = `phi`
    at sizes (P, C1, C): ``constant`` (the balance at each measured crossing,
    [`crossing_constant`][]), ``fitted`` (their mean, the law's one constant), and the law's
    ``phi`` and ``attn`` at each rung ([`crossing_law`][])."""
    c = crossing_constant(P, C1, C, phi, L, U, gamma, mask_keys)
    fitted = float(np.mean(c))
    rows = [crossing_law(p, c1, cc, L, U, gamma, fitted, mask_keys)
            for p, c1, cc in zip(P, C1, C)]
    return {"constant": c, "fitted": fitted, "phi": np.array([r[0] for r in rows]),
            "attn": np.array([r[1] for r in rows])}


def phase_one_length(P, C1, C, L: float, U: float, gamma: float, constant: float,
                     mask_keys: bool = True) -> float:
    """The length of Phase I in the finite-P crossing law, in steps times η_q·w (a factor that
    does not depend on P): ∫_{Φ_c}^0 dΦ/G(Φ), G = E_z[z³ S_t² (1 − S_t)] the global
    rate of [`crossing_balance`][] (its leading term at the state of Phase I), Φ_c the law's
    crossing ([`crossing_law`][] with `constant`). The integral is led by its end:
    t_I ∝ e^{−c}/(2L μ_3 a_j)·(1 − 1/y_c + O(y_c⁻²)), y_c = 2L|Φ_c|, so its local exponent
    against (P/C)/η_q is 1 + O(1/ln² P) (``proofs_checks/huang2024/check_phase_length.py``).
    NaN where the law has no crossing."""
    from scipy.integrate import quad

    phi_c, _ = crossing_law(P, C1, C, L, U, gamma, constant, mask_keys)
    if not math.isfinite(phi_c):
        return math.nan
    z, w = _z_rule(float(L), float(U))
    a1 = _share(P, C1, gamma, mask_keys)

    def inv_rate(phi: float) -> float:
        St, _ = _global_mass(phi, z, w, a1)
        return 1.0 / float(w @ (z ** 3 * St ** 2 * (1.0 - St)))

    return float(quad(inv_rate, phi_c, 0.0, limit=200, epsrel=1e-10)[0])


def own_log_odds(phi: float, level: float, L: float, U: float) -> float:
    """The log-odds scale ℓ that an own-area correlation Φ and an own-area attention `level`
    (a share of its ceiling) imply, E_z σ(zΦ − ℓ) = level, z uniform on [L, U] (a point law
    for L = U): the own attention of a local query is n_o e^{zΦ + Υ_own}/D, so
    ℓ = ln((D − own)/(n_o e^{Υ_own})) up to the counts' spread, and Φ ≈ ℓ/z* with
    z* = U − level·(U − L) for a sharp spread law. ℓ grows like ln(P/C); a level that still
    moves with P moves Φ's growth in ln P through z* (NaN outside 0 < level < 1)."""
    from scipy.optimize import brentq
    from scipy.special import expit

    if not 0.0 < float(level) < 1.0 or not math.isfinite(float(phi)):
        return math.nan
    z, w = _z_rule(float(L), float(U))
    f = lambda ell: float(w @ expit(z * float(phi) - ell)) - float(level)  # noqa: E731
    lo, hi = -10.0 - 2 * abs(float(phi)) * U, 10.0 + 2 * abs(float(phi)) * U
    return float(brentq(f, lo, hi, xtol=1e-12))


def law_corrected_slopes(measured, law, limit: float) -> np.ndarray:
    """Local estimates with the derived finite-P correction removed: measured − (law − limit),
    sub-ladder by sub-ladder (`law`: the finite-P law's local slopes on the same rungs, `limit`
    its P → ∞ value). Where the law holds they equal `limit`; what is left is the part of the
    correction the law does not model."""
    return (np.asarray(measured, dtype=np.float64) - np.asarray(law, dtype=np.float64)
            + float(limit))
