"""Phase II of the reduced population dynamics: the GLM plateau and the slow growth of γ − ρ,
derived on the cubic model's risk written from per-set statistics
([`set_statistics`][theorylab.jelassi2022.predictions.set_statistics]), not on an engine.

**Two time scales** (DERIVED). After the blow-up of phase I, α relaxes within O(1/(η_v λ_α))
steps (λ_α = ∂²L/∂α² at the plateau) to the minimiser α*(γ, ρ) of the risk at the current
attention, while γ and ρ move at rates O(η_A·∂L/∂A), much slower once α is near α*. Eliminating
α adiabatically gives the slow flow

    dγ/dt = −η_A ∂_γ L(α*(γ, ρ), γ, ρ) / (D(C − 1)),
    dρ/dt = −η_A ∂_ρ L(α*(γ, ρ), γ, ρ) / (D(D − C)),

per GD step (∂_γ, ∂_ρ: derivatives in the common same-set and cross-set value; a GD step moves
each of the D(C − 1), resp. D(D − C), entries by η_A times its own share). Its rate at the
plateau, r₀ = dγ/dt − dρ/dt at γ = ρ = g⁰, is the linearised phase-II rate; the flow then
speeds itself up as γ − ρ grows (self-acceleration: r(g) increases with g = γ − ρ, measured by
``acceleration`` = dr/dg at g = 0 along the flow). The phase-II time is

    t_II = t_blowup + ∫ dg / r(g)   from the end of phase I to g = GAP_II,

with t_blowup the blow-up time of phase I ([`phase_one`][theorylab.jelassi2022.predictions.
phase_one] for an aligned start, [`random_start`][theorylab.jelassi2022.predictions.random_start]
for a random one) and the start of the slow flow at the phase-I law γ − g⁰ = k_γ α*²/2,
ρ − g⁰ = k_ρ α*²/2 (the α² law of phase I carried to α = α*). Neglected: the lag of α behind
α*(γ, ρ) (relative O(r/(η_v λ_α))), the duration of the blow-up itself and the error of the α²
law near α*, and the difference between GD and its flow (O(η)). The tests measure the total
against the exact engine on a D ladder.

Regime: σ(h) = h³ (the statistics identity is specific to the cubic), any τ, κ, D, C, q.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import integrate, optimize

from ..config import ExperimentConfig, Setting, setting_of
from .phase_one import _per_entry, _phase_i
from .set_statistics import _a, cubic_sum, loss_and_grad, softmax_row, statistics_law

__all__ = ["Plateau", "SlowFlow", "plateau", "slow_flow", "alpha_star"]


def _law(s: Setting):
    if tuple(s.activation.coeffs) != (0.0, 0.0, 0.0, 1.0):
        raise ValueError("model.activation: the phase-II derivation is written for the cubic "
                         f"σ(h) = h³ (got coefficients {s.activation.coeffs})")
    return statistics_law(s.D, s.C, float(s.q))


def alpha_star(cfg: ExperimentConfig | Setting, gamma: float, rho: float,
               guess: float | None = None) -> float:
    """The minimiser in α of the population risk at the attention (γ, ρ): the root of ∂_α L,
    bracketed on a doubling ladder from `guess` (default 1)."""
    s = setting_of(cfg)
    law = _law(s)
    args = (gamma, rho, s.diag, s.tau, s.kappa)

    def g(a):
        return loss_and_grad(law, a, *args)[1]["alpha"]

    if guess is not None:  # Newton from a nearby minimiser (the slow flow moves it a little)
        a = float(guess)
        for _ in range(30):
            d1, d2 = _alpha_derivatives(law, a, *args)
            if not d2 > 0:
                break
            step = d1 / d2
            a -= step
            if abs(step) <= 1e-13 * abs(a):
                return a
    lo = hi = 1.0 if guess is None else float(guess)
    while g(lo) >= 0:
        lo /= 1.5
        if lo < 1e-8:
            raise ValueError("no minimiser of the risk in α above 1e-8 at this attention")
    while g(hi) < 0:
        hi *= 1.5
        if hi > 1e8:
            raise ValueError("no minimiser of the risk in α below 1e8 at this attention")
    return float(optimize.brentq(g, lo, hi, xtol=1e-13, rtol=4 * np.finfo(float).eps))


def _alpha_derivatives(law, alpha, gamma, rho, diag, tau, kappa) -> tuple[float, float]:
    """∂L/∂α and ∂²L/∂α² of the cubic model: F = κ³α³Φ, so ∂F/∂α = 3F/α and
    ∂²F/∂α² = 6F/α²."""
    S, _ = softmax_row(diag, gamma, rho, tau, law.D, law.C)
    F = kappa ** 3 * alpha ** 3 * cubic_sum(law, *_a(S))
    pm = 0.5 * (1.0 + np.tanh(0.5 * F))
    l1, l2 = pm - 1.0, pm * (1.0 - pm)
    d1 = float(law.p @ (l1 * 3 * F / alpha))
    d2 = float(law.p @ (l2 * (3 * F / alpha) ** 2 + l1 * 6 * F / alpha ** 2))
    return d1, d2


@dataclass(frozen=True)
class Plateau:
    """The GLM plateau: α* at the start attention, the risk and the rates there.

    - `alpha_star`, `loss`: the minimiser in α and the risk at γ = ρ = g⁰.
    - `rate`: r₀, the growth of γ − ρ per GD step on the plateau (``rate_gamma``, ``rate_rho``:
      of γ and ρ alone).
    """

    alpha_star: float
    loss: float
    rate: float
    rate_gamma: float
    rate_rho: float


def _rates(s: Setting, law, gamma, rho, guess=None):
    a = alpha_star(s, gamma, rho, guess)
    loss, g = loss_and_grad(law, a, gamma, rho, s.diag, s.tau, s.kappa)
    return (a, loss, *_per_entry(s, -s.lr_A, g["gamma"], g["rho"]))


def plateau(cfg: ExperimentConfig | Setting) -> Plateau:
    """[`Plateau`][] of `cfg` (cubic σ, partition-symmetric start g⁰ = ``train.offdiag0``)."""
    s = setting_of(cfg)
    g0 = s.offdiag0
    a, loss, rg, rr = _rates(s, _law(s), g0, g0)
    return Plateau(alpha_star=a, loss=loss, rate=rg - rr, rate_gamma=rg, rate_rho=rr)


@dataclass(frozen=True)
class SlowFlow:
    """The slow flow of phase II from a start (γ₀, ρ₀) (see the module).

    - `t_slow`: GD steps along the flow until γ − ρ = `gap` (∞ when the flow does not get there:
      r changes sign first, or the flow is cut at `max_steps`).
    - `rate0`: r₀ = d(γ − ρ)/dt at the start; `acceleration`: dr/dg there (per unit of γ − ρ).
    - `path`: arrays t, gamma, rho, alpha (α*) along the flow.
    """

    t_slow: float
    rate0: float
    acceleration: float
    gamma0: float
    rho0: float
    gap: float
    path: dict


def slow_flow(cfg: ExperimentConfig | Setting, gap: float = 1.0,
              start: tuple[float, float] | None = None, max_steps: float = 1e8) -> SlowFlow:
    """Integrate the slow flow of phase II until γ − ρ = `gap`.

    **Arguments:**

    - `cfg`: the configuration (cubic σ; learning rates ``train.lr_v``, ``train.lr_A``).
    - `gap`: the γ − ρ to reach (the definition of t_II, [`GAP_II`][theorylab.jelassi2022.
      phases.GAP_II] = 1 logit).
    - `start`: (γ₀, ρ₀); default the phase-I α² law carried to α* (see the module).
    - `max_steps`: give up (``t_slow`` = ∞) beyond this many GD steps.
    """
    s = setting_of(cfg)
    law = _law(s)
    g0 = s.offdiag0
    if start is None:

        p1 = _phase_i(s, alpha0=1e-3)  # the α² law of the aligned start
        a_star = alpha_star(s, g0, g0)
        start = (g0 + p1.k_gamma * a_star ** 2 / 2, g0 + p1.k_rho * a_star ** 2 / 2)
    guess = [None]

    def rhs(t, y):
        a, _, rg, rr = _rates(s, law, y[0], y[1], guess[0])
        guess[0] = a
        return [rg, rr]

    def reached(t, y):
        return (y[0] - y[1]) - gap

    reached.terminal = True

    def stalled(t, y):  # r changes sign: the flow will not reach the gap
        f = rhs(t, y)
        return f[0] - f[1]

    stalled.terminal = True
    stalled.direction = -1
    y0 = [float(start[0]), float(start[1])]
    r0 = rhs(0.0, y0)
    rate0 = r0[0] - r0[1]
    eps = 1e-4
    r1 = rhs(0.0, [y0[0] + eps / 2, y0[1] - eps / 2])
    accel = ((r1[0] - r1[1]) - rate0) / eps
    if not rate0 > 0:
        return SlowFlow(math.inf, rate0, accel, y0[0], y0[1], gap, {})
    sol = integrate.solve_ivp(rhs, (0.0, max_steps), y0, events=(reached, stalled),
                              rtol=1e-7, atol=1e-10, dense_output=False, max_step=np.inf)
    hit = sol.t_events[0]
    t_slow = float(hit[0]) if hit.size else math.inf
    alphas = [alpha_star(s, g, r, guess[0]) for g, r in zip(sol.y[0], sol.y[1])]
    return SlowFlow(t_slow, rate0, accel, y0[0], y0[1], gap,
                    {"t": sol.t, "gamma": sol.y[0], "rho": sol.y[1], "alpha": np.array(alphas)})
