"""The CL side of the huang2024 figures: cached CL runs of the synthetic model and
``huang2024-fig1`` (attention maps of two query positions, MAE against CL, synthetic model and
the real ViTs of [`theorylab.huang2024.realvit`][]).

Synthetic CL runs use the setting of the Theorem 4.4 check
([`theorylab.huang2024.setups.pair_config`][]: ``cl-montecarlo``, InfoNCE on two independently
masked views, mean pooling, τ = 0.1, ``CL_NEGATIVES`` negatives, K = 4 clusters, Monte Carlo
batches of 16, η ∝ P) with contiguous areas, from Q⁰ = 0. The model, its CL objective and the
data are RECONSTRUCTED (docs/papers/huang2024.md §1–§3).
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from theorylab.core.figures import FigureContext, FigureResult, new_figure, register
from theorylab.core.figures.axes import image_axes
from theorylab.vision.imagedata import QUICK_STAND_IN_NOTE

from ..config import PAPER_NAME
from ..realvit import cached_realvit
from ..setups import ATTN_TOL, pair_config
from ..trainer import RunResult, run_experiment
from ._common import draw_areas, expected_attention, grid_of

__all__ = ["CL_NEGATIVES", "CL_STEPS", "pair_run", "cl_collapses", "end_mean", "fig1"]

#: Negatives of the figures' CL runs (the Theorem 4.4 check uses 15: every other image of its
#: batch of 16; the captions say so).
CL_NEGATIVES = 7
#: GD steps of the figures' CL runs (the Theorem 4.4 check's CL plateau is reached within
#: ~20 steps; 150 leave a long plateau).
CL_STEPS = 150


@lru_cache(maxsize=64)
def pair_run(P: int, C1: int, C: int, gamma: float, steps: int, cl: bool,
             linear_records: int | None = None) -> RunResult:
    """The CL run (``cl = True``) or the MAE run (``population-montecarlo``) of the Theorem
    4.4 setting at (P, C1, C) with masking probability γ and contiguous areas (cached);
    `linear_records`: that many linearly spaced readings instead of the setting's."""
    cfg = pair_config(P, C1, C, steps, CL_NEGATIVES if cl else None)
    train = {} if linear_records is None else {"record": "linear", "n_records": linear_records}
    cfg = cfg.replace(data={"areas": "contiguous"}, model={"gamma": gamma}, train=train)
    return run_experiment(cfg.resolved(), progress=False)


def cl_collapses(run: RunResult, mae_glob_end: float, tol: float = ATTN_TOL) -> bool:
    """CL's global collapse as in the Theorem 4.4 check: the global attention of masked local
    queries rose by more than ``tol`` from its start and ends more than ``tol`` above MAE's
    (end values: means over the last fifth of the steps)."""
    end, start = end_mean(run.trajectory), run.trajectory.attn_glob_lq.iloc[0]
    return bool(end - start > tol and end - mae_glob_end > tol)


def end_mean(tr, column: str = "attn_glob_lq") -> float:
    """Mean of `column` of a trajectory over the last fifth of its steps (an end value of the
    Theorem 4.4 check)."""
    return float(tr[tr.step >= 0.8 * tr.step.iloc[-1]][column].mean())


def _fig1_sizes(quick: bool) -> tuple[int, int, int, int]:
    """(P, C1, C, steps) of the synthetic panels: the Theorem 4.4 check's Δ = 0 shape on an
    8×8 grid (quick: 4×4)."""
    return (16, 4, 2, 30) if quick else (64, 16, 4, CL_STEPS)


FIG1_CAPTION = (
    "Attention maps of two query patches, MAE against CL: the offline analogue of Huang et al. "
    "(2025), Figure 1 (pretrained ImageNet ViT-B/16 models there). Top row, synthetic model "
    "(RECONSTRUCTED, docs/papers/huang2024.md §1–§3): the one-layer ViT trained by MAE "
    "(population-montecarlo) and by CL (cl-montecarlo, InfoNCE on two masked views, τ = 0.1, "
    "7 negatives, where the Theorem 4.4 check uses 15) from Q⁰ = 0 on the same data (K = 4 "
    "clusters, contiguous areas on the grid, z ~ U[0.5, 1.5], Bernoulli(0.5) masks, otherwise "
    "the Theorem 4.4 check's setting); the map is the "
    "attention of the masked query patch (star) over the keys, averaged over Monte Carlo draws "
    "of coefficients and masks, cluster 0, with the areas outlined (thick: the global area). "
    "One query in a local area, one in the global area. Bottom row, real images: the last "
    "block of the small ViT of theorylab.huang2024.realvit trained by MAE and by CL from the "
    "same local start (seed 0) on uncentred Fashion-MNIST items (14×14 at random offsets "
    "on a 28×28 canvas), head-averaged attention of two query patches (star: one near the "
    "centre, one near a corner) on one held-out image. Each row has one colour scale, from 0 "
    "to the row's largest weight; the red mark on its colour bar is the uniform weight 1/P, "
    "so a panel whose colours all sit near the mark is near-uniform attention, however "
    "structured it looks. The setting of the real ViTs is ours, not the paper's; whether they "
    "reproduce the paper's local-MAE / global-CL contrast is read from the panel titles' "
    "largest weights against 1/P and judged by the claim realvit-diversity, not by eye."
) + QUICK_STAND_IN_NOTE


SYNTHETIC = "synthetic: Def. 2.1 data (RECONSTRUCTED)"


@register(
    "huang2024-fig1",
    paper=PAPER_NAME,
    paper_figure="Figure 1 (offline analogue)",
    title="Attention maps of two query patches, MAE vs CL (synthetic model and real ViTs)",
    caption=FIG1_CAPTION,
    data_source=f"{SYNTHETIC}; real: Fashion-MNIST (Debian package dataset-fashion-mnist)",
)
def fig1(ctx: FigureContext) -> FigureResult:
    P, C1, C, steps = _fig1_sizes(ctx.quick)
    runs = {name: pair_run(P, C1, C, 0.5, steps, name == "CL") for name in ("MAE", "CL")}
    lab = runs["MAE"].structure.labels[0]
    q_loc, q_glob = int(np.flatnonzero(lab != 0)[0]), int(np.flatnonzero(lab == 0)[-1])
    n = 16 if ctx.quick else 64
    syn = {name: expected_attention(r, n_samples=n, seed=ctx.seed)[0].mean(0)
           for name, r in runs.items()}
    real = cached_realvit(ctx.quick, stand_in=ctx.quick)
    seed = real.config.seeds[0]
    side = 28 // real.config.patch_size
    q_c, q_e = (side // 2) * side + side // 2, side + 1
    # the last layer, held-out image 0, averaged over the heads
    rmaps = {name.upper(): real.maps[(seed, name)][-1, 0].mean(0) for name in ("mae", "cl")}

    rows_syn = {(q, where, name): syn[name][q] for q, where in ((q_loc, "local"),
                                                                 (q_glob, "global"))
                for name in ("MAE", "CL")}
    rows_real = {(q, where, name): rmaps[name][q] for q, where in ((q_c, "centre"),
                                                                   (q_e, "corner"))
                 for name in ("MAE", "CL")}
    fig = new_figure((14.0, 6.4))
    axs = fig.subplots(2, 4)
    headline: dict[str, object] = {}
    # one colour scale per row, from 0 to the row's largest weight; 1/P marked on its bar
    vmax_syn = max(float(r.max()) for r in rows_syn.values())
    vmax_real = max(float(r.max()) for r in rows_real.values())
    for ax, ((q, where, name), row) in zip(axs[0], rows_syn.items()):
        im_syn = ax.imshow(grid_of(row), cmap="viridis", vmin=0.0, vmax=vmax_syn)
        draw_areas(ax, lab, color="w", lw=0.6, highlight={0: ("r", 2.0)})
        r, c = divmod(q, int(np.sqrt(P)))
        ax.plot(c, r, marker="*", color="w", ms=10, mec="k")
        own = float(row[lab == lab[q]].sum())
        glob = float(row[lab == 0].sum())
        ax.set_title(f"synthetic {name}, {where} query\nown area {own:.2f}, global "
                     f"{glob:.2f}", fontsize=8)
        headline[f"synthetic {name} {where} query: own-area mass"] = own
        headline[f"synthetic {name} {where} query: global-area mass"] = glob
    for ax, ((q, where, name), row) in zip(axs[1], rows_real.items()):
        im_real = ax.imshow(row.reshape(side, side), cmap="viridis", vmin=0.0, vmax=vmax_real)
        r, c = divmod(q, side)
        ax.plot(c, r, marker="*", color="w", ms=10, mec="k")
        ax.set_title(f"Fashion-MNIST ViT {name}, {where} query\nmax weight "
                     f"{row.max():.3f} (uniform {1 / side ** 2:.3f})", fontsize=8)
        headline[f"real {name} {where} query: max weight"] = float(row.max())
    for im, row_axs, n_keys, vmax, kind in ((im_syn, axs[0], P, vmax_syn, "synthetic"),
                                            (im_real, axs[1], side ** 2, vmax_real, "real")):
        bar = fig.colorbar(im, ax=list(row_axs), fraction=0.02, pad=0.01)
        bar.ax.axhline(1.0 / n_keys, color="r", lw=1.5)
        bar.set_label(f"attention weight (red: uniform 1/P = {1 / n_keys:.3f})", fontsize=7)
        bar.ax.tick_params(labelsize=6)
        headline[f"colour scale max ({kind} row)"] = vmax
        headline[f"uniform weight 1/P ({kind})"] = 1.0 / n_keys
    for ax in axs.ravel():
        image_axes(ax)
    reading = [
        f"Synthetic (P = {P}, C1 = {C1}, C = {C}, {steps} steps): the local query puts "
        f"{headline['synthetic MAE local query: own-area mass']:.2f} on its own area under MAE "
        f"and {headline['synthetic CL local query: own-area mass']:.2f} under CL, and "
        f"{headline['synthetic MAE local query: global-area mass']:.2f} (MAE) vs "
        f"{headline['synthetic CL local query: global-area mass']:.2f} (CL) on the global "
        "area.",
        "Real ViTs (seed 0, held-out image 0, last layer): the largest weight of the centre "
        f"query is {headline['real MAE centre query: max weight']:.3f} (MAE) vs "
        f"{headline['real CL centre query: max weight']:.3f} (CL), against "
        f"{1 / side ** 2:.3f} for uniform attention"
        + (" (both within a factor 2 of uniform: near-uniform maps)."
           if max(headline['real MAE centre query: max weight'],
                  headline['real CL centre query: max weight']) < 2 / side ** 2 else "."),
    ]
    settings = {"P": P, "C1": C1, "C": C, "steps": steps, "negatives": CL_NEGATIVES,
                "mc_draws": n, "queries_synthetic": [q_loc, q_glob],
                "queries_real": [q_c, q_e], "realvit": real.config.as_dict()}
    stand_in = None if real.data == "fashion-mnist" else f"{SYNTHETIC}; real: {real.description}"
    return FigureResult(fig, headline=headline, settings=settings, reading=reading,
                        data_source=stand_in)
