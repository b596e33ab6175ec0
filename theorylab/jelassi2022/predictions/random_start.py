"""Phase I from a random start v⁰ ~ N(0, s²·I_d) (the abstract's "random initialization").

**The start** (DERIVED). w* is a unit vector, so α⁰ = ⟨v⁰, w*⟩ ~ N(0, s²) and the rest,
β⁰ = ‖v⁰ − α⁰w*‖, has β⁰² ~ s²·χ²_{d−1}. At a fixed norm ‖v⁰‖ ≈ s√d = ν (theorylab's random
start has ν = 0.01, the norm of the aligned start), α⁰ = (ν/√d)·z with z ~ N(0, 1): the start
has a random sign and shrinks like d^{−1/2}, while β⁰ ≈ ν stays.

**The flow** (DERIVED; cubic σ = h³). Population GD keeps v in span(w*, v⁰) (the reduced state
(α, β, γ, ρ) of [`ReducedEngine`][theorylab.jelassi2022.engines.ReducedEngine]). While the
model output is small, ℓ'(yF) = −½ + O(F), and with the noise of a patch's projection
σβ·G_i (G_i Gaussian, variance Q_d = Σ_j S_ij²) the Gaussian moments give, with the start
attention's u, s, M₃ of [`phase_one`][theorylab.jelassi2022.predictions.phase_one] and
E[yΣ_i N_i] = C (the rows sum to one),

    dα/dt = h (α² + ε β²),    dβ/dt = 2hε αβ,    h = (3/2) η_v κ³ M₃,    ε = σ² C Q_d / M₃.

ε ∝ σ² = 1/d is small, so β is nearly constant in phase I and α solves dα/dt = h(α² + b²),
b = √ε·β⁰:

    α(t) = b·tan(h b t + arctan(α⁰/b)),   blow-up at  t_blowup = (π/2 − arctan(α⁰/b)) / (h b).

Consequences: (i) the sign problem of an odd σ is solved by the noise: without it (b = 0) a start
α⁰ < 0 creeps towards 0⁻ and never escapes (dα/dt = hα² > 0 but α → 0), with it every start
escapes by π/(hb); (ii) b and α⁰ both scale like ν/√d, so t_blowup = √d·G(z)/(hν√(CQ_d/M₃)):
the plateau grows like d^{1/2} at a fixed ‖v⁰‖ (like d^{(p−2)/2} for a lowest power p), up to the
slow change of the start attention with the frozen diagonal ln ln d; (iii) with a linear term
(σ = h⁵ + 0.03h, lowest power p = 1) the drift is the constant η_v c₁ κ C/2: no plateau, and the
escape time does not grow with d.

[`escape_time`][] gives the threshold time (steps to α = θ) with two corrections of the
leading-order flow: the growth of β (first order in ε: β ∝ (α² + b²)^{ε}) and the fixed-step
correction of GD (½ ln of the ratio of the drifts at θ and at α⁰, as for the aligned start).
Neglected: O(α²) corrections to the drift (θ small), the motion of γ, ρ in phase I (O(α²)).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import integrate

from ..config import ExperimentConfig, Setting, setting_of
from .phase_one import _lowest_power, reduced_moments

__all__ = ["EscapeConstants", "escape_constants", "escape_time", "start_moments"]


def start_moments(d: int, norm: float) -> dict[str, float]:
    """The law of the start at v⁰ ~ N(0, (norm²/d)·I_d): the standard deviation of α⁰ and the
    mean of β⁰² (= norm²·(d − 1)/d)."""
    s2 = norm ** 2 / d
    return {"alpha0_sd": math.sqrt(s2), "beta0_sq_mean": s2 * (d - 1)}


@dataclass(frozen=True)
class EscapeConstants:
    """Constants of the phase-I flow dα/dt = h·(α² + ε β²) + h₁ (see the module).

    - `p`: lowest power of σ (3: cubic; 1: a linear term).
    - `h`: the α² coefficient (p = 3), per GD step; `h1`: the constant drift (p = 1).
    - `eps`: ε = σ²·C·Q_d/M₃ (p = 3).
    """

    p: int
    h: float
    eps: float
    h1: float
    Qd: float
    M3: float


def escape_constants(cfg: ExperimentConfig | Setting) -> EscapeConstants:
    """[`EscapeConstants`][] of `cfg` at its start attention (γ = ρ = ``train.offdiag0``)."""
    st = setting_of(cfg)
    p, c_p = _lowest_power(st)
    C, D, kappa, lr = st.C, st.D, st.kappa, st.lr_v
    if p == 1:
        return EscapeConstants(p=1, h=0.0, eps=0.0, h1=lr * c_p * kappa * C / 2, Qd=math.nan,
                               M3=math.nan)
    if p != 3:
        raise ValueError(f"model.activation: the random-start flow is derived for a lowest power "
                         f"p = 1 or 3 (got p = {p})")
    mom = reduced_moments(st, 3)
    u, s = mom["u"], mom["s"]
    Qd = (u + s) ** 2 + (D - 1) * s ** 2
    h = lr * 1.5 * c_p * kappa ** 3 * mom["M"]
    eps = st.sigma ** 2 * C * Qd / mom["M"]
    return EscapeConstants(p=3, h=h, eps=eps, h1=0.0, Qd=Qd, M3=mom["M"])


def escape_time(cfg: ExperimentConfig | Setting, alpha0, beta0, theta: float
                ) -> dict[str, np.ndarray]:
    """Phase-I times of the random start (see the module), per start.

    **Arguments:**

    - `cfg`: the configuration (its learning rate, model, data; the start is given apart).
    - `alpha0`, `beta0`: arrays of starts (α⁰, β⁰).
    - `theta`: the threshold of the threshold time (α = θ; small, as the flow is leading order
      in α), one for all starts or one per start.

    **Returns:** ``{"t_threshold", "t_blowup", "b"}``: GD steps until α = θ (with the
    corrections of the module), the blow-up time of the flow with β frozen (1/(hα⁰) for an
    aligned start, β⁰ = 0; ∞ for p = 1, or for β⁰ = 0 and α⁰ ≤ 0: no blow-up), and
    b = √ε·β⁰.
    """
    k = escape_constants(cfg)
    a0 = np.atleast_1d(np.asarray(alpha0, dtype=float))
    b0 = np.atleast_1d(np.asarray(beta0, dtype=float))
    th = np.broadcast_to(np.asarray(theta, dtype=float), a0.shape)
    if k.p == 1:
        t = (th - a0) / k.h1
        return {"t_threshold": t, "t_blowup": np.full_like(t, np.inf), "b": np.zeros_like(t)}
    h, eps = k.h, k.eps
    b = np.sqrt(eps) * np.abs(b0)
    with np.errstate(divide="ignore", invalid="ignore"):  # b = 0: the aligned start
        t_blow = np.where(b > 0, (math.pi / 2 - np.arctan2(a0, b)) / (h * b),
                          np.where(a0 > 0, 1.0 / (h * a0), np.inf))
    t_thr = np.empty_like(a0)
    for i, (a, bb, theta) in enumerate(zip(a0, b, th)):
        if bb == 0.0 and a <= 0.0:  # aligned start on the wrong side: α never crosses 0
            t_thr[i] = math.inf
            continue
        def rate(x, a=a, bb=bb):  # dα/dt with β grown to first order in ε
            b2 = bb * bb * ((x * x + bb * bb) / (a * a + bb * bb)) ** (2 * eps)
            return h * (x * x + b2)

        flow, _ = integrate.quad(lambda x, rate=rate: 1.0 / rate(x), a, theta, limit=200,
                                 epsabs=0.0, epsrel=1e-10)
        t_thr[i] = flow + 0.5 * math.log(rate(theta) / rate(a))
    return {"t_threshold": t_thr, "t_blowup": t_blow, "b": b}

