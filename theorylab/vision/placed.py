"""Image items placed on a canvas, for the seed-batched self-supervised experiments: every
seed's training items (a class-balanced subset, average-pooled so that they can move on the
canvas) and its held-out images, each pasted once at a seeded random offset on the canvas's
background, kept on the device (the training views place the items anew at every use:
[`theorylab.vision.nets.place_items`][]); and the image subsets the figures share, kept per
process ([`cached_images`][]).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

import torch

from .imagedata import images_28
from .nets import place_items, resolve_device

__all__ = ["PlacedImages", "placed_images", "cached_images", "clear_placed"]


@dataclass
class PlacedImages:
    """The items of every seed on the device: ``items`` (S, n_train, 1, s, s), ``fill`` (S,)
    the background of each seed's standardised items, ``x_eval`` (S, n_eval, 1, canvas,
    canvas) the held-out images placed once, the data's description and name
    (``"fashion-mnist"``, or ``"digits-28"`` for a quick stand-in)."""

    items: torch.Tensor
    fill: torch.Tensor
    x_eval: torch.Tensor
    description: str
    name: str


_MEMO: dict = {}


def clear_placed() -> None:
    """Forget the images kept in this process ([`placed_images`][], [`cached_images`][])."""
    _MEMO.clear()
    cached_images.cache_clear()


def placed_images(n_train: int, n_eval: int, seeds: tuple[int, ...], *, item_pool: int,
                  stand_in: bool = False, device="cpu", canvas: int = 28) -> PlacedImages:
    """The items and placed held-out images of every seed (one set kept per process: a full
    and a quick set are not both kept). Seed s draws its subset with
    [`images_28`][theorylab.vision.imagedata.images_28] (pooled by `item_pool`) and the
    held-out offsets from ``torch.Generator().manual_seed(s + 1)``. Without the Fashion-MNIST
    files this raises
    [`FashionMNISTMissingError`][theorylab.vision.imagedata.FashionMNISTMissingError], unless
    `stand_in`: then the digits upsampled to 28×28 are used (``name`` says so)."""
    dev = resolve_device(device)
    key = (n_train, n_eval, item_pool, tuple(seeds), stand_in, canvas, str(dev))
    if key in _MEMO:
        return _MEMO[key]
    sets = [images_28(n_train, n_eval, s, quick=stand_in, pool=item_pool) for s in seeds]
    items = torch.stack([torch.as_tensor(d.x_train, dtype=torch.float32) for d in sets])
    fill = torch.tensor([float(d.x_train.min()) for d in sets])
    side = items.shape[-1]
    offsets = torch.stack([torch.randint(0, canvas - side + 1, (n_eval, 2),
                                         generator=torch.Generator().manual_seed(s + 1))
                           for s in seeds])
    x_test = torch.stack([torch.as_tensor(d.x_test, dtype=torch.float32) for d in sets])
    x_eval = place_items(x_test, offsets, fill[:, None], canvas)
    data = PlacedImages(items.to(dev), fill.to(dev), x_eval.to(dev), sets[0].description,
                        sets[0].name)
    _MEMO.clear()
    _MEMO[key] = data
    return data


#: [`images_28`][theorylab.vision.imagedata.images_28], kept per process for the figures that
#: share a subset (the arrays are shared: read them, do not write them).
cached_images = lru_cache(maxsize=8)(images_28)
