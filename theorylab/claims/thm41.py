"""Theorem 4.1 (RECONSTRUCTED, digest §4.4–4.5): GD on the population risk (P) goes through
three phases and ends with patch association and a small error.

Phase times are defined operationally on a recorded trajectory (log-spaced steps), see
[`phase_times`][]:

- end of phase I, ``t_I``: first recorded step with γ − ρ ≥ ``MOVE_TOL`` = 1e−3 (A has left its
  start; before it, only α moves);
- end of phase II, ``t_II``: first recorded step with γ − ρ ≥ ½·(γ − ρ) at the last step;
- end of phase III, ``t_III``: first recorded step ≥ t_II from which the error stays within
  ``ERR_TOL`` = 0.005 of the error of hard patch association with the same σ (the best this
  model class does, [`pa_limit_error`][]); NaN when never (the population error is a step
  function of the parameters; 0.005 is far above its rounding and below the gaps between the
  GLM error 0.217, the patch-associating error 0.113 and the Bayes error 0.091 at the reference
  point).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
from scipy import stats

from ..data import bayes_error
from ..engines import ExchangeableEngine
from ..trainer import run_experiment
from ._base import Claim, ClaimResult
from ._common import REF_SETS, line_config, reference_config

__all__ = ["CLAIM", "phase_times", "pa_limit_error", "MOVE_TOL", "ERR_TOL"]

MOVE_TOL = 1e-3
ERR_TOL = 0.005


def phase_times(traj: pd.DataFrame, target_error: float) -> dict[str, float]:
    """``t_I``, ``t_II``, ``t_III`` (NaN when not reached) of a trajectory with columns step,
    gamma, rho, error; `target_error` is the patch-association error that ends phase III (see
    the module docstring for the definitions)."""
    step = traj.step.to_numpy()
    gap = (traj.gamma - traj.rho).to_numpy()
    err = traj.error.to_numpy()

    def first(mask):
        idx = np.flatnonzero(mask)
        return float(step[idx[0]]) if idx.size else math.nan

    t1 = first(gap >= MOVE_TOL)
    t2 = first(gap >= 0.5 * gap[-1]) if gap[-1] >= MOVE_TOL else math.nan
    t3 = math.nan
    if np.isfinite(t2):
        off = (np.abs(err - target_error) > ERR_TOL) | (step < t2)
        last_off = np.flatnonzero(off)[-1] if off.any() else -1
        if last_off + 1 < len(step):
            t3 = float(step[last_off + 1])
    return {"t_I": t1, "t_II": t2, "t_III": t3}


def pa_limit_error(cfg) -> float:
    """Exact error of hard patch association with the same σ: γ = diag (own set uniform), ρ =
    diag − 60τ (no mass outside the own set)."""
    from .._backend import get_backend
    from ..data import make_wstar

    cfg = cfg.resolved()
    part = cfg.data.make_partition()
    eng = ExchangeableEngine(cfg, get_backend("numpy", "float64", "cpu"), part,
                             make_wstar(cfg.data))
    p = {"alpha": 1.0, "gamma": cfg.diag, "rho": cfg.diag - 60.0 * cfg.temperature}
    return eng.evaluate(p, 0, need_grad=False, record=True).error


def _run(cfg):
    res = run_experiment(cfg, progress=False)
    tr = res.trajectory
    pa = pa_limit_error(cfg)
    out = phase_times(tr, pa)
    out.update({
        "pa_limit_error": pa,
        "final_loss": float(tr.loss.iloc[-1]), "final_error": float(tr.error.iloc[-1]),
        "final_tie_mass": float(tr.tie_mass.iloc[-1]),
        "final_alpha": float(tr.alpha.iloc[-1]), "final_gamma": float(tr.gamma.iloc[-1]),
        "final_rho": float(tr.rho.iloc[-1]),
        "pa_all_steps": bool(tr.patch_association[tr.step >= 1].all()),
    })
    return tr, out


def run(quick: bool) -> ClaimResult:
    cfg = reference_config(steps=20_000, n_records=300)
    tr, ref = _run(cfg)
    bayes = bayes_error(cfg.data)
    pa_err = ref["pa_limit_error"]
    ph1 = tr[tr.step < ref["t_I"]]
    # phase I: A static (|γ|, |ρ| < MOVE_TOL by definition) while α grows
    alpha_growth = float(tr.alpha[tr.step <= ref["t_I"]].iloc[-1] / tr.alpha.iloc[0])
    loss_I = float(tr.loss[tr.step <= ref["t_I"]].iloc[-1])
    err_I = float(ph1.error.iloc[-1]) if len(ph1) else math.nan
    ordered = bool(ref["t_I"] < ref["t_II"] <= ref["t_III"])

    # scaling grid: d at D = 10 (q = ln d / D, diag = ln ln d), D at d = 100
    steps = 12_000 if quick else 40_000
    d_list = [30, 100, 300] if quick else [30, 100, 300, 1000, 3000]
    D_list = [] if quick else [6, 8, 10, 14, 20]
    grid = []
    for d in d_list:
        c = reference_config(steps=steps, n_records=300).replace(
            data={"d": d, "q": math.log(d) / 10})
        _, o = _run(c)
        grid.append({"axis": "d", "D": 10, "d": d, "q": math.log(d) / 10, **o})
    for D in D_list:
        q = min(math.log(100) / D, 1.0)
        c = line_config(D, 2, 100, q, steps=steps, n_records=300)
        if D == 10:
            c = c.replace(data={"partition": REF_SETS})
        _, o = _run(c)
        grid.append({"axis": "D", "D": D, "d": 100, "q": q, **o})
    grid = pd.DataFrame(grid)
    fits = []
    for axis in ("d", "D"):
        g = grid[grid.axis == axis]
        for ph in ("t_I", "t_II", "t_III"):
            ok = g[np.isfinite(g[ph]) & (g[ph] > 0)]
            if len(ok) >= 3:
                lr = stats.linregress(np.log(ok[axis]), np.log(ok[ph]))
                fits.append({"axis": axis, "phase": ph, "n": len(ok), "exponent": lr.slope,
                             "r2": lr.rvalue ** 2, "censored": len(g) - len(ok)})
            else:
                fits.append({"axis": axis, "phase": ph, "n": len(ok), "exponent": math.nan,
                             "r2": math.nan, "censored": len(g) - len(ok)})
    fits = pd.DataFrame(fits)

    table = pd.DataFrame([{
        "t_I": ref["t_I"], "t_II": ref["t_II"], "t_III": ref["t_III"],
        "alpha_growth_phase_I": alpha_growth, "loss_end_I": loss_I, "error_end_I": err_I,
        "final_loss": ref["final_loss"], "final_error": ref["final_error"],
        "final_tie_mass": ref["final_tie_mass"], "pa_limit_error": pa_err, "bayes_error": bayes,
        "pa_all_steps_t>=1": ref["pa_all_steps"],
    }])
    final_ok = abs(ref["final_error"] - pa_err) <= ERR_TOL
    checks = [ordered, alpha_growth >= 10, ref["pa_all_steps"], ref["final_loss"] < loss_I,
              final_ok, bool(grid.pa_all_steps.all())]
    poly_ok = bool(np.all(fits.r2.fillna(0) >= 0.9)) if len(fits) else False
    if all(checks) and poly_ok:
        verdict = "agrees"
    elif all(checks):
        verdict = "agrees-in-regime" if fits.r2.notna().any() else "partial"
    else:
        verdict = "partial"
    gap = ref["final_error"] - bayes
    reading = [
        f"Reference run (digest §9 setting, 20000 exact GD steps): phase I ends at step "
        f"{ref['t_I']:.0f} (α grows ×{alpha_growth:.0f} while |γ|, |ρ| < 1e−3, loss still "
        f"{loss_I:.4f}); phase II ends at {ref['t_II']:.0f}; the error reaches the "
        f"patch-association error (end of phase III) at {ref['t_III']:.0f}. "
        f"Order I < II ≤ III: {'yes' if ordered else 'NO'}.",
        f"Patch association (Definition 2.2 on A) holds at every recorded step t ≥ 1: "
        f"{'yes' if ref['pa_all_steps'] else 'NO'} (and in every grid run: "
        f"{'yes' if grid.pa_all_steps.all() else 'NO'}).",
        f"Final loss {ref['final_loss']:.5f}, final error {ref['final_error']:.4f} (ties F = 0 "
        f"count as errors; tie mass {ref['final_tie_mass']:.4f}). It equals the error of hard "
        f"patch association with the same cubic σ ({pa_err:.4f}) and stays {gap:.4f} above the "
        f"Bayes error {bayes:.4f}: sign(Σ_ℓ s_ℓ³) is not the Bayes rule (which counts sets that "
        "are all +1 or all −1), and at D = 10 that difference is O(1). 'Error approaches the "
        "Bayes error' therefore holds only up to this model-class gap.",
        "Scaling of the phase times (log-log fits, exponent = slope): " + "; ".join(
            f"{r.phase} vs {r.axis}: {r.exponent:.2f} (r²={r.r2:.2f}, {r.censored} censored)"
            for r in fits.itertuples()) + ". Along d, q = ln(d)/D and the frozen diagonal "
        "ln ln d change too (the S7 recipe), so d enters only through them: with temperature 1 "
        "and v ∥ w*, the exact population dynamics do not depend on d otherwise. A good "
        "power-law fit over this short range is consistent with poly(d) but cannot exclude "
        "other slow growth.",
    ]
    headline = {"t_I": ref["t_I"], "t_II": ref["t_II"], "t_III": ref["t_III"],
                "final_error": ref["final_error"], "pa_limit_error": pa_err, "bayes": bayes,
                "pa_all_steps": ref["pa_all_steps"]}

    def figure(fig):
        axs = fig.subplots(1, 3)
        s = tr.step.clip(lower=1)
        axs[0].plot(s, tr.alpha, label="alpha")
        axs[0].plot(s, tr.gamma, label="gamma")
        axs[0].plot(s, tr.rho, label="rho")
        axs[1].plot(s, tr.loss, label="loss")
        axs[1].plot(s, tr.error, label="error")
        axs[1].axhline(bayes, color="k", ls=":", label="Bayes")
        for ax in axs[:2]:
            ax.set_xscale("log")
            for t in (ref["t_I"], ref["t_II"], ref["t_III"]):
                if np.isfinite(t):
                    ax.axvline(t, color="grey", ls="--", lw=0.8)
            ax.legend(fontsize=7)
            ax.set_xlabel("GD step")
        for axis, mk in (("d", "o"), ("D", "s")):
            g = grid[grid.axis == axis]
            for ph in ("t_I", "t_II", "t_III"):
                if len(g):
                    axs[2].plot(g[axis], g[ph], mk + "-", label=f"{ph} vs {axis}")
        axs[2].set_xscale("log")
        axs[2].set_yscale("log")
        axs[2].set_xlabel("d or D")
        axs[2].legend(fontsize=6)

    return ClaimResult("thm4.1", table, verdict, headline, reading,
                       extra={"grid": grid, "fits": fits, "trajectory": tr}, figure=figure)


CLAIM = Claim(
    id="thm4.1",
    title="Theorem 4.1 (idealized: GD on the population risk)",
    label="RECONSTRUCTED",
    source="digest §4.4–4.5: a seminar slide (S2) and the README (S3) describe three phases; "
    "the statement itself was not read",
    statement="After T = poly(d) steps of GD on (P), F performs patch association, the "
    "population loss is small and the model generalizes; the dynamics pass through phase I "
    "(α grows, A static), II (γ − ρ grows) and III (loss falls, error near its optimum).",
    measured="Exact GD (exchangeable engine): α, γ, ρ, loss, error, patch association at every "
    "recorded step; operational phase times over a (d, D) grid with log-log fits.",
    predicted="Phases in order I < II ≤ III; patch association at every t ≥ 1; final error "
    "near the best achievable; phase times polynomial in d.",
    run=run,
)
