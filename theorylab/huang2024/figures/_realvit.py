"""Panels of the real-image ViTs ([`theorylab.huang2024.realvit`][]), shared by the figure
huang2024-fig3 and the page of the claim realvit-diversity: per layer and head, each metric of
the MAE and CL encoders beside the references (untrained, the common start, uniform), with the
seeds as dots and the 95 % t-interval over seeds as bars; the trajectories of the last layer
during training; the loss curves against their plateau levels."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from theorylab.core.figures.axes import style_axes

from ..realvit import MODELS, t_interval

__all__ = ["COLORS", "LABELS", "METRIC_LABELS", "head_panel", "trajectory_panel",
           "loss_panel", "draw_layer_head_panels"]

#: Colour of each model in every real-image panel.
COLORS = {"untrained": "#8c8c8c", "initial": "#2ca02c", "mae": "#1f77b4", "cl": "#d62728",
          "mae_clviews": "#17becf", "cl_maeviews": "#ff7f0e", "uniform": "#9467bd"}
#: Legend labels.
LABELS = {"untrained": "untrained (from scratch)", "initial": "start (both)", "mae": "MAE",
          "cl": "CL", "mae_clviews": "MAE, CL's views", "cl_maeviews": "CL, MAE's views",
          "uniform": "uniform 1/P"}
#: Axis labels of the metrics.
METRIC_LABELS = {"distance_patches": "mean attention distance (patches)",
                 "nmi": "NMI (Park et al.)", "total": "focus 1 − H(K|Q)/log P",
                 "shared": "shared focus", "diverse": "diverse focus",
                 "js_start": "JS divergence from the start (ln 2)",
                 "head_js": "between-head JS divergence (ln 2)"}


def _iv(v: np.ndarray) -> tuple[float, float, float]:
    return t_interval(np.asarray(v, dtype=float))


def head_panel(ax, table: pd.DataFrame, layer: int, metric: str, *,
               models: tuple[str, ...] = MODELS, legend: bool = False) -> None:
    """One layer's `metric` per head (x = 0 … H − 1) and the head mean (x = H + ½): per model
    the mean over seeds with its 95 % t-interval, the seeds as dots; uniform attention as a
    dotted line (every head alike); the y axis labelled with the metric."""
    sub = table[table.layer == layer]
    heads = sorted(h for h in set(sub["head"]) if h >= 0)
    xs = {h: float(h) for h in heads}
    xs[-1] = len(heads) + 0.5
    shown = [m for m in models if m != "uniform" and (sub.model == m).any()]
    for i, model in enumerate(shown):
        g = sub[sub.model == model]
        dx = (i - (len(shown) - 1) / 2) * 0.16
        for h, x in xs.items():
            vals = g[g["head"] == h][metric].to_numpy(float)
            if not len(vals):
                continue
            m, lo, hi = _iv(vals)
            err = [[m - lo], [hi - m]] if math.isfinite(lo) else None
            ax.errorbar(x + dx, m, yerr=err, fmt="o", ms=3.5, capsize=2,
                        color=COLORS[model], label=LABELS[model] if (legend and h == -1)
                        else None)
            ax.scatter(np.full(len(vals), x + dx), vals, s=5, color="k", alpha=0.5, zorder=3)
    if "uniform" in models:
        u = sub[(sub.model == "uniform") & (sub["head"] == -1)][metric]
        if len(u) and np.isfinite(u).any():
            ax.axhline(float(u.mean()), color=COLORS["uniform"], ls=":", lw=1.2,
                       label=LABELS["uniform"] if legend else None)
    ax.axvline(len(heads) - 0.25, color="0.8", lw=0.8)
    ax.set_xticks([xs[h] for h in (*heads, -1)], [str(h) for h in heads] + ["mean"])
    ax.set_xlabel("head")
    ax.set_ylabel(METRIC_LABELS.get(metric, metric), fontsize=7)


def trajectory_panel(ax, trajectory: pd.DataFrame, metric: str, layer: int, *,
                     reference: float | None = None, legend: bool = False) -> None:
    """The head mean of `metric` in `layer` during training, of every trained arm (MAE, CL and
    the augmentation controls where run): mean over seeds with its 95 % t-interval (band);
    `reference`: a dotted line (uniform attention's value); the y axis labelled with the
    metric."""
    sub = trajectory[(trajectory.layer == layer) & (trajectory["head"] == -1)]
    for arm in [m for m in MODELS if (sub.model == m).any()]:
        g = sub[sub.model == arm]
        steps = sorted(set(g.step))
        ivs = np.array([_iv(g[g.step == t][metric]) for t in steps])
        if not len(steps):
            continue
        ax.plot(steps, ivs[:, 0], marker="o", ms=3, color=COLORS[arm],
                label=LABELS[arm] if legend else None)
        if np.isfinite(ivs[:, 1]).all():
            ax.fill_between(steps, ivs[:, 1], ivs[:, 2], color=COLORS[arm], alpha=0.2)
    if reference is not None:
        ax.axhline(reference, color=COLORS["uniform"], ls=":", lw=1.2,
                   label=LABELS["uniform"] if legend else None)
    ax.set_xlabel("optimiser step")
    ax.set_ylabel(METRIC_LABELS.get(metric, metric), fontsize=7)


def loss_panel(ax, curves: pd.DataFrame, levels: pd.DataFrame,
               max_ratio: float | None = None) -> None:
    """Every seed's loss curve divided by its plateau level (MAE: the mean-predictor MSE; CL:
    log B); `max_ratio`: the premise's line."""
    lev = levels.set_index("seed")
    for (seed, arm), g in curves.groupby(["seed", "model"]):
        col = "mae_mean_predictor" if arm.startswith("mae") else "cl_chance"
        if seed not in lev.index:
            continue
        g = g.sort_values("step")
        ax.plot(g.step, g.loss / float(lev.loc[seed, col]), color=COLORS[arm], lw=0.9)
    for arm in [m for m in MODELS if (curves.model == m).any()]:
        ax.plot([], [], color=COLORS[arm], label=f"{LABELS[arm]} loss / "
                + ("mean-predictor MSE" if arm.startswith("mae") else "log B"))
    ax.axhline(1.0, color="0.5", lw=0.8)
    if max_ratio is not None:
        ax.axhline(max_ratio, color="k", ls="--", lw=0.8, label=f"premise: ≤ {max_ratio:g}")
    style_axes(ax, "optimiser step", "loss / plateau level", "loss curves (every seed)",
               title_size=8, legend=6)


def draw_layer_head_panels(fig, table: pd.DataFrame, trajectory: pd.DataFrame,
                           curves: pd.DataFrame, levels: pd.DataFrame, cfg, *,
                           metrics: tuple[str, ...] = ("distance_patches", "nmi", "js_start",
                                                       "head_js"),
                           max_ratio: float | None = None) -> None:
    """The claim page's grid: one row per metric, one column per layer (per-head panels), and a
    last column with the last layer's trajectory of each metric (the loss curves in the last
    row)."""
    from ..realvit import uniform_distance

    layers = sorted(set(table.layer))
    axs = fig.subplots(len(metrics), len(layers) + 1, squeeze=False)
    last = layers[-1]
    for r, metric in enumerate(metrics):
        for c, layer in enumerate(layers):
            ax = axs[r, c]
            head_panel(ax, table, layer, metric, legend=(r == 0 and c == 0))
            if r == 0:
                ax.set_title(f"layer {layer}" + (" (last: judged)" if layer == last else ""),
                             fontsize=9)
        ax = axs[r, -1]
        if r == len(metrics) - 1:
            loss_panel(ax, curves, levels, max_ratio)
            continue
        ref = uniform_distance(cfg) if metric == "distance_patches" else (
            0.0 if metric == "nmi" else None)
        trajectory_panel(ax, trajectory, metric, last, reference=ref, legend=(r == 0))
        ax.set_title(f"layer {last} during training (head means)", fontsize=8)
    axs[0, 0].legend(fontsize=6)
    axs[0, -1].legend(fontsize=6)
