"""What the figures on the synthetic data of Jelassi et al. (2022) share: phase times of a
trajectory, the seeds whose Gaussian v⁰ points along +w*, backend fields of a device, and the
phase predictions of
[`theorylab.jelassi2022.predictions`][] drawn beside the measured coefficients."""

from __future__ import annotations

import math

import numpy as np

from ..config import DataConfig, ExperimentConfig
from ..data import make_wstar
from ..phases import PHASE_TIMES, pa_limit_error, read_phases
from ..predictions import phase_i, phase_ii
from ..predictions.phase_two import slow_flow

__all__ = [
    "backend_fields",
    "draw_phase_lines",
    "draw_predictions",
    "measured_against_predicted",
    "phase_times_of",
    "positive_v0_seed",
    "predicted_curves",
    "prediction_sentence",
]


# -- helpers ---------------------------------------------------------------------------------------
def phase_times_of(traj, cfg: ExperimentConfig) -> dict[str, float]:
    """The measured phase times t_I, t_II, t_PA, t_III of `traj`
    (`theorylab.jelassi2022.phases.phase_readings`, absolute thresholds: they do not depend on
    the run's length) for the population configuration `cfg`, with the phase-III target (the exact
    error of hard patch association, `pa_limit_error`) for the population configuration
    `cfg`."""
    rd = read_phases(traj, cfg, pa_limit_error(cfg))
    return {k: rd[k] for k in PHASE_TIMES}


def positive_v0_seed(data: DataConfig, v0_scale: float, start: int, min_cos: float = 0.05) -> int:
    """First train seed ≥ `start` whose Gaussian v⁰ has cos(v⁰, w*) ≥ `min_cos`.

    Mirrors `Engine.initial_v` (v⁰ = v0_scale·N(0, I) drawn from ``SeedSequence([seed, 12])``);
    the figures check the recorded cos at step 0. With cubic σ a start with ⟨v⁰, w*⟩ < 0 must
    cross 0, where the gradient in α vanishes, and stalls for thousands of steps.
    """
    wstar = make_wstar(data)
    for seed in range(start, start + 1000):
        g = np.random.default_rng(np.random.SeedSequence([seed, 12])).standard_normal(data.d)
        if g @ wstar / np.linalg.norm(g) >= min_cos:
            return seed
    raise RuntimeError("no seed with a positive initial alignment found")  # pragma: no cover


def backend_fields(device: str) -> dict:
    if device == "cpu":
        return {"backend": "numpy", "device": "cpu"}
    return {"backend": "torch", "device": device}


# -- derived predictions drawn beside the measured coefficients ---------------------------------
def predicted_curves(cfg: ExperimentConfig, last_step: int, n: int = 400) -> dict:
    """The phase predictions of [`theorylab.jelassi2022.predictions`][] for the exact population
    run of `cfg` (aligned start), as curves on log-spaced steps up to `last_step`.

    Phase I: α(t) = α⁰(1 − t/t_blowup)^{−1/(p−2)} until it reaches α* (at t_α*), and γ − ρ on
    the α² law; from t_α* on α = α* and γ − ρ grows at the phase-II rate r_II, drawn until
    γ − ρ = 1 (the linearisation holds while γ − ρ is small); and, for the cubic σ, γ − ρ on the
    slow flow of phase II from t_blowup (`predictions.phase_two.slow_flow`: α at its minimiser,
    with the self-acceleration of γ − ρ) to γ − ρ = 1. Returns the steps, α, γ − ρ and the
    scalars."""
    p1, p2 = phase_i(cfg), phase_ii(cfg)
    a0, a_star = p1.alpha0, p2.alpha_star
    t_star = p1.t_blowup * (1.0 - (a0 / a_star) ** (p1.p - 2))  # α(t) = α* on the flow
    steps = np.unique(np.geomspace(1.0, max(2.0, float(last_step)), n))
    alpha = np.where(steps < t_star, p1.alpha(np.minimum(steps, t_star)), a_star)
    g, r = p1.gamma_rho(np.minimum(alpha, a_star))
    gap_I = float(p1.gamma_rho(a_star)[0] - p1.gamma_rho(a_star)[1])
    gap = np.where(steps < t_star, g - r, gap_I + p2.rate * (steps - t_star))
    gap = np.where(gap <= 1.0, gap, np.nan)
    t_gap1 = t_star + (1.0 - gap_I) / p2.rate if p2.rate > 0 else math.inf
    t_half = p1.t_blowup * (1.0 - (2 * a0 / a_star) ** (p1.p - 2))
    # the slow flow of phase II (with its self-acceleration), from the blow-up time on
    try:
        sf = slow_flow(cfg)
        slow_t = p1.t_blowup + np.asarray(sf.path.get("t", []), dtype=float)
        slow_gap = (np.asarray(sf.path.get("gamma", []), dtype=float)
                    - np.asarray(sf.path.get("rho", []), dtype=float))
        t_II_slow = p1.t_blowup + sf.t_slow
    except ValueError:  # the slow flow is written for the cubic σ
        slow_t, slow_gap, t_II_slow = np.array([]), np.array([]), math.nan
    return {"steps": steps, "alpha": alpha, "gap": gap, "t_blowup": p1.t_blowup,
            "t_alpha_star": t_star, "slow_steps": slow_t, "slow_gap": slow_gap,
            "t_II_slow": t_II_slow,
            "t_alpha_half_star": t_half,
            "alpha_star": a_star, "rate_II": p2.rate, "t_gap_1_linear": t_gap1,
            "glm_error": p2.error_star, "glm_loss": p2.loss_star}


def draw_predictions(ax, pred: dict, last_step: int) -> None:
    """Dashed predicted α and γ − ρ, and the derived blow-up time t_blowup as a mark on the x
    axis (when inside the horizon)."""
    st = pred["steps"]
    ax.plot(st, pred["alpha"], color="C0", ls=(0, (4, 2)), lw=1.1, alpha=0.8,
            label="α predicted (phase I, then α*)")
    ax.plot(st, pred["gap"], color="k", ls=(0, (1, 1.5)), lw=1.4,
            label="γ − ρ predicted (α² law, then r_II·t)")
    if len(pred.get("slow_steps", ())):
        ax.plot(pred["slow_steps"], pred["slow_gap"], color="C3", ls=(0, (3, 1, 1, 1)), lw=1.2,
                label="γ − ρ derived (slow flow of phase II)")
    if pred["t_blowup"] <= last_step:
        ax.plot([pred["t_blowup"]], [0.0], marker="v", ms=8, color="C0", ls="none",
                transform=ax.get_xaxis_transform(), clip_on=False,
                label=f"t_blowup derived = {pred['t_blowup']:.0f}")


def measured_against_predicted(tr, pred: dict) -> dict:
    """Measured counterparts of the predictions on an exact trajectory (columns step, alpha,
    gamma, rho): the step where α first reaches α*/2 (predicted: ``t_alpha_half_star``), the
    largest α, and the secant growth of γ − ρ between the first recorded step with
    α ≥ 0.99·α* and the first recorded step at least 1.5 times later."""
    s = tr["step"].to_numpy()
    a = tr["alpha"].to_numpy(dtype=float)
    gap = (tr["gamma"] - tr["rho"]).to_numpy(dtype=float)
    out = {"t_alpha_half_star": None, "alpha_max": float(np.nanmax(a)), "rate_II": None}
    hit = np.flatnonzero(a >= pred["alpha_star"] / 2)
    if hit.size:
        out["t_alpha_half_star"] = int(s[hit[0]])
    hit = np.flatnonzero(a >= 0.99 * pred["alpha_star"])
    if hit.size:
        i = hit[0]
        j = np.flatnonzero(s >= 1.5 * max(s[i], 1))
        if j.size:
            j = j[0]
            out["rate_II"] = float((gap[j] - gap[i]) / (s[j] - s[i]))
            out["rate_window"] = [int(s[i]), int(s[j])]
    return out


def prediction_sentence(pred: dict, meas: dict) -> str:
    """One generated sentence: the derived predictions against the exact run."""
    t_half = meas["t_alpha_half_star"]
    t_half = "not within the horizon" if t_half is None else f"{t_half} on the recorded steps"
    out = (f"Derived (theorylab.jelassi2022.predictions): blow-up time t_blowup = "
           f"{pred['t_blowup']:.0f} "
           f"steps, α reaches α*/2 at {pred['t_alpha_half_star']:.0f} (measured: {t_half}), "
           f"GLM plateau α* = {pred['alpha_star']:.4f} (largest measured α "
           f"{meas['alpha_max']:.4f}), phase-II growth of γ − ρ r_II = "
           f"{pred['rate_II']:.3g} per step")
    if meas.get("rate_II") is not None:
        lo, hi = meas["rate_window"]
        out += f" (measured secant over steps {lo}–{hi}: {meas['rate_II']:.3g})"
    return out + "."


def draw_phase_lines(ax, ph: dict) -> None:
    """Vertical lines at the measured phase times (absolute thresholds), labelled in alternating
    rows and sides so that close times (t_II and t_III are often within a few percent) stay
    readable."""
    for k, (name, v) in enumerate(ph.items()):
        if not math.isfinite(v):
            continue
        ax.axvline(v, color="0.4", ls="-.", lw=0.9)
        left = k % 2 == 1
        ax.text(v, 0.99 - 0.06 * k, (f"{name} " if left else f" {name}"),
                transform=ax.get_xaxis_transform(), fontsize=7, va="top",
                ha="right" if left else "left", color="0.3",
                bbox=dict(boxstyle="square,pad=0.1", fc="white", ec="none", alpha=0.7))
