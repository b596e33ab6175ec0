"""What the CL claims (thm4.4, thm4.4-plateau) share: the temperature variant, the Monte Carlo
runs of one temperature (CL on the Δ ≈ 0.25 ladder, ``SEEDS`` seeds) with the derived plateau
and τ_c of every rung, and the MAE arm on the same data (run to convergence, independent of
τ). Runs are sweep points (``--cache`` stores them) and are cached in this process, so the two
claims read the same runs.

The MAE arm: ``population-montecarlo`` in the Theorem 4.4 setting with the step size ×K (the
K = 4 clusters each carry 1/K of a query's gradient, so MAE at the CL step would need K times
the steps) for ``MAE_STEPS`` steps; its own-area attention at the end (mean over the last
fifth) is taken as converged when it moved by at most ATTN_TOL over the fifth before.
"""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pandas as pd

from theorylab.core.claims import Reading, Variant, point_rows
from theorylab.core.sweep import call_point, run_points

from ..cl import clean_attention
from ..config import ExperimentConfig
from ..engines import make_engine
from ..predictions.cl_plateau import cl_critical_temperature, cl_plateau
from ..setups import NEGATIVES, TAU, TAUS, K, cl_ladder, pair_config

__all__ = ["VARIANTS", "SEEDS", "END_FRACTION", "N_CLEAN", "settings", "run_one", "seed_run",
           "mae_run", "measure", "rung_rows", "MAE_STEPS"]

VARIANTS = (
    Variant("temperature",
            Reading(TAU, f"τ = {TAU:g} (the notes' §9 CL setting)", "paper notes"),
            tuple(Reading(t, f"τ = {t:g}", "project choice") for t in TAUS if t != TAU),
            "the InfoNCE temperature was not read (notes §3.3, UNCERTAIN); in the reduced CL "
            "model a finite plateau of global attention exists only below τ_c ≈ 0.25 "
            "(predictions.cl_plateau), so whether CL's global attention tends to 1 depends on "
            "it"),
)

#: Monte Carlo seeds (train.seed) of the CL runs (quick mode: the first 3; MAE arm: 3).
SEEDS = (0, 1, 2, 3, 4)
#: End values are means over this last fraction of the recorded steps; the drift of a run is
#: the change over the last half of the run that the least-squares line through its readings
#: there gives (slope × T/2).
END_FRACTION = 0.25
#: Clean images of the read-out batch.
N_CLEAN = 256
#: Steps of the MAE arm (step size ×K): enough for its own-area attention to settle on the
#: ladder (measured: within 0.02 over the last two fifths at P = 32).
MAE_STEPS = 600


def settings(quick: bool) -> dict:
    """Ladder, CL steps, readings every ``every`` steps, seeds and MAE steps: P ∈ {32, 64,
    128} at Δ ≈ 0.25, 200 steps, 5 seeds, MAE 600 steps (full); P ∈ {24, 48}, 60 steps, 3 seeds,
    MAE 300 steps (quick)."""
    if quick:
        return {"ladder": cl_ladder(True), "steps": 60, "every": 1, "seeds": SEEDS[:3],
                "mae_steps": 300}
    return {"ladder": cl_ladder(False), "steps": 200, "every": 2, "seeds": SEEDS,
            "mae_steps": MAE_STEPS}


def run_one(cfg: ExperimentConfig, every: int) -> pd.DataFrame:
    """GD with ``cfg``'s engine; at every ``every``-th step (and the last) the clean-image
    attention masses of local-area (``lq``) and global-area (``gq``) queries, averaged over
    N_CLEAN seeded clean images (the same images for every run), and Φ own/global."""
    eng = make_engine(cfg)
    s = eng.structure
    rng = np.random.default_rng(np.random.SeedSequence([cfg.data.seed, 44]))
    cl = rng.integers(0, s.K, size=N_CLEAN)
    z = rng.uniform(cfg.data.L, cfg.data.U, size=(N_CLEAN, int(s.n_areas.max())))
    lab = s.labels[cl]
    loc = lab != 0
    params = eng.initial_params()
    rows = []
    T = cfg.train.steps
    for step in range(T + 1):
        last = step == T
        ev = eng.evaluate(params, step, need_grad=not last, record=False)
        if step % every == 0 or last:
            a = clean_attention(s, params.Phi, params.Ups, cl, z)
            own = np.take_along_axis(a, lab[:, :, None], axis=2)[..., 0]
            rows.append({"step": step, "loss": ev.loss,
                         "attn_glob_lq": float(a[..., 0][loc].mean()),
                         "attn_own_lq": float(own[loc].mean()),
                         "attn_glob_gq": float(a[..., 0][~loc].mean()),
                         **eng.phi_summary(params)})
        if not np.isfinite(ev.loss):
            break
        if not last:
            params = eng.apply(params, ev.grads)
    return pd.DataFrame(rows)


@lru_cache(maxsize=256)
def seed_run(P: int, C1: int, C: int, steps: int, tau: float, every: int,
             seed: int) -> pd.DataFrame:
    """One CL run (a sweep point): [`run_one`][] of the [`pair_config`][theorylab.huang2024.
    setups.pair_config] with temperature `tau` and Monte Carlo seed `seed`."""
    cfg = pair_config(P, C1, C, steps, NEGATIVES, tau=tau).replace(
        train={"seed": seed}).resolved()
    return run_one(cfg, every)


@lru_cache(maxsize=64)
def mae_run(P: int, C1: int, C: int, steps: int, seed: int) -> pd.DataFrame:
    """One run of the MAE arm (a sweep point): ``population-montecarlo`` on the same data with
    the step size ×K, read every 5 steps."""
    cfg = pair_config(P, C1, C, steps, None)
    cfg = cfg.replace(train={"seed": seed, "lr": cfg.train.lr * K}).resolved()
    return run_one(cfg, 5)


def _summary(tr: pd.DataFrame) -> dict:
    T = int(tr.step.iloc[-1])
    end = tr[tr.step >= (1 - END_FRACTION) * T]
    half = tr[tr.step >= T / 2]
    slope = (float(np.polyfit(half.step.to_numpy(float), half.attn_glob_lq.to_numpy(float),
                              1)[0]) if len(half) >= 3 else math.nan)
    before = tr[(tr.step >= 0.6 * T) & (tr.step < 0.8 * T)]
    last = tr[tr.step >= 0.8 * T]
    return {"steps": T, "init_glob_lq": float(tr.attn_glob_lq.iloc[0]),
            "init_own_lq": float(tr.attn_own_lq.iloc[0]),
            "end_glob_lq": float(end.attn_glob_lq.mean()), "drift_glob_lq": slope * T / 2,
            "end_own_lq": float(end.attn_own_lq.mean()),
            "end_glob_gq": float(end.attn_glob_gq.mean()),
            "end_phi_glob_lq": float(end.phi_glob_lq.mean()),
            "end_phi_own_lq": float(end.phi_own_lq.mean()),
            "own_change_last_fifth": float(last.attn_own_lq.mean() - before.attn_own_lq.mean())}


@lru_cache(maxsize=16)
def _tau_c(P: int, C1: int, C: int) -> dict:
    return cl_critical_temperature(pair_config(P, C1, C, 1, NEGATIVES))


@lru_cache(maxsize=64)
def rung_prediction(P: int, C1: int, C: int, tau: float) -> dict:
    """The derived plateau and τ_c of one rung (leading order in P and 1/n)."""
    pl = cl_plateau(pair_config(P, C1, C, 1, NEGATIVES, tau=tau))
    tc = _tau_c(P, C1, C)
    return {"pred_exists": pl.exists, "pred_glob": pl.clean_glob, "pred_phi": pl.phi,
            "pred_own": pl.clean_own, "tau_c": tc["tau_c"], "glob_below_tau_c": tc["glob_below"]}


@lru_cache(maxsize=32)
def _measure(quick: bool, tau: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    st = settings(quick)
    cells = [(r, sd) for r in st["ladder"] for sd in st["seeds"]]
    trs = run_points([call_point(f"{__name__}:seed_run", P=P, C1=C1, C=C, steps=st["steps"],
                                 tau=float(tau), every=st["every"], seed=sd)
                      for (P, C1, C), sd in cells])
    mcells = [(r, sd) for r in st["ladder"] for sd in SEEDS[:3]]
    mtrs = run_points([call_point(f"{__name__}:mae_run", P=P, C1=C1, C=C,
                                  steps=st["mae_steps"], seed=sd)
                       for (P, C1, C), sd in mcells])
    rows, trajs = [], []
    for ((P, C1, C), sd), tr in zip(cells, trs):
        tr = point_rows(tr)
        cfg = pair_config(P, C1, C, st["steps"], NEGATIVES, tau=tau)
        rows.append({"objective": "cl", "tau": float(tau), "seed": sd, "P": P, "C1": C1, "C": C,
                     "K": K, "delta": cfg.delta, "rho": C1 / P, "negatives": NEGATIVES,
                     **_summary(tr), **rung_prediction(P, C1, C, float(tau))})
        trajs.append(tr.assign(objective="cl", P=P, seed=sd, tau=float(tau)))
    for ((P, C1, C), sd), tr in zip(mcells, mtrs):
        tr = point_rows(tr)
        cfg = pair_config(P, C1, C, st["mae_steps"], None)
        rows.append({"objective": "mae", "tau": math.nan, "seed": sd, "P": P, "C1": C1, "C": C,
                     "K": K, "delta": cfg.delta, "rho": C1 / P, "negatives": math.nan,
                     **_summary(tr)})
        trajs.append(tr.assign(objective="mae", P=P, seed=sd, tau=math.nan))
    return pd.DataFrame(rows), pd.concat(trajs, ignore_index=True)


def measure(quick: bool, tau: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(table, trajectories) of one temperature: one row per (objective, P, seed)."""
    t, tr = _measure(bool(quick), float(tau))
    return t.copy(), tr.copy()


def rung_rows(table: pd.DataFrame) -> pd.DataFrame:
    """One row per rung of the CL ladder: seeds, the intervals (over seeds) of the end global
    attention, of its rise from the start, of its drift, of (measured − derived), and the
    MAE arm's own-area attention and convergence beside CL's."""
    from theorylab.core.claims import t_interval

    cl = table[table.objective == "cl"]
    mae = table[table.objective == "mae"]
    out = []
    for P, g in cl.groupby("P", sort=True):
        m = mae[mae.P == P]
        end, rise = t_interval(g.end_glob_lq), t_interval(g.end_glob_lq - g.init_glob_lq)
        dr = t_interval(g.drift_glob_lq)
        dev = t_interval(g.end_glob_lq - g.pred_glob)
        gap = t_interval(m.end_own_lq.to_numpy() - g.end_own_lq.mean()) if len(m) else (
            math.nan, math.nan, math.nan)
        out.append({
            "P": int(P), "seeds": int(g.seed.nunique()), "delta": float(g.delta.mean()),
            "rho": float(g.rho.mean()), "glob": end[0], "glob_lo": end[1], "glob_hi": end[2],
            "rise": rise[0], "rise_lo": rise[1], "rise_hi": rise[2],
            "drift": dr[0], "drift_lo": dr[1], "drift_hi": dr[2],
            "pred_exists": bool(g.pred_exists.iloc[0]), "pred": float(g.pred_glob.iloc[0]),
            "tau_c": float(g.tau_c.iloc[0]), "dev": dev[0], "dev_lo": dev[1], "dev_hi": dev[2],
            "phi_l": float(np.abs(g.end_phi_own_lq).mean()), "own_cl": float(g.end_own_lq.mean()),
            "own_mae": float(m.end_own_lq.mean()) if len(m) else math.nan,
            "mae_gap": gap[0], "mae_gap_lo": gap[1], "mae_gap_hi": gap[2],
            "mae_moved": float(m.own_change_last_fifth.abs().max()) if len(m) else math.nan,
            "finite": bool(np.all(np.isfinite(g[["end_glob_lq", "drift_glob_lq"]].to_numpy(
                float))))})
    return pd.DataFrame(out)
