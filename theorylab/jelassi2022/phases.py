"""Phase times of a trajectory of the first paper's model and the error of hard patch
association: the readings that the Theorem 4.1 check and the phase figures share.

- end of phase I, ``t_I``: first recorded step with γ − ρ ≥ [`MOVE_TOL`][] (A has left its
  start);
- end of phase II, ``t_II``: first step with γ − ρ at least half its final value;
- end of phase III, ``t_III``: first step ≥ t_II from which the error stays within
  [`ERR_TOL`][] of the error of hard patch association with the same σ
  ([`pa_limit_error`][]); NaN when never.

These operational times are relative to the run's final gap, so they move with the horizon.
[`absolute_phase_times`][] reads horizon-independent ones (the Theorem 4.1 check's):

- ``t_I``: first step with α ≥ [`ALPHA_GROWTH`][]·α⁰ (α has left its plateau);
- ``t_II``: first step with γ − ρ ≥ [`GAP_II`][] logits;
- ``t_III``: as above, from that t_II.

[`exact_path`][] runs exact population GD (the exchangeable engine) and keeps every step, so
that a phase time read from it with an absolute threshold is exact to the step (Theorem 4.1's
check and the jelassi2022-phases figure read them from it).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from theorylab.core.trainer import first_step

from .engines import ExchangeableEngine

__all__ = ["MOVE_TOL", "ERR_TOL", "ALPHA_GROWTH", "GAP_II", "phase_times", "phase_three",
           "absolute_phase_times", "first_step", "pa_limit_error", "exact_path"]

#: A has left its start: 1e−3 in logits, far above one GD step's γ − ρ from a symmetric start.
MOVE_TOL = 1e-3
#: half a percentage point of classification error: the resolution at which an error is
#: called "at" a target (far above the rounding of an exact error).
ERR_TOL = 0.005
#: t_I of the absolute readings: α has left its plateau by an order of magnitude.
ALPHA_GROWTH = 10.0
#: t_II of the absolute readings: γ − ρ ≥ 1 in logits (the partner patch e ≈ 2.7 times as heavy
#: as another set's).
GAP_II = 1.0


def phase_times(traj: pd.DataFrame, target_error: float,
                column: str = "error_fair") -> dict[str, float]:
    """``t_I``, ``t_II``, ``t_III`` (NaN when not reached) of a trajectory with columns step,
    gamma, rho and `column` (the error compared with `target_error`, the patch-association
    error that ends phase III; see the module docstring for the definitions)."""
    step = traj.step.to_numpy()
    gap = (traj.gamma - traj.rho).to_numpy()
    err = traj[column].to_numpy()
    t1 = first_step(step, gap >= MOVE_TOL)
    t2 = first_step(step, gap >= 0.5 * gap[-1]) if gap[-1] >= MOVE_TOL else math.nan
    return {"t_I": t1, "t_II": t2, "t_III": phase_three(step, err, target_error, t2)}


def phase_three(step: np.ndarray, error: np.ndarray, target_error: float, t_II: float) -> float:
    """First step ≥ `t_II` from which `error` stays within [`ERR_TOL`][] of `target_error`
    (NaN when never, or when `t_II` is NaN)."""
    if not np.isfinite(t_II):
        return math.nan
    off = (np.abs(error - target_error) > ERR_TOL) | (step < t_II)
    last_off = np.flatnonzero(off)
    last_off = last_off[-1] if last_off.size else -1
    return float(step[last_off + 1]) if last_off + 1 < len(step) else math.nan


def absolute_phase_times(cfg, path: pd.DataFrame, target_error: float | None = None,
                         column: str = "error_fair") -> dict[str, float]:
    """Horizon-independent ``t_I`` (α ≥ ALPHA_GROWTH·α⁰) and ``t_II`` (γ − ρ ≥ GAP_II) of a
    trajectory of `cfg` with columns step, alpha, gamma, rho (an [`exact_path`][] reads them to
    the step), and with a `target_error` also ``t_III`` ([`phase_three`][] of `column` from that
    t_II); NaN when not reached."""
    step = path.step.to_numpy()
    gap = (path.gamma - path.rho).to_numpy()
    out = {"t_I": first_step(step, path.alpha.to_numpy()
                             >= ALPHA_GROWTH * cfg.resolved().train.alpha0),
           "t_II": first_step(step, gap >= GAP_II)}
    if target_error is not None:
        out["t_III"] = phase_three(step, path[column].to_numpy(), target_error, out["t_II"])
    return out


def pa_limit_error(cfg, fair: bool = True) -> float:
    """Exact error of hard patch association with the same σ: γ = diag (own set uniform), ρ =
    diag − 60τ (no mass outside the own set); ties broken by a fair coin (``fair``) or counted
    as errors."""
    from theorylab.core.backend import get_backend

    from .data import make_wstar

    cfg = cfg.resolved()
    part = cfg.data.make_partition()
    eng = ExchangeableEngine(cfg, get_backend("numpy", "float64", "cpu"), part,
                             make_wstar(cfg.data))
    p = {"alpha": 1.0, "gamma": cfg.diag, "rho": cfg.diag - 60.0 * cfg.temperature}
    ev = eng.evaluate(p, 0, need_grad=False, record=True)
    return ev.error - 0.5 * ev.tie_mass if fair else ev.error


def exact_path(cfg, steps: int, stop_gap: float | None = None) -> pd.DataFrame:
    """Exact gradient descent on the population risk (P) from the partition-symmetric start of
    `cfg`, every step kept.

    **Arguments:**

    - `cfg`: an [`ExperimentConfig`][theorylab.jelassi2022.config.ExperimentConfig] with an
      aligned start (``train.init_v = "aligned"``, ``train.offdiag0_std = 0``); its
      ``train.steps`` is not read.
    - `steps`: the number of GD steps (the horizon); the table has steps + 1 rows at most.
    - `stop_gap`: stop after the first step with |γ − ρ| ≥ `stop_gap` (None: run to the
      horizon).

    **Returns:** a table with one row per step 0, 1, …: step, alpha, gamma, rho, loss, error
    (ties F = 0 counted as errors), tie_mass and error_fair (ties as a fair coin), each the
    exact population value at the parameters of that step.
    """
    from .predictions import _exchangeable

    eng = _exchangeable(cfg.resolved())
    p = eng.initial_params()
    rows = []
    for n in range(steps + 1):
        last = n == steps or (stop_gap is not None and abs(p["gamma"] - p["rho"]) >= stop_gap)
        ev = eng.evaluate(p, n, need_grad=not last, record=False)
        rows.append((n, p["alpha"], p["gamma"], p["rho"], ev.loss, ev.error, ev.tie_mass))
        if last:
            break
        p = eng.apply(p, ev.grads)
    out = pd.DataFrame(rows, columns=["step", "alpha", "gamma", "rho", "loss", "error",
                                      "tie_mass"])
    out["error_fair"] = out.error - 0.5 * out.tie_mass
    return out
