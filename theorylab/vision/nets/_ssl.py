"""Self-supervised training of a [`ViT`][theorylab.vision.nets.ViT] on images: masked
reconstruction (MAE, SimMIM-style) and contrastive learning (CL, SimCLR-style InfoNCE).

- [`MaskedEncoder`][]: the ViT's blocks on patch tokens, with a learned mask token that
  replaces the embeddings of masked patches before the positional encodings are added (so a
  masked patch's query carries only its position), and the attention maps of every block.
- [`mae_loss`][]: the mean squared error of a light decoder's pixels on the masked patches
  only; [`random_patch_mask`][]: exactly round(ratio·P) masked patches per image.
- [`info_nce`][]: symmetric InfoNCE on cosine similarities over a temperature, the other
  images of the batch as negatives; the views come from
  [`augment_view`][theorylab.vision.nets.augment_view].
- [`place_items`][], [`random_offsets`][]: items pasted on a canvas at given or random
  offsets (an object anywhere on the patch grid).
- [`train_ssl`][]: AdamW with [`param_groups`][theorylab.vision.nets.param_groups], linear
  warm-up (5 % of the steps) and cosine decay, gradient clipping at 1, one seeded batch order
  per seed (the same for both objectives) and one seeded generator for placements, masks and
  views; returns the mean loss of every epoch.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import torch
from torch import nn

from theorylab.vision.nets._augment import augment_view, translate_images
from theorylab.vision.nets._patch import patchify
from theorylab.vision.nets._train import TrainConfig, param_groups
from theorylab.vision.nets._vit import ViT

__all__ = ["OBJECTIVES", "MaskedEncoder", "SSLConfig", "info_nce", "mae_loss", "place_items",
           "random_offsets", "random_patch_mask", "train_ssl"]

#: The self-supervised objectives of [`train_ssl`][].
OBJECTIVES = ("mae", "cl")


class MaskedEncoder(nn.Module):
    """The blocks of a [`ViT`][theorylab.vision.nets.ViT] run on patch tokens, with an optional
    learned mask token replacing the embeddings of masked patches (before the positional
    encodings are added)."""

    def __init__(self, vit: ViT) -> None:
        super().__init__()
        self.vit = vit
        self.mask_token = nn.Parameter(torch.zeros(vit.pos.shape[1]))

    def tokens(self, images: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        x = self.vit.embed(patchify(images, self.vit.patch_size))
        if mask is not None:
            x = torch.where(mask[..., None], self.mask_token.to(x.dtype), x)
        return x + self.vit.pos

    def forward(self, images: torch.Tensor, mask: torch.Tensor | None = None) -> torch.Tensor:
        x = self.tokens(images, mask)
        for blk in self.vit.blocks:
            x = blk(x)
        return self.vit.norm(x)

    @torch.no_grad()
    def attentions(self, images: torch.Tensor) -> torch.Tensor:
        """(layers, B, heads, P, P) attention of every block on clean images."""
        x = self.tokens(images)
        out = []
        for blk in self.vit.blocks:
            out.append(blk.attn.attention(blk.norm1(x)))
            x = blk(x)
        return torch.stack(out)

    def last_attention(self, images: torch.Tensor) -> torch.Tensor:
        """(B, heads, P, P) attention of the last block on clean images."""
        return self.attentions(images)[-1]


def place_items(items: torch.Tensor, offsets: torch.Tensor, fill: float,
                canvas: int = 28) -> torch.Tensor:
    """Items ``(B, C, s, s)`` pasted on ``canvas × canvas`` backgrounds of value `fill`, item b
    with its top-left pixel at ``offsets[b] = (row, column)``, ``0 ≤ offset ≤ canvas − s``."""
    s = items.shape[-1]
    off = torch.as_tensor(offsets, dtype=torch.int64).reshape(-1, 2)
    if int(off.min()) < 0 or int(off.max()) > canvas - s:
        raise ValueError(f"offsets: must lie in [0, {canvas - s}] (got {off.min()}..{off.max()})")
    pad = nn.functional.pad(items, (0, canvas - s, 0, canvas - s), value=fill)
    return translate_images(pad, off, fill)


def random_offsets(n: int, largest: int, gen: torch.Generator) -> torch.Tensor:
    """(n, 2) uniform top-left offsets in 0 … ``largest`` (both axes)."""
    return torch.randint(0, largest + 1, (n, 2), generator=gen)


def random_patch_mask(n: int, P: int, ratio: float, gen: torch.Generator) -> torch.Tensor:
    """(n, P) bool: exactly round(ratio·P) masked patches per image, uniformly at random."""
    m = int(round(ratio * P))
    order = torch.rand(n, P, generator=gen).argsort(dim=1)
    return order < m


def mae_loss(enc: MaskedEncoder, decoder: nn.Module, images: torch.Tensor, mask: torch.Tensor
             ) -> torch.Tensor:
    """Mean squared error of the decoded pixels on the masked patches only."""
    pred = decoder(enc(images, mask))
    target = patchify(images, enc.vit.patch_size)
    err = ((pred - target) ** 2).mean(dim=-1)
    return (err * mask).sum() / mask.sum().clamp_min(1)


def info_nce(z1: torch.Tensor, z2: torch.Tensor, temperature: float) -> torch.Tensor:
    """Symmetric InfoNCE: row i of view 1 against every row of view 2 (positive: i; negatives:
    the other images of the batch), cosine similarity over τ, and the same from view 2."""
    z1 = nn.functional.normalize(z1, dim=-1)
    z2 = nn.functional.normalize(z2, dim=-1)
    logits = z1 @ z2.T / temperature
    target = torch.arange(z1.shape[0], device=z1.device)
    return 0.5 * (nn.functional.cross_entropy(logits, target)
                  + nn.functional.cross_entropy(logits.T, target))


@dataclass(frozen=True)
class SSLConfig:
    """Optimisation of [`train_ssl`][] and the objectives' settings: ``epochs``,
    ``batch_size``, ``lr``, ``weight_decay`` (AdamW); ``mask_ratio`` (MAE: the masked fraction
    of patches); ``temperature`` (CL: τ), ``shift`` and ``noise`` (CL views: the largest
    translation in pixels and the pixel noise of [`augment_view`][theorylab.vision.nets
    .augment_view])."""

    epochs: int
    batch_size: int
    lr: float
    weight_decay: float
    mask_ratio: float = 0.6
    temperature: float = 0.2
    shift: int = 4
    noise: float = 0.1


def train_ssl(objective: str, enc: MaskedEncoder, head: nn.Module, items: torch.Tensor,
              cfg: SSLConfig, seed: int, fill: float,
              place: Callable[[torch.Tensor, torch.Generator], torch.Tensor]) -> list[float]:
    """Train ``enc`` (and ``head``: the decoder or the projection head) in place on ``items``
    by ``objective`` ("mae" or "cl"), each image made from its item by ``place(items,
    generator)`` at every use; returns the mean loss of every epoch. The batch order is drawn
    from a generator seeded by ``seed`` (the same for both objectives); placements, masks and
    views from one seeded by ``seed + 7919``, on the CPU (the same numbers on every device)."""
    if objective not in OBJECTIVES:
        raise ValueError(f"objective: must be one of {OBJECTIVES} (got {objective!r})")
    dev = items.device
    model = nn.ModuleDict({"enc": enc, "head": head})
    tc = TrainConfig(epochs=cfg.epochs, batch_size=cfg.batch_size, lr=cfg.lr,
                     weight_decay=cfg.weight_decay)
    opt = torch.optim.AdamW(param_groups(model, tc), lr=cfg.lr)
    n = items.shape[0]
    bs = min(cfg.batch_size, n)
    per_epoch = max(1, n // bs)
    total = per_epoch * cfg.epochs
    warm = max(1, int(0.05 * total))
    order_gen = torch.Generator().manual_seed(seed)  # the same batch order for MAE and CL
    aug_gen = torch.Generator().manual_seed(seed + 7919)
    step, curve = 0, []
    model.train()
    for _ in range(cfg.epochs):
        order = torch.randperm(n, generator=order_gen)
        losses = []
        for b in range(per_epoch):
            ib = items[order[b * bs:(b + 1) * bs].to(dev)]
            lr = (cfg.lr * (step + 1) / warm if step < warm else
                  cfg.lr * 0.5 * (1 + math.cos(math.pi * (step - warm) / max(1, total - warm))))
            for g in opt.param_groups:
                g["lr"] = lr
            if objective == "mae":
                xb = place(ib, aug_gen)
                mask = random_patch_mask(xb.shape[0], enc.vit.num_patches, cfg.mask_ratio,
                                         aug_gen).to(dev)
                loss = mae_loss(enc, head, xb, mask)
            else:
                v1, v2 = (augment_view(place(ib, aug_gen), aug_gen, fill, shift=cfg.shift,
                                       noise=cfg.noise) for _ in range(2))
                loss = info_nce(head(enc(v1).mean(1)), head(enc(v2).mean(1)), cfg.temperature)
            opt.zero_grad(set_to_none=True)
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            losses.append(loss.detach())
            step += 1
        curve.append(float(torch.stack(losses).mean()))
    model.eval()
    return curve
