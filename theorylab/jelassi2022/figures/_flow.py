"""Gradient descent beside gradient flow on the exact population risk (``jelassi2022-flow``):
the same config at several step sizes η and its gradient flow, against continuous time
t = η·step, and the GD-to-flow gap against η (Euler's order 1)."""

from __future__ import annotations

import math

import numpy as np

from theorylab.core.figures import FigureContext, FigureResult, new_figure, register
from theorylab.core.figures.axes import style_axes

from ..config import PAPER_NAME
from ..phases import pa_target, read_phases
from ..setups import reference_config
from ..trainer import run_experiment

__all__ = ["flow"]

#: (horizon in time units, step sizes η; each a power-of-two multiple of the last, so every
#: GD record lies on the flow's clock) of the full and the quick render.
FULL = (300.0, (0.6, 0.3, 0.15, 0.075))
QUICK = (150.0, (0.6, 0.3, 0.15))
#: The quantities compared (the gap is the largest |GD − flow| over them and the records).
COMPARED = ("alpha", "gamma", "rho")

FLOW_CAPTION = (
    "Exact population gradient descent (exchangeable engine) in the Figure 4 setting of notes "
    "§9 (D = 10, C = 2, d = 100, cubic σ, temperature 1, value_scale 1, v⁰ = 0.01·w*, "
    "A⁰ = 0; RECONSTRUCTED as in jelassi2022-phases) with step sizes η (lr_v = lr_A = η), "
    "and the gradient flow dθ/dt = −∇L(θ) of the same config (DOP853, rtol 1e-9, atol 1e-12; "
    "train.mode = \"flow\"), all to the same time T and drawn against t = η·step. Left: α; "
    "middle: γ − ρ (the attention's partner-patch margin), with the patch-association time "
    "t_PA of each run (phases.phase_readings, in time units). Right: the largest "
    "|GD − flow| over α, γ, ρ at every GD record against η, on log-log axes, with the "
    "least-squares slope (Euler's method has global error of order η: slope 1, dotted).")


@register(
    "jelassi2022-flow",
    paper=PAPER_NAME,
    paper_figure="none (theorylab; gradient flow beside the paper's gradient descent)",
    title="Gradient descent at several step sizes beside the gradient flow, against time",
    caption=FLOW_CAPTION,
    data_source="synthetic: exact population risk of Assumption 1 (exchangeable engine)",
)
def flow(ctx: FigureContext) -> FigureResult:
    horizon, etas = QUICK if ctx.quick else FULL
    base = reference_config(record="all", steps=1)
    runs = {}
    for eta, mode in [*((e, "gd") for e in etas), (etas[-1], "flow")]:
        cfg = base.replace(train={"lr_v": eta, "lr_A": eta, "steps": int(round(horizon / eta)),
                                  "mode": mode})
        tr = run_experiment(cfg, progress=False).trajectory
        runs[eta if mode == "gd" else None] = (cfg, tr, tr.step.to_numpy(dtype=float) * eta)
    flow_cfg, flow_tr, flow_t = runs[None]
    gaps = {}
    for eta in etas:
        _, tr, t = runs[eta]
        at = np.searchsorted(flow_t, t)
        gaps[eta] = float(np.max(np.abs(tr[list(COMPARED)].to_numpy(dtype=float)
                                        - flow_tr[list(COMPARED)].to_numpy(dtype=float)[at])))
    slope = float(np.polyfit(np.log(list(gaps)), np.log(list(gaps.values())), 1)[0])

    fig = new_figure((12.0, 3.8))
    ax1, ax2, ax3 = fig.subplots(1, 3)
    target = pa_target(flow_cfg)
    readings = {}
    for i, eta in enumerate((*etas, None)):
        cfg, tr, t = runs[eta]
        step = float(t[1] - t[0]) if len(t) > 1 else 1.0
        label = "gradient flow" if eta is None else f"GD, η = {eta:g}"
        style = {"color": "k", "lw": 2.0, "ls": "--"} if eta is None else {
            "color": f"C{i}", "lw": 1.0}
        ax1.plot(t, tr.alpha.to_numpy(dtype=float), label=label, **style)
        ax2.plot(t, (tr.gamma - tr.rho).to_numpy(dtype=float), label=label, **style)
        r = read_phases(tr, cfg, target_error=target)
        readings["flow" if eta is None else f"gd_eta_{eta:g}"] = {
            k: (r[k] * step if math.isfinite(r[k]) else None) for k in ("t_I", "t_PA")}
        if math.isfinite(r["t_PA"]):
            ax2.axvline(r["t_PA"] * step, color=style["color"], lw=0.7, ls=":")
    style_axes(ax1, "time t = η·step", "α = ⟨v, w*⟩", "α against time", legend=7)
    style_axes(ax2, "time t = η·step", "γ − ρ", "γ − ρ against time (dotted: t_PA)")
    x = np.array(list(gaps))
    ax3.loglog(x, list(gaps.values()), "o-", color="C3", label=f"measured, slope {slope:.3f}")
    ax3.loglog(x, gaps[etas[-1]] * x / etas[-1], ":", color="k", label="order η (slope 1)")
    style_axes(ax3, "step size η", "max |GD − flow| over α, γ, ρ",
               f"GD-to-flow gap up to T = {horizon:g}", legend=7)
    headline = {"horizon": horizon, "gaps": {f"{k:g}": v for k, v in gaps.items()},
                "slope": slope, "phase_times_in_time_units": readings}
    return FigureResult(fig, headline=headline, settings=flow_cfg.resolved().to_dict(),
                        reading=[f"GD-to-flow gap up to T = {horizon:g}: slope {slope:.3f} in "
                                 f"η on log-log axes (Euler's order: 1)."])
