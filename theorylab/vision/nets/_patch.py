"""Cut images into non-overlapping square patches and back."""

from __future__ import annotations

import torch

__all__ = ["patchify", "unpatchify"]


def patchify(x: torch.Tensor, patch_size: int) -> torch.Tensor:
    """Images `(B, C, H, W)` → patch tokens `(B, D, C·p·p)`, D = (H/p)(W/p), row-major patches.

    Patch `i = r·(W/p) + c` holds pixels `[r·p:(r+1)·p, c·p:(c+1)·p]`; inside a token the
    layout is `(C, p, p)` flattened.
    """
    b, ch, h, w = x.shape
    p = patch_size
    if h % p or w % p:
        raise ValueError(f"patch size {p} must divide the image size {h}x{w}")
    x = x.reshape(b, ch, h // p, p, w // p, p)
    return x.permute(0, 2, 4, 1, 3, 5).reshape(b, (h // p) * (w // p), ch * p * p)


def unpatchify(tokens: torch.Tensor, patch_size: int, channels: int, height: int,
               width: int) -> torch.Tensor:
    """Inverse of `patchify`: tokens `(B, D, C·p·p)` → images `(B, C, H, W)`."""
    b, n, t = tokens.shape
    p = patch_size
    gh, gw = height // p, width // p
    if gh * gw != n or channels * p * p != t:
        raise ValueError(f"tokens {tuple(tokens.shape)} do not fit ({channels}, {height}, {width})"
                         f" with patch size {p}")
    x = tokens.reshape(b, gh, gw, channels, p, p).permute(0, 3, 1, 4, 2, 5)
    return x.reshape(b, channels, height, width)
