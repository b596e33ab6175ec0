"""Plain-torch networks for the image figures: patchify, a small ViT (vanilla or positional
attention), small VGG-like and ResNet-like CNNs, a short seeded training loop (optionally with
random translations by whole patches), and self-supervised training of the ViT by masked
reconstruction (MAE) and contrastive learning (CL)."""

from theorylab.vision.nets._augment import augment_view, random_patch_shifts, translate_images
from theorylab.vision.nets._cnn import SmallResNet, SmallVGG
from theorylab.vision.nets._patch import patchify, unpatchify
from theorylab.vision.nets._ssl import (
    MaskedEncoder,
    SSLConfig,
    info_nce,
    mae_loss,
    place_items,
    random_offsets,
    random_patch_mask,
    train_ssl,
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
    "Attention",
    "Block",
    "MaskedEncoder",
    "SSLConfig",
    "SmallResNet",
    "SmallVGG",
    "TrainConfig",
    "TrainResult",
    "ViT",
    "augment_view",
    "cosine_similarity_matrix",
    "cpu_threads",
    "evaluate",
    "info_nce",
    "mae_loss",
    "param_groups",
    "patchify",
    "place_items",
    "random_offsets",
    "random_patch_mask",
    "random_patch_shifts",
    "resolve_device",
    "train_classifier",
    "train_ssl",
    "translate_images",
    "unpatchify",
]
