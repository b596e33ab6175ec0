"""A (q, C) phase diagram of exact population runs: patch association and the final gap to the
Bayes error (``jelassi2022-phase-diagram``; former id ``theorylab-phase-diagram``)."""

from __future__ import annotations

import numpy as np

from theorylab.core.figures import FigureContext, FigureResult, new_figure, register
from theorylab.core.figures.axes import style_axes
from theorylab.core.sweep import run_point, run_points

from ..config import PAPER_NAME
from ..data import bayes_error
from ..setups import REF_Q, line_config

__all__ = ["phase_diagram"]


PD_Q = (0.1, 0.2, 0.3, round(REF_Q, 4), 0.6, 0.8)
PD_C = (2, 3, 4)
PD_L = 4
PD_STEPS = 4000
PD_LR = 0.3
PD_GAP = 0.5

PD_CAPTION = (
    f"Where patch association emerges (theorylab, RECONSTRUCTED setting). Exact population GD "
    f"(exchangeable engine) for q ∈ {list(PD_Q)} and C ∈ {list(PD_C)} with L = {PD_L} sets "
    f"(D = {PD_L}·C, random partition), d = 100, cubic σ, temperature 1, value_scale 1, frozen "
    f"diagonal ln ln d, lr {PD_LR} (v and A), v⁰ = 0.01·w*, {PD_STEPS} steps "
    f"(L = 4 and lr 0.3 instead of Figure 4's L = 5 and lr 0.1 keep the full grid within a few "
    f"minutes). Left: γ − ρ at the last step; a "
    f"cell is marked 'PA' when patch association (Definition 2.2, Top_C of every row of A is the "
    f"own set) holds and γ − ρ ≥ {PD_GAP} (the attention has really moved; at this "
    f"initialisation any γ > ρ, however tiny, already passes Definition 2.2). Right: final exact "
    f"error (ties broken by a fair coin) minus the exact Bayes error."
)


def _pd_grid(quick: bool):
    if quick:
        return (0.2, round(REF_Q, 4)), (2, 3), 300
    return PD_Q, PD_C, PD_STEPS


@register(
    "jelassi2022-phase-diagram",
    aliases=("theorylab-phase-diagram",),
    paper=PAPER_NAME,
    paper_figure="none (theorylab)",
    title="Phase diagram over (q, C): patch association and final gap to the Bayes error",
    caption=PD_CAPTION,
    data_source="synthetic: exact population risk of Assumption 1 (exchangeable engine)",
)
def phase_diagram(ctx: FigureContext) -> FigureResult:
    qs, Cs, steps = _pd_grid(ctx.quick)
    gap = np.full((len(Cs), len(qs)), np.nan)
    excess = np.full_like(gap, np.nan)
    pa = np.zeros_like(gap, dtype=bool)
    runs = []
    # one sweep point per cell (theorylab.core.sweep): in this process by default; on a Dask
    # cluster and/or from a shared store with python -m theorylab figures --scheduler/--cache
    cells = [(i, j, C, q, line_config(PD_L * C, C, 100, q, seed=ctx.seed, steps=steps,
                                      lr_v=PD_LR, record="log", n_records=30))
             for i, C in enumerate(Cs) for j, q in enumerate(qs)]
    finals = run_points([run_point(PAPER_NAME, c.to_dict(), "final", {"C": C, "q": q})
                         for _, _, C, q, c in cells], progress=ctx.progress)
    for (i, j, C, q, cfg), final in zip(cells, finals):
        if final.status.iloc[0] != "ok":
            raise RuntimeError(f"phase diagram: the run at C = {C}, q = {q} "
                               f"{final.status.iloc[0]}: {final.message.iloc[0]}")
        last = final.iloc[-1]
        g = float(last["gamma"] - last["rho"])
        be = bayes_error(cfg.data.make_partition(), q)
        fe = float(final["error_fair"].iloc[-1])
        gap[i, j], excess[i, j] = g, fe - be
        pa[i, j] = bool(last["patch_association"]) and g >= PD_GAP
        runs.append({"C": C, "q": q, "gamma_minus_rho": g, "patch_association": pa[i, j],
                     "final_error_fair": fe, "bayes_error": be})

    import seaborn as sns

    fig = new_figure((11.0, 3.6))
    ax1, ax2 = fig.subplots(1, 2)
    ticks = {"xticklabels": [f"{q:g}" for q in qs],
             "yticklabels": [f"{C} (D={PD_L * C})" for C in Cs], "annot_kws": {"fontsize": 7}}
    annot = np.array([[f"{gap[i, j]:.2f}" + ("\nPA" if pa[i, j] else "") for j in range(len(qs))]
                      for i in range(len(Cs))])
    sns.heatmap(gap, ax=ax1, annot=annot, fmt="", cmap="mako",
                cbar_kws={"label": "γ − ρ (final)"}, **ticks)
    sns.heatmap(excess, ax=ax2, annot=True, fmt=".3f", cmap="rocket_r",
                cbar_kws={"label": "error − Bayes error"}, **ticks)
    for ax, t in ((ax1, f"γ − ρ after {steps} steps"), (ax2, "final error − Bayes error")):
        style_axes(ax, "q", f"C (L = {PD_L} sets)", t)
    headline = {
        "n_cells": int(gap.size),
        "n_patch_association": int(pa.sum()),
        "cells": runs,
    }
    settings = {"q": list(qs), "C": list(Cs), "L": PD_L, "d": 100, "steps": steps, "lr": PD_LR,
                "alpha0": 0.01, "temperature": 1.0, "value_scale": 1.0, "diag": "ln ln d",
                "activation": "cubic", "pa_gap_threshold": PD_GAP, "partition_seed": ctx.seed}
    return FigureResult(fig, headline=headline, settings=settings)
