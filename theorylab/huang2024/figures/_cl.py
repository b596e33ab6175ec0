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
from theorylab.vision.imagedata import QUICK_STAND_IN_NOTE

from ..config import PAPER_NAME
from ..realvit import cached_realvit
from ..setups import ATTN_TOL, pair_config
from ..trainer import RunResult, run_experiment
from ._common import draw_areas, expected_attention, grid_of

__all__ = ["CL_NEGATIVES", "CL_STEPS", "cl_run", "pair_run", "cl_collapses", "fig1"]

#: Negatives of the figures' CL runs (the middle of the Theorem 4.4 check's range).
CL_NEGATIVES = 7
#: GD steps of the figures' CL runs (the Theorem 4.4 check's CL plateau is reached within
#: ~20 steps; 150 leave a long plateau).
CL_STEPS = 150


@lru_cache(maxsize=64)
def pair_run(P: int, C1: int, C: int, gamma: float, steps: int, cl: bool) -> RunResult:
    """The CL run (``cl = True``) or the MAE run (``population-montecarlo``) of the Theorem
    4.4 setting at (P, C1, C) with masking probability γ and contiguous areas (cached)."""
    cfg = pair_config(P, C1, C, steps, CL_NEGATIVES if cl else None)
    cfg = cfg.replace(data={"areas": "contiguous"}, model={"gamma": gamma}).resolved()
    return run_experiment(cfg, progress=False)


def cl_run(P: int, C1: int, C: int, gamma: float, steps: int) -> RunResult:
    """The CL run of [`pair_run`][]."""
    return pair_run(P, C1, C, gamma, steps, True)


def cl_collapses(run: RunResult, mae_glob_end: float, tol: float = ATTN_TOL) -> bool:
    """CL's global collapse as in the Theorem 4.4 check: the global attention of masked local
    queries rose by more than ``tol`` from its start and ends more than ``tol`` above MAE's
    (end values: means over the last fifth of the steps)."""
    tr = run.trajectory
    end = tr[tr.step >= 0.8 * tr.step.iloc[-1]].attn_glob_lq.mean()
    start = tr.attn_glob_lq.iloc[0]
    return bool(end - start > tol and end - mae_glob_end > tol)


def _fig1_sizes(quick: bool) -> tuple[int, int, int, int]:
    """(P, C1, C, steps) of the synthetic panels: the Theorem 4.4 check's Δ = 0 shape on an
    8×8 grid (quick: 4×4)."""
    return (16, 4, 2, 30) if quick else (64, 16, 4, CL_STEPS)


FIG1_CAPTION = (
    "Attention maps of two query patches, MAE against CL: the offline analogue of Huang et al. "
    "(2025), Figure 1 (pretrained ImageNet ViT-B/16 models there). Top row, synthetic model "
    "(RECONSTRUCTED, docs/papers/huang2024.md §1–§3): the one-layer ViT trained by MAE "
    "(population-montecarlo) and by CL (cl-montecarlo, InfoNCE on two masked views, τ = 0.1, "
    "7 negatives) from Q⁰ = 0 on the same data (K = 4 clusters, contiguous areas on the grid, "
    "z ~ U[0.5, 1.5], Bernoulli(0.5) masks, the Theorem 4.4 check's setting); the map is the "
    "attention of the masked query patch (star) over the keys, averaged over Monte Carlo draws "
    "of coefficients and masks, cluster 0, with the areas outlined (thick: the global area). "
    "One query in a local area, one in the global area. Bottom row, real images: the last "
    "block of the small ViT of theorylab.huang2024.realvit trained on Fashion-MNIST by MAE and "
    "by CL from the same initialisation (seed 0), head-averaged attention of two query patches "
    "(star: one near the centre, one near a corner) on one held-out image. The setting of the "
    "real ViTs is ours, not the paper's."
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
    rmaps = {name.upper(): real.maps[(seed, name)][0].mean(0) for name in ("mae", "cl")}

    fig = new_figure((13.0, 6.4))
    axs = fig.subplots(2, 4)
    headline: dict[str, object] = {}
    for j, (q, where) in enumerate(((q_loc, "local"), (q_glob, "global"))):
        for k, name in enumerate(("MAE", "CL")):
            ax = axs[0, 2 * j + k]
            row = syn[name][q]
            ax.imshow(grid_of(row), cmap="viridis")
            draw_areas(ax, lab, color="w", lw=0.6, highlight={0: ("r", 2.0)})
            r, c = divmod(q, int(np.sqrt(P)))
            ax.plot(c, r, marker="*", color="w", ms=10, mec="k")
            own = float(row[lab == lab[q]].sum())
            glob = float(row[lab == 0].sum())
            ax.set_title(f"synthetic {name}, {where} query\nown area {own:.2f}, global "
                         f"{glob:.2f}", fontsize=8)
            headline[f"synthetic {name} {where} query: own-area mass"] = own
            headline[f"synthetic {name} {where} query: global-area mass"] = glob
    for j, (q, where) in enumerate(((q_c, "centre"), (q_e, "corner"))):
        for k, name in enumerate(("MAE", "CL")):
            ax = axs[1, 2 * j + k]
            row = rmaps[name][q]
            ax.imshow(row.reshape(side, side), cmap="viridis")
            r, c = divmod(q, side)
            ax.plot(c, r, marker="*", color="w", ms=10, mec="k")
            ax.set_title(f"Fashion-MNIST ViT {name}, {where} query\nmax weight "
                         f"{row.max():.2f}", fontsize=8)
            headline[f"real {name} {where} query: max weight"] = float(row.max())
    for ax in axs.ravel():
        ax.set_xticks([])
        ax.set_yticks([])
        ax.grid(False)
    reading = [
        f"Synthetic (P = {P}, C1 = {C1}, C = {C}, {steps} steps): the local query puts "
        f"{headline['synthetic MAE local query: own-area mass']:.2f} on its own area under MAE "
        f"and {headline['synthetic CL local query: own-area mass']:.2f} under CL, and "
        f"{headline['synthetic MAE local query: global-area mass']:.2f} (MAE) vs "
        f"{headline['synthetic CL local query: global-area mass']:.2f} (CL) on the global "
        "area.",
        "Real ViTs (seed 0, held-out image 0): the largest weight of the centre query is "
        f"{headline['real MAE centre query: max weight']:.2f} (MAE) vs "
        f"{headline['real CL centre query: max weight']:.2f} (CL).",
    ]
    settings = {"P": P, "C1": C1, "C": C, "steps": steps, "negatives": CL_NEGATIVES,
                "mc_draws": n, "queries_synthetic": [q_loc, q_glob],
                "queries_real": [q_c, q_e], "realvit": real.config.as_dict()}
    stand_in = None if real.data == "fashion-mnist" else f"{SYNTHETIC}; real: {real.description}"
    return FigureResult(fig, headline=headline, settings=settings, reading=reading,
                        data_source=stand_in)
