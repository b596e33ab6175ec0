"""The MAE P ladders that the huang2024 claim checks and figures share: the two size
families, the P ladders, the exact population GD runs (``population-laplace``, stopped early)
and their phase readings.

Setting (docs/papers/huang2024.md §9, the notes' reference computation): one cluster, random
areas, z ~ U[0.5, 1.5] (Gauss–Legendre quadrature of ``Z_NODES`` nodes), Bernoulli masks with
γ = 0.5, masked keys kept in the softmax, loss normalised by 1/P, Q⁰ = 0.

Step size. With the 1/P normalisation, the row Φ[p, ·] of a query p gets a gradient of order
1/P (only the masked query p contributes to it), so theorylab steps with η = ``ETA_Q`` · P: the
per-query step η_q = η/P is the same at every P, and the notes' phase length P^{1−κ_c}/η
(notes §4.5, written for a per-query rate) reads P^{1−κ_c}/η_q = (P/C)/η_q with the actual
sizes (κ_c = ln C / ln P).
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pandas as pd

from .config import ExperimentConfig, config_from_dict
from .data import information_gap
from .engines import make_engine
from .predictions import own_attention_target, phase_readings, reduced_gd, stop_reached

__all__ = ["FAMILIES", "GAMMA", "ETA_Q", "EPS_REL", "Z_NODES", "LAPLACE_STEP", "POLYLOG_POWER",
           "family_sizes", "ladder", "mae_config", "max_steps", "gd_run", "derived_run",
           "phase_summary", "derived_summary", "DERIVED_READINGS",
           "run_ladders", "polylog_allowance"]

#: The two size families (κ_s, κ_c): Δ > 0 (the notes' §9 setting P = 256, C1 = 192, C = 4 is
#: its P = 256 rung) and Δ < 0 (§9: P = 256, C1 = 32, C = 16).
FAMILIES = {"pos": (0.95, 0.25), "neg": (0.625, 0.5)}
#: Masking probability of the notes' §9 setting.
GAMMA = 0.5
#: Per-query step η_q = η/P. Exact population GD decreases the loss at every step with it on
#: both families (checked on the quick ladder; a larger step was not needed).
ETA_Q = 2.0
#: T*: the first step with L − L* ≤ EPS_REL · (L⁰ − L*). The theorem's ε is absolute; with the
#: 1/P normalisation L⁰ − L* is Θ(1) (0.12–0.25 on the ladders), so a relative ε of 5 % is
#: an absolute ε of about 0.01. Smaller ε only lengthens the slow log(1/ε) tail (§4.5).
EPS_REL = 0.05
#: Gauss–Legendre nodes for the uniform z law and the trapezoid step in ln t of the laplace
#: engine: 6 nodes and step 0.3 change Φ after 30 steps at P = 64 by < 1e-10 against 8 nodes
#: and step 0.2 (measured), far below every tolerance of the claims.
Z_NODES = 6
LAPLACE_STEP = 0.3


#: "Up to polylog(P) factors" read as at most this power of ln P (the smallest polylog factor,
#: the ln P of the crossing value −(Δ/2) ln P).
POLYLOG_POWER = 1.0


def polylog_allowance(P, x, power: float = POLYLOG_POWER) -> float:
    """How far a factor (ln P)^power can move the log-log slope of a quantity against x over
    the ladder: power · ln(ln P_max / ln P_min) / ln(x_max / x_min) (NaN for fewer than two
    distinct x). A power law in x times such a factor fits with a slope off by at most this."""
    P = np.asarray(P, dtype=np.float64)
    x = np.asarray(x, dtype=np.float64)
    if P.size < 2 or np.ptp(np.log(x)) == 0:
        return math.nan
    return float(power * math.log(math.log(P.max()) / math.log(P.min()))
                 / math.log(x.max() / x.min()))


def family_sizes(P: int, kappa_s: float, kappa_c: float) -> tuple[int, int]:
    """(C1, C): C = round(P^κ_c); C1 the admissible size closest to P^κ_s (C ≤ C1 < P and C
    dividing P − C1; ties to the larger)."""
    C = max(1, int(round(P ** kappa_c)))
    target = P ** kappa_s
    cands = [c1 for c1 in range(C, P) if (P - c1) % C == 0]
    if not cands:
        raise ValueError(f"no admissible global size for P={P}, C={C}")
    return min(cands, key=lambda c1: (abs(c1 - target), -c1)), C


def ladder(quick: bool) -> list[int]:
    """The P ladder: 1.56 decades (16 to 576) in full mode, two small rungs in quick mode."""
    return [16, 36] if quick else [16, 36, 64, 144, 256, 576]


def mae_config(P: int, C1: int, C: int, *, mask_keys: bool = True, steps: int = 0,
               engine: str = "population-laplace") -> ExperimentConfig:
    """The notes' §9 setting at (P, C1, C) with η = ETA_Q · P."""
    return config_from_dict({
        "data": {"P": P, "C1": C1, "C": C, "areas": "random", "z_law": "uniform", "L": 0.5,
                 "U": 1.5},
        "model": {"mask": "bernoulli", "gamma": GAMMA, "mask_keys": mask_keys, "loss_norm": "P"},
        "train": {"engine": engine, "z_nodes": Z_NODES, "laplace_step": LAPLACE_STEP,
                  "lr": ETA_Q * P, "steps": steps, "record": "all"},
    })


def max_steps(P: int, C: int) -> int:
    """Step cap of a run: 40 (P/C)/η_q + 40. The Δ > 0 runs of the ladder reach ε after
    ≈ 5 (P/C)/η_q steps and the Δ < 0 ones after ≈ 12 (P/C)/η_q (measured at P = 64), so the
    cap leaves a factor ≥ 3; a run that hits it is censored, not failed."""
    return int(math.ceil(40 * (P / C) / ETA_Q)) + 40


@lru_cache(maxsize=64)
def gd_run(P: int, C1: int, C: int) -> pd.DataFrame:
    """Exact population GD (``population-laplace``) from Q⁰ = 0, one row per step (the columns
    of ``TRAJECTORY_SCHEMA`` plus ``rel_excess`` = (L − L*)/(L⁰ − L*)), stopped at the first
    step where L − L* ≤ EPS_REL (L⁰ − L*), the own-area attention has reached its Phase II
    target and the own-area Φ grows no slower than the global one falls (or at the cap
    [`max_steps`][]). Cached: thm4.1 and thm4.2 read the same runs."""
    cfg = mae_config(P, C1, C).resolved()
    eng = make_engine(cfg)
    params = eng.initial_params()
    rows: list[dict] = []
    cap = max_steps(P, C)
    target = own_attention_target(C, cfg.model.gamma)
    for step in range(cap + 1):
        ev = eng.evaluate(params, step, need_grad=step < cap, record=True)
        row = {"step": step, **eng.record(params, step, ev)}
        rows.append(row)
        if not np.isfinite(row["loss"]):
            break
        if stop_reached(rows, target, EPS_REL) or step == cap:
            break
        params = eng.apply(params, ev.grads)
    tr = pd.DataFrame(rows)
    tr["rel_excess"] = tr.excess_loss / tr.excess_loss.iloc[0]
    return tr


@lru_cache(maxsize=64)
def derived_run(P: int, C1: int, C: int) -> pd.DataFrame:
    """The derived prediction of [`gd_run`][]: the reduced population dynamics
    ([`reduced_gd`][theorylab.huang2024.predictions.reduced_gd]) of the same config, step
    size, stopping rule and step cap."""
    return reduced_gd(mae_config(P, C1, C).resolved(), max_steps(P, C), EPS_REL)


def phase_summary(tr: pd.DataFrame, P: int, C1: int, C: int, gamma: float = GAMMA) -> dict:
    """The operational phase readings of one run (local queries, notes §4.5):

    - increments dΦ_glob(t) = Φ_glob(t) − Φ_glob(t−1), dΦ_own likewise (means over local
      patches); Phase I is the initial run of steps with −dΦ_glob > dΦ_own (the global FP
      correlation falls faster than the own one grows); ``t_I`` = first step t ≥ 1 with
      dΦ_own ≥ −dΦ_glob, ``phase_I`` = (t_I ≥ 2, i.e. the first step already decouples);
      ``phi_glob_end_I`` = Φ_glob(t_I);
    - ``t_II`` = first step with the own-area attention attn_own_lq ≥ ½(1 − γ^{C−1}) (half the
      largest possible: Θ(1)); Phase II length t_II − t_I;
    - ``T_star`` = first step with L − L* ≤ EPS_REL (L⁰ − L*);
    - ``phi_glob_heuristic`` = −(Δ/2) ln P, the notes' heuristic end of Phase I (a reference,
      not a derived prediction).

    A reading the run did not reach is NaN (censored)
    ([`phase_readings`][theorylab.huang2024.predictions.phase_readings])."""
    step = tr.step.to_numpy()
    g, o = tr.phi_glob_lq.to_numpy(), tr.phi_own_lq.to_numpy()
    r = phase_readings(tr, C, gamma, EPS_REL)
    t_I, phase_I, t_II = r["t_I"], r["phase_I"], r["t_II"]
    delta = information_gap(P, C1, C)
    return {
        "P": P, "C1": C1, "C": C, "delta": delta, "eta_q": ETA_Q,
        "x_phase": (P / C) / ETA_Q, "steps_run": int(step[-1]),
        "dphi_glob_1": r["dphi_glob_1"], "dphi_own_1": r["dphi_own_1"],
        "t_I": t_I, "phase_I": phase_I, "phi_glob_end_I": r["phi_glob_end_I"],
        "phi_glob_heuristic": -(delta / 2) * math.log(P),
        "t_II": t_II, "len_I": t_I if phase_I else 0.0,
        "len_II": t_II - (t_I if phase_I else 0.0),
        "T_star": r["T_star"], "final_rel_excess": float(tr.rel_excess.iloc[-1]),
        "final_phi_own_lq": float(o[-1]), "final_phi_glob_lq": float(g[-1]),
        "final_attn_own_lq": float(tr.attn_own_lq.iloc[-1]),
        "loss_monotone": bool(np.all(np.diff(tr.loss.to_numpy()) <= 0)),
    }


#: The readings of [`phase_summary`][] that the derived runs predict (columns ``<name>_derived``).
DERIVED_READINGS = ("phase_I", "t_I", "phi_glob_end_I", "t_II", "len_I", "len_II", "T_star")


def derived_summary(P: int, C1: int, C: int) -> dict:
    """The readings of [`phase_summary`][] on [`derived_run`][] (keys ``<name>_derived``),
    with ``neglect``: the largest √(rest variance) along the derived run, the relative order
    of what its mean-field step neglects
    ([`rest_variance`][theorylab.huang2024.predictions.rest_variance])."""
    tr = derived_run(P, C1, C)
    d = phase_summary(tr, P, C1, C)
    out = {f"{k}_derived": d[k] for k in DERIVED_READINGS}
    out["neglect"] = float(np.sqrt(tr.rest_var.max()))
    return out


def run_ladders(quick: bool) -> tuple[pd.DataFrame, dict[tuple[str, int], pd.DataFrame]]:
    """Both families over the ladder: the per-run summary table (the engine's readings and,
    in the ``*_derived`` columns, the derived prediction's) and the engine trajectories."""
    from theorylab.core.sweep import call_point, run_points

    cells = [(fam, ks, kc, P, *family_sizes(P, ks, kc))
             for fam, (ks, kc) in FAMILIES.items() for P in ladder(quick)]
    # one sweep point per run (theorylab.core.sweep): in this process by default (where
    # gd_run's cache shares the runs of thm4.1 and thm4.2); on a Dask cluster and/or from a
    # shared store with python -m theorylab check --scheduler/--workers/--cache
    tables = run_points([call_point(f"{__name__}:gd_run", P=P, C1=C1, C=C)
                         for _, _, _, P, C1, C in cells])
    rows, trajs = [], {}
    for (fam, ks, kc, P, C1, C), tr in zip(cells, tables):
        rows.append({"family": fam, "kappa_s": ks, "kappa_c": kc,
                     **phase_summary(tr, P, C1, C), **derived_summary(P, C1, C)})
        trajs[(fam, P)] = tr
    return pd.DataFrame(rows), trajs
