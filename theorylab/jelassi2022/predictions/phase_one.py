"""Predictions of the reduced population dynamics of Jelassi et al. (2022): the plateau (phase I)
and the growth of γ − ρ (phase II), derived from the partition-symmetric reduction.

In the reduction of the paper notes §4.3 (DERIVED) the state is v = α·w*, A_ii = a (frozen),
A_ij = γ inside a set and ρ across sets; population gradient descent on (P) is then an exact
map of (α, γ, ρ) (the exchangeable engine). The data noise σ drops out exactly (ξ ⊥ w*, so
⟨v, X_j⟩ = α c_j), and the data dimension d enters only through the frozen diagonal a (ln ln d
by default) and the temperature τ (√d by default). Everything below is a function of the
learning rates η_v (`train.lr_v`) and η_A (`train.lr_A`), α⁰ (`train.alpha0`), q, D, C, the
activation σ, the value scale κ, τ, a and the common off-diagonal start g⁰ (`train.offdiag0`).

**Phase I (the plateau).** At the start γ = ρ = g⁰, so every row of the softmax is
(S_a, s, …, s) with S_a = e^{a/τ}/Z, s = e^{g⁰/τ}/Z, Z = e^{a/τ} + (D − 1)e^{g⁰/τ}, and the
pre-activation of patch i is z_i = κα N_i with N_i = u c_i + s T, u = S_a − s, T = Σ_j c_j.
Let σ(h) = c_p h^p + O(h^{p+1}) with p ≥ 3 odd (the cubic σ = h³ has p = 3, c_p = 1). While
F = O(α^p) is small the logistic derivative is ℓ'(yF) = −1/2 + O(α^p), so

    α_{t+1} = α_t + h α_t^{p−1} (1 + O(α_t^2)),      h = η_v p c_p κ^p M_p / 2,
    M_p = E[y Σ_i N_i^p],

and the continuous solution α(t) = α⁰ (1 − t/t_blowup)^{−1/(p−2)} blows up at the plateau length

    t_blowup = (α⁰)^{2−p} / ((p − 2) h)     (cubic: t_blowup = 2 / (3 η_v κ³ M_3 α⁰)).

For p = 3 the moment has the closed form (K = C³ + 3C(D − C)q)

    M_3 = u³ C + 3u² s C (C + (D − C) q) + 3u s² K + s³ D K.

In the same regime γ and ρ move in step with α²: dγ/dα = k_γ α and dρ/dα = k_ρ α, i.e.
γ − g⁰ = k_γ (α² − (α⁰)²)/2 and ρ − g⁰ = k_ρ (α² − (α⁰)²)/2, with

    k_γ = η_A s G_γ / (η_v τ D (C − 1) M_p),
    k_ρ = η_A s G_ρ / (η_v τ D (D − C) M_p),
    G_γ = E[y Σ_i N_i^{p−1} ((s_ℓ(i) − c_i) − (C − 1) N_i)],
    G_ρ = E[y Σ_i N_i^{p−1} ((T − s_ℓ(i)) − (D − C) N_i)],

where s_ℓ(i) is the sum of c over the set of i. These hold as α⁰ → 0 (leading order). For
gradient descent with a fixed step [`PhaseIPrediction.time_to`][] and
[`PhaseIPrediction.gamma_rho`][] add the leading correction of the discrete map; measured
against the engine (tests/jelassi2022/test_predictions.py), the relative error of t_blowup is
O(α⁰ log(1/α⁰)), that of `time_to` O(α⁰), that of the α² law O(α²).

**End of phase I and phase II.** α then settles at α*, the minimiser of the population loss
in α with the attention still at its start (the best model of the form Σ_i σ(κα N_i), a GLM in
the sense of Theorem 3.1). Linearising the map at (α*, g⁰, g⁰), γ − ρ grows at the rate

    r_II = −η_A (∂_γ L / (D(C − 1)) − ∂_ρ L / (D(D − C)))  at (α*, g⁰, g⁰)

per step (∂_γ L, ∂_ρ L: derivatives with respect to the common same-set and cross-set value).
It is the phase-II growth rate in the limit of slow attention, η_A/η_v → 0, with a relative
error O(η_A/η_v) (measured in the tests); for η_A comparable with η_v it is the leading-order
rate while γ − ρ is small. Where γ − ρ is no longer small (phase III, where patch association
is reached) no closed form is given here.

Every expectation is an exact finite sum over the data distribution of Assumption 1 (y
uniform, the signal set all y, every other entry δ ∈ {−1, 0, 1} with probabilities
(q/2, 1 − q, q/2)); α* and the gradients at it are computed with the exact exchangeable engine.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from scipy import optimize

from ..config import ExperimentConfig, Setting, setting_of

__all__ = [
    "PhaseIPrediction",
    "PhaseIIPrediction",
    "m3_closed_form",
    "phase_i",
    "phase_ii",
    "reduced_moments",
]


def _sum_law(n: int, q: float) -> tuple[np.ndarray, np.ndarray]:
    """Values −n..n and probabilities of a sum of n i.i.d. δ (P(±1) = q/2, P(0) = 1 − q)."""
    p = np.array([1.0])
    one = np.array([q / 2, 1.0 - q, q / 2])
    for _ in range(n):
        p = np.convolve(p, one)
    return np.arange(-n, n + 1, dtype=np.float64), p


def _lowest_power(s: Setting) -> tuple[int, float]:
    for k, c in enumerate(s.activation.coeffs):
        if c != 0.0:
            return k, float(c)
    raise ValueError("model.activation: the zero polynomial has no lowest power")


def _per_entry(s: Setting, f: float, g_gamma: float, g_rho: float) -> tuple[float, float]:
    """f·g_γ/(D(C − 1)) and f·g_ρ/(D(D − C)): derivatives in the common same-set and cross-set
    values shared among their D(C − 1) and D(D − C) entries (0 for γ when C = 1)."""
    return (f * g_gamma / (s.D * (s.C - 1)) if s.C > 1 else 0.0, f * g_rho / (s.D * (s.D - s.C)))


def _start_weights(st: Setting) -> tuple[float, float]:
    """(u, s): the softmax weights of a row at γ = ρ = g⁰, u = S_a − s."""
    logits = np.array([st.diag, st.offdiag0]) / st.tau
    e = np.exp(logits - logits.max())
    Z = e[0] + (st.D - 1) * e[1]
    return float((e[0] - e[1]) / Z), float(e[1] / Z)


def reduced_moments(cfg: ExperimentConfig | Setting, p: int | None = None) -> dict[str, float]:
    """The exact moments M_p, G_γ, G_ρ at the start of the reduced dynamics (see the module).

    **Arguments:**

    - `cfg`: an [`ExperimentConfig`][theorylab.jelassi2022.config.ExperimentConfig] or its
      [`Setting`][theorylab.jelassi2022.config.Setting] (its data, model and `train.offdiag0`
      are read).
    - `p`: the power; default the lowest power of the activation.

    **Returns:** ``{"M": M_p, "G_gamma": G_γ, "G_rho": G_ρ, "u": u, "s": s}``: exact finite sums
    over the data distribution (floating point only), valid for odd p (then the expectation
    over y = ±1 equals the one at y = +1).
    """
    st = setting_of(cfg)
    if p is None:
        p, _ = _lowest_power(st)
    D, C, q = st.D, st.C, st.q
    u, s = _start_weights(st)
    M = Gg = Gr = 0.0
    # y = +1. A signal patch: c = 1, its set sums to C, T = C + R with R over the D − C others.
    R, pR = _sum_law(D - C, q)
    T = C + R
    N = u + s * T
    M += C * float(pR @ N**p)
    Gg += C * float(pR @ (N ** (p - 1) * ((C - 1) - (C - 1) * N)))
    Gr += C * float(pR @ (N ** (p - 1) * ((T - C) - (D - C) * N)))
    # a patch of another set: c = δ, its set sums to δ + S' (C − 1 others), T = C + δ + S' + R'
    Sv, pS = _sum_law(C - 1, q)
    Rv, pR2 = _sum_law(D - 2 * C, q)
    for delta, pd in ((1.0, q / 2), (0.0, 1.0 - q), (-1.0, q / 2)):
        Ss, Rr = np.meshgrid(Sv, Rv, indexing="ij")
        w = pd * np.outer(pS, pR2)
        T = C + delta + Ss + Rr
        N = u * delta + s * T
        M += (D - C) * float(np.sum(w * N**p))
        Gg += (D - C) * float(np.sum(w * N ** (p - 1) * (Ss - (C - 1) * N)))
        Gr += (D - C) * float(np.sum(w * N ** (p - 1) * ((C + Rr) - (D - C) * N)))
    return {"M": M, "G_gamma": Gg, "G_rho": Gr, "u": u, "s": s}


def m3_closed_form(u: float, s: float, D: int, C: int, q: float) -> float:
    """M_3 = E[y Σ_i (u c_i + s T)³] in closed form (derived by hand, checked in sympy by
    proofs_checks/jelassi2022/check_phase1_linearisation.py).

    **Arguments:**

    - `u`, `s`: S_a − s and the off-diagonal softmax weight s of a row at the start.
    - `D`, `C`, `q`: the data model's sizes and the probability of a non-zero δ.
    """
    K = C**3 + 3 * C * (D - C) * q
    return u**3 * C + 3 * u**2 * s * C * (C + (D - C) * q) + 3 * u * s**2 * K + s**3 * D * K


@dataclass(frozen=True)
class PhaseIPrediction:
    """The plateau of the reduced dynamics (leading order as α⁰ → 0; see the module).

    - `p`, `c_p`: lowest power of σ and its coefficient.
    - `h`: the growth constant, α_{t+1} ≈ α_t + h α_t^{p−1}.
    - `t_blowup`: the plateau length, the blow-up time of α's flow, in GD steps (not a
      threshold time: see [`theorylab.jelassi2022.phases`][]).
    - `k_gamma`, `k_rho`: γ − g⁰ = k_γ(α² − α⁰²)/2, ρ − g⁰ = k_ρ(α² − α⁰²)/2.
    """

    p: int
    c_p: float
    h: float
    t_blowup: float
    alpha0: float
    offdiag0: float
    k_gamma: float
    k_rho: float
    moments: dict

    def alpha(self, t):
        """α(t) = α⁰ (1 − t/t_blowup)^{−1/(p−2)} for t < t_blowup (NaN from t_blowup on)."""
        t = np.asarray(t, dtype=np.float64)
        with np.errstate(invalid="ignore", divide="ignore"):
            out = self.alpha0 * (1.0 - t / self.t_blowup) ** (-1.0 / (self.p - 2))
        return np.where(t < self.t_blowup, out, np.nan)

    def time_to(self, theta):
        """Steps of gradient descent until α reaches θ (α⁰ < θ small):
        ((α⁰)^{2−p} − θ^{2−p}) / ((p − 2)h) + ((p − 1)/2)·ln(θ/α⁰). The logarithm is the
        leading correction of a fixed step over the continuous flow (summing the second-order
        term of α^{2−p} along the steps); the remaining error is O(1) steps as α⁰ → 0."""
        theta = np.asarray(theta, dtype=np.float64)
        p, a0 = self.p, self.alpha0
        return ((a0 ** (2 - p) - theta ** (2 - p)) / ((p - 2) * self.h)
                + (p - 1) / 2 * np.log(theta / a0))

    def gamma_rho(self, alpha):
        """(γ, ρ) predicted as functions of α in phase I:
        g⁰ + k(α² − α⁰² − h(α^p − α⁰^p)/p)/2 with k = k_γ or k_ρ (the h-term is the leading
        correction of a fixed GD step; relative error O(α²) as α → 0)."""
        alpha = np.asarray(alpha, dtype=np.float64)
        p, a0 = self.p, self.alpha0
        a2 = alpha**2 - a0**2 - self.h * (alpha**p - a0**p) / p
        return self.offdiag0 + self.k_gamma * a2 / 2, self.offdiag0 + self.k_rho * a2 / 2


def phase_i(cfg: ExperimentConfig | Setting) -> PhaseIPrediction:
    """The phase-I prediction of the reduced population GD for a configuration.

    **Arguments:**

    - `cfg`: an [`ExperimentConfig`][theorylab.jelassi2022.config.ExperimentConfig] (or its
      [`Setting`][theorylab.jelassi2022.config.Setting]) with an aligned start
      (``train.init_v = "aligned"``, ``train.offdiag0_std = 0``), so that the reduction is
      exact.

    **Returns:** a [`PhaseIPrediction`][].

    **Regime:** the activation's lowest power p must be odd and ≥ 3 (the cubic σ; the
    `"quintic"` σ = h⁵ + 0.03h starts linear and has no blow-up plateau, refused with a
    ValueError); α⁰ > 0 small (the statements are leading order in α⁰).
    """
    return _phase_i(setting_of(cfg))


def _phase_i(s: Setting, alpha0: float | None = None) -> PhaseIPrediction:
    """[`phase_i`][] of `s`, or, with `alpha0`, of its aligned start α⁰ = `alpha0`."""
    p, c_p = _lowest_power(s)
    if p < 3 or p % 2 == 0:
        raise ValueError(
            f"model.activation: the phase-I prediction needs a lowest power p >= 3, odd (got p={p})"
        )
    t = s.cfg.train
    if alpha0 is None:
        if t.init_v != "aligned" or t.offdiag0_std > 0 or t.alpha0 <= 0:
            raise ValueError("train.init_v: the phase-I prediction needs an aligned start with "
                             "alpha0 > 0 and offdiag0_std = 0")
        alpha0 = t.alpha0
    mom = reduced_moments(s, p)
    h = s.lr_v * p * c_p * s.kappa**p * mom["M"] / 2
    if not h > 0:
        raise ValueError(f"train.alpha0: α does not grow from the start (growth constant "
                         f"h = {h:.3g} <= 0), so there is no plateau to predict")
    t_blowup = alpha0 ** (2 - p) / ((p - 2) * h)
    ratio = s.lr_A / (s.lr_v * s.tau * mom["M"])
    k_g, k_r = _per_entry(s, ratio * mom["s"], mom["G_gamma"], mom["G_rho"])
    return PhaseIPrediction(p=p, c_p=c_p, h=h, t_blowup=t_blowup, alpha0=alpha0,
                            offdiag0=s.offdiag0, k_gamma=k_g, k_rho=k_r, moments=mom)


@dataclass(frozen=True)
class PhaseIIPrediction:
    """The end of phase I and the start of phase II (see the module).

    - `alpha_star`: the minimiser of the population loss in α at the start attention.
    - `loss_star`, `error_star`: the population loss and error there (the GLM plateau).
    - `rate`: r_II, the growth of γ − ρ per GD step at (α*, g⁰, g⁰).
    - `rate_gamma`, `rate_rho`: the growths of γ and ρ per step there.
    """

    alpha_star: float
    loss_star: float
    error_star: float
    rate: float
    rate_gamma: float
    rate_rho: float


def _exchangeable(cfg: ExperimentConfig | Setting, **train):
    """The exact exchangeable engine of `cfg`'s setting (numpy, float64), with the fields
    `train` of its ``[train]`` changed."""
    from theorylab.core.backend import get_backend

    from ..data import make_wstar
    from ..engines import ExchangeableEngine

    s = setting_of(cfg)
    return ExchangeableEngine(s.cfg.replace(train=train) if train else s.cfg,
                              get_backend("numpy", "float64", "cpu"), s.partition,
                              make_wstar(s.cfg.data))


def phase_ii(cfg: ExperimentConfig | Setting, engine=None, *, allow_long: bool = False
             ) -> PhaseIIPrediction:
    """The GLM plateau value α* and the phase-II growth rate r_II of γ − ρ.

    **Arguments:**

    - `cfg`: an [`ExperimentConfig`][theorylab.jelassi2022.config.ExperimentConfig] or its
      [`Setting`][theorylab.jelassi2022.config.Setting] (partition-symmetric start, as for
      [`phase_i`][]).
    - `engine`: an exchangeable engine for `cfg` to reuse (built when omitted).
    - `allow_long`: run even when it is predicted to take longer than
      [`DERIVED_LIMIT_S`][theorylab.jelassi2022.cost.DERIVED_LIMIT_S] (10 minutes). Without
      an `engine`, the cost of its ~40 exact evaluations is measured first (about a second)
      and said when over a few seconds ([`exchangeable_guard`][theorylab.jelassi2022.cost.
      exchangeable_guard]; at D = 64, C = 4 one evaluation takes over a minute); a long
      computation shows a progress bar.

    **Returns:** a [`PhaseIIPrediction`][]; α* is the root of the exact ∂L/∂α at γ = ρ = g⁰
    (bracketed from α = 0 up to the first sign change on a doubling ladder).

    **Regime:** r_II is the growth rate of γ − ρ while γ − ρ is small, in the limit
    η_A/η_v → 0 (slow attention; relative error O(η_A/η_v)).
    """
    from ..cost import PHASE_II_EVALUATIONS, exchangeable_guard

    s = setting_of(cfg)
    tick = (exchangeable_guard(s, PHASE_II_EVALUATIONS, "predictions.phase_ii", allow_long)
            if engine is None else (lambda: None))
    eng = engine if engine is not None else _exchangeable(s)
    g0 = s.offdiag0

    def grad(alpha):
        tick()
        return eng.evaluate({"alpha": alpha, "gamma": g0, "rho": g0}, 0, need_grad=True,
                            record=False).grads["alpha"]

    lo, hi = 1e-3, 2e-3
    while grad(lo) >= 0:
        lo, hi = lo / 2, lo
        if lo < 1e-12:
            raise ValueError("no minimiser of the start-attention loss in α above 1e-12")
    while grad(hi) < 0:
        lo, hi = hi, 2 * hi
        if hi > 1e6:
            raise ValueError("no minimiser of the start-attention loss in α below 1e6")
    a_star = optimize.brentq(grad, lo, hi, xtol=1e-14, rtol=4 * np.finfo(float).eps)
    ev = eng.evaluate({"alpha": a_star, "gamma": g0, "rho": g0}, 0, need_grad=True, record=False)
    rg, rr = _per_entry(s, -s.lr_A, ev.grads["gamma"], ev.grads["rho"])
    return PhaseIIPrediction(alpha_star=float(a_star), loss_star=ev.loss, error_star=ev.error,
                             rate=rg - rr, rate_gamma=rg, rate_rho=rr)
