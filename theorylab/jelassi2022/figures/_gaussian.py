"""Figures 1b and 2: partitions of a 4×4 patch grid, and a positional-attention ViT trained on
Gaussian patches labelled by a convolutional teacher.

Figure 2 of Jelassi, Sander & Li (2022) (notes §6): patches are iid standard Gaussian,
`y = sign(f*(X))` with `f*` a one-hidden-layer CNN with cubic activation acting on the 2×2 blocks
of a 4×4 patch grid (D = 16, C = 4, L = 4), and a one-layer ViT is trained by gradient descent.
Its test error falls to ≈6–7% within 50–100 steps while the learned PᵀP "looks random" next to
the block mask. The teacher's width, d, N, the learning rate and the exact ViT are not in the
sources; the choices below are theorylab's (RECONSTRUCTED) and are recorded in the manifest.
"""

from __future__ import annotations

import math
import time

import numpy as np

from theorylab.core.figures import FigureContext, FigureResult, new_figure, register
from theorylab.core.figures.axes import image_axes, style_axes

from ..config import PAPER_NAME
from ..partition import Partition

GRID = 4
"""Side of the patch grid of Figures 1b and 2 (D = 16 patches)."""
#: The 2×2 blocks of the 4×4 grid, {1,2,5,6}, {3,4,7,8}, {9,10,13,14}, {11,12,15,16} (1-indexed)
#: as in Figure 1b-(1); inside a set the patches are listed row-major, so position r of a set is
#: the same relative position in every block.
BLOCKS = Partition.grid(GRID * GRID, 4)


def _draw_partition(ax, part: Partition, grid: int, colors, title: str) -> None:
    for i in range(grid * grid):
        r, c = divmod(i, grid)
        ax.add_patch(_rect((c, grid - 1 - r), colors[part.labels[i]]))
        ax.text(c + 0.5, grid - 0.5 - r, str(i + 1), ha="center", va="center", fontsize=11)
    ax.set_xlim(0, grid)
    ax.set_ylim(0, grid)
    ax.set_aspect("equal")
    image_axes(ax)
    ax.set_title(title)


def _rect(xy, color):
    from matplotlib.patches import Rectangle

    return Rectangle(xy, 1, 1, facecolor=color, edgecolor="white", linewidth=2)


@register(
    "jelassi2022-fig1b",
    paper=PAPER_NAME,
    paper_figure="Figure 1b",
    title="Two partitions of a 4x4 patch grid into sets S_l: 2x2 blocks and non-contiguous sets",
    caption=(
        "Partitions of the D = 16 patches of a 4x4 grid into L = 4 sets S_l of C = 4 patches "
        "(Definition 2.1). (1) Spatially localized sets: the 2x2 blocks {1,2,5,6}, {3,4,7,8}, "
        "{9,10,13,14}, {11,12,15,16}. (2) Non-contiguous sets: a random partition drawn with the "
        "figure seed (the paper's example sets are not given). Patches are numbered row-major "
        "from 1; each colour is one set. No data are involved."
    ),
    data_source="none (combinatorial illustration)",
)
def fig1b(ctx: FigureContext) -> FigureResult:
    import seaborn as sns

    blocks, scattered = BLOCKS, Partition.random(GRID * GRID, 4, seed=ctx.seed + 1)
    colors = sns.color_palette("pastel", 4)
    fig = new_figure((6.4, 3.4))
    axes = fig.subplots(1, 2)
    _draw_partition(axes[0], blocks, GRID, colors, "(1) spatially localized sets")
    _draw_partition(axes[1], scattered, GRID, colors, "(2) non-contiguous sets")
    one = lambda part: [sorted(int(i) + 1 for i in s) for s in part.sets]  # noqa: E731
    return FigureResult(
        fig,
        headline={"sets_localized": one(blocks), "sets_noncontiguous": one(scattered)},
        settings={"grid": GRID, "D": 16, "L": 4, "C": 4, "partition_seed": ctx.seed + 1},
    )


# ----------------------------------------------------------------------------------------------
# Figure 2


FIG2_FULL = {
    "D": 16, "d": 16, "teacher_channels": 2, "heads": 4, "head_dim": 8, "hidden": 4,
    "pos_dim": 16, "n_train": 8000, "n_test": 4000, "steps": 1000, "lr": 0.01,
    "eval_every": 5,
}
FIG2_QUICK = {**FIG2_FULL, "n_train": 1000, "n_test": 500, "steps": 60, "eval_every": 10}


def _cnn_teacher(X, W):
    """f*(X) = Σ_ℓ Σ_k (Σ_r ⟨w_{k,r}, X_{S_ℓ[r]}⟩)³ for X `(N, D, d)`, W `(K, C, d)`."""
    import torch

    blocks = torch.as_tensor(BLOCKS.sets, device=X.device)
    pre = torch.einsum("nlrd,krd->nlk", X[:, blocks], W)
    return (pre**3).sum(dim=(1, 2))


def alignment_scores(sim: np.ndarray, part: Partition) -> dict[str, float]:
    """How much a `(D, D)` similarity matrix reflects a partition into sets of size C.

    - `patch_association`: fraction of rows i whose Top-C entries are exactly i's set
      (Definition 2.2); 1 for perfect association.
    - `topC_overlap`: mean fraction of i's set among the Top-C entries of row i.
    - `within_minus_between`: mean off-diagonal similarity within sets minus across sets.
    """
    D = sim.shape[0]
    C = part.C
    mask = part.same_set_mask()
    off = ~np.eye(D, dtype=bool)
    top = np.argsort(-sim, axis=1, kind="stable")[:, :C]
    hits = np.array([mask[i, top[i]].sum() for i in range(D)])
    return {
        "patch_association": float(np.mean(hits == C)),
        "topC_overlap": float(np.mean(hits / C)),
        "within_minus_between": float(sim[mask & off].mean() - sim[~mask].mean()),
    }


@register(
    "jelassi2022-fig2",
    paper=PAPER_NAME,
    paper_figure="Figure 2",
    title="Positional-attention ViT on Gaussian patches with a CNN teacher: test error and P^T P",
    caption=(
        "Gaussian patches X_j ~ N(0, I_d) on a 4x4 grid (D = 16), labels y = sign(f*(X)) with f* "
        "a one-hidden-layer CNN with cubic activation whose random filters act on the four 2x2 "
        "blocks (sum over blocks and channels). A one-layer positional-attention ViT (attention "
        "logits (P W_Q)(P W_K)^T/sqrt(d_h) from the learned positional encodings P only, values "
        "from X, cubic activation, sum over tokens) is trained by full-batch Adam on the "
        "logistic loss, P included. Left: test and training error against steps. Right: the "
        "block mask (same 2x2 block = yellow), the learned P^T P as cosine similarities, and the "
        "learned attention averaged over heads. Teacher width, d, N, optimiser and student "
        "architecture are theorylab's choices (not given in the paper)."
    ),
    data_source="synthetic: iid Gaussian patches, CNN-teacher labels",
)
def fig2(ctx: FigureContext) -> FigureResult:
    from theorylab.vision.nets import cpu_threads, resolve_device

    s = dict(FIG2_QUICK if ctx.quick else FIG2_FULL)
    device = resolve_device(ctx.device)
    # small tensors: one intra-op thread is faster on a shared 2-core machine (see
    # theorylab.vision.nets._train.DEFAULT_CPU_THREADS)
    with cpu_threads(1 if device.type == "cpu" else None):
        return _fig2(ctx, s, device)


def _fig2(ctx: FigureContext, s: dict, device) -> FigureResult:
    import torch

    from theorylab.vision.nets import PositionalAttention1, cosine_similarity_matrix

    gen = torch.Generator().manual_seed(ctx.seed + 2)
    D, d, K = s["D"], s["d"], s["teacher_channels"]
    W = torch.randn(K, 4, d, generator=gen) / math.sqrt(4 * d)
    X = torch.randn(s["n_train"], D, d, generator=gen)
    Xt = torch.randn(s["n_test"], D, d, generator=gen)
    W, X, Xt = W.to(device), X.to(device), Xt.to(device)
    y, yt = torch.sign(_cnn_teacher(X, W)), torch.sign(_cnn_teacher(Xt, W))
    # Definition 3.2: attention logits from the positional encodings only, cubic σ as the teacher
    model = PositionalAttention1(D, d, heads=s["heads"], head_dim=s["head_dim"],
                                 hidden=s["hidden"], pos_dim=s["pos_dim"], generator=gen,
                                 device=device)
    P0 = model.P.detach().cpu().clone()
    opt = torch.optim.Adam(model.parameters(), lr=s["lr"])

    def errors() -> tuple[float, float]:
        with torch.no_grad():
            return (float((torch.sign(model(X)) != y).float().mean()),
                    float((torch.sign(model(Xt)) != yt).float().mean()))

    rows = []
    t0 = time.perf_counter()
    for step in ctx.tqdm(range(s["steps"] + 1), desc="fig2 GD"):
        if step % s["eval_every"] == 0 or step == s["steps"]:
            rows.append((step, *errors()))
        if step == s["steps"]:
            break
        loss = torch.nn.functional.softplus(-y * model(X)).mean()
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
    seconds = time.perf_counter() - t0
    hist = np.array(rows)

    mask = BLOCKS.same_set_mask()
    sim = cosine_similarity_matrix(model.P.detach().cpu()).numpy()
    sim0 = cosine_similarity_matrix(P0).numpy()
    S = model.attention().detach().cpu().numpy()
    S_mean = S.mean(axis=0)
    own_mass = float(np.mean([(S[h] * mask).sum(axis=1).mean() for h in range(S.shape[0])]))
    block_mass = np.stack([S[:, :, list(b)].sum(-1) for b in BLOCKS.sets], axis=-1)  # (H, D, L)
    learned, init = alignment_scores(sim, BLOCKS), alignment_scores(sim0, BLOCKS)
    below = np.flatnonzero(hist[:, 2] <= 0.10)
    headline = {
        "final_test_error": float(hist[-1, 2]),
        "final_train_error": float(hist[-1, 1]),
        "min_test_error": float(hist[:, 2].min()),
        "steps_to_test_error_10pct": int(hist[below[0], 0]) if below.size else None,
        "PtP_patch_association": learned["patch_association"],
        "PtP_topC_overlap": learned["topC_overlap"],
        "PtP_topC_overlap_chance": (1 + 3 * 3 / 15) / 4,
        "PtP_within_minus_between": learned["within_minus_between"],
        "PtP_within_minus_between_at_init": init["within_minus_between"],
        "attention_own_block_mass": own_mass,
        "attention_own_block_mass_uniform": 4 / 16,
        "attention_max_block_mass": float(block_mass.max(-1).mean()),
        "train_seconds": round(seconds, 2),
        "paper_test_error": "about 0.06-0.07 after 50-100 steps; learned P^T P looks random",
    }

    import seaborn as sns

    fig = new_figure((13.0, 3.4))
    gs = fig.add_gridspec(1, 4, width_ratios=[1.35, 1, 1, 1])
    ax = fig.add_subplot(gs[0])
    ax.plot(hist[:, 0], 100 * hist[:, 2], label="test", lw=1.6)
    ax.plot(hist[:, 0], 100 * hist[:, 1], label="train", lw=1.0, ls="--")
    ax.set_ylim(0, max(55.0, 100 * hist[:, 1:].max() + 2))
    ax.set_xlim(0, s["steps"])
    style_axes(ax, "Adam step (full batch)", "error (%)", f"test error, final "
               f"{100 * hist[-1, 2]:.1f}%", legend={"frameon": False})
    ticks = np.arange(0, D, 4)
    panels = [
        (mask.astype(float), "block mask (2x2 blocks)", "viridis", (0, 1)),
        (sim, f"learned $P^\\top P$ (cosine); own-set Top-4: {learned['topC_overlap']:.2f}",
         "RdBu_r", (-1, 1)),
        (S_mean, f"attention, mean of {S.shape[0]} heads", "magma", (0, None)),
    ]
    for k, (mat, title, cmap, (lo, hi)) in enumerate(panels):
        a = fig.add_subplot(gs[k + 1])
        sns.heatmap(mat, ax=a, cmap=cmap, vmin=lo, vmax=hi, square=True, cbar=k > 0,
                    xticklabels=False, yticklabels=False, cbar_kws={"shrink": 0.8})
        a.set_xticks(ticks + 0.5, labels=[str(t + 1) for t in ticks])
        a.set_yticks(ticks + 0.5, labels=[str(t + 1) for t in ticks])
        a.set_title(title, fontsize="small")
    settings = {**s, "teacher": "f*(X)=sum_l sum_k (sum_r <w_kr, X_{S_l[r]}>)^3, "
                "w ~ N(0, I/(4d))", "activation": "cubic", "optimizer": "full-batch Adam",
                "loss": "logistic", "P_init": "N(0, 1)", "seed": ctx.seed + 2}
    return FigureResult(fig, headline=headline, settings=settings)
