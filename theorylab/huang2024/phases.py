"""The phase readings of one MAE run of Huang et al. (2025): one name and one definition each
for the end of Phase I, the end of Phase II, T* and the values at T*, shared by the claims, the
figures and any trajectory table (``theorylab run``'s ``trajectory.csv`` included).

The paper's phases (docs/papers/huang2024.md §4.5; names FOUND, dynamics RECONSTRUCTED): for a
masked local-area query and Δ > 0, Phase I decouples the global FP correlation (Φ_glob falls
faster than Φ_own grows), Phase II grows the own-area one; for Δ < 0 there is no Phase I.
Read on the means over local-area queries (``phi_glob_lq``, ``phi_own_lq``, ``attn_own_lq``)
and on the population loss (``loss``, ``loss_star``):

- **increments**: dΦ(t) = (Φ(t) − Φ(s))/(t − s) for consecutive recorded steps s < t (per GD
  step; with every step recorded, Φ(t) − Φ(t − 1));
- **t_I** (end of Phase I): the first recorded step t ≥ 1 with dΦ_own(t) ≥ −dΦ_glob(t), the
  step at which the own correlation's growth catches up with the global one's fall;
- **phase_I**: Phase I happened, i.e. the first increment already decouples
  (−dΦ_glob(1) > dΦ_own(1); when the run reaches t_I, equivalently t_I > the first recorded
  step after 0);
- **phi_glob_end_I** = Φ_glob(t_I) (the paper's crossing value, −(Δ/2) ln P to leading order
  when the coefficients are z ≡ 1); **attn_glob_end_I** = attn_glob_lq(t_I), the local
  queries' attention on the unmasked global keys there (its square ≈ the own area's share
  C/P: the notes' crossing criterion, whatever the coefficient law);
- **t_II** (end of Phase II): the first step with attn_own_lq ≥ ½(1 − γ^{C−1}), half the
  most a masked local query can put on the unmasked keys of its own area (they exist with
  probability 1 − γ^{C−1});
- **T_star**: the first step with L − L* ≤ ε_rel (L⁰ − L*) (``eps_rel``, default
  ``EPS_REL``);
- **end values** at T*: ``phi_own_T``, ``phi_glob_T``, ``attn_own_T`` and the ceiling
  ``attn_own_max`` = 1 − γ^{C−1}; ``attn_gap_T`` = ceiling − attn_own_T;
- lengths: ``len_I`` = t_I when Phase I happened else 0, ``len_II`` = t_II − len_I.

A reading the run did not reach is NaN (censored by its horizon). ``resolution`` is the
largest gap between recorded steps up to the last reading (1 when every step is recorded):
each step reading is exact to it.

Two calls: [`phase_readings`][] (a run folder, a sweep store, a trajectory table with its
config, or a run's result → one tidy table, one row per run and reading, with the step each
reading is taken at, its recording resolution, a ``censored`` flag and the reason a missing
one is missing; the same call and table as ``theorylab.jelassi2022.phases.phase_readings``),
and [`read_phases`][] (one trajectory → ``{reading: value}``, what the claims and figures
use). In the table, a run without Phase I has no ``t_I``, ``phi_glob_end_I`` or
``attn_glob_end_I`` (missing, with the reason) where ``read_phases`` gives the first step.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from theorylab.core.readings import paper_phase_readings
from theorylab.core.trainer import first_step

__all__ = ["EPS_REL", "READINGS", "READ_AT", "missing_readings", "own_attention_target",
           "own_attention_ceiling", "relative_excess", "phase_readings", "read_phases",
           "stop_reached"]

#: ε of T*, relative to the initial excess: L − L* ≤ EPS_REL·(L⁰ − L*). With the 1/P
#: normalisation L⁰ − L* is Θ(1) (0.12–0.25 on the ladders), so 5 % is an absolute ε of about
#: 0.01 (a project choice; the ε ladders of thm4.1/thm4.2 vary it).
EPS_REL = 0.05

#: The keys of [`read_phases`][], in order.
READINGS = ("t_I", "phase_I", "phi_glob_end_I", "attn_glob_end_I", "t_II", "T_star", "len_I",
            "len_II", "phi_own_T", "phi_glob_T", "attn_own_T", "attn_own_max", "attn_gap_T",
            "dphi_glob_1", "dphi_own_1", "steps_run", "final_rel_excess", "resolution")

#: reading → the time reading it is taken at (``Paper.reading_times``; the others are
#: constants of the run or of its config).
READ_AT = {"t_I": "t_I", "phi_glob_end_I": "t_I", "attn_glob_end_I": "t_I", "len_I": "t_I",
           "t_II": "t_II", "len_II": "t_II", "T_star": "T_star", "phi_own_T": "T_star",
           "phi_glob_T": "T_star", "attn_own_T": "T_star", "attn_gap_T": "T_star"}


def own_attention_ceiling(C: int, gamma: float) -> float:
    """1 − γ^{C−1}: the most a masked local query can put on the unmasked keys of its own area
    (Bernoulli masks: some of its C − 1 other keys is unmasked with this probability)."""
    return 1.0 - gamma ** (C - 1)


def own_attention_target(C: int, gamma: float) -> float:
    """½(1 − γ^{C−1}): the end of Phase II (half the ceiling: Θ(1))."""
    return 0.5 * own_attention_ceiling(C, gamma)


def relative_excess(tr: pd.DataFrame) -> np.ndarray:
    """(L − L*)/(L⁰ − L*) along a trajectory (``rel_excess`` when present, else from
    ``excess_loss`` or ``loss`` − ``loss_star``); NaN where L* is unknown."""
    if "rel_excess" in tr:
        return tr["rel_excess"].to_numpy(dtype=np.float64)
    ex = (tr["excess_loss"] if "excess_loss" in tr else tr["loss"] - tr["loss_star"])
    ex = ex.to_numpy(dtype=np.float64)
    return ex / ex[0] if ex.size and np.isfinite(ex[0]) and ex[0] != 0 else ex * math.nan


def stop_reached(rows: list[dict], target: float, eps_rel: float) -> bool:
    """The stopping rule of the ladder runs (``setups``) and of the reduced dynamics
    (``predictions.reduced``): L − L* ≤ eps_rel·(L⁰ − L*), own-area attention of local
    queries ≥ `target` (t_II reached) and, at the last step, the own-area Φ growing no slower
    than the global one falls (t_I reached)."""
    if len(rows) < 3:
        return False
    row, prev = rows[-1], rows[-2]
    return bool(row["excess_loss"] <= eps_rel * rows[0]["excess_loss"]
                and row["attn_own_lq"] >= target
                and (row["phi_own_lq"] - prev["phi_own_lq"])
                >= -(row["phi_glob_lq"] - prev["phi_glob_lq"]))


def _at(step: np.ndarray, values: np.ndarray, t: float) -> float:
    if not np.isfinite(t):
        return math.nan
    return float(values[np.flatnonzero(step == t)[0]])


def missing_readings(values, cfg=None) -> dict[str, str]:
    """The readings that did not happen in a run with these [`read_phases`][] `values`, and
    why (``Paper.missing_readings``): the end of Phase I and the values there when the run
    has no Phase I; t_II and the attention ceiling without C and γ."""
    out = {}
    if values.get("phase_I") is False or values.get("phase_I") == 0:
        if math.isfinite(values.get("dphi_glob_1", math.nan)):
            why = ("no Phase I in this run: its first step does not decouple the global FP "
                   "correlation (−dΦ_glob ≤ dΦ_own there; the paper's case Δ < 0)")
            out.update(dict.fromkeys(("t_I", "phi_glob_end_I", "attn_glob_end_I"), why))
    if "t_II" in values and cfg is None and not math.isfinite(values["t_II"]):
        why = "needs the run's config (the local area size C and the masking probability γ)"
        out.update(dict.fromkeys(("t_II", "len_II", "attn_own_max", "attn_gap_T"), why))
    return out


#: ``phase_readings(source, cfg=None)``: the phase readings of a run folder, a sweep store, a
#: trajectory table (with its config) or a run's result, one row per run and reading (module
#: docstring; [`phase_table`][theorylab.core.readings.phase_table]).
phase_readings = paper_phase_readings(__package__)


def read_phases(trajectory: pd.DataFrame, cfg=None, *, eps_rel: float = EPS_REL,
                   C: int | None = None, gamma: float | None = None) -> dict:
    """The phase readings of one run (module docstring), from a trajectory table with
    ``step``, ``phi_glob_lq``, ``phi_own_lq``, ``attn_own_lq`` and ``loss``/``loss_star`` (or
    ``excess_loss``, or ``rel_excess``): an engine run, a reduced run or ``theorylab run``'s
    ``trajectory.csv``.

    **Arguments:**

    - `trajectory`: the table (one row per recorded step, sorted by step).
    - `cfg`: the run's config (a huang2024 ``ExperimentConfig``) for C and γ (t_II and the
      attention ceiling); without it (and without `C`, `gamma`) those readings are NaN.
    - `eps_rel`: ε of T* relative to the initial excess.
    - `C`, `gamma`: the local area size and masking probability, overriding `cfg`'s.

    **Returns:** a dict with the keys of [`READINGS`][]."""
    tr = trajectory.sort_values("step")
    if cfg is not None:
        C = int(cfg.data.local_size) if C is None else C
        gamma = float(cfg.model.gamma) if gamma is None else gamma
    step, g, o, attn = (tr[c].to_numpy(dtype=np.float64)
                        for c in ("step", "phi_glob_lq", "phi_own_lq", "attn_own_lq"))
    gap = np.diff(step)
    with np.errstate(invalid="ignore", divide="ignore"):
        dg, do = np.diff(g) / gap, np.diff(o) / gap
    t_I = first_step(step[1:], do >= -dg)
    phase_I = bool(dg.size and -dg[0] > do[0])
    rel = relative_excess(tr)
    T = first_step(step, rel <= eps_rel)
    out = {"t_I": t_I, "phase_I": phase_I, "phi_glob_end_I": _at(step, g, t_I),
           "T_star": T, "phi_own_T": _at(step, o, T), "phi_glob_T": _at(step, g, T),
           "dphi_glob_1": float(dg[0]) if dg.size else math.nan,
           "dphi_own_1": float(do[0]) if do.size else math.nan,
           "steps_run": float(step[-1]) if step.size else math.nan,
           "final_rel_excess": float(rel[-1]) if rel.size else math.nan}
    out["attn_glob_end_I"] = (_at(step, tr["attn_glob_lq"].to_numpy(dtype=np.float64), t_I)
                              if "attn_glob_lq" in tr else math.nan)
    out["attn_own_T"] = _at(step, attn, T)
    if C is not None and gamma is not None:
        out["t_II"] = first_step(step, attn >= own_attention_target(C, gamma))
        out["attn_own_max"] = own_attention_ceiling(C, gamma)
    else:
        out["t_II"] = out["attn_own_max"] = math.nan
    out["attn_gap_T"] = out["attn_own_max"] - out["attn_own_T"]
    out["len_I"] = t_I if phase_I else (0.0 if np.isfinite(t_I) else math.nan)
    out["len_II"] = out["t_II"] - out["len_I"]
    reached = [t for t in (t_I, out["t_II"], T) if np.isfinite(t)]
    last = max(reached) if reached else math.nan
    upto = step <= last if np.isfinite(last) else np.ones(step.size, bool)
    out["resolution"] = float(gap[upto[1:]].max()) if gap.size and upto[1:].any() else 1.0
    return {k: out[k] for k in READINGS}
