"""Figure 1a of Jelassi, Sander & Li (2022) on stand-in data: the similarities of a ViT's positional
encodings at initialisation and after training (the shared data, training and locality
scores: ``_images``)."""

from __future__ import annotations

import numpy as np

from theorylab.core.figures import FigureContext, FigureResult, new_figure, register
from theorylab.core.figures.axes import image_axes, style_axes

from ..config import PAPER_NAME
from ._images import (
    FM_NOTE,
    THRESHOLD,
    VIT_FM_FULL,
    VIT_FM_QUICK,
    _cos,
    _fashion_mnist,
    _grid_distance,
    _stand_in,
    _train_vit,
    locality_scores,
    make_vit,
)

FIG1A_FULL = {  # Figure 6's ViT trained with random +-1-patch translations, on more data
    # Measured (seed 0, 1 thread, exploratory runs): on Figure 6's 10,000 images, translations
    # cost test accuracy that more epochs win back only slowly (15/30/45 epochs: 80.4/81.9/83.0%
    # against 84.0% without translations), while 20,000 images x 20 epochs reach 84.5-85.6%
    # (two augmentation streams) in less time than 45 epochs. Without weight decay on P
    # (pos_weight_decay 0, 30 epochs) the locality scores moved by < 0.01, so P keeps the common
    # weight decay (None).
    **VIT_FM_FULL, "n_train": 20000, "epochs": 20, "translate_patches": 1,
    "pos_weight_decay": None,
}


FIG1A_QUICK = {**VIT_FM_QUICK, "n_train": 2 * VIT_FM_QUICK["n_train"], "translate_patches": 1,
               "pos_weight_decay": None}


def _initial_P(s: dict, num_classes: int, seed: int, positional: bool) -> np.ndarray:
    """Positional encodings of the ViT built by `_train_vit` at initialisation (same seed)."""
    import torch

    torch.manual_seed(seed)
    return make_vit(s, num_classes, positional).P.detach().numpy().copy()


def _mosaic(sim: np.ndarray, grid: int, threshold: float | None, gap: int = 1) -> np.ndarray:
    """All query maps of a `(D, D)` similarity as one image: tile (r, c) = row r·grid+c on the
    patch grid; values below `threshold` are floored to it; NaN gaps between tiles."""
    size = grid * (grid + gap) - gap
    img = np.full((size, size), np.nan)
    for q in range(grid * grid):
        r, c = divmod(q, grid)
        tile = sim[q].reshape(grid, grid)
        if threshold is not None:
            tile = np.maximum(tile, threshold)
        img[r * (grid + gap): r * (grid + gap) + grid, c * (grid + gap): c * (grid + gap) + grid] \
            = tile
    return img


@register(
    "jelassi2022-fig1a",
    paper=PAPER_NAME,
    paper_figure="Figure 1a",
    title="Similarities P^T P of a ViT's positional encodings at initialisation and after training",
    caption=(
        "Cosine similarities <p_i, p_j>/(|p_i||p_j|) (P^T P normalised to [-1, 1]) of the learned "
        "positional encodings of a small ViT (patch 4 on 28x28 images: a 7x7 patch grid, D = 49, "
        "as ViT-small-patch32 at 224 px), at initialisation (1) and after training (2). Tile "
        "(r, c) shows the similarity of query patch (r, c) with every patch on the grid; values "
        "below 0.55 are floored to 0.55 (threshold as in the paper); the third panel shows the "
        "trained similarities without threshold. Right: mean similarity against the distance "
        "between patches, at initialisation, after training with translations, and after "
        "training the same ViT without translations (the vanilla ViT of Figure 6). Training uses "
        "data augmentation: every training image is shifted by a random whole number of patches "
        "in {-1, 0, 1} along each axis (border filled with the background value); translations "
        "make the task harder, so this run uses more training images and epochs than the one "
        "without translations, to recover its test accuracy (both are in the headline, on the "
        "same test images, which are never translated). Why translations: "
        "Fashion-MNIST objects are centred on a blank background, so without translations the "
        "patch positions are not exchangeable (border patches are always blank, the centre "
        "always holds the object) and the learned encodings group border patches and far-apart "
        "corners together, a weak locality; ImageNet's uncentred, cluttered objects give the "
        "paper's ViT this variety for free. The headline (manifest) reports, at initialisation "
        "and after training (with and without translations), the mean cosine of 4-neighbour "
        "patches and of patches at least half the grid apart, the Spearman correlation of "
        "similarity with patch distance (negative = local) and the fraction of above-threshold "
        "pairs that are 8-neighbours, beside the paper's reading: random at initialisation, "
        "local connectivity after training. "
        + FM_NOTE.format(paper_data="ImageNet")
    ),
    data_source="Fashion-MNIST (Debian dataset-fashion-mnist)",
)
def fig1a(ctx: FigureContext) -> FigureResult:
    s = dict(FIG1A_QUICK if ctx.quick else FIG1A_FULL)
    ref = dict(VIT_FM_QUICK if ctx.quick else VIT_FM_FULL)  # Figure 6's ViT: no translations
    data = _fashion_mnist(s["n_train"], s["n_test"], ctx.seed, False, ctx.quick)
    # the same test set
    data_ref = _fashion_mnist(ref["n_train"], ref["n_test"], ctx.seed, False, ctx.quick)
    res = _train_vit(data, s, positional=False, seed=ctx.seed, ctx=ctx,
                     desc="fig1a ViT (translations)")
    # deliberately the same run as Figure 6's vanilla ViT (same data, settings and cache key)
    res_ref = _train_vit(data_ref, ref, positional=False, seed=ctx.seed, ctx=ctx,
                         desc="fig1a/6 ViT (no translations)")
    grid = s["image_size"] // s["patch_size"]
    sim0 = _cos(_initial_P(s, data.num_classes, ctx.seed, positional=False))
    sim1 = _cos(res.model.P.detach().cpu().numpy())
    sim_ref = _cos(res_ref.model.P.detach().cpu().numpy())
    loc0, loc1 = locality_scores(sim0, grid), locality_scores(sim1, grid)
    loc_ref = locality_scores(sim_ref, grid)
    shift = f"±{s['translate_patches']}-patch translations"

    fig = new_figure((17.0, 4.4))
    gs = fig.add_gridspec(1, 4, width_ratios=[1.2, 1.2, 1.2, 1.4])
    panels = [
        (sim0, "(1) at initialisation", THRESHOLD),
        (sim1, f"(2) trained with {shift}\n(test acc {100 * res.test_acc:.1f}%)", THRESHOLD),
        (sim1, "(2) trained, no threshold", None),
    ]
    for k, (sim, title, thr) in enumerate(panels):
        ax = fig.add_subplot(gs[k])
        lo = THRESHOLD if thr is not None else -1.0
        im = ax.imshow(_mosaic(sim, grid, thr), cmap="viridis", vmin=lo, vmax=1.0,
                       interpolation="nearest")
        image_axes(ax)
        style_axes(ax, "input patch column", "input patch row", title)
        label = "cosine (floored at 0.55)" if thr is not None else "cosine"
        fig.colorbar(im, ax=ax, shrink=0.75, label=label)
    ax = fig.add_subplot(gs[3])
    dist = _grid_distance(grid)
    off = ~np.eye(grid * grid, dtype=bool)
    bins = np.rint(dist[off]).astype(int)
    xs = np.unique(bins)
    curves = [
        (sim0, loc0, "initialisation", "C0", "-"),
        (sim1, loc1, f"trained, {shift}", "C1", "-"),
        (sim_ref, loc_ref, f"trained, no translations ({100 * res_ref.test_acc:.1f}%)", "C7",
         "--"),
    ]
    lows = []
    for sim, loc, label, color, ls in curves:
        vals = sim[off]
        ys = [vals[bins == x].mean() for x in xs]
        lows.append(min(ys))
        ax.plot(xs, ys, marker="o", ms=3, color=color, ls=ls,
                label=(f"{label}: cos$_1$ {loc['cos_neighbours']:.2f}, "
                       f"$\\rho$ {loc['corr_with_distance']:+.2f}"))
    ax.axhline(THRESHOLD, color="grey", ls=":", lw=1, label="threshold 0.55")
    ax.set_ylim(min(-0.1, min(lows) - 0.05), 1.0)  # room for the legend at the top
    style_axes(ax, "patch distance (rounded)", "mean cosine similarity", "similarity vs distance"
               "\n(cos$_1$: 4-neighbour mean, $\\rho$: Spearman with distance)",
               legend={"frameon": False, "loc": "upper right", "fontsize": "x-small"})
    paper = "ImageNet ViT-small-patch32: random at init, local connectivity after training"
    headline = {
        "test_acc": res.test_acc,
        "test_acc_no_translation": res_ref.test_acc,
        **{f"init_{k}": v for k, v in loc0.items()},
        **{f"trained_{k}": v for k, v in loc1.items()},
        **{f"no_translation_trained_{k}": v for k, v in loc_ref.items()},
        "train_seconds": round(res.seconds, 1),
        "train_seconds_no_translation": round(res_ref.seconds, 1),
        "paper": paper,
    }
    reading = [
        f"Neighbour cosine {loc0['cos_neighbours']:.2f} at initialisation, "
        f"{loc1['cos_neighbours']:.2f} after training with {shift} "
        f"({loc_ref['cos_neighbours']:.2f} without); Spearman correlation of similarity with "
        f"patch distance {loc0['corr_with_distance']:+.2f}, {loc1['corr_with_distance']:+.2f} "
        f"({loc_ref['corr_with_distance']:+.2f} without). Paper: {paper}.",
        f"Test accuracy {100 * res.test_acc:.1f}% with translations ({s['n_train']} training "
        f"images, {s['epochs']} epochs), {100 * res_ref.test_acc:.1f}% without "
        f"({ref['n_train']} images, {ref['epochs']} epochs; the same {s['n_test']} test images).",
    ]
    settings = {**s, "data": data.description, "grid": grid, "D": grid * grid,
                "threshold": THRESHOLD, "seed": ctx.seed,
                "no_translation_reference": {  # where Figure 6's ViT differs from this one
                    **{k: ref.get(k) for k in sorted(set(s) | set(ref)) if s.get(k) != ref.get(k)},
                    "translate_patches": 0, "run": "jelassi2022-fig6 vanilla ViT"}}
    return FigureResult(fig, headline=headline, settings=settings, reading=reading,
                        **_stand_in(data))
