"""Figure 7 of Jelassi, Sander & Li (2022) on stand-in data: box plots over seeds of vanilla against
positional-attention ViT (the shared data, settings and training: ``_images``)."""

from __future__ import annotations

import json

import numpy as np

from theorylab.core.figures import FigureContext, FigureResult, new_figure, register
from theorylab.core.figures.axes import style_axes
from theorylab.vision.imagedata import QUICK_STAND_IN_NOTE

from ..config import PAPER_NAME
from ._images import (
    RECON_NOTE,
    VIT_FM_FULL,
    VIT_FM_QUICK,
    _fashion_mnist,
    _stand_in,
    _train_vit,
)

FIG7_FULL = {
    "seeds": 10,
    "fashion_mnist": {**VIT_FM_FULL, "n_train": 2000, "n_test": 2000, "epochs": 10,
                      "batch_size": 64, "evals_per_epoch": 1},
    "digits": {"test_fraction": 0.25, "image_size": 8, "patch_size": 2, "dim": 64, "depth": 2,
               "heads": 4, "mlp_ratio": 2.0, "epochs": 20, "batch_size": 64, "lr": 2e-3,
               "weight_decay": 0.05, "evals_per_epoch": 1},
}


FIG7_QUICK = {
    "seeds": 2,
    "fashion_mnist": {**VIT_FM_QUICK, "n_train": 256, "evals_per_epoch": 1},
    "digits": {**FIG7_FULL["digits"], "dim": 32, "depth": 1, "heads": 2, "epochs": 2},
}


@register(
    "jelassi2022-fig7",
    paper=PAPER_NAME,
    paper_figure="Figure 7",
    title="Box plots over seeds of test accuracy: vanilla vs positional-attention ViT",
    caption=(
        "Test accuracy over seeds (model initialisation and batch order; fixed data split) of a "
        "ViT with vanilla attention (ViT) and with positional attention in every layer (Ours), "
        "on (1) Fashion-MNIST (patch 4 on 28x28) and (2) scikit-learn's 8x8 digits (patch 2). "
        + RECON_NOTE
        + "Stand-in data: Fashion-MNIST (Debian package dataset-fashion-mnist) and the bundled "
        "sklearn digits replace the paper's CIFAR-10, CIFAR-100 and SVHN (patch 4, 10 seeds), "
        "which cannot be downloaded here; models and training are scaled down to run on two CPU "
        "cores, so accuracies are not comparable in level with the paper's."
        + QUICK_STAND_IN_NOTE
    ),
    data_source="Fashion-MNIST (Debian dataset-fashion-mnist); sklearn load_digits (bundled)",
)
def fig7(ctx: FigureContext) -> FigureResult:
    import pandas as pd
    import seaborn as sns

    from theorylab.vision.imagedata import digits

    s = json.loads(json.dumps(FIG7_QUICK if ctx.quick else FIG7_FULL))
    fm = s["fashion_mnist"]
    dg = s["digits"]
    sets = {
        "Fashion-MNIST": (_fashion_mnist(fm["n_train"], fm["n_test"], ctx.seed, False,
                                         ctx.quick), fm),
        "digits (8x8)": (digits(dg["test_fraction"], ctx.seed), dg),
    }
    if sets["Fashion-MNIST"][0].name == "digits-28":  # a quick run without the files
        sets = {"digits (28x28)": sets.pop("Fashion-MNIST"), **sets}
    rows = []
    jobs = [(name, k, pos) for name in sets for k in range(s["seeds"]) for pos in (False, True)]
    for name, k, pos in ctx.tqdm(jobs, desc="fig7 runs"):
        data, cfg = sets[name]
        res = _train_vit(data, cfg, positional=pos, seed=ctx.seed + 100 + k, ctx=ctx,
                         desc=f"fig7 {name}")
        rows.append((name, "Ours" if pos else "ViT", k, 100 * res.test_acc))
    df = pd.DataFrame(rows, columns=["dataset", "model", "seed", "test_acc"])
    fig = new_figure((8.0, 3.8))
    axes = fig.subplots(1, len(sets))
    headline: dict[str, object] = {}
    for k, (ax, name) in enumerate(zip(axes, sets, strict=True)):
        sub = df[df["dataset"] == name]
        sns.boxplot(sub, x="model", y="test_acc", hue="model", order=["ViT", "Ours"], ax=ax,
                    palette={"ViT": "C0", "Ours": "C1"}, width=0.5, fliersize=3)
        jitter = np.random.default_rng(ctx.seed).uniform(-0.1, 0.1, size=len(sub))
        xs = np.where(sub["model"].to_numpy() == "ViT", 0.0, 1.0) + jitter
        ax.scatter(xs, sub["test_acc"], s=6, color="k", zorder=3)
        style_axes(ax, "", "test accuracy (%)" if k == 0 else "", f"({k + 1}) {name}")
        tag = {"Fashion-MNIST": "fashion_mnist", "digits (28x28)": "digits28"}.get(name, "digits")
        for model in ("ViT", "Ours"):
            acc = sub.loc[sub["model"] == model, "test_acc"]
            for stat in ("median", "min", "max"):
                headline[f"{tag}_{model.lower()}_{stat}"] = float(acc.agg(stat))
    headline["n_seeds"] = s["seeds"]
    headline["paper_medians"] = ("CIFAR-10 90.2 vs 90.55; CIFAR-100 68.0 vs 67.95; "
                                 "SVHN 98.2 vs 97.3 (ViT vs Ours)")
    settings = {**s, "data": {n: d.description for n, (d, _) in sets.items()},
                "seeds_used": [ctx.seed + 100 + k for k in range(s["seeds"])]}
    return FigureResult(fig, headline=headline, settings=settings,
                        **_stand_in(sets.get("digits (28x28)", (None,))[0]))
