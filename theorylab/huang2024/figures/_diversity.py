"""Figure 3 of Huang et al. (2025), offline analogue: attention diversity of MAE- and
CL-trained attention maps across the information gap Δ (synthetic model), and of the last
layer of the small real ViTs. Registered id: ``huang2024-fig3``."""

from __future__ import annotations

import math

import numpy as np

from theorylab.core.figures import FigureContext, FigureResult, new_figure, register
from theorylab.core.figures.axes import style_axes
from theorylab.vision.imagedata import QUICK_STAND_IN_NOTE

from ..config import PAPER_NAME
from ..data import information_gap
from ..diversity import (
    mean_attention_distance,
    normalized_mutual_information,
    sharpness_decomposition,
)
from ..realvit import (
    ORIENTED,
    cached_realvit,
    head_average,
    oriented_differences,
    seed_summary,
    t_interval,
)
from ._cl import CL_NEGATIVES, CL_STEPS, pair_run
from ._common import ETA_Q, expected_attention, fmt, trained_run
from ._dynamics import pd_grid
from ._realvit import COLORS, LABELS, head_panel, trajectory_panel

__all__ = ["fig3", "diversity_metrics", "own_area_map", "idealised_mae_diverse"]


#: GD steps of the trained models (T* ≈ 50 at P = 64 in the claim checks).
FIG3_STEPS = 100


def diversity_metrics(maps: np.ndarray) -> dict[str, tuple[float, float]]:
    """Mean and standard error over the maps (n, P, P) of the geometric NMI, the mean
    attention distance and the three parts of the sharpness decomposition."""
    sh = sharpness_decomposition(maps)
    vals = {"nmi": normalized_mutual_information(maps), "distance": mean_attention_distance(maps),
            "total": sh.total, "shared": sh.shared, "diverse": sh.diverse}
    n = maps.shape[0]
    return {k: (float(np.mean(v)), float(np.std(v, ddof=1) / math.sqrt(n)) if n > 1 else 0.0)
            for k, v in vals.items()}


def own_area_map(labels: np.ndarray) -> np.ndarray:
    """The idealised MAE end state of notes §5.4: every query attends its whole own area
    uniformly."""
    same = labels[:, None] == labels[None, :]
    return same / same.sum(axis=1, keepdims=True)


def idealised_mae_diverse(P: int, C1: int, C: int) -> float:
    """Notes §5.4 (DERIVED): NMI = diverse = 1 − (C1/P)κ_s − (1 − C1/P)κ_c for own-area
    attention."""
    ks, kc = math.log(C1) / math.log(P), math.log(C) / math.log(P)
    return 1 - (C1 / P) * ks - (1 - C1 / P) * kc


FIG3_CAPTION = (
    "Attention diversity of MAE and CL: an offline analogue of Huang et al. (2025), Figure 3, "
    "whose metric and values could not be read (docs/papers/huang2024.md §5.1); the metrics "
    "are those of theorylab.huang2024.diversity (§5.2): the geometric normalised mutual "
    "information of Park et al. (ICLR 2023) between query and key, the mean attention "
    "distance on the grid, and theorylab's sharpness decomposition total = shared + diverse "
    "(DERIVED). Panels 1–3, synthetic model across Δ (RECONSTRUCTED, §1–§3): MAE by exact "
    "population GD (population-laplace) from Q⁰ = 0 with P = 64 (8×8 grid), one cluster, "
    "contiguous areas, local areas of C = 4 and global areas of C1 = 8 … 60 patches (Δ from "
    "−0.33 to +0.64), γ = 0.5, 100 steps with η = 2P, otherwise the notes' §9 setting; CL by "
    "cl-montecarlo (InfoNCE on two masked views, τ = 0.1, 7 negatives where the Theorem 4.4 "
    "check uses 15, mean pooling, K = 4 clusters, otherwise that check's setting) from Q⁰ = 0 "
    "on the same sizes, 150 steps. Maps: "
    "row q is the attention of query q when q is masked and the other patches are masked as "
    "in one draw (masked keys kept); metrics are averaged over Monte Carlo draws of "
    "coefficients and masks (bars: ± 2 standard errors). Dashed: the idealised MAE end state of "
    "§5.4 (every query attends its whole own area uniformly; DERIVED); thin dotted red: the "
    "collapse index 1 − κ_s of the idealised CL end state (every query on the global area); "
    "dotted grey: uniform attention (Q⁰ = 0). Panel 4 and the two lower rows, real images: "
    "the small ViTs of theorylab.huang2024.realvit (no CLS token, learned relative-position "
    "bias, three seeds batched in one model) trained by MAE and by CL from the same local "
    "start (every head of every layer on a Gaussian window of σ = 1 patch) with the same "
    "views of uncentred Fashion-MNIST items (14×14 at random offsets on a 28×28 canvas), "
    "measured on held-out images with MAE's encoder on unmasked inputs. Panel 4: the last "
    "layer's head means (the metric of each head, then averaged) of NMI, focus, shared and "
    "diverse focus and the JS divergence from the start, beside the untrained encoder, the "
    "start and uniform attention. Middle row: NMI per layer and head (dots: seeds; bars: "
    "mean over seeds with its 95 % t-interval; dotted: uniform attention) and, right, the "
    "last layer's NMI during training. Bottom row: the same for the mean attention distance "
    "(uniform attention: dotted). A setting of ours, not the paper's ImageNet ViT-B/16. "
    "What was decided: the claim realvit-diversity judges whether CL's last layer ends more "
    "global than MAE's (larger distance, smaller NMI) and moved further from the start; the "
    "figure's titles give the three oriented last-layer differences with their intervals, "
    "and the verdict with its premises is on the claim's page."
) + QUICK_STAND_IN_NOTE


SYNTHETIC = ("synthetic: one-layer MAE (population-laplace) and CL (cl-montecarlo) on Def. 2.1 "
             "data")


@register(
    "huang2024-fig3",
    paper=PAPER_NAME,
    paper_figure="Figure 3 (offline analogue: synthetic MAE and CL, real ViTs)",
    title="Attention diversity of MAE vs CL across Δ, and per layer and head of real ViTs "
    "trained from the same local start",
    caption=FIG3_CAPTION,
    data_source=f"{SYNTHETIC}; real: Fashion-MNIST (Debian package dataset-fashion-mnist)",
)
def fig3(ctx: FigureContext) -> FigureResult:
    P, C, C1s, _, _ = pd_grid(ctx.quick)
    steps = 20 if ctx.quick else FIG3_STEPS
    gamma = 0.5
    n = 16 if ctx.quick else 64
    deltas = np.array([information_gap(P, c1, C) for c1 in C1s])
    keys = ("nmi", "distance", "total", "shared", "diverse")
    cl_steps = 20 if ctx.quick else CL_STEPS
    rows, final_own = [], []  # per C1: the metrics of trained MAE, idealised MAE, trained CL
    for i, c1 in enumerate(ctx.tqdm(C1s, desc="fig3")):
        run = trained_run(P, c1, C, gamma, steps, "contiguous")
        maps, _ = expected_attention(run, n_samples=n, seed=ctx.seed + i)
        cl_maps, _ = expected_attention(pair_run(P, c1, C, gamma, cl_steps, True), n_samples=n,
                                        seed=ctx.seed + i)
        rows.append((diversity_metrics(maps),
                     diversity_metrics(own_area_map(run.structure.labels[0])[None]),
                     diversity_metrics(cl_maps)))
        final_own.append(float(run.trajectory.attn_own_lq.iloc[-1]))
    # {metric: (C1, 2) array of mean and standard error} per kind of map
    meas, ideal, cl_meas = ({k: np.array([r[w][k] for r in rows]) for k in keys} for w in range(3))
    ideal = {k: v[:, 0] for k, v in ideal.items()}
    formula = np.array([idealised_mae_diverse(P, c1, C) for c1 in C1s])
    final_own = np.array(final_own)
    uniform = np.full((1, P, P), 1.0 / P)
    uni_dist = float(mean_attention_distance(uniform)[0])
    ks = np.array([math.log(c1) / math.log(P) for c1 in C1s])

    fig = new_figure((17.0, 11.5))
    grid = fig.subplots(3, 4)
    ax1, ax2, ax3, ax4 = grid[0]

    def curve(ax, k, color, label, src=meas, marker="o", ls="-"):
        ax.errorbar(deltas, src[k][:, 0], yerr=2 * src[k][:, 1], color=color, marker=marker,
                    ms=3, capsize=2, label=label, ls=ls)

    for ax, k, note, ref, ref_label in (
            (ax1, "nmi", ", §5.4", 0, "uniform (Q⁰ = 0)"),
            (ax3, "distance", "", uni_dist, f"uniform (Q⁰ = 0): {uni_dist:.2f}")):
        curve(ax, k, "C0", "MAE, trained")
        curve(ax, k, "C3", "CL, trained", cl_meas, "s", "-.")
        ax.plot(deltas, ideal[k], color="C0", ls="--", label=f"MAE idealised (own area{note})")
        ax.axhline(ref, color="0.5", ls=":", label=ref_label)
    for k, c in (("total", "C2"), ("shared", "C3"), ("diverse", "C0")):
        curve(ax2, k, c, f"{k} (trained)")
        ax2.plot(deltas, ideal[k], color=c, ls="--", lw=0.9)
    for k, c in (("shared", "C3"), ("diverse", "C0")):
        curve(ax2, k, c, f"{k} (CL)", cl_meas, "s", "-.")
    ax2.plot(deltas, 1 - ks, color="C3", ls=":", lw=0.9, label="CL idealised shared 1 − κ_s")
    for ax, y, title in ((ax1, "NMI (geometric)", "normalised mutual information"),
                         (ax2, "fraction of log P",
                          "sharpness: total = shared + diverse (dashed: idealised MAE)"),
                         (ax3, "mean attention distance (patches)", "mean attention distance")):
        style_axes(ax, f"Δ (P = {P}, C = {C}, C1 = {C1s[0]}…{C1s[-1]})", y, title, legend=6)
    real = cached_realvit(ctx.quick, stand_in=ctx.quick)
    avg = head_average(real.table, layer=-1)
    real_mean, real_iv = {}, {}
    real_keys = ("nmi", "total", "shared", "diverse", "js_start")
    summ = seed_summary(real.table, layer=-1, metrics=real_keys).set_index(["model", "metric"])
    models = ("untrained", "initial", "mae", "cl", "uniform")
    for i, name in enumerate(models):
        sub = avg[avg.model == name]
        for j, m in enumerate(real_keys):
            x = j + (i - 2) * 0.16
            mean, lo, hi = summ.loc[(name, m), ["mean", "lo", "hi"]].astype(float)
            err = ([[mean - lo], [hi - mean]] if math.isfinite(lo) else None)
            ax4.bar(x, mean, width=0.15, color=COLORS[name], yerr=err, capsize=2,
                    label=LABELS[name] if j == 0 else None)
            ax4.scatter(np.full(len(sub), x), sub[m], color="k", s=6, zorder=3)
            real_iv[f"{name} {m}"] = (mean, lo, hi)
        real_mean[name] = {m: float(sub[m].mean()) for m in (*real_keys, "distance_patches")}
    last = int(real.table.layer.max())
    layers = sorted(set(real.table.layer))
    decided = {name: t_interval(oriented_differences(real.table, name)) for name in ORIENTED}
    for row, metric in ((1, "nmi"), (2, "distance_patches")):
        for c in range(3):
            ax = grid[row, c]
            if c < len(layers):
                head_panel(ax, real.table, layers[c], metric, legend=(c == 0))
                style_axes(ax, title=f"real ViTs, layer {layers[c]}" + (
                    " (last)" if layers[c] == last else ""), title_size=9,
                    legend=6 if c == 0 else None)
            else:
                ax.axis("off")
        ax = grid[row, 3]
        trajectory_panel(ax, real.trajectory, metric, last, legend=True,
                         reference=(real_mean["uniform"]["distance_patches"]
                                    if metric == "distance_patches" else 0.0))
        m, lo, hi = decided["distance" if metric == "distance_patches" else "nmi"]
        what = "CL − MAE distance" if metric == "distance_patches" else "MAE − CL NMI"
        unit = " × uniform's" if metric == "distance_patches" else ""
        style_axes(ax, title=f"layer {last} during training\nend: {what} {m:+.3f} "
                   f"[{lo:+.3f}, {hi:+.3f}]{unit}", title_size=7, legend=6)
    ax4.axhline(0.0, color="0.5", ls=":", lw=0.8)
    ax4.set_xticks(range(len(real_keys)), ["NMI", "focus", "shared", "diverse", "JS from start"])
    m, lo, hi = decided["moved"]
    style_axes(ax4, title=f"real ViTs, last layer (seeds {list(real.config.seeds)})\nCL − MAE "
               f"JS from the start {m:+.3f} [{lo:+.3f}, {hi:+.3f}]", title_size=8, legend=6)
    resid = np.abs(meas["total"][:, 0] - meas["shared"][:, 0] - meas["diverse"][:, 0])
    headline = {
        "delta": deltas.tolist(), "C1": list(C1s),
        **{f"{k}": meas[k][:, 0].tolist() for k in keys},
        **{f"{k}_se": meas[k][:, 1].tolist() for k in keys},
        **{f"idealised_{k}": ideal[k].tolist() for k in keys},
        "idealised_diverse_formula": formula.tolist(),
        "cl_idealised_shared_formula": (1 - ks).tolist(),
        **{f"cl_{k}": cl_meas[k][:, 0].tolist() for k in keys},
        **{f"cl_{k}_se": cl_meas[k][:, 1].tolist() for k in keys},
        "real": real_mean,
        "real_interval": {k: list(v) for k, v in real_iv.items()},
        "real_last_layer_oriented_cl_minus_mae": {k: list(v) for k, v in decided.items()},
        "uniform_distance": uni_dist,
        "final_attn_own_lq": final_own.tolist(),
        "max_decomposition_residual": float(resid.max()),
    }
    lo, hi = int(np.argmin(meas["nmi"][:, 0])), int(np.argmax(meas["nmi"][:, 0]))
    reading = [
        f"NMI of the trained MAE maps ranges from {meas['nmi'][lo, 0]:.3f} (Δ = "
        f"{deltas[lo]:+.2f}) to {meas['nmi'][hi, 0]:.3f} (Δ = {deltas[hi]:+.2f}), against "
        f"{ideal['nmi'].min():.3f}–{ideal['nmi'].max():.3f} for the idealised own-area maps; "
        "uniform attention gives 0.",
        "Sharpness (total / shared / diverse) at the smallest and largest Δ: "
        f"{meas['total'][0, 0]:.3f} / {meas['shared'][0, 0]:.3f} / {meas['diverse'][0, 0]:.3f} "
        f"and {meas['total'][-1, 0]:.3f} / {meas['shared'][-1, 0]:.3f} / "
        f"{meas['diverse'][-1, 0]:.3f}; the idealised CL collapse would have shared = total = "
        f"{1 - ks[0]:.3f} … {1 - ks[-1]:.3f} and diverse 0.",
        "CL, trained (same Δ order): NMI " + ", ".join(f"{v:.3f}" for v in cl_meas["nmi"][:, 0])
        + "; shared " + ", ".join(f"{v:.3f}" for v in cl_meas["shared"][:, 0])
        + "; diverse " + ", ".join(f"{v:.3f}" for v in cl_meas["diverse"][:, 0])
        + "; distance " + ", ".join(f"{v:.2f}" for v in cl_meas["distance"][:, 0]) + ".",
        "Real ViTs (last layer, head means, mean over seeds): " + "; ".join(
            f"{name}: NMI {v['nmi']:.4f}, focus {v['total']:.4f}, shared {v['shared']:.4f}, "
            f"diverse {v['diverse']:.4f}, JS from the start {v['js_start']:.4f}, distance "
            f"{v['distance_patches']:.2f} patches" for name, v in real_mean.items())
        + "; oriented last-layer differences (positive: CL more global), mean [95 % "
        "t-interval] over seeds: " + ", ".join(
            f"{k} {m:+.4f} [{lo:+.4f}, {hi:+.4f}]" for k, (m, lo, hi) in decided.items())
        + " (distance in units of uniform attention's, NMI as MAE − CL, JS from the start "
        "in units of ln 2).",
        f"Mean attention distance {meas['distance'][:, 0].min():.2f}–"
        f"{meas['distance'][:, 0].max():.2f} patches, against {uni_dist:.2f} for uniform "
        f"attention and {fmt(float(ideal['distance'].min()))}–"
        f"{fmt(float(ideal['distance'].max()))} for the idealised own-area maps.",
        f"Final own-area attention of masked local queries after {steps} steps: "
        + ", ".join(f"{a:.2f}" for a in final_own) + f" (C1 = {list(C1s)}).",
    ]
    settings = {"P": P, "C": C, "C1": list(C1s), "gamma": gamma, "steps": steps, "eta_q": ETA_Q,
                "areas": "contiguous", "mc_draws": n, "seed": ctx.seed,
                "nmi_normalization": "geometric", "query_weights": "uniform",
                "cl_steps": cl_steps, "cl_negatives": CL_NEGATIVES,
                "realvit": real.config.as_dict()}
    stand_in = None if real.data == "fashion-mnist" else f"{SYNTHETIC}; real: {real.description}"
    return FigureResult(fig, headline=headline, settings=settings, reading=reading,
                        data_source=stand_in)
