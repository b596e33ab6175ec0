"""Data augmentation for the image figures: random translations by whole patches.

A ViT sees its image as a grid of patches; translating the image by a whole number of patches
moves every patch to a neighbouring grid cell without cutting it. Trained on such translated
images, a ViT sees every object part at several grid positions, so positions become closer to
exchangeable and neighbouring positions see similar content -- what the paper's ImageNet ViT gets
for free from its uncentred, cluttered images and what centred Fashion-MNIST objects lack.
"""

from __future__ import annotations

import torch

__all__ = ["random_patch_shifts", "translate_images"]


def translate_images(images: torch.Tensor, shifts: torch.Tensor, fill: float = 0.0
                     ) -> torch.Tensor:
    """Translate each image by an integer number of pixels, filling the uncovered border.

    **Arguments:**

    - `images`: `(B, C, H, W)`.
    - `shifts`: int tensor `(B, 2)` of `(down, right)` shifts in pixels (negative: up / left);
      `out[b, :, i, j] = images[b, :, i - down, j - right]` where that pixel exists, else `fill`.
      Nothing wraps around.
    - `fill`: value of the uncovered pixels (the background value of the data set).

    **Returns:** a new tensor of the shape, dtype and device of `images`.
    """
    if images.ndim != 4:
        raise ValueError(f"images must be (B, C, H, W), got shape {tuple(images.shape)}")
    shifts = torch.as_tensor(shifts, dtype=torch.int64).reshape(-1, 2).cpu()
    if shifts.shape[0] != images.shape[0]:
        raise ValueError(f"{shifts.shape[0]} shifts for {images.shape[0]} images")
    h, w = images.shape[-2:]
    out = torch.full_like(images, fill)
    # one slice assignment per distinct shift (at most (2m+1)^2 of them per batch)
    for dy, dx in torch.unique(shifts, dim=0).tolist():
        if abs(dy) >= h or abs(dx) >= w:
            continue  # shifted out of the frame entirely: all fill
        sel = ((shifts[:, 0] == dy) & (shifts[:, 1] == dx)).nonzero().squeeze(1).to(images.device)
        src = images.index_select(0, sel)[..., max(0, -dy):h - max(0, dy),
                                          max(0, -dx):w - max(0, dx)]
        block = out.index_select(0, sel)
        block[..., max(0, dy):h - max(0, -dy), max(0, dx):w - max(0, -dx)] = src
        out.index_copy_(0, sel, block)
    return out


def random_patch_shifts(n: int, max_patches: int, patch_size: int,
                        generator: torch.Generator | None = None) -> torch.Tensor:
    """`(n, 2)` int64 pixel shifts, each component `patch_size * k` with `k` uniform in
    `{-max_patches, ..., max_patches}`, independently per image and axis (on the CPU)."""
    if max_patches < 0 or patch_size < 1:
        raise ValueError(f"need max_patches >= 0 and patch_size >= 1, got {max_patches}, "
                         f"{patch_size}")
    k = torch.randint(-max_patches, max_patches + 1, (n, 2), generator=generator)
    return k * patch_size
