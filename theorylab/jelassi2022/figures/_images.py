"""What the real-image figures 1a, 5, 6 and 7 of Jelassi, Sander & Li (2022) share: stand-in
data, settings, training and the locality scores (the figures: ``_fig1a``, ``_fig5``, ``_fig6``,
``_fig7``).

The paper uses ImageNet (Figures 1a, 6), CIFAR-100 (Figure 5) and CIFAR-10/100 + SVHN
(Figure 7), none of which can be downloaded here. Every figure below says in its caption that it
uses **Fashion-MNIST** (Debian package `dataset-fashion-mnist`) and/or scikit-learn's bundled
8×8 **digits** instead, with small subsets, small models and short training so that all of them
run in minutes on two CPU cores. Their numbers are therefore not comparable in level with the
paper's; the comparisons *within* each figure (ViT vs CNN under permutation, vanilla vs
positional attention, initial vs learned positional encodings) are the point.
"""

from __future__ import annotations

import numpy as np

from theorylab.core.figures import FigureContext
from theorylab.vision.imagedata import QUICK_STAND_IN_NOTE

FM_NOTE = (
    "Stand-in data: Fashion-MNIST (Debian package dataset-fashion-mnist) replaces the paper's "
    "{paper_data}, which cannot be downloaded here; models and training are scaled down to run "
    "on two CPU cores, so accuracies are not comparable in level with the paper's."
) + QUICK_STAND_IN_NOTE


RECON_NOTE = (
    "The multi-layer positional-attention ViT ('Ours') is RECONSTRUCTED: the paper only says "
    "that its attention logits come from the positional encodings; positional attention in every "
    "layer, depth, width, heads, MLP, LayerNorm, residuals and mean pooling are our choice. "
)


VIT_FM_FULL = {  # Fashion-MNIST 28x28, patch 4 -> 7x7 grid (as ViT-small-patch32 at 224 px)
    "n_train": 10000, "n_test": 2000, "image_size": 28, "patch_size": 4, "dim": 64, "depth": 2,
    "heads": 4, "mlp_ratio": 2.0, "epochs": 15, "batch_size": 128, "lr": 2e-3,
    "weight_decay": 0.05, "evals_per_epoch": 2,
}


VIT_FM_QUICK = {**VIT_FM_FULL, "n_train": 384, "n_test": 256, "dim": 32, "depth": 1,
                "heads": 2, "epochs": 1, "batch_size": 64}


THRESHOLD = 0.55
"""Similarity threshold of Figure 1a."""


def _fashion_mnist(n_train: int, n_test: int, seed: int, pool16: bool, quick: bool):
    """Fashion-MNIST subset, kept per process; `pool16`: 2x2 average-pool to 14x14, then
    zero-pad to 16x16. A quick run without the Fashion-MNIST files gets the digits upsampled
    to 28x28 instead ([`theorylab.vision.placed.cached_images`][])."""
    from theorylab.vision.placed import cached_images

    if pool16:
        return cached_images(n_train, n_test, seed, quick=quick, pool=2, pad=1)
    return cached_images(n_train, n_test, seed, quick=quick)


def _stand_in(data) -> dict:
    """``data_source`` of a figure's manifest entry when a quick run used the digits instead of
    Fashion-MNIST (else nothing: the registered data source holds)."""
    if data is None or data.name != "digits-28":
        return {}
    return {"data_source": data.description}


def make_vit(s: dict, num_classes: int, positional: bool):
    """The ViT of settings `s` (built from torch's current random state)."""
    from theorylab.vision.nets import ViT

    return ViT(s["image_size"], s["patch_size"], num_classes, dim=s["dim"], depth=s["depth"],
               heads=s["heads"], mlp_ratio=s["mlp_ratio"], positional_attention=positional)


def _train_vit(data, s: dict, *, positional: bool, seed: int, ctx: FigureContext, desc: str):
    """Train a ViT with settings `s` on `data`, kept in the real-image store
    ([`theorylab.vision.store`][]: in the process, and in ``--cache DIR``): Figure 1a's
    reference ViT trained without translations is Figure 6's vanilla ViT (same settings,
    hence the same key)."""
    import torch

    from theorylab.vision.nets import TrainConfig, TrainResult, train_classifier
    from theorylab.vision.store import active_store, code_digest, remembered, run_key

    cfg = TrainConfig(epochs=s["epochs"], batch_size=s["batch_size"], lr=s["lr"],
                      weight_decay=s["weight_decay"], evals_per_epoch=s.get("evals_per_epoch", 1),
                      translate_patches=s.get("translate_patches", 0),
                      translate_unit=s["patch_size"], pos_weight_decay=s.get("pos_weight_decay"))

    def make():
        return make_vit(s, data.num_classes, positional)

    def compute() -> TrainResult:
        return train_classifier(make, data.x_train, data.y_train, data.x_test, data.y_test,
                                cfg, seed=seed, device=ctx.device,
                                progress=lambda it: ctx.tqdm(it, desc=desc, unit="epoch"))

    def encode(res: TrainResult):
        return ({f"state/{k}": v.detach().cpu().numpy() for k, v in
                 res.model.state_dict().items()}, {"history": res.history},
                {"test_acc": res.test_acc, "seconds": res.seconds})

    def decode(entry) -> TrainResult:
        model = make()
        model.load_state_dict({k[len("state/"):]: torch.as_tensor(a)
                               for k, a in entry.arrays.items()})
        return TrainResult(model.to(ctx.device).eval(), entry.tables["history"],
                           float(entry.meta["test_acc"]), float(entry.meta["seconds"]))

    key = run_key("jelassi2022 image ViT", {"data": data.description, "settings": s,
                                            "positional": positional, "seed": seed,
                                            "device": str(ctx.device)},
                  stand_in=data.name == "digits-28",
                  code=code_digest((_train_vit, train_classifier, TrainResult)))
    return remembered(key, compute, encode=encode, decode=decode, store=active_store())[0]


def _cos(P: np.ndarray) -> np.ndarray:
    import torch

    from theorylab.vision.nets import cosine_similarity_matrix

    return cosine_similarity_matrix(torch.as_tensor(np.asarray(P, dtype=np.float64))).numpy()


def _grid_distance(grid: int) -> np.ndarray:
    """Euclidean distance between patch centres on a `grid×grid` patch grid, `(D, D)`."""
    rc = np.stack(np.divmod(np.arange(grid * grid), grid), axis=1).astype(float)
    return np.sqrt(((rc[:, None] - rc[None]) ** 2).sum(-1))


def locality_scores(sim: np.ndarray, grid: int) -> dict[str, float]:
    """How local a `(D, D)` similarity of a `grid×grid` patch grid is.

    - `cos_neighbours`: mean similarity of 4-neighbour pairs;
    - `cos_far`: mean similarity of pairs at distance >= grid/2;
    - `corr_with_distance`: Spearman correlation of similarity and distance over i != j
      (negative = nearby patches are more similar);
    - `above_threshold_local`: among off-diagonal pairs with similarity >= 0.55, the fraction
      that are within distance sqrt(2) (8-neighbours); NaN if there are none.
    """
    from scipy.stats import spearmanr

    dist = _grid_distance(grid)
    off = ~np.eye(dist.shape[0], dtype=bool)
    above = (sim >= THRESHOLD) & off
    return {
        "cos_neighbours": float(sim[np.isclose(dist, 1.0)].mean()),
        "cos_far": float(sim[dist >= grid / 2].mean()),
        "corr_with_distance": float(spearmanr(sim[off], dist[off]).statistic),
        "above_threshold_local": (float((dist[above] <= np.sqrt(2) + 1e-9).mean())
                                  if above.any() else float("nan")),
    }
