"""The phase times of a trajectory of the first paper's model: one name and one definition each,
shared by the claim checks, the figures and the docs.

Measured (threshold) times, read by [`read_phases`][] from any trajectory table (a run of
``theorylab run``, a sweep, an [`exact_path`][] or a reduced-engine path), each the first
recorded step at which an absolute threshold is crossed, so none depends on the run's length:

- ``t_I``, **end of phase I**: first step with α ≥ [`ALPHA_GROWTH`][]·‖v⁰‖ (α has left its
  plateau by an order of magnitude of the start's norm; for an aligned start ‖v⁰‖ = α⁰);
- ``t_II``, **end of phase II**: first step with γ − ρ ≥ [`GAP_II`][] logits (attention decided:
  the partner patch e ≈ 2.7 times as heavy as another set's);
- ``t_PA``, **patch association**: first step from which patch association with the margin
  ``train.pa_margin`` holds until the end of the trajectory (Definition 2.2 read with a margin;
  the one reading that looks at the whole run: a run that loses association later has no t_PA);
- ``t_III``, **end of phase III**: first step ≥ t_II from which the error (fair coin on ties)
  stays within [`ERR_TOL`][] of the error of hard patch association ([`pa_limit_error`][]).

Derived times carry other names and live in [`theorylab.jelassi2022.predictions`][]: the
**blow-up time** ``t_blowup`` is the time at which the leading-order phase-I flow diverges
(α ∝ (t_blowup − t)^{−1} for the cubic σ); no trajectory has a measured blow-up time. The
threshold time t_I is another number (``t_I_pred``: the derived time to the threshold; for a
random start with α⁰ < 0 it can even come after t_blowup, as β shrinks while α < 0).

[`pa_target`][] is the phase-III target of a setting (memoised, NaN where its one exact evaluation
would be too costly): what ``Paper.phase_readings`` (``theorylab plot``, ``theorylab phases``)
passes as `target_error`.

[`exact_path`][] runs exact population GD from an aligned start (the exchangeable engine) and
keeps every step, so a time read from it is exact to the step.

Two calls: [`phase_readings`][] (a run folder, a sweep store, a trajectory table with its
config, or a run's result → one tidy table, one row per run and reading, with the step each
reading is taken at, its recording resolution, a ``censored`` flag and the reason a missing
one is missing; the same call and table as ``theorylab.huang2024.phases.phase_readings``),
and [`read_phases`][] (one trajectory → ``{reading: value}``, what the claims and figures
use). A run recorded on the default log grid reads t_I to its resolution: the table says it
(``resolution``: the steps since the record before).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from theorylab.core.readings import paper_phase_readings
from theorylab.core.trainer import first_step

from .config import config_to_toml, setting_of
from .engines import count_patterns, n_histograms

__all__ = ["ALPHA_GROWTH", "GAP_II", "ERR_TOL", "PHASE_TIMES", "PA_TARGET_MAX_ROWS",
           "READ_AT", "missing_readings", "phase_readings", "read_phases", "readings_by_run",
           "first_step", "pa_limit_error", "pa_target",
           "exact_path"]

#: t_I: α has left its plateau: an order of magnitude above the start's norm.
ALPHA_GROWTH = 10.0
#: t_II: γ − ρ ≥ 1 in logits.
GAP_II = 1.0
#: t_III: half a percentage point of classification error, the resolution at which an error is
#: called "at" its target (far above the rounding of an exact error).
ERR_TOL = 0.005
#: the names of the measured phase times, in order.
PHASE_TIMES = ("t_I", "t_II", "t_PA", "t_III")
#: reading → the time reading it is taken at (``Paper.reading_times``; ``v0_norm``,
#: ``steps_run`` and ``final_gap`` are constants of the run).
READ_AT = {t: t for t in PHASE_TIMES}
#: the patch-association margin used when neither the table nor a config gives one.
DEFAULT_PA_MARGIN = 1e-3


def _held_from(step: np.ndarray, ok: np.ndarray) -> float:
    """The first step from which `ok` holds to the end (NaN when it fails at the last step)."""
    off = np.flatnonzero(~ok)
    last = off[-1] if off.size else -1
    return float(step[last + 1]) if last + 1 < len(step) else math.nan


def _pa_ok(tr: pd.DataFrame, cfg) -> np.ndarray | None:
    """Patch association with a margin at every row: from ``pa_gap`` (logits A/τ, any A), else
    ``patch_association``, else from γ, ρ and the config's diagonal and temperature."""
    s = setting_of(cfg) if cfg is not None else None
    margin = s.cfg.train.pa_margin if s is not None else DEFAULT_PA_MARGIN
    if "pa_gap" in tr and tr.pa_gap.notna().all():
        return tr.pa_gap.to_numpy(dtype=float) >= margin
    if "patch_association" in tr:
        return tr.patch_association.astype(bool).to_numpy()
    if s is None:
        return None
    return (np.minimum(s.diag, tr.gamma.to_numpy()) - tr.rho.to_numpy()) / s.tau >= margin


def missing_readings(values, cfg=None) -> dict[str, str]:
    """The readings that cannot be taken in a run with these [`read_phases`][] `values`, and
    why (``Paper.missing_readings``): t_III where the phase-III target (the error of hard
    patch association, [`pa_target`][]) is unknown: no config, or a setting too large for its
    exact table."""
    if not math.isfinite(values.get("t_III", 0.0)) and math.isfinite(values.get("t_II",
                                                                                 math.nan)):
        if cfg is None:
            return {"t_III": "needs the run's config (the error of hard patch association)"}
        if not math.isfinite(pa_target(cfg)):
            return {"t_III": f"the error of hard patch association of this setting needs "
                             f"more than {PA_TARGET_MAX_ROWS:,} histograms (not computed)"}
    return {}


#: ``phase_readings(source, cfg=None)``: the phase readings of a run folder, a sweep store, a
#: trajectory table (with its config) or a run's result, one row per run and reading (module
#: docstring; [`phase_table`][theorylab.core.readings.phase_table]).
phase_readings = paper_phase_readings(__package__)


def read_phases(trajectory: pd.DataFrame, cfg=None, target_error: float | None = None
                   ) -> dict[str, float]:
    """The measured phase times of one trajectory (see the module for the definitions).

    **Arguments:**

    - `trajectory`: one run, rows in step order, columns ``step``, ``alpha``, ``gamma``,
      ``rho`` and, where present, ``beta`` (the part of v orthogonal to w*; absent or NaN: 0),
      ``error_fair`` (else ``error``), ``pa_gap`` or ``patch_association``. A ``trajectory.csv``
      of ``theorylab run`` has them all.
    - `cfg`: the run's [`ExperimentConfig`][theorylab.jelassi2022.config.ExperimentConfig]
      or its [`Setting`][theorylab.jelassi2022.config.Setting] (optional): its
      ``train.pa_margin`` for t_PA, and the error of hard patch association for t_III.
    - `target_error`: the error that ends phase III (default: [`pa_limit_error`][] of `cfg`;
      neither: t_III is NaN).

    **Returns:** ``{"t_I", "t_II", "t_PA", "t_III", "v0_norm", "steps_run", "final_gap"}``;
    a time not reached is NaN.
    """
    tr = trajectory
    if "run" in tr and tr["run"].nunique() > 1:
        raise ValueError("trajectory: holds several runs (column run); use readings_by_run")
    step = tr.step.to_numpy()
    alpha = tr.alpha.to_numpy(dtype=float)
    beta0 = float(tr.beta.iloc[0]) if "beta" in tr and np.isfinite(tr.beta.iloc[0]) else 0.0
    norm0 = math.hypot(float(alpha[0]), beta0)
    gap = (tr.gamma - tr.rho).to_numpy(dtype=float)
    out = {"t_I": first_step(step, alpha >= ALPHA_GROWTH * norm0),
           "t_II": first_step(step, gap >= GAP_II)}
    ok = _pa_ok(tr, cfg)
    out["t_PA"] = _held_from(step, ok) if ok is not None else math.nan
    if target_error is None and cfg is not None:
        target_error = pa_limit_error(cfg)
    col = "error_fair" if "error_fair" in tr else "error" if "error" in tr else None
    if target_error is None or col is None or not np.isfinite(out["t_II"]):
        out["t_III"] = math.nan
    else:
        err = tr[col].to_numpy(dtype=float)
        near = (np.abs(err - target_error) <= ERR_TOL) | (step < out["t_II"])
        t3 = _held_from(step, near)
        out["t_III"] = max(t3, out["t_II"]) if np.isfinite(t3) else math.nan
    out.update({"v0_norm": norm0, "steps_run": float(step[-1]), "final_gap": float(gap[-1])})
    return out


def readings_by_run(table: pd.DataFrame, cfg=None, target_error: float | None = None,
                    by: str = "run") -> pd.DataFrame:
    """[`read_phases`][] of every run of a table with a column `by` (one row each)."""
    return pd.DataFrame([{by: key, **read_phases(g.drop(columns=[by]), cfg, target_error)}
                         for key, g in table.groupby(by, sort=True)])


def pa_limit_error(cfg, fair: bool = True) -> float:
    """Exact error of hard patch association with the same σ: γ = diag (own set uniform), ρ =
    diag − 60τ (no mass outside the own set); ties broken by a fair coin (``fair``) or counted
    as errors."""
    from .predictions import _exchangeable

    s = setting_of(cfg)
    eng = _exchangeable(s, engine="population", init_v="aligned", offdiag0_std=0.0,
                        method="exchangeable")
    p = {"alpha": 1.0, "gamma": s.diag, "rho": s.diag - 60.0 * s.tau}
    ev = eng.evaluate(p, 0, need_grad=False, record=True)
    return ev.error - 0.5 * ev.tie_mass if fair else ev.error


#: t_III of [`phase_readings`][] needs the error of hard patch association: one exact
#: evaluation, read by [`pa_target`][] only where its table has at most this many histograms
#: (~1 s).
PA_TARGET_MAX_ROWS = 2_000_000

#: setting (its TOML text) → the error of hard patch association
_PA_TARGETS: dict[str, float] = {}


def pa_target(cfg) -> float:
    """The error of hard patch association of `cfg`'s setting (the target that ends phase
    III), memoised per setting; NaN where its exact evaluation would need more than
    [`PA_TARGET_MAX_ROWS`][] histograms (t_III is then not read)."""
    if cfg is None:
        return math.nan
    s = setting_of(cfg)
    if n_histograms(s.partition.L - 1, count_patterns(s.C).shape[0]) > PA_TARGET_MAX_ROWS:
        return math.nan
    key = config_to_toml(s.cfg.replace(train={"steps": 0, "seed": 0, "lr_v": 0.0, "lr_A": 0.0}))
    if key not in _PA_TARGETS:
        _PA_TARGETS[key] = pa_limit_error(s)
    return _PA_TARGETS[key]


def exact_path(cfg, steps: int, stop_gap: float | None = None) -> pd.DataFrame:
    """Exact gradient descent on the population risk (P) from the partition-symmetric aligned
    start of `cfg`, every step kept.

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

    eng = _exchangeable(cfg)
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
