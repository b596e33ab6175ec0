"""The reduced population dynamics of an MAE config (Phase I and Phase II, DERIVED): the
prediction that the exact engines' phase readings are compared with in the derivation checks.

The dynamics are those of the ``population-reduced`` engine
(`theorylab.huang2024.engines._reduced`: seven numbers per query class, the rest areas in
mean field, neglected order √v recorded as ``neglect``), with every count summed exactly
(``train.count_nodes = 0``), the config's step size and the ladders' stopping rule
([`stop_reached`][theorylab.huang2024.phases.stop_reached]). Derivation: docs/papers/
huang2024.md §4.5; the exchangeability is checked in
proofs_checks/huang2024/check_exchangeable.py and the gradient in
proofs_checks/huang2024/check_reduced_dynamics.py.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from ..config import ExperimentConfig
from ..engines import make_engine
from ..phases import EPS_REL, own_attention_target, read_phases, stop_reached

__all__ = ["gd_steps", "reduced_gd", "phase_one_prediction"]


def gd_steps(cfg: ExperimentConfig, cap: int):
    """Population GD from Q⁰ = 0 with `cfg`'s engine: yields (step, recorded row, evaluation)
    at steps 0 … `cap`, stepping after each yield but the last (stop early by leaving the
    loop)."""
    eng = make_engine(cfg)
    params = eng.initial_params()
    for step in range(cap + 1):
        ev = eng.evaluate(params, step, need_grad=step < cap, record=True)
        yield step, eng.record(params, step, ev), ev
        if step < cap:
            params = eng.apply(params, ev.grads)


def reduced_gd(cfg: ExperimentConfig, max_steps: int, eps_rel: float = EPS_REL) -> pd.DataFrame:
    """Population GD on the reduced state of `cfg` from Q⁰ = 0 with its step size η (exact
    count sums): one row per step with the engines' trajectory columns, ``rest_var`` (v, the
    relative variance the mean-field rest neglects; ``neglect`` = √v) and ``rel_excess``;
    stopped by the ladders' rule or at `max_steps`. Needs one cluster, Bernoulli masks,
    loss_norm 'P' or 'none' and Q⁰ = 0 (else ``ValueError`` naming the field). A run longer
    than a few seconds says, two seconds in, how long it will take at most
    ([`Progress`][theorylab.core.cost.Progress])."""
    from theorylab.core.cost import Progress

    cfg = cfg.resolved().replace(train={"engine": "population-reduced", "count_nodes": 0})
    target = own_attention_target(int(cfg.data.C), float(cfg.model.gamma))
    rows: list[dict] = []
    progress = Progress("predictions.reduced_gd", max_steps + 1)
    for step, rec, ev in gd_steps(cfg, max_steps):
        progress.tick()
        rows.append({"step": step, **rec, "neglect": ev.neglect, "rest_var": ev.neglect ** 2})
        if stop_reached(rows, target, eps_rel):
            break
    progress.close()
    tr = pd.DataFrame(rows)
    tr["rel_excess"] = tr.excess_loss / tr.excess_loss.iloc[0]
    return tr


def phase_one_prediction(cfg: ExperimentConfig, max_steps: int | None = None,
                         eps_rel: float = EPS_REL) -> dict:
    """The derived phase readings of an MAE config: [`reduced_gd`][] read by
    [`phase_readings`][theorylab.huang2024.phases.phase_readings] (``phase_I``, ``t_I``,
    ``phi_glob_end_I``, ``t_II``, ``T_star``, ...) with ``neglect``, the largest √v along the
    run; NaN where the run did not get there.

    **Arguments:**

    - `cfg`: an MAE config the reduction covers; its ``train.lr`` is the step size η.
    - `max_steps`: the step cap (default ``cfg.train.steps`` when positive, else
      40 (P/C)/η_q + 40 with η_q = η/P).
    - `eps_rel`: the relative excess loss that defines T*."""
    P, C = int(cfg.data.P), int(cfg.data.local_size)
    if max_steps is None:
        eta_q = float(cfg.train.lr) / P
        max_steps = int(cfg.train.steps) if cfg.train.steps > 0 else \
            int(math.ceil(40 * (P / C) / max(eta_q, 1e-12))) + 40
    tr = reduced_gd(cfg, max_steps, eps_rel)
    out = read_phases(tr, cfg, eps_rel=eps_rel)
    out["neglect"] = float(np.nanmax(tr.neglect))
    return out
