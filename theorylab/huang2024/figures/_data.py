"""Figure 2 of Huang et al. (2025): the data model (Def. 2.1 as RECONSTRUCTED), one panel per
cluster. Registered id: ``huang2024-fig2``."""

from __future__ import annotations

import dataclasses
import math

import numpy as np

from theorylab.core.figures import FigureContext, FigureResult, new_figure, register
from theorylab.core.figures.axes import image_axes

from ..config import PAPER_NAME, DataConfig
from ._common import draw_areas, grid_of

__all__ = ["fig2", "FIG2_DATA", "connected"]

#: The schematic's data: 8×8 grid, three clusters, contiguous areas.
FIG2_DATA = {"P": 64, "K": 3, "C1": 32, "C": 4, "areas": "contiguous"}
FIG2_QUICK = {"P": 16, "K": 2, "C1": 8, "C": 2, "areas": "contiguous"}

FIG2_CAPTION = (
    "The data model of Huang et al. (2025), Figure 2 (Def. 2.1), as RECONSTRUCTED in "
    "docs/papers/huang2024.md §1: P patches on a √P×√P grid (8×8, P = 64), K = 3 equally likely "
    "clusters; each cluster partitions the patches into one global area of C1 patches (orange) "
    "and local areas of C patches each (other colours, numbered), here contiguous runs of a "
    "boustrophedon path, a different symmetry of the square per cluster (the paper draws "
    "contiguous areas and says non-contiguous ones are covered too). A sample of cluster k has "
    "x_p = z_j v_{k,j} on area j, with one coefficient per area (z_j i.i.d. U[0.5, 1.5]) and "
    "orthonormal features v and positions e (RECONSTRUCTED). The titles give the sizes, "
    "κ = ln(size)/ln P and the information gap Δ = 2κ_s − κ_c − 1 (RECONSTRUCTED: only Δ's "
    "admissible range [−0.5, 1] was read), equivalently P^Δ = (C1/P)²/(C/P), the initial ratio "
    "of the global and own-area gradient scales of a masked local patch (notes §1.3)."
)


def connected(labels: np.ndarray) -> bool:
    """Whether every area of a (P,) label vector is 4-connected on the √P×√P grid."""
    g = grid_of(labels)
    for a in np.unique(labels):
        cells = {(int(r), int(c)) for r, c in zip(*np.nonzero(g == a))}
        start = next(iter(cells))
        seen, stack = {start}, [start]
        while stack:
            r, c = stack.pop()
            for nb in ((r + 1, c), (r - 1, c), (r, c + 1), (r, c - 1)):
                if nb in cells and nb not in seen:
                    seen.add(nb)
                    stack.append(nb)
        if seen != cells:
            return False
    return True


@register(
    "huang2024-fig2",
    paper=PAPER_NAME,
    paper_figure="Figure 2",
    title="The data model: global and local areas of each cluster on the patch grid",
    caption=FIG2_CAPTION,
    data_source="synthetic: Def. 2.1 data model (theorylab.huang2024.data, contiguous areas)",
)
def fig2(ctx: FigureContext) -> FigureResult:
    from matplotlib.colors import ListedColormap

    d = DataConfig(**(FIG2_QUICK if ctx.quick else FIG2_DATA))
    s = d.make_structure()
    P, K, C1, C = d.P, d.K, d.global_size, d.local_size
    ks, kc = math.log(C1) / math.log(P), math.log(C) / math.log(P)
    n_local = int(s.n_areas.max()) - 1
    import seaborn as sns

    local_cols = sns.color_palette("Blues", n_local + 2)[1:-1]
    local_cols = [local_cols[i] if i % 2 == 0 else sns.color_palette("Greens", n_local + 2)[i]
                  for i in range(n_local)]
    cmap = ListedColormap([sns.color_palette("colorblind")[1]] + list(local_cols))
    side = math.isqrt(P)
    fig = new_figure((3.4 * K + 0.4, 3.9))
    axes = np.atleast_1d(fig.subplots(1, K))
    for k, ax in enumerate(axes):
        lab = s.labels[k]
        ax.imshow(grid_of(lab), cmap=cmap, vmin=-0.5, vmax=n_local + 0.5)
        draw_areas(ax, lab, color="0.15", lw=1.2)
        for p in range(P):
            r, c = divmod(p, side)
            ax.text(c, r, "G" if lab[p] == 0 else str(int(lab[p])), ha="center", va="center",
                    fontsize=7 if side > 4 else 9, color="0.1")
        image_axes(ax)
        ax.set_title(f"cluster {k + 1}: global area C1 = {C1}, "
                     f"{int(s.n_areas[k]) - 1} local areas of C = {C}", fontsize=8)
    fig.suptitle(f"P = {P} patches ({side}×{side}), K = {K}: κ_s = {ks:.3f}, κ_c = {kc:.3f}, "
                 f"Δ = 2κ_s − κ_c − 1 = {d.delta:.3f}", fontsize=9)
    headline = {
        "P": P, "K": K, "C1": C1, "C": C, "N_k": [int(n) for n in s.n_areas],
        "kappa_s": ks, "kappa_c": kc, "delta": d.delta,
        "P_pow_delta": P ** d.delta, "gradient_scale_ratio": (C1 / P) ** 2 / (C / P),
        "areas_4_connected": all(connected(s.labels[k]) for k in range(K)),
        "clusters_distinct": len({s.labels[k].tobytes() for k in range(K)}) == K,
    }
    reading = [
        f"{K} clusters on a {side}×{side} grid: a global area of C1 = {C1} and "
        f"{int(s.n_areas[0]) - 1} local areas of C = {C} patches per cluster; κ_s = {ks:.3f}, "
        f"κ_c = {kc:.3f}, Δ = {d.delta:.3f}, P^Δ = (C1/P)²/(C/P) = {P ** d.delta:.3g}.",
        "Every area is 4-connected on the grid" if headline["areas_4_connected"]
        else "Some area is not 4-connected on the grid",
    ]
    return FigureResult(fig, headline=headline, settings=dataclasses.asdict(d),
                        reading=reading)
