"""Figure 6 of Jelassi, Sander & Li (2022) on stand-in data: vanilla against positional-attention
ViT, training loss and test accuracy (the shared data, settings and training: ``_images``)."""

from __future__ import annotations

from theorylab.core.figures import FigureContext, FigureResult, new_figure, register
from theorylab.core.figures.axes import style_axes

from ..config import PAPER_NAME
from ._images import (
    FM_NOTE,
    RECON_NOTE,
    VIT_FM_FULL,
    VIT_FM_QUICK,
    _fashion_mnist,
    _stand_in,
    _train_vit,
)


@register(
    "jelassi2022-fig6",
    paper=PAPER_NAME,
    paper_figure="Figure 6",
    title="Training loss and test accuracy: vanilla ViT vs positional-attention ViT",
    caption=(
        "Training loss (1) and test accuracy (2) of a vanilla ViT and of a ViT using positional "
        "attention in every layer (attention logits (P W_Q)(P W_K)^T/sqrt(d_h) from the learned "
        "positional encodings only, values from the tokens, P not added to the tokens; MLP, "
        "LayerNorm and residuals unchanged). Both: patch 4 on 28x28, same width, depth, "
        "optimiser (AdamW, warm-up + cosine) and seed. The paper uses ViT-tiny-patch16-224 on "
        "ImageNet for 300 epochs (71.9% vs 68.9%). "
        + RECON_NOTE
        + FM_NOTE.format(paper_data="ImageNet")
    ),
    data_source="Fashion-MNIST (Debian dataset-fashion-mnist)",
)
def fig6(ctx: FigureContext) -> FigureResult:
    s = dict(VIT_FM_QUICK if ctx.quick else VIT_FM_FULL)
    data = _fashion_mnist(s["n_train"], s["n_test"], ctx.seed, False, ctx.quick)
    runs = {
        "ViT": _train_vit(data, s, positional=False, seed=ctx.seed, ctx=ctx, desc="fig6 ViT"),
        "Ours (positional attention)": _train_vit(data, s, positional=True, seed=ctx.seed,
                                                  ctx=ctx, desc="fig6 positional ViT"),
    }
    fig = new_figure((10.0, 3.8))
    ax1, ax2 = fig.subplots(1, 2)
    for (name, res), color in zip(runs.items(), ("C0", "C1"), strict=True):
        h = res.history
        tl = h.dropna(subset=["train_loss"])
        ax1.plot(tl["epoch"], tl["train_loss"], color=color, lw=0.6, alpha=0.35)
        smooth = tl["train_loss"].rolling(5, min_periods=1, center=True).mean()
        ax1.plot(tl["epoch"], smooth, color=color, lw=1.5, label=name)
        ta = h.dropna(subset=["test_acc"])
        ax2.plot(ta["epoch"], 100 * ta["test_acc"], color=color, marker="o", ms=3,
                 label=f"{name}: {100 * res.test_acc:.1f}%")
    style_axes(ax1, "epoch", "training loss (cross-entropy)", "(1) training loss",
               legend={"frameon": False})
    style_axes(ax2, "epoch", "test accuracy (%)", "(2) test accuracy",
               legend={"frameon": False, "loc": "lower right"})
    (van, pos) = runs.values()

    def final_loss(res) -> float:
        return float(res.history["train_loss"].dropna().tail(5).mean())

    headline = {
        "test_acc_vit": van.test_acc,
        "test_acc_positional": pos.test_acc,
        "final_train_loss_vit": final_loss(van),
        "final_train_loss_positional": final_loss(pos),
        "train_seconds_vit": round(van.seconds, 1),
        "train_seconds_positional": round(pos.seconds, 1),
        "paper_imagenet": "ViT 71.9% vs Ours 68.9%; final train loss ~3.5 vs ~3.9",
    }
    settings = {**s, "data": data.description, "seed": ctx.seed, "optimizer": "AdamW",
                "schedule": "linear warm-up 5% + cosine"}
    return FigureResult(fig, headline=headline, settings=settings, **_stand_in(data))
