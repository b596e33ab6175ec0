"""Every shared setting of the huang2024 claims and figures: the MAE setting and its size
families, the P ladders and their runs, the ε ladder, the Phase I boundary grid, the CL
setting and its temperature ladder, and the figures' configs. A figure never takes its
configuration from a claim module; both read this one.

**MAE setting** (docs/papers/huang2024.md §9, the notes' reference computation): one cluster,
random areas, z ~ U[0.5, 1.5] (Gauss–Legendre, ``Z_NODES`` nodes; the alternative reading
z ≡ 1 is ``Z_LAWS["one"]``), Bernoulli masks with γ = ``GAMMA``, masked keys kept in the
softmax, loss normalised by 1/P, Q⁰ = 0.

**Step size.** With the 1/P normalisation the row Φ[p, ·] of a query p gets a gradient of
order 1/P (only the masked query p contributes to it), so theorylab steps with η = ``ETA_Q``·P:
the per-query step η_q = η/P is the same at every P, and the notes' phase length
P^{1−κ_c}/η (notes §4.5, written for a per-query rate) reads P^{1−κ_c}/η_q = (P/C)/η_q with
the actual sizes. Which η the paper's "P^{1−κ_c}/η" means is a reading
(``ETA_READINGS``): the per-query η_q (main) or the step η of the 1/P-normalised loss.

**Size families at fixed Δ** (``FAMILIES``): the configs name Δ and κ_c (``data.Delta``,
``data.kappa_c``) and get the admissible global size whose Δ is closest
([`sizes_for_gap`][theorylab.huang2024.data.sizes_for_gap]); on P = n⁴ the local size
C = P^{1/4} = n is exact, and the realised Δ and its rounding are columns of every table.
Δ > 0: Δ = 0.65, κ_c = 1/4 (κ_s = 0.95, the notes' §9 family; rounding ≤ 0.007 at every
rung); Δ < 0: Δ = −1/4, κ_c = 1/4 (κ_s = 1/2: C1 = n², exact at every rung).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from .config import ExperimentConfig, config_from_dict
from .engines import make_engine
from .phases import EPS_REL, own_attention_target, read_phases, stop_reached

__all__ = [
    "GAMMA", "ETA_Q", "EPS_REL", "Z_NODES", "LAPLACE_STEP", "COUNT_NODES", "POLYLOG_POWER",
    "Z_LAWS", "ETA_READINGS", "Family", "FAMILIES", "ladder", "engine_ladder", "EPS_LADDER",
    "eps_ladder", "eps_ladder_P", "boundary_grid", "BOUNDARY_DELTAS", "first_step", "boundary_rung",
    "boundary_table", "CROSSING_EXTENSION", "crossing_rung", "crossing_table",
    "mae_config", "family_config", "max_steps", "mae_run",
    "rung_summary", "ladder_table", "eps_table", "stop_reached", "family_sizes",
    "ATTN_TOL", "BATCH", "ETA_PER_P", "K", "TAU", "TAUS", "CL_QUICK_TAUS", "NEGATIVES",
    "CL_DELTA", "pair_config",
    "CL_MILD_DELTA", "CL_MILD_SEEDS", "cl_mild_measure",
    "cl_ladder", "CL_SEEDS", "CL_END_FRACTION", "CL_N_CLEAN", "CL_MAE_STEPS", "cl_settings",
    "CL_LONG_TAUS", "CL_LONG_STEPS", "cl_steps", "CL_REDUCED_TAU", "cl_reduced_measure",
    "cl_run_one", "cl_seed_run", "cl_mae_run", "cl_rung_prediction", "cl_measure",
    "cl_measure_all", "cl_rung_rows", "figure_config",
]

# -- the MAE setting ----------------------------------------------------------------------------
#: Masking probability of the notes' §9 setting.
GAMMA = 0.5
#: Per-query step η_q = η/P. Exact population GD decreases the loss at every step with it on
#: both families (checked on the quick ladder; a larger step was not needed).
ETA_Q = 2.0
#: Gauss–Legendre nodes for the uniform z law and the trapezoid step in ln t of the laplace
#: engine: 6 nodes and step 0.3 change Φ after 30 steps at P = 64 by < 1e-10 against 8 nodes
#: and step 0.2 (measured), far below every tolerance of the claims.
Z_NODES = 6
LAPLACE_STEP = 0.3
#: Gauss nodes of the reduced engine's large counts (its error against the exact sums:
#: ≤ 1e-15 in Φ after 20 steps at P ≤ 16384, tests/huang2024/test_engines_reduced.py).
COUNT_NODES = 24
#: "Up to polylog(P) factors" read as at most this power of ln P (the smallest polylog
#: factor, the ln P of the crossing value −(Δ/2) ln P).
POLYLOG_POWER = 1.0

#: The coefficient law: the notes' §9 U[0.5, 1.5] (main) and the point law z ≡ 1 (the law for
#: which the notes' −(Δ/2) ln P is the crossing value itself; the paper allows any law).
Z_LAWS = {"uniform": {"z_law": "uniform", "L": 0.5, "U": 1.5},
          "one": {"z_law": "values", "z_values": [1.0], "L": 1.0, "U": 1.0}}
#: Readings of the η in the paper's P^{1−κ_c}/η: the per-query step η_q = η/P (main; the 1/P
#: loss normalisation puts a 1/P on every query's gradient) or η itself.
ETA_READINGS = ("per-query", "loss")


@dataclass(frozen=True)
class Family:
    """A size family at fixed information gap: local size C = round(P^κ_c), global size the
    admissible one whose Δ is closest to `Delta`."""

    name: str
    kappa_c: float
    Delta: float

    @property
    def kappa_s(self) -> float:
        """κ_s = (1 + Δ + κ_c)/2."""
        return (1.0 + self.Delta + self.kappa_c) / 2.0


#: Δ > 0 (the notes' §9 family, κ_s = 0.95) and Δ < 0 (κ_s = 1/2), both with κ_c = 1/4.
FAMILIES = {"pos": Family("pos", 0.25, 0.65), "neg": Family("neg", 0.25, -0.25)}


def ladder(quick: bool) -> tuple[int, ...]:
    """The P ladder P = n⁴ (C = n exact): n = 3..16 (81 to 65536, 2.9 decades) in full mode,
    n = 3..7 (81 to 2401) in quick mode (a smoke test: shorter than the 2.5 decades the
    asymptotic verdicts need, so they say so). (n = 2 is left out: P = 16 has a single local
    area in the Δ > 0 family, where a local query's own and global rates are tied by the
    softmax's shift invariance with masked keys left out.)"""
    ns = range(3, 8) if quick else range(3, 17)
    return tuple(n ** 4 for n in ns)


def engine_ladder(quick: bool, mask_keys: bool = True, family: str = "pos") -> tuple[int, ...]:
    """The rungs where the exact engine (``population-laplace``) runs beside the reduced one.
    The exact step's cost grows with the number of local areas (one feature each): on a shared
    2-core machine a step of the Δ > 0 family takes 0.1 s at P = 256 and 0.6 s at 625 (a run
    to T* 160–240 steps), of the Δ < 0 family (C1 = P^{1/2}: many small local areas) 2.3 s at
    P = 256 and 18 s at 625. So: Δ > 0, P = 16, 81, 256, 625 with masked keys in and 16, 81,
    256 with them out; Δ < 0, P = 16, 81 (quick: 81 in, 16 out, either family)."""
    if quick:
        return (81,) if mask_keys else (16,)
    if family != "pos":
        return (16, 81)
    return (16, 81, 256, 625) if mask_keys else (16, 81, 256)


#: ε of the ε ladder (relative to L⁰ − L*), run at one P per family: three decades of ε, down
#: to where the steps after the phases dominate T* (at P = 4096 the phases take ≈ 500 steps
#: and the tail passes them near ε = 0.002). Three values per decade below ε₀ = 0.05, so that
#: the tail is read on three sub-ladders of at least three rungs (read off the same run).
EPS_LADDER = (0.2, 0.1, 0.05, 0.03, 0.02, 0.01, 0.005, 0.003, 0.002, 0.001, 5e-4, 3e-4, 2e-4,
              1e-4)


def eps_ladder(quick: bool) -> tuple[float, ...]:
    """The ε of the ε ladder: ``EPS_LADDER`` (quick: down to 10⁻³)."""
    return tuple(e for e in EPS_LADDER if e >= 1e-3) if quick else EPS_LADDER


def eps_ladder_P(quick: bool) -> int:
    """The P of the ε ladder: 4096 (quick: 256)."""
    return 256 if quick else 4096


#: The fixed information gaps of the runs near the Phase I boundary Δ = 0.
BOUNDARY_DELTAS = (-0.2, -0.1, -0.05, 0.05, 0.1, 0.2)


def boundary_grid(quick: bool) -> tuple[tuple[int, ...], tuple[float, ...]]:
    """(P values, Δ values) of the runs near the Phase I boundary (κ_c = 1/4, P = n⁴):
    n ∈ {4, 8, 16, 32, 64, 100} (P = 256 to 10⁸; only the first GD step is needed, which the
    reduced engine takes at any P), quick n ∈ {4, 16, 100}."""
    ns = (4, 16, 100) if quick else (4, 8, 16, 32, 64, 100)
    return tuple(n ** 4 for n in ns), BOUNDARY_DELTAS


def mae_config(P: int, C1: int | None = None, C: int | None = None, *,
               Delta: float | None = None, kappa_c: float | None = None,
               mask_keys: bool = True, z_law: str = "uniform", steps: int | None = None,
               engine: str = "population-laplace", gamma: float = GAMMA,
               areas: str = "random") -> ExperimentConfig:
    """The notes' §9 setting at (P, C1, C), or at (P, Δ, κ_c), with η = ETA_Q·P (resolved).

    `steps`: the GD steps of a run of it; default [`max_steps`][] at (P, C), enough to reach
    T* with a margin (the ladder runs reach it within a third of that). ``steps=0`` gives the
    setting alone (for an engine stepped by hand, or rates at Q⁰ = 0): a run of it is refused
    (``train.steps``)."""
    data = {"P": P, "areas": areas, **Z_LAWS[z_law]}
    if Delta is not None:
        data.update(Delta=Delta, kappa_c=kappa_c) if C is None else data.update(Delta=Delta, C=C)
    else:
        data.update(C1=C1, C=C)
    train = {"engine": engine, "z_nodes": Z_NODES, "lr": ETA_Q * P,
             "steps": 0 if steps is None else steps, "record": "all"}
    if engine == "population-laplace":
        train["laplace_step"] = LAPLACE_STEP
    if engine == "population-reduced":
        train["count_nodes"] = COUNT_NODES
    cfg = config_from_dict({
        "data": data,
        "model": {"mask": "bernoulli", "gamma": gamma, "mask_keys": mask_keys, "loss_norm": "P"},
        "train": train,
    }).resolved()
    if steps is None:
        cfg = cfg.replace(train={"steps": max_steps(P, int(cfg.data.C))}).resolved()
    return cfg


def family_config(fam: str, P: int, **kw) -> ExperimentConfig:
    """[`mae_config`][] of size family `fam` at P (Δ and κ_c of [`FAMILIES`][])."""
    f = FAMILIES[fam]
    return mae_config(P, Delta=f.Delta, kappa_c=f.kappa_c, **kw)


def family_sizes(fam: str, P: int) -> tuple[int, int]:
    """(C1, C) of size family `fam` at P."""
    d = family_config(fam, P, engine="population-reduced").data
    return int(d.C1), int(d.C)


def max_steps(P: int, C: int, eps_rel: float = EPS_REL) -> int:
    """Step cap of a run: (40 (P/C)/η_q + 40)·max(1, EPS_REL/eps_rel). The ladder runs reach
    ε = EPS_REL after ≤ 13 (P/C)/η_q steps and the tail grows like 1/ε (measured), so the cap
    leaves a factor ≥ 3; a run that hits it is censored, not failed."""
    return int(math.ceil((40 * (P / C) / ETA_Q + 40) * max(1.0, EPS_REL / eps_rel)))


@lru_cache(maxsize=256)
def mae_run(P: int, C1: int, C: int, *, engine: str = "population-reduced",
            mask_keys: bool = True, z_law: str = "uniform", eps_rel: float = EPS_REL,
            count_nodes: int | None = None, steps: int | None = None) -> pd.DataFrame:
    """Population GD from Q⁰ = 0 of the MAE setting at (P, C1, C) with `engine`
    (``population-reduced`` or the exact ``population-laplace``), one row per step (the
    engines' trajectory columns, ``rel_excess`` and, for the reduced engine, ``neglect``: the
    relative order its mean-field rest neglects), stopped by [`stop_reached`][] or at
    [`max_steps`][] (or after exactly `steps` steps). `count_nodes`: the reduced engine's
    Gauss nodes (default ``COUNT_NODES``; 0: exact sums). Cached in this process."""
    cfg = mae_config(P, C1, C, mask_keys=mask_keys, z_law=z_law, engine=engine)
    if count_nodes is not None and engine == "population-reduced":
        cfg = cfg.replace(train={"count_nodes": count_nodes})
    eng = make_engine(cfg)
    params = eng.initial_params()
    cap = max_steps(P, C, eps_rel) if steps is None else int(steps)
    target = own_attention_target(C, cfg.model.gamma)
    rows: list[dict] = []
    for step in range(cap + 1):
        ev = eng.evaluate(params, step, need_grad=step < cap, record=True)
        row = {"step": step, **eng.record(params, step, ev)}
        row["neglect"] = getattr(ev, "neglect", math.nan)
        rows.append(row)
        if (not np.isfinite(row["loss"]) or step == cap
                or (steps is None and stop_reached(rows, target, eps_rel))):
            break
        params = eng.apply(params, ev.grads)
    tr = pd.DataFrame(rows)
    tr["rel_excess"] = tr.excess_loss / tr.excess_loss.iloc[0]
    return tr


def _x_phase(P: int, C: int) -> float:
    """x = (P/C)/η_q: the notes' phase-length scale P^{1−κ_c}/η with the actual sizes."""
    return (P / C) / ETA_Q


def rung_summary(fam: str, P: int, C1: int, C: int, *, engine: str = "population-reduced",
                 mask_keys: bool = True, z_law: str = "uniform",
                 eps_rel: float = EPS_REL) -> pd.DataFrame:
    """One row: the rung's sizes, realised Δ and its rounding, x = (P/C)/η_q, the phase
    readings ([`phase_readings`][theorylab.huang2024.phases.phase_readings]) of its
    [`mae_run`][], the largest neglected order along the run, whether the loss decreased at
    every step, and the run time. A sweep point (cached on disk with ``--cache``)."""
    import time

    t0 = time.perf_counter()
    tr = mae_run(P, C1, C, engine=engine, mask_keys=mask_keys, z_law=z_law, eps_rel=eps_rel)
    secs = time.perf_counter() - t0
    cfg = mae_config(P, C1, C, mask_keys=mask_keys, z_law=z_law, engine=engine)
    f = FAMILIES.get(fam)
    row = {"family": fam, "engine": engine, "mask_keys": mask_keys, "z_law": z_law, "P": P,
           "C1": C1, "C": C, "delta": cfg.delta,
           "delta_target": f.Delta if f is not None else math.nan,
           "x_phase": _x_phase(P, C), "eta_q": ETA_Q,
           **read_phases(tr, cfg, eps_rel=eps_rel),
           "neglect": float(np.nanmax(tr.neglect)) if tr.neglect.notna().any() else math.nan,
           "loss_monotone": bool(np.all(np.diff(tr.loss.to_numpy()) <= 0)),
           "seconds": secs}
    row["delta_rounding"] = row["delta"] - row["delta_target"]
    return pd.DataFrame([row])


def ladder_table(fams, Ps, *, engine: str = "population-reduced", mask_keys: bool = True,
                 z_law: str = "uniform", eps_rel: float = EPS_REL) -> pd.DataFrame:
    """[`rung_summary`][] of every family in `fams` at every P of `Ps`, one sweep point each
    (in this process by default; on Dask and/or from a shared store with ``python -m
    theorylab check --scheduler/--workers/--cache``)."""
    from theorylab.core.claims import point_rows
    from theorylab.core.sweep import call_point, run_points

    cells = [(fam, P, *family_sizes(fam, P)) for fam in fams for P in Ps]
    pts = [call_point(f"{__name__}:rung_summary", fam=fam, P=P, C1=C1, C=C, engine=engine,
                      mask_keys=mask_keys, z_law=z_law, eps_rel=eps_rel)
           for fam, P, C1, C in cells]
    return pd.concat([point_rows(t) for t in run_points(pts)], ignore_index=True)


def eps_table(fam: str, P: int, *, mask_keys: bool = True, z_law: str = "uniform",
              eps=EPS_LADDER) -> pd.DataFrame:
    """The ε ladder at one P: one reduced run to the smallest ε, read at every ε of `eps`
    (T*, Φ_own(T*), own attention at T* and its gap to the ceiling 1 − γ^{C−1})."""
    C1, C = family_sizes(fam, P)
    tr = mae_run(P, C1, C, mask_keys=mask_keys, z_law=z_law, eps_rel=min(eps))
    cfg = mae_config(P, C1, C, mask_keys=mask_keys, z_law=z_law, engine="population-reduced")
    rows = []
    for e in eps:
        r = read_phases(tr, cfg, eps_rel=e)
        rows.append({"family": fam, "P": P, "C1": C1, "C": C, "delta": cfg.delta,
                     "eps_rel": e, **r})
    return pd.DataFrame(rows)


def first_step(P: int, C1: int, C: int, *, mask_keys: bool = True,
               z_law: str = "uniform") -> dict:
    """The phase readings of the first GD step of the reduced engine at (P, C1, C): whether
    Phase I starts (``phase_I``: the first step lowers Φ_glob of local queries by more than it
    raises Φ_own), the increments and their ratio ``ratio`` = −dΦ_glob/dΦ_own = |r_glob|/r_own
    at Q⁰ = 0 (exact in the reduction)."""
    cfg = mae_config(P, C1, C, mask_keys=mask_keys, z_law=z_law, engine="population-reduced")
    eng = make_engine(cfg)
    params = eng.initial_params()
    rows = []
    for step in range(2):
        ev = eng.evaluate(params, step, need_grad=step == 0, record=True)
        rows.append({"step": step, **eng.record(params, step, ev)})
        if step == 0:
            params = eng.apply(params, ev.grads)
    r = read_phases(pd.DataFrame(rows), cfg)
    return {"P": P, "C1": C1, "C": C, "delta": cfg.delta, "phase_I": r["phase_I"],
            "dphi_glob_1": r["dphi_glob_1"], "dphi_own_1": r["dphi_own_1"],
            "ratio": -r["dphi_glob_1"] / r["dphi_own_1"]}


def boundary_rung(P: int, *, mask_keys: bool = True, z_law: str = "uniform") -> pd.DataFrame:
    """At P = n⁴ (C = n): the first step at each Δ of ``BOUNDARY_DELTAS`` (sizes from
    ``data.Delta``; rows ``kind = "grid"``) and the measured Phase I boundary (one row
    ``kind = "boundary"``): the largest C1 on the admissible lattice (C dividing P − C1)
    without a Phase I and the smallest with one, found by bisection (Phase I is monotone in
    C1: a larger global area raises |r_glob|/r_own), ``delta_b`` the midpoint of their Δ and
    ``delta_b_halfwidth`` half their gap. A sweep point (cached with ``--cache``)."""
    from .data import sizes_for_gap

    C = int(round(P ** 0.25))
    rows = []
    for D in BOUNDARY_DELTAS:
        C1, _ = sizes_for_gap(P, D, C=C)
        rows.append({"kind": "grid", "delta_target": D,
                     **first_step(P, C1, C, mask_keys=mask_keys, z_law=z_law)})
    # bisection on k, C1 = P − kC, between Δ ≈ −0.3 (no Phase I) and Δ ≈ +0.3 (Phase I)
    k_hi = (P - sizes_for_gap(P, -0.3, C=C)[0]) // C  # small C1
    k_lo = (P - sizes_for_gap(P, 0.3, C=C)[0]) // C  # large C1
    hit = {}

    def present(k: int) -> bool:
        if k not in hit:
            hit[k] = first_step(P, P - k * C, C, mask_keys=mask_keys, z_law=z_law)
        return bool(hit[k]["phase_I"])

    if present(k_lo) and not present(k_hi):
        while k_hi - k_lo > 1:
            mid = (k_lo + k_hi) // 2
            if present(mid):
                k_lo = mid
            else:
                k_hi = mid
        a, b = hit[k_hi], hit[k_lo]  # a: no Phase I, b: Phase I
        rows.append({"kind": "boundary", "delta_target": math.nan, "P": P, "C": C,
                     "C1": b["C1"], "delta": 0.5 * (a["delta"] + b["delta"]),
                     "delta_b_halfwidth": 0.5 * (b["delta"] - a["delta"]),
                     "phase_I": True, "ratio": b["ratio"]})
    else:
        rows.append({"kind": "boundary", "delta_target": math.nan, "P": P, "C": C,
                     "delta": math.nan, "delta_b_halfwidth": math.nan, "phase_I": False,
                     "ratio": math.nan})
    out = pd.DataFrame(rows)
    out["mask_keys"], out["z_law"] = mask_keys, z_law
    return out


def boundary_table(quick: bool, *, mask_keys: bool = True, z_law: str = "uniform"):
    """[`boundary_rung`][] at every P of [`boundary_grid`][] (sweep points)."""
    from theorylab.core.claims import point_rows
    from theorylab.core.sweep import call_point, run_points

    pts = [call_point(f"{__name__}:boundary_rung", P=P, mask_keys=mask_keys, z_law=z_law)
           for P in boundary_grid(quick)[0]]
    return pd.concat([point_rows(t) for t in run_points(pts)], ignore_index=True)


#: The rungs n of P = n⁴ beyond the ladder on which only the end of Phase I is run (Δ > 0
#: family): P = 1.6·10⁵, 3.3·10⁵, 6.1·10⁵ and 1.05·10⁶, so that the crossing's local slope is
#: read on five sub-ladders up to P ≈ 10⁶ (a run to t_I costs 4 s at P = 1.6·10⁵ and 22 s at
#: 1.05·10⁶ on one core; a run to T* would take ten times longer).
CROSSING_EXTENSION = (20, 24, 28, 32)


@lru_cache(maxsize=64)
def crossing_rung(fam: str, P: int, *, mask_keys: bool = True,
                  z_law: str = "uniform") -> pd.DataFrame:
    """One row: reduced population GD from Q⁰ = 0 of family `fam` at P run to the end of
    Phase I only (the first step at which the own-area Φ of local queries grows at least as fast
    as their global Φ falls, the t_I of the phase readings), with t_I, Φ_glob(t_I) and the
    global attention at t_I. A sweep point; cached in this process."""
    C1, C = family_sizes(fam, P)
    cfg = mae_config(P, C1, C, mask_keys=mask_keys, z_law=z_law, engine="population-reduced")
    eng = make_engine(cfg)
    params = eng.initial_params()
    cap = max_steps(P, C)
    prev = None
    t_I, row = math.nan, None
    for step in range(cap + 1):
        ev = eng.evaluate(params, step, need_grad=step < cap, record=True)
        row = eng.record(params, step, ev)
        if prev is not None and (row["phi_own_lq"] - prev["phi_own_lq"]
                                 >= -(row["phi_glob_lq"] - prev["phi_glob_lq"])):
            t_I = float(step)
            break
        prev = row
        params = eng.apply(params, ev.grads)
    done = math.isfinite(t_I)
    return pd.DataFrame([{
        "family": fam, "P": P, "C1": C1, "C": C, "delta": cfg.delta, "mask_keys": mask_keys,
        "z_law": z_law, "t_I": t_I,
        "phi_glob_end_I": float(row["phi_glob_lq"]) if done else math.nan,
        "attn_glob_end_I": float(row["attn_glob_lq"]) if done else math.nan}])


def crossing_table(quick: bool, *, mask_keys: bool = True, z_law: str = "uniform"):
    """[`crossing_rung`][] of the Δ > 0 family at every P = n⁴ of [`CROSSING_EXTENSION`][]
    (sweep points; none in quick mode)."""
    from theorylab.core.claims import point_rows
    from theorylab.core.sweep import call_point, run_points

    if quick:
        return pd.DataFrame(columns=["family", "P", "C1", "C", "delta", "mask_keys", "z_law",
                                     "t_I", "phi_glob_end_I", "attn_glob_end_I"])
    pts = [call_point(f"{__name__}:crossing_rung", fam="pos", P=n ** 4, mask_keys=mask_keys,
                      z_law=z_law) for n in CROSSING_EXTENSION]
    return pd.concat([point_rows(t) for t in run_points(pts)], ignore_index=True)


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
    from .cl import clean_attention

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
    from .predictions.cl_plateau import cl_critical_temperature

    return cl_critical_temperature(pair_config(P, C1, C, 1, NEGATIVES), expectation=expectation)


@lru_cache(maxsize=64)
def cl_rung_prediction(P: int, C1: int, C: int, tau: float) -> dict:
    """The derived plateau and τ_c of one rung (leading order in P, the expectation over the
    negatives exact), and the same with the Jensen formula (columns ``*_jensen``)."""
    from .predictions.cl_plateau import cl_plateau

    out = {}
    for e, sfx in (("exact", ""), ("jensen", "_jensen")):
        pl = cl_plateau(pair_config(P, C1, C, 1, NEGATIVES, tau=tau), expectation=e)
        tc = _cl_tau_c(P, C1, C, e)
        out.update({f"pred_exists{sfx}": pl.exists, f"pred_glob{sfx}": pl.clean_glob,
                    f"pred_phi{sfx}": pl.phi, f"pred_own{sfx}": pl.clean_own,
                    f"tau_c{sfx}": tc["tau_c"], f"glob_below_tau_c{sfx}": tc["glob_below"]})
    return out


@lru_cache(maxsize=32)
def _cl_measure(quick: bool, tau: float) -> tuple[pd.DataFrame, pd.DataFrame]:
    from theorylab.core.claims import point_rows
    from theorylab.core.sweep import call_point, run_points

    st = cl_settings(quick)
    cells = [(r, sd) for r in st["ladder"] for sd in st["seeds"]]
    steps = cl_steps(quick, tau)
    trs = run_points([call_point(f"{__name__}:cl_seed_run", P=P, C1=C1, C=C, steps=steps,
                                 tau=float(tau), every=st["every"], seed=sd)
                      for (P, C1, C), sd in cells])
    mcells = [(r, sd) for r in st["ladder"] for sd in CL_SEEDS[:3]]
    mtrs = run_points([call_point(f"{__name__}:cl_mae_run", P=P, C1=C1, C=C,
                                  steps=st["mae_steps"], seed=sd)
                       for (P, C1, C), sd in mcells])
    rows, trajs = [], []
    for ((P, C1, C), sd), tr in zip(cells, trs):
        tr = point_rows(tr)
        cfg = pair_config(P, C1, C, steps, NEGATIVES, tau=tau)
        rows.append({"objective": "cl", "tau": float(tau), "seed": sd, "P": P, "C1": C1, "C": C,
                     "K": K, "delta": cfg.delta, "rho": C1 / P, "negatives": NEGATIVES,
                     **_cl_summary(tr), **cl_rung_prediction(P, C1, C, float(tau))})
        trajs.append(tr.assign(objective="cl", P=P, seed=sd, tau=float(tau)))
    for ((P, C1, C), sd), tr in zip(mcells, mtrs):
        tr = point_rows(tr)
        cfg = pair_config(P, C1, C, st["mae_steps"], None)
        rows.append({"objective": "mae", "tau": math.nan, "seed": sd, "P": P, "C1": C1, "C": C,
                     "K": K, "delta": cfg.delta, "rho": C1 / P, "negatives": math.nan,
                     **_cl_summary(tr)})
        trajs.append(tr.assign(objective="mae", P=P, seed=sd, tau=math.nan))
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
    from theorylab.core.claims import point_rows
    from theorylab.core.sweep import call_point, run_points

    st = cl_settings(quick)
    cells = [(r, sd) for r in cl_ladder(quick, CL_MILD_DELTA) for sd in CL_MILD_SEEDS]
    steps = cl_steps(quick, tau)
    trs = run_points([call_point(f"{__name__}:cl_seed_run", P=P, C1=C1, C=C, steps=steps,
                                 tau=float(tau), every=st["every"], seed=sd)
                      for (P, C1, C), sd in cells])
    rows = []
    for ((P, C1, C), sd), tr in zip(cells, trs):
        cfg = pair_config(P, C1, C, steps, NEGATIVES, tau=tau)
        rows.append({"objective": "cl-mild", "tau": float(tau), "seed": sd, "P": P, "C1": C1,
                     "C": C, "K": K, "delta": cfg.delta, "rho": C1 / P, "negatives": NEGATIVES,
                     **_cl_summary(point_rows(tr))})
    return pd.DataFrame(rows)


def cl_mild_measure(quick: bool, tau: float) -> pd.DataFrame:
    """CL at the mild imbalance CL_MILD_DELTA at one temperature (the ladder and steps of
    [`cl_settings`][], CL_MILD_SEEDS): one row per (P, seed), objective ``cl-mild``."""
    return _cl_mild_measure(bool(quick), float(tau)).copy()


def cl_rung_rows(table: pd.DataFrame) -> pd.DataFrame:
    """One row per rung of the CL ladder (of one temperature): seeds, the intervals (over
    seeds) of the end global attention, of its rise from the start, of its drift, of
    (measured − derived), the derived plateau and τ_c (and the Jensen formula's, when the
    table has them), and the MAE arm's own-area attention and convergence beside CL's."""
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
            "P": int(P), "seeds": int(g.seed.nunique()), "steps": int(g.steps.max()),
            "delta": float(g.delta.mean()),
            "rho": float(g.rho.mean()), "glob": end[0], "glob_lo": end[1], "glob_hi": end[2],
            "rise": rise[0], "rise_lo": rise[1], "rise_hi": rise[2],
            "drift": dr[0], "drift_lo": dr[1], "drift_hi": dr[2],
            "pred_exists": bool(g.pred_exists.iloc[0]), "pred": float(g.pred_glob.iloc[0]),
            "tau_c": float(g.tau_c.iloc[0]), "dev": dev[0], "dev_lo": dev[1], "dev_hi": dev[2],
            **({"pred_exists_jensen": bool(g.pred_exists_jensen.iloc[0]),
                "pred_jensen": float(g.pred_glob_jensen.iloc[0]),
                "tau_c_jensen": float(g.tau_c_jensen.iloc[0])}
               if "pred_glob_jensen" in g else {}),
            "phi_l": float(np.abs(g.end_phi_own_lq).mean()), "own_cl": float(g.end_own_lq.mean()),
            "own_mae": float(m.end_own_lq.mean()) if len(m) else math.nan,
            "mae_gap": gap[0], "mae_gap_lo": gap[1], "mae_gap_hi": gap[2],
            "mae_moved": float(m.own_change_last_fifth.abs().max()) if len(m) else math.nan,
            "finite": bool(np.all(np.isfinite(g[["end_glob_lq", "drift_glob_lq"]].to_numpy(
                float))))})
    return pd.DataFrame(out)


# -- the figures' MAE config --------------------------------------------------------------------
def figure_config(P: int, C1: int, C: int, *, gamma: float = 0.5, steps: int | None = None,
                  areas: str = "contiguous", K: int = 1) -> ExperimentConfig:
    """The notes' §9 setting at (P, C1, C) with masking probability γ, η = η_q·P, every step
    recorded, exact population GD (``population-laplace``); `steps` as in [`mae_config`][]."""
    cfg = mae_config(P, C1, C, steps=steps, gamma=gamma)
    return cfg.replace(data={"areas": areas, "K": K})


#: The temperature of the reduced-direction runs ([`cl_reduced_measure`][]): the largest τ
#: below the derived τ_c on the grid, where the engine's plateau lies furthest above the derived
#: one.
CL_REDUCED_TAU = 0.2


@lru_cache(maxsize=4)
def _cl_reduced_measure(quick: bool) -> pd.DataFrame:
    from theorylab.core.claims import point_rows
    from theorylab.core.sweep import call_point, run_points

    st = cl_settings(quick)
    tau = CL_REDUCED_TAU
    steps = cl_steps(quick, tau)
    cells = [(r, sd) for r in st["ladder"] for sd in CL_SEEDS[:3]]
    trs = run_points([call_point(f"{__name__}:cl_seed_run", P=P, C1=C1, C=C, steps=steps,
                                 tau=tau, every=st["every"], seed=sd, reduced=True)
                      for (P, C1, C), sd in cells])
    rows = []
    for ((P, C1, C), sd), tr in zip(cells, trs):
        cfg = pair_config(P, C1, C, steps, NEGATIVES, tau=tau)
        rows.append({"objective": "cl-reduced", "tau": tau, "seed": sd, "P": P, "C1": C1,
                     "C": C, "K": K, "delta": cfg.delta, "rho": C1 / P, "negatives": NEGATIVES,
                     **_cl_summary(point_rows(tr)), **cl_rung_prediction(P, C1, C, tau)})
    return pd.DataFrame(rows)


def cl_reduced_measure(quick: bool) -> pd.DataFrame:
    """The engine on the reduced CL model's direction only ([`cl_run_one`][] with
    ``reduced``): CL at CL_REDUCED_TAU on the ladder of [`cl_settings`][], 3 seeds (each its own
    area partition), objective ``cl-reduced``: the finite-P Monte Carlo dynamics of the very
    model ``predictions.cl_plateau`` solves at leading order in P, which tells the derivation's
    error (finite P) from the full engine's departures from the reduction (local correlations,
    Υ)."""
    return _cl_reduced_measure(bool(quick)).copy()
