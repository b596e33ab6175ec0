"""Figure 3 of Jelassi et al. (2022): one data point of Assumption 1 on a patch grid
(``jelassi2022-fig3``)."""

from __future__ import annotations

import numpy as np

from theorylab.core.figures import FigureContext, FigureResult, new_figure, register
from theorylab.core.figures.axes import image_axes

from ..config import PAPER_NAME
from ..data import sample_c
from ..partition import Partition

__all__ = ["fig3"]


FIG3_Q = 0.4

FIG3_CAPTION = (
    "One data point of Assumption 1 (Jelassi et al. 2022, Figure 3) on a 6×6 patch grid cut into "
    "2×2 sets (D = 36, C = 4, L = 9). Each cell shows c_j = ⟨w*, X_j⟩ ∈ {−1, 0, +1} (the noise ξ_j "
    "is orthogonal to w*); thin lines are set boundaries, the red square is the signal set "
    "S_ℓ(X), whose cells all equal the label y. The point is drawn with "
    "theorylab.jelassi2022.data.sample_c (seeded): the first draw with y = +1 in which the "
    "−1's outnumber the "
    "+1's. The label is still +1 because the label is carried by the signal set alone, not by a "
    "majority of the patches: a linear count of ±1's is misleading. q = 0.4 is RECONSTRUCTED "
    "(about 12 of the 32 non-signal cells of the paper's grid are nonzero)."
)


@register(
    "jelassi2022-fig3",
    paper=PAPER_NAME,
    paper_figure="Figure 3",
    title="One data point of Assumption 1 on a 6×6 grid with 2×2 sets",
    caption=FIG3_CAPTION,
    data_source="synthetic: Assumption 1 data model (theorylab.jelassi2022.data.sample_c)",
)
def fig3(ctx: FigureContext) -> FigureResult:
    from matplotlib.patches import Rectangle

    part = Partition.grid(36, 4)
    rng = np.random.default_rng(np.random.SeedSequence([ctx.seed, 3]))
    c, y, ell = sample_c(part, FIG3_Q, 2000, rng)
    npos, nneg = (c == 1).sum(axis=1), (c == -1).sum(axis=1)
    good = np.flatnonzero((y == 1) & (nneg > npos))
    k = int(good[0]) if good.size else 0
    ck, yk, lk = c[k], int(y[k]), int(ell[k])
    grid = ck.reshape(6, 6)

    fig = new_figure((4.6, 4.6))
    ax = fig.add_subplot(1, 1, 1)
    from matplotlib.colors import ListedColormap

    cmap = ListedColormap(["#9ecae1", "#ffffff", "#fdae6b"])
    ax.imshow(grid, cmap=cmap, vmin=-1.5, vmax=1.5)
    for r in range(6):
        for col in range(6):
            v = int(grid[r, col])
            txt = "0" if v == 0 else f"{v:+d}"
            ax.text(col, r, txt, ha="center", va="center", fontsize=12,
                    fontweight="bold" if v else "normal")
    for t in np.arange(-0.5, 6, 1.0):  # cell lines
        ax.axhline(t, color="0.8", lw=0.6)
        ax.axvline(t, color="0.8", lw=0.6)
    for t in np.arange(-0.5, 6, 2.0):  # set boundaries
        ax.axhline(t, color="0.2", lw=1.6)
        ax.axvline(t, color="0.2", lw=1.6)
    cells = np.array(part.sets[lk])
    rows, cols = cells // 6, cells % 6
    ax.add_patch(Rectangle((cols.min() - 0.5, rows.min() - 0.5), 2, 2, fill=False,
                           edgecolor="red", lw=3.5, zorder=5))
    image_axes(ax)
    ax.set_title(f"label y = {yk:+d}:  #(+1) = {int(npos[k])},  #(−1) = {int(nneg[k])}")
    return FigureResult(
        fig,
        headline={"label": yk, "n_plus": int(npos[k]), "n_minus": int(nneg[k]),
                  "signal_set": [int(i) for i in cells], "draw_index": k,
                  "paper_label": 1, "paper_n_plus": 7, "paper_n_minus": 8},
        settings={"D": 36, "C": 4, "partition": "grid", "q": FIG3_Q, "seed": ctx.seed,
                  "rule": "first draw with y=+1 and more -1's than +1's"},
    )
