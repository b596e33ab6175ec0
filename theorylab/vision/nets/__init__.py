"""Plain-torch networks for the image figures: patchify, a small ViT (vanilla or positional
attention), small VGG-like and ResNet-like CNNs, and a short seeded training loop (optionally
with random translations by whole patches)."""

from theorylab.vision.nets._augment import random_patch_shifts, translate_images
from theorylab.vision.nets._cnn import SmallResNet, SmallVGG
from theorylab.vision.nets._patch import patchify, unpatchify
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
    "SmallResNet",
    "SmallVGG",
    "TrainConfig",
    "TrainResult",
    "ViT",
    "cosine_similarity_matrix",
    "cpu_threads",
    "evaluate",
    "param_groups",
    "patchify",
    "random_patch_shifts",
    "resolve_device",
    "train_classifier",
    "translate_images",
    "unpatchify",
]
