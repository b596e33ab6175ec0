"""Plain-torch networks for the image figures: patchify, a small ViT (vanilla or positional
attention), a one-layer positional-attention network on patch vectors, small VGG-like and
ResNet-like CNNs, a short seeded training loop (optionally with
random translations by whole patches), and a seed-batched ViT ([`SeedViT`][]: several seeds'
models in one set of weights, with a learned relative-position bias and a local or
from-scratch start) trained by masked reconstruction (MAE) and contrastive learning (CL),
every seed in one optimiser step ([`train_seeds`][])."""

from theorylab.vision.nets._augment import random_patch_shifts, translate_images
from theorylab.vision.nets._cnn import SmallResNet, SmallVGG
from theorylab.vision.nets._patch import patchify, unpatchify
from theorylab.vision.nets._positional import PositionalAttention1
from theorylab.vision.nets._seedvit import (
    INITS,
    SeedBlock,
    SeedLayerNorm,
    SeedLinear,
    SeedMLP,
    SeedViT,
    clip_grad_norm_per_seed_,
    decay_groups,
    local_bias,
    patchify_seeds,
    relative_offsets,
)
from theorylab.vision.nets._ssl import (
    OBJECTIVES,
    VIEWS,
    Augment,
    SeedStreams,
    SSLSchedule,
    augment,
    cl_projector,
    info_nce,
    mae_decoder,
    mae_loss,
    mean_predictor_mse,
    place_items,
    random_masks,
    train_seeds,
)
from theorylab.vision.nets._train import (
    TrainConfig,
    TrainResult,
    cpu_threads,
    evaluate,
    param_groups,
    resolve_device,
    train_classifier,
)
from theorylab.vision.nets._vit import Attention, Block, ViT, cosine_similarity_matrix

__all__ = [
    "INITS",
    "OBJECTIVES",
    "Attention",
    "PositionalAttention1",
    "Augment",
    "Block",
    "SSLSchedule",
    "VIEWS",
    "SeedBlock",
    "SeedLayerNorm",
    "SeedLinear",
    "SeedMLP",
    "SeedStreams",
    "SeedViT",
    "SmallResNet",
    "SmallVGG",
    "TrainConfig",
    "TrainResult",
    "ViT",
    "augment",
    "cl_projector",
    "clip_grad_norm_per_seed_",
    "cosine_similarity_matrix",
    "cpu_threads",
    "decay_groups",
    "evaluate",
    "info_nce",
    "local_bias",
    "mae_decoder",
    "mae_loss",
    "mean_predictor_mse",
    "param_groups",
    "patchify",
    "patchify_seeds",
    "place_items",
    "random_masks",
    "random_patch_shifts",
    "relative_offsets",
    "resolve_device",
    "train_classifier",
    "train_seeds",
    "translate_images",
    "unpatchify",
]
