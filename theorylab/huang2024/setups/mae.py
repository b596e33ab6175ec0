"""The MAE setting of the huang2024 claims and figures (the overview: [`setups`][theorylab.
huang2024.setups]): its constants and size families, the P ladders and their runs, the ε
ladder, the Phase I boundary grid and crossing, and the figures' config."""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import lru_cache

import numpy as np
import pandas as pd

from theorylab.core.claims.claim import point_table

from ..config import ExperimentConfig, config_from_dict
from ..phases import EPS_REL, own_attention_target, read_phases, stop_reached
from ..predictions.reduced import gd_steps

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

#: The coefficient law: the notes' §9 U[0.5, 1.5] (main) and the point law z ≡ 1 (the law for
#: which the notes' −(Δ/2) ln P is the crossing value itself; the paper allows any law).
Z_LAWS = {"uniform": {"z_law": "uniform", "L": 0.5, "U": 1.5},
          "one": {"z_law": "values", "z_values": [1.0], "L": 1.0, "U": 1.0}}
#: Readings of the η in the paper's P^{1−κ_c}/η: the per-query step η_q = η/P (main; the 1/P
#: loss normalisation puts a 1/P on every query's gradient) or η itself.
ETA_READINGS = ("per-query", "loss")

__all__ = ["GAMMA", "ETA_Q", "EPS_REL", "Z_NODES", "LAPLACE_STEP", "COUNT_NODES",
           "Z_LAWS", "ETA_READINGS", "Family", "FAMILIES", "ladder", "engine_ladder",
           "EPS_LADDER", "eps_ladder", "eps_ladder_P", "boundary_grid",
           "BOUNDARY_DELTAS", "first_step", "boundary_rung", "boundary_table",
           "CROSSING_EXTENSION", "crossing_rung", "crossing_table", "mae_config",
           "family_config", "max_steps", "mae_run", "rung_summary", "ladder_table",
           "eps_table", "stop_reached", "family_sizes", "figure_config"]



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
    target = own_attention_target(C, cfg.model.gamma)
    rows: list[dict] = []
    for step, rec, ev in gd_steps(cfg, max_steps(P, C, eps_rel) if steps is None else int(steps)):
        rows.append({"step": step, **rec, "neglect": getattr(ev, "neglect", math.nan)})
        if not np.isfinite(rec["loss"]) or (steps is None and stop_reached(rows, target, eps_rel)):
            break
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
    cells = [(fam, P, *family_sizes(fam, P)) for fam in fams for P in Ps]
    return point_table(f"{__name__}:rung_summary", [
        dict(fam=fam, P=P, C1=C1, C=C, engine=engine, mask_keys=mask_keys, z_law=z_law,
             eps_rel=eps_rel) for fam, P, C1, C in cells])


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
    r = read_phases(pd.DataFrame([{"step": step, **rec} for step, rec, _ in gd_steps(cfg, 1)]),
                    cfg)
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
    from ..data import sizes_for_gap

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

    at = {"kind": "boundary", "delta_target": math.nan, "P": P, "C": C}
    if present(k_lo) and not present(k_hi):
        while k_hi - k_lo > 1:
            mid = (k_lo + k_hi) // 2
            if present(mid):
                k_lo = mid
            else:
                k_hi = mid
        a, b = hit[k_hi], hit[k_lo]  # a: no Phase I, b: Phase I
        rows.append({**at, "C1": b["C1"], "delta": 0.5 * (a["delta"] + b["delta"]),
                     "delta_b_halfwidth": 0.5 * (b["delta"] - a["delta"]),
                     "phase_I": True, "ratio": b["ratio"]})
    else:
        rows.append({**at, "delta": math.nan, "delta_b_halfwidth": math.nan, "phase_I": False,
                     "ratio": math.nan})
    out = pd.DataFrame(rows)
    out["mask_keys"], out["z_law"] = mask_keys, z_law
    return out


def boundary_table(quick: bool, *, mask_keys: bool = True, z_law: str = "uniform"):
    """[`boundary_rung`][] at every P of [`boundary_grid`][] (sweep points)."""
    return point_table(f"{__name__}:boundary_rung", [
        dict(P=P, mask_keys=mask_keys, z_law=z_law) for P in boundary_grid(quick)[0]])


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
    prev = None
    t_I, row = math.nan, None
    for step, row, _ in gd_steps(cfg, max_steps(P, C)):
        if prev is not None and (row["phi_own_lq"] - prev["phi_own_lq"]
                                 >= -(row["phi_glob_lq"] - prev["phi_glob_lq"])):
            t_I = float(step)
            break
        prev = row
    done = math.isfinite(t_I)
    return pd.DataFrame([{
        "family": fam, "P": P, "C1": C1, "C": C, "delta": cfg.delta, "mask_keys": mask_keys,
        "z_law": z_law, "t_I": t_I,
        "phi_glob_end_I": float(row["phi_glob_lq"]) if done else math.nan,
        "attn_glob_end_I": float(row["attn_glob_lq"]) if done else math.nan}])


def crossing_table(quick: bool, *, mask_keys: bool = True, z_law: str = "uniform"):
    """[`crossing_rung`][] of the Δ > 0 family at every P = n⁴ of [`CROSSING_EXTENSION`][]
    (sweep points; none in quick mode)."""
    if quick:
        return pd.DataFrame(columns=["family", "P", "C1", "C", "delta", "mask_keys", "z_law",
                                     "t_I", "phi_glob_end_I", "attn_glob_end_I"])
    return point_table(f"{__name__}:crossing_rung", [
        dict(fam="pos", P=n ** 4, mask_keys=mask_keys, z_law=z_law)
        for n in CROSSING_EXTENSION])


# -- the figures' MAE config --------------------------------------------------------------------
def figure_config(P: int, C1: int, C: int, *, gamma: float = 0.5, steps: int | None = None,
                  areas: str = "contiguous", K: int = 1) -> ExperimentConfig:
    """The notes' §9 setting at (P, C1, C) with masking probability γ, η = η_q·P, every step
    recorded, exact population GD (``population-laplace``); `steps` as in [`mae_config`][]."""
    cfg = mae_config(P, C1, C, steps=steps, gamma=gamma)
    return cfg.replace(data={"areas": areas, "K": K})
