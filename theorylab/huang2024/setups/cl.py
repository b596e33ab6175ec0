"""The CL setting of the huang2024 claims and figures (Theorem 4.4): its constants, the CL
ladder, the seeded CL and MAE runs, the derived prediction per rung and the measured tables
shared by the claims thm4.4, thm4.4-plateau and the CL figures."""

from __future__ import annotations

import math
from functools import lru_cache

import numpy as np
import pandas as pd

from theorylab.core.claims.claim import point_tables

from ..config import ExperimentConfig, config_from_dict
from ..engines import make_engine

# -- the CL setting (Theorem 4.4) ---------------------------------------------------------------
#: A difference of attention masses counts when it exceeds ATTN_TOL (absolute). The readings
#: are exact functions of (Φ, Υ) on a fixed batch of clean images; the noise is that of the
#: trajectory (fresh Monte Carlo batches): at the notes' §9 setting the CL plateau of glob_lq
#: fluctuates by about ±0.03 between steps, and its end-window mean over ≥ 10 readings has a
#: standard error below 0.007, so 0.02 is ≈ 3 standard errors; it is also a third of the
#: initial own-area attention C/P = 0.0625.
ATTN_TOL = 0.02
#: Temperature (main reading), clusters, batch (images per step, two views each) and step
#: size per patch count: the notes' §9 CL setting (τ = 0.1, K = 4) with its MAE batch of 16
#: and η = 200 at P = 128, scaled as η ∝ P (the gradient of a row Φ[p, ·] carries 1/P from the
#: mean pooling and from the MAE loss normalisation).
TAU, K, BATCH, ETA_PER_P = 0.1, 4, 16, 200.0 / 128
#: The temperatures the CL claims run (τ is not read in the paper; RECONSTRUCTED, UNCERTAIN):
#: both sides of the derived τ_c ≈ 0.21–0.22, with 0.25 between it and the Jensen formula's
#: τ_c ≈ 0.25–0.26 (predictions.cl_plateau); quick: CL_QUICK_TAUS.
TAUS = (0.1, 0.15, 0.2, 0.25, 0.3, 0.5, 1.0)
CL_QUICK_TAUS = (0.1, 0.2, 0.3)
#: Negatives per positive pair: every other image of the batch.
NEGATIVES = 15
#: The information gap of the CL ladder (inside Thm 4.1's range), with κ_c = 1/4.
CL_DELTA = 0.25
#: The mild imbalance of the paper's "even under mild imbalance": the target Δ of a second CL
#: ladder (realised on the size lattice of P ∈ {32, 64, 128}: Δ = 0.129, 0.069, 0.117).
CL_MILD_DELTA = 0.1

__all__ = ["ATTN_TOL", "BATCH", "ETA_PER_P", "K", "TAU", "TAUS", "CL_QUICK_TAUS", "NEGATIVES",
           "CL_DELTA", "pair_config", "CL_MILD_DELTA", "CL_MILD_SEEDS",
           "cl_mild_measure", "cl_ladder", "CL_SEEDS", "CL_END_FRACTION", "CL_N_CLEAN",
           "CL_MAE_STEPS", "cl_settings", "cl_run_one", "cl_seed_run", "cl_mae_run",
           "cl_rung_prediction", "cl_measure", "cl_measure_all", "cl_rung_rows", "CL_LONG_TAUS",
           "CL_LONG_STEPS", "cl_steps", "CL_REDUCED_TAU", "cl_reduced_measure",
           "interval_columns"]



def pair_config(P: int, C1: int, C: int, steps: int, negatives: int | None, *,
                tau: float = TAU) -> ExperimentConfig:
    """The CL config with ``negatives`` negatives and temperature `tau`, or the MAE one
    (``negatives = None``, ``population-montecarlo``), on the same data, masks, start, step
    size and batch size."""
    model = {"mask": "bernoulli", "gamma": 0.5, "mask_keys": True}
    if negatives is None:
        engine = "population-montecarlo"
        model["loss_norm"] = "P"
    else:
        engine = "cl-montecarlo"
        model.update(objective="cl", cl_temperature=tau, cl_negatives=negatives,
                     cl_pooling="mean")
    return config_from_dict({
        "data": {"P": P, "C1": C1, "C": C, "K": K, "areas": "random", "z_law": "uniform",
                 "L": 0.5, "U": 1.5, "seed": 0},
        "model": model,
        "train": {"engine": engine, "mc_samples": BATCH, "lr": ETA_PER_P * P, "steps": steps,
                  "init": "zero", "seed": 0},
    }).resolved()


def cl_ladder(quick: bool, delta: float = CL_DELTA) -> tuple[tuple[int, int, int], ...]:
    """(P, C1, C) of the CL ladder at Δ = `delta` (CL_DELTA by default), κ_c = 1/4 (sizes from
    ``data.Delta``): P ∈ {32, 64, 128} (quick: {24, 48})."""
    out = []
    for P in ((24, 48) if quick else (32, 64, 128)):
        d = config_from_dict({"data": {"P": P, "kappa_c": 0.25, "Delta": delta}}).data
        out.append((P, int(d.global_size), int(d.local_size)))
    return tuple(out)


# -- the CL runs (Theorem 4.4): shared by the claims thm4.4, thm4.4-plateau and the figures ------
#: Seeds of the CL runs (quick mode: the first 3; MAE arm: 3): each seeds both the Monte Carlo
#: batches (train.seed) and the random area partition of every cluster and the read-out images
#: (data.seed), so the seeds of a rung spread over as many partitions.
CL_SEEDS = (0, 1, 2, 3, 4)
#: End values are means over this last fraction of the recorded steps; the drift of a run is
#: the change over the last half of the run that the least-squares line through its readings
#: there gives (slope × T/2).
CL_END_FRACTION = 0.25
#: Readings in the first half of a run are this many times sparser (the read-out on
#: CL_N_CLEAN clean images is most of a run's time; the first half only draws the trajectory).
CL_EARLY_STRIDE = 5
#: Clean images of the read-out batch.
CL_N_CLEAN = 256
#: Steps of the MAE arm (step size ×K): enough for its own-area attention to settle on the
#: ladder (measured: within 0.02 over the last two fifths at P = 32).
CL_MAE_STEPS = 600


#: The temperatures next to the derived τ_c (0.21–0.22) and the Jensen formula's (0.25–0.26),
#: where the plateau's basin is shallow and the attention approaches it slowly: run
#: CL_LONG_STEPS steps instead of 200 (at τ = 0.25, P = 128 the attention still rose by 0.035
#: over the last 100 of 200 steps, with an end interval across 1 − ONE_TOL).
CL_LONG_TAUS = (0.2, 0.25)
CL_LONG_STEPS = 300


def cl_steps(quick: bool, tau: float) -> int:
    """CL's steps at temperature `tau`: ``cl_settings(quick)["steps"]``, ×1.5 (CL_LONG_STEPS in
    the full run) at CL_LONG_TAUS."""
    st = cl_settings(quick)["steps"]
    return (st * CL_LONG_STEPS) // 200 if float(tau) in CL_LONG_TAUS else st


def cl_settings(quick: bool) -> dict:
    """Ladder, CL steps, readings every ``every`` steps, seeds, MAE steps and temperatures:
    P ∈ {32, 64, 128} at Δ ≈ 0.25, 200 steps, 5 seeds, MAE 600 steps, TAUS (full); P ∈ {24,
    48}, 60 steps, 3 seeds, MAE 300 steps, CL_QUICK_TAUS (quick)."""
    if quick:
        return {"ladder": cl_ladder(True), "steps": 60, "every": 1, "seeds": CL_SEEDS[:3],
                "mae_steps": 300, "taus": CL_QUICK_TAUS}
    return {"ladder": cl_ladder(False), "steps": 200, "every": 2, "seeds": CL_SEEDS,
            "mae_steps": CL_MAE_STEPS, "taus": TAUS}


def cl_run_one(cfg: ExperimentConfig, every: int, reduced: bool = False) -> pd.DataFrame:
    """GD with ``cfg``'s engine (with `reduced`: the gradient projected on the reduced CL
    model of ``predictions.cl_plateau``, one global FP correlation φ shared by every row and
    cluster, local correlations and Υ frozen at 0); at every ``every``-th step of the second
    half of the run (every ``CL_EARLY_STRIDE``·``every``-th before it; the summaries read only
    the second half) and at the first and last step, the clean-image attention masses of local-area
    (``lq``) and global-area (``gq``) queries, averaged over CL_N_CLEAN seeded clean images
    (the same images for every run), and Φ own/global."""
    eng = make_engine(cfg)
    s = eng.structure
    from ..cl import clean_attention

    rng = np.random.default_rng(np.random.SeedSequence([cfg.data.seed, 44]))
    cl = rng.integers(0, s.K, size=CL_N_CLEAN)
    z = rng.uniform(cfg.data.L, cfg.data.U, size=(CL_N_CLEAN, int(s.n_areas.max())))
    lab = s.labels[cl]
    loc = lab != 0
    params = eng.initial_params()
    rows = []
    T = cfg.train.steps
    for step in range(T + 1):
        last = step == T
        ev = eng.evaluate(params, step, need_grad=not last, record=False)
        if (step % (every if 2 * step >= T else CL_EARLY_STRIDE * every) == 0) or last:
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
            params = eng.apply(params, _project(ev.grads, s) if reduced else ev.grads)
    return pd.DataFrame(rows)


def _project(grads: dict, s) -> dict:
    """The gradient along the reduced CL model's one direction: the mean of ∂L/∂Φ over the
    global-area feature of every cluster and every row, on those entries only."""
    glob = np.asarray(s.offset)[: s.K]
    g = np.zeros_like(grads["Phi"])
    g[:, glob] = grads["Phi"][:, glob].mean()
    return {"Phi": g, "Ups": np.zeros_like(grads["Ups"])}


@lru_cache(maxsize=256)
def cl_seed_run(P: int, C1: int, C: int, steps: int, tau: float, every: int,
                seed: int, reduced: bool = False) -> pd.DataFrame:
    """One CL run (a sweep point): [`cl_run_one`][] of the [`pair_config`][] with temperature
    `tau`, Monte Carlo seed and area partition `seed` (`reduced`: on the reduced model's
    direction only)."""
    cfg = pair_config(P, C1, C, steps, NEGATIVES, tau=tau).replace(
        data={"seed": seed}, train={"seed": seed}).resolved()
    return cl_run_one(cfg, every, reduced)


@lru_cache(maxsize=64)
def cl_mae_run(P: int, C1: int, C: int, steps: int, seed: int) -> pd.DataFrame:
    """One run of the MAE arm (a sweep point): ``population-montecarlo`` on the same data with
    the step size ×K, read every 5 steps (seed: Monte Carlo and area partition, as CL's)."""
    cfg = pair_config(P, C1, C, steps, None)
    cfg = cfg.replace(data={"seed": seed},
                      train={"seed": seed, "lr": cfg.train.lr * K}).resolved()
    return cl_run_one(cfg, 5)


def _cl_summary(tr: pd.DataFrame) -> dict:
    T = int(tr.step.iloc[-1])
    end = tr[tr.step >= (1 - CL_END_FRACTION) * T]
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
def _cl_tau_c(P: int, C1: int, C: int, expectation: str) -> dict:
    from ..predictions.cl_plateau import cl_critical_temperature

    return cl_critical_temperature(pair_config(P, C1, C, 1, NEGATIVES), expectation=expectation)


@lru_cache(maxsize=64)
def cl_rung_prediction(P: int, C1: int, C: int, tau: float) -> dict:
    """The derived plateau and τ_c of one rung (leading order in P, the expectation over the
    negatives exact), and the same with the Jensen formula (columns ``*_jensen``)."""
    from ..predictions.cl_plateau import cl_plateau

    out = {}
    for e, sfx in (("exact", ""), ("jensen", "_jensen")):
        pl = cl_plateau(pair_config(P, C1, C, 1, NEGATIVES, tau=tau), expectation=e)
        tc = _cl_tau_c(P, C1, C, e)
        out.update({f"pred_exists{sfx}": pl.exists, f"pred_glob{sfx}": pl.clean_glob,
                    f"pred_phi{sfx}": pl.phi, f"pred_own{sfx}": pl.clean_own,
                    f"tau_c{sfx}": tc["tau_c"], f"glob_below_tau_c{sfx}": tc["glob_below"]})
    return out


def _cl_runs(fn: str, ladder, seeds, reduced: bool = False,
             **kw) -> tuple[list, list[pd.DataFrame]]:
    """The (rung, seed) cells of `ladder` × `seeds` and the trajectory of `fn` (``cl_seed_run``
    or ``cl_mae_run``, one sweep point each) at every cell, with the keywords `kw` (and
    `reduced` when set)."""
    cells = [(r, sd) for r in ladder for sd in seeds]
    more = {"reduced": True} if reduced else {}
    return cells, point_tables(f"{__name__}:{fn}", [
        dict(P=P, C1=C1, C=C, **kw, seed=sd, **more) for (P, C1, C), sd in cells])


def _cl_row(objective: str, tau: float, negatives: float, rung, seed: int,
            tr: pd.DataFrame) -> dict:
    """The summary row of one run `tr` (objective `objective`) of rung (P, C1, C); Δ is the
    data's, the same for both objectives."""
    P, C1, C = rung
    return {"objective": objective, "tau": tau, "seed": seed, "P": P, "C1": C1, "C": C, "K": K,
            "delta": pair_config(P, C1, C, 1, NEGATIVES).delta, "rho": C1 / P,
            "negatives": negatives, **_cl_summary(tr)}


def _cl_rows(quick: bool, ladder, seeds, tau: float, objective: str, *, predict: bool = True,
             reduced: bool = False) -> tuple[list[dict], list[pd.DataFrame]]:
    """The CL runs ([`cl_seed_run`][], sweep points) of every rung of `ladder` and seed of
    `seeds` at temperature `tau`: one summary row each (objective `objective`, with the derived
    plateau and τ_c of [`cl_rung_prediction`][] when `predict`) and their trajectories."""
    cells, trs = _cl_runs("cl_seed_run", ladder, seeds, reduced, steps=cl_steps(quick, tau),
                          tau=float(tau), every=cl_settings(quick)["every"])
    rows = [{**_cl_row(objective, float(tau), NEGATIVES, r, sd, tr),
             **(cl_rung_prediction(*r, float(tau)) if predict else {})}
            for (r, sd), tr in zip(cells, trs)]
    return rows, trs


@lru_cache(maxsize=32)
def _cl_measure(quick: bool, tau: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    st = cl_settings(quick)
    rows, trs = _cl_rows(quick, st["ladder"], st["seeds"], tau, "cl")
    trajs = [tr.assign(objective="cl", P=r["P"], seed=r["seed"], tau=float(tau))
             for r, tr in zip(rows, trs)]
    mcells, mtrs = _cl_runs("cl_mae_run", st["ladder"], CL_SEEDS[:3], steps=st["mae_steps"])
    for (r, sd), tr in zip(mcells, mtrs):
        rows.append(_cl_row("mae", math.nan, math.nan, r, sd, tr))
        trajs.append(tr.assign(objective="mae", P=r[0], seed=sd, tau=math.nan))
    return pd.DataFrame(rows), pd.concat(trajs, ignore_index=True)


def cl_measure(quick: bool, tau: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(table, trajectories) of one temperature: one row per (objective, P, seed)."""
    t, tr = _cl_measure(bool(quick), float(tau))
    return t.copy(), tr.copy()


def cl_measure_all(quick: bool, mild: bool = False) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(table, trajectories) of every temperature of [`cl_settings`][] (``taus``): the rows of
    [`cl_measure`][] per τ (the MAE arm, which has no τ, once), and with `mild` the rows of
    [`cl_mild_measure`][] per τ."""
    tables, trajs = [], []
    for k, tau in enumerate(cl_settings(quick)["taus"]):
        t, tr = cl_measure(quick, tau)
        keep = t.objective != "mae" if k else slice(None)
        tables.append(t[keep])
        trajs.append(tr[tr.objective != "mae"] if k else tr)
        if mild:
            tables.append(cl_mild_measure(quick, tau))
    return pd.concat(tables, ignore_index=True), pd.concat(trajs, ignore_index=True)


#: Seeds of the mild-imbalance CL ladder (no MAE arm beside it).
CL_MILD_SEEDS = CL_SEEDS[:3]


@lru_cache(maxsize=32)
def _cl_mild_measure(quick: bool, tau: float) -> pd.DataFrame:
    return pd.DataFrame(_cl_rows(quick, cl_ladder(quick, CL_MILD_DELTA), CL_MILD_SEEDS, tau,
                                 "cl-mild", predict=False)[0])


def cl_mild_measure(quick: bool, tau: float) -> pd.DataFrame:
    """CL at the mild imbalance CL_MILD_DELTA at one temperature (the ladder and steps of
    [`cl_settings`][], CL_MILD_SEEDS): one row per (P, seed), objective ``cl-mild``."""
    return _cl_mild_measure(bool(quick), float(tau)).copy()


def interval_columns(name: str, values) -> dict:
    """``name``, ``name_lo``, ``name_hi``: the mean of `values` and its 95 % t-interval over
    the seeds (NaN without `values`)."""
    from theorylab.core.claims import t_interval

    m, lo, hi = (math.nan,) * 3 if values is None else t_interval(values)
    return {name: m, f"{name}_lo": lo, f"{name}_hi": hi}


def cl_rung_rows(table: pd.DataFrame) -> pd.DataFrame:
    """One row per rung of the CL ladder (of one temperature): seeds, the intervals (over
    seeds) of the end global attention, of its rise from the start, of its drift, of
    (measured − derived), the derived plateau and τ_c (and the Jensen formula's, when the
    table has them), and the MAE arm's own-area attention and convergence beside CL's."""
    cl = table[table.objective == "cl"]
    mae = table[table.objective == "mae"]
    out = []
    for P, g in cl.groupby("P", sort=True):
        m = mae[mae.P == P]
        out.append({
            "P": int(P), "seeds": int(g.seed.nunique()), "steps": int(g.steps.max()),
            "delta": float(g.delta.mean()), "rho": float(g.rho.mean()),
            **interval_columns("glob", g.end_glob_lq),
            **interval_columns("rise", g.end_glob_lq - g.init_glob_lq),
            **interval_columns("drift", g.drift_glob_lq),
            "pred_exists": bool(g.pred_exists.iloc[0]), "pred": float(g.pred_glob.iloc[0]),
            "tau_c": float(g.tau_c.iloc[0]), **interval_columns("dev", g.end_glob_lq - g.pred_glob),
            **({"pred_exists_jensen": bool(g.pred_exists_jensen.iloc[0]),
                "pred_jensen": float(g.pred_glob_jensen.iloc[0]),
                "tau_c_jensen": float(g.tau_c_jensen.iloc[0])}
               if "pred_glob_jensen" in g else {}),
            "phi_l": float(np.abs(g.end_phi_own_lq).mean()), "own_cl": float(g.end_own_lq.mean()),
            "own_mae": float(m.end_own_lq.mean()) if len(m) else math.nan,
            **interval_columns("mae_gap", m.end_own_lq.to_numpy() - g.end_own_lq.mean() if len(m)
                        else None),
            "mae_moved": float(m.own_change_last_fifth.abs().max()) if len(m) else math.nan,
            "finite": bool(np.all(np.isfinite(g[["end_glob_lq", "drift_glob_lq"]].to_numpy(
                float))))})
    return pd.DataFrame(out)


#: The temperature of the reduced-direction runs ([`cl_reduced_measure`][]): the largest τ
#: below the derived τ_c on the grid, where the engine's plateau lies furthest above the derived
#: one.
CL_REDUCED_TAU = 0.2


@lru_cache(maxsize=4)
def _cl_reduced_measure(quick: bool) -> pd.DataFrame:
    return pd.DataFrame(_cl_rows(quick, cl_settings(quick)["ladder"], CL_SEEDS[:3],
                                 CL_REDUCED_TAU, "cl-reduced", reduced=True)[0])


def cl_reduced_measure(quick: bool) -> pd.DataFrame:
    """The engine on the reduced CL model's direction only ([`cl_run_one`][] with
    ``reduced``): CL at CL_REDUCED_TAU on the ladder of [`cl_settings`][], 3 seeds (each its own
    area partition), objective ``cl-reduced``: the finite-P Monte Carlo dynamics of the very
    model ``predictions.cl_plateau`` solves at leading order in P, which tells the derivation's
    error (finite P) from the full engine's departures from the reduction (local correlations,
    Υ)."""
    return _cl_reduced_measure(bool(quick)).copy()
