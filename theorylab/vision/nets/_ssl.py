"""Self-supervised training of a seed-batched ViT ([`SeedViT`][theorylab.vision.nets.SeedViT]):
masked reconstruction (MAE) and contrastive learning (CL), with one augmentation pipeline for
both, every seed of the batch trained in one optimiser step.

- **Views** ([`augment`][]): an item (smaller than the canvas) is flipped horizontally with
  probability ½, pasted at a uniformly random offset on a canvas of background (a translation
  over the whole canvas: what a patch sees depends on where the object sits, so locality
  matters), then its contrast is scaled by U[0.6, 1.4], its brightness shifted by U[−0.4, 0.4]
  (standardised units) and Gaussian pixel noise added. MAE sees one view per image, CL two.
  No CutMix or crops that paste pieces of other images.
- **Crossed augmentations** (``views``, the control of which augmentation an objective
  sees): ``views="cl"`` is CL's (two independent views of an item: its positive pairs differ
  by flip, placement, jitter and noise), ``views="mae"`` MAE's (one view of an item: flip,
  placement and jitter drawn once). MAE with CL's views reconstructs the masked patches of the
  *other* view of the pair from the visible patches of the first; CL with MAE's views
  contrasts two copies of one view that differ only by their own masks (``mask_ratio``, the
  mask token) and their own pixel noise.
- **MAE** ([`mae_loss`][]): a random fraction of the patches of each view (exactly
  ``round(ratio·P)``) is replaced by the mask token; a per-token decoder (LayerNorm + linear)
  predicts the pixels; the loss is the squared error per pixel averaged over the masked patches.
- **CL** ([`info_nce`][]): the encoder's output tokens are averaged (global average pooling, no
  CLS token), a two-layer projection head maps them, and the symmetric InfoNCE loss with
  cosine similarities over a temperature τ takes the other view of the same image as the
  positive and the other images of the batch as negatives.
- **Optimisation** ([`train_seeds`][]): AdamW (weight decay on weight matrices only, see
  [`decay_groups`][theorylab.vision.nets.decay_groups]), linear warm-up then cosine decay,
  gradient clipping at 1 per seed; the loss summed over seeds, so each seed's gradient is its
  own. Every random draw of seed s (batch order, flips, offsets, jitter, noise, masks) comes
  from seed s's own generators.

The random numbers are drawn on the device of the data (CPU generators on the CPU, CUDA
generators on a GPU), so a run is reproducible on one device and differs between devices.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, replace

import torch
from torch import nn
from torch.nn import functional

from theorylab.vision.nets._seedvit import (
    SeedLayerNorm,
    SeedLinear,
    SeedMLP,
    SeedViT,
    clip_grad_norm_per_seed_,
    decay_groups,
    patchify_seeds,
)
from theorylab.vision.nets._train import warmup_cosine

__all__ = ["OBJECTIVES", "VIEWS", "Augment", "SSLSchedule", "place_items", "augment",
           "random_masks", "mae_decoder", "cl_projector", "mae_loss", "info_nce",
           "mean_predictor_mse", "SeedStreams", "train_seeds"]

#: The objectives of [`train_seeds`][].
OBJECTIVES = ("mae", "cl")
#: Whose augmentation an objective is trained with ([`train_seeds`][]'s ``views``; module
#: docstring): ``"mae"`` one view per item, ``"cl"`` two independent views.
VIEWS = ("mae", "cl")


@dataclass(frozen=True)
class Augment:
    """The view of an item: canvas side (pixels), flip probability, contrast range
    [1 − contrast, 1 + contrast], brightness range [−brightness, brightness], noise standard
    deviation (module docstring)."""

    canvas: int = 28
    flip: float = 0.5
    contrast: float = 0.4
    brightness: float = 0.4
    noise: float = 0.1


def place_items(items: torch.Tensor, offsets: torch.Tensor, fill, canvas: int, *,
                check: bool = True) -> torch.Tensor:
    """Items ``(..., C, s, s)`` pasted on ``canvas × canvas`` backgrounds: item i with its
    top-left pixel at ``offsets[i] = (row, column)`` (``(..., 2)`` integers in
    [0, canvas − s]), every other pixel `fill` (a number, or a tensor broadcasting against the
    leading axes ``(...)``). One gather, no loop over offsets. `check`: validate the offsets'
    range (a device synchronisation; [`augment`][] draws them in range and skips it)."""
    *lead, C, s, s2 = items.shape
    if s != s2 or s > canvas:
        raise ValueError(f"items: must be square and at most {canvas} pixels (got {s}×{s2})")
    off = offsets.to(device=items.device, dtype=torch.int64)
    if off.shape != (*lead, 2):
        raise ValueError(f"offsets: must have shape {(*lead, 2)} (got {tuple(off.shape)})")
    if check and off.numel() and (int(off.min()) < 0 or int(off.max()) > canvas - s):
        raise ValueError(f"offsets: must lie in [0, {canvas - s}] (got {int(off.min())}.."
                         f"{int(off.max())})")
    ar = torch.arange(canvas, device=items.device)
    rows = ar - off[..., 0:1]  # (..., canvas): the item row shown at each canvas row
    cols = ar - off[..., 1:2]
    vr = (rows >= 0) & (rows < s)
    vc = (cols >= 0) & (cols < s)
    ri = rows.clamp(0, s - 1)[..., None, :, None].expand(*lead, C, canvas, s)
    x = torch.gather(items, -2, ri)
    ci = cols.clamp(0, s - 1)[..., None, None, :].expand(*lead, C, canvas, canvas)
    x = torch.gather(x, -1, ci)
    valid = (vr[..., :, None] & vc[..., None, :])[..., None, :, :]
    fill_t = torch.as_tensor(fill, dtype=items.dtype, device=items.device)
    if fill_t.ndim:
        fill_t = fill_t.reshape(*fill_t.shape, 1, 1, 1)
    return torch.where(valid, x, fill_t)


class SeedStreams:
    """One generator per seed and per purpose (batch order, augmentations) on `device`, each
    seeded from the seed alone, so a seed's draws do not depend on the other seeds."""

    ORDER, AUGMENT = 0, 7919

    def __init__(self, seeds: tuple[int, ...], device: torch.device | str = "cpu") -> None:
        dev = torch.device(device)
        self.device = dev
        self.order = [torch.Generator(device=dev).manual_seed(s + self.ORDER) for s in seeds]
        self.aug = [torch.Generator(device=dev).manual_seed(s + self.AUGMENT) for s in seeds]

    def stack(self, draw: Callable[[torch.Generator], torch.Tensor],
              gens: list[torch.Generator] | None = None) -> torch.Tensor:
        """``stack([draw(g) for g in gens])`` (default: the augmentation generators)."""
        return torch.stack([draw(g) for g in (self.aug if gens is None else gens)])


def augment(items: torch.Tensor, streams: SeedStreams, fill: torch.Tensor,
            aug: Augment) -> torch.Tensor:
    """One view of each item ``(S, B, C, s, s)`` → ``(S, B, C, canvas, canvas)``; `fill`:
    ``(S,)`` background per seed (module docstring)."""
    S, B, C, s, _ = items.shape
    dev = items.device
    hi = aug.canvas - s + 1
    flip = streams.stack(lambda g: torch.rand(B, generator=g, device=dev) < aug.flip)
    x = torch.where(flip[..., None, None, None], items.flip(-1), items)
    off = streams.stack(lambda g: torch.randint(0, hi, (B, 2), generator=g, device=dev))
    x = place_items(x, off, fill[:, None], aug.canvas, check=False)
    c = streams.stack(lambda g: 1 + aug.contrast * (2 * torch.rand(B, generator=g, device=dev)
                                                    - 1))
    b = streams.stack(lambda g: aug.brightness * (2 * torch.rand(B, generator=g, device=dev)
                                                  - 1))
    return _noisy(x * c[..., None, None, None] + b[..., None, None, None], streams, aug.noise)


def _noisy(x: torch.Tensor, streams: SeedStreams, noise: float) -> torch.Tensor:
    """`x` (S, ...) plus Gaussian pixel noise of standard deviation `noise`, each seed's from
    its own augmentation generator (`x` itself when `noise` is 0)."""
    if not noise:
        return x
    return x + noise * streams.stack(lambda g: torch.randn(x.shape[1:], generator=g,
                                                           device=x.device))


def random_masks(streams: SeedStreams, B: int, P: int, ratio: float) -> torch.Tensor:
    """(S, B, P) bool: exactly ``round(ratio·P)`` masked patches per view, uniformly."""
    m = int(round(ratio * P))
    dev = streams.device
    order = streams.stack(lambda g: torch.rand(B, P, generator=g, device=dev)).argsort(-1)
    return order < m


def _head_generators(seeds: tuple[int, ...]) -> list[torch.Generator]:
    """The generators of a head's initial weights: seed s's from ``s + 104729``."""
    return [torch.Generator().manual_seed(s + 104729) for s in seeds]


def mae_decoder(seeds: tuple[int, ...], dim: int, pixels: int) -> nn.Module:
    """The per-token pixel decoder (LayerNorm + linear), seed s's weights from generator
    ``s + 104729``."""
    return nn.Sequential(SeedLayerNorm(len(seeds), dim),
                         SeedLinear(_head_generators(seeds), dim, pixels))


def cl_projector(seeds: tuple[int, ...], dim: int) -> nn.Module:
    """The projection head (dim → 2·dim → dim, GELU), seed s's weights from generator
    ``s + 104729``."""
    return SeedMLP(_head_generators(seeds), dim, 2 * dim, dim)


def mae_loss(model: SeedViT, decoder: nn.Module, images: torch.Tensor,
             mask: torch.Tensor, target: torch.Tensor | None = None) -> torch.Tensor:
    """(S,) mean squared error per pixel of the decoded masked patches of `images`
    (S, B, C, H, W) against the same patches of `target` (default: `images` themselves);
    `mask` (S, B, P)."""
    pred = decoder(model(images, mask))
    goal = images if target is None else target
    err = ((pred - patchify_seeds(goal, model.patch_size)) ** 2).mean(-1)
    m = mask.to(err.dtype)
    return (err * m).sum((1, 2)) / m.sum((1, 2)).clamp_min(1)


def info_nce(z1: torch.Tensor, z2: torch.Tensor, temperature: float) -> torch.Tensor:
    """(S,) symmetric InfoNCE of the embeddings (S, B, k) of two views: row i of view 1 against
    every row of view 2 (positive i, negatives the other B − 1), cosine similarity over τ, and
    the same from view 2. Equal embeddings for every image give log B."""
    S, B, _ = z1.shape
    z1 = functional.normalize(z1, dim=-1)
    z2 = functional.normalize(z2, dim=-1)
    logits = z1 @ z2.transpose(1, 2) / temperature
    target = torch.arange(B, device=z1.device).expand(S, B)
    a = functional.cross_entropy(logits.transpose(1, 2), target, reduction="none").mean(1)
    b = functional.cross_entropy(logits, target, reduction="none").mean(1)
    return 0.5 * (a + b)


@torch.no_grad()
def mean_predictor_mse(items: torch.Tensor, streams: SeedStreams, fill: torch.Tensor,
                       aug: Augment, n: int = 2048) -> torch.Tensor:
    """(S,) the MAE loss of the best predictor that ignores the visible patches: every masked
    pixel predicted by its mean over views (it knows the pixel's position), i.e. the mean over
    pixels of the per-pixel variance of `n` views of the items (S, N, C, s, s)."""
    S, N = items.shape[:2]
    idx = streams.stack(lambda g: torch.randint(0, N, (n,), generator=g, device=items.device))
    x = augment(items[torch.arange(S, device=items.device)[:, None], idx], streams, fill, aug)
    return x.var(dim=1, unbiased=True).mean(dim=(1, 2, 3))


@dataclass(frozen=True)
class SSLSchedule:
    """Optimisation of [`train_seeds`][]: ``steps`` optimiser steps on batches of
    ``batch_size`` items per seed (a fresh permutation of the items whenever one is used up),
    peak learning rate ``lr`` after ``warmup`` of the steps (a fraction), cosine decay to 0,
    AdamW ``weight_decay``, per-seed gradient clipping at ``clip``."""

    steps: int
    batch_size: int
    lr: float
    weight_decay: float = 0.05
    warmup: float = 0.05
    clip: float = 1.0

    def lr_at(self, step: int) -> float:
        """The learning rate of optimiser step `step` (0-based)."""
        return warmup_cosine(step, self.lr, max(1, int(self.warmup * self.steps)), self.steps)


def _batches(N: int, B: int, streams: SeedStreams, device) -> Iterator[torch.Tensor]:
    """The (S, B) item indices of the successive batches: per seed, consecutive slices of a
    permutation of the N items, a new permutation when fewer than B remain."""
    while True:
        perm = streams.stack(lambda g: torch.randperm(N, generator=g, device=device),
                             streams.order)
        for i in range(0, N - B + 1, B):
            yield perm[:, i:i + B]


def train_seeds(objective: str, model: SeedViT, head: nn.Module, items: torch.Tensor,
                fill: torch.Tensor, schedule: SSLSchedule, aug: Augment, *,
                mask_ratio: float = 0.6, temperature: float = 0.2, views: str | None = None,
                streams: SeedStreams | None = None,
                checkpoints: tuple[int, ...] = (),
                on_checkpoint: Callable[[int], None] | None = None,
                progress: Callable[[int], None] | None = None) -> torch.Tensor:
    """Train `model` and `head` (the [`mae_decoder`][] or the [`cl_projector`][]) in place by
    `objective` (``"mae"`` or ``"cl"``) on the items (S, N, C, s, s) of every seed; `fill`
    (S,) the background, with the augmentation `views` (one of [`VIEWS`][]; None: the
    objective's own; module docstring). Returns the (steps + 1, S) losses: row 0 the loss of
    the untrained model on the first batch (no step taken), row t the loss of step t's batch
    before its update. ``on_checkpoint(t)`` is called (in eval mode, no gradients) after t
    steps for each t in `checkpoints` (0: before training); ``progress(t)`` after every
    step."""
    if objective not in OBJECTIVES:
        raise ValueError(f"objective: must be one of {list(OBJECTIVES)} (got {objective!r})")
    views = objective if views is None else views
    if views not in VIEWS:
        raise ValueError(f"views: must be one of {list(VIEWS)} (got {views!r})")
    dev = items.device
    S, N = items.shape[:2]
    streams = streams or SeedStreams(model.seeds, dev)
    B = min(schedule.batch_size, N)
    batches = _batches(N, B, streams, dev)
    params = list(model.parameters()) + list(head.parameters())
    opt = torch.optim.AdamW(decay_groups(nn.ModuleList([model, head]), schedule.weight_decay),
                            lr=schedule.lr)
    seed_axis = torch.arange(S, device=dev)[:, None]
    losses = torch.zeros(schedule.steps + 1, S, device=dev)
    marks = set(checkpoints)

    clean = replace(aug, noise=0.0)

    def loss_of(idx: torch.Tensor) -> torch.Tensor:
        batch = items[seed_axis, idx]
        if objective == "mae":
            x = augment(batch, streams, fill, aug)
            mask = random_masks(streams, B, model.num_patches, mask_ratio)
            target = augment(batch, streams, fill, aug) if views == "cl" else None
            return mae_loss(model, head, x, mask, target)
        if views == "cl":
            v1 = augment(batch, streams, fill, aug)
            v2 = augment(batch, streams, fill, aug)
            return info_nce(head(model(v1).mean(2)), head(model(v2).mean(2)), temperature)
        base = augment(batch, streams, fill, clean)  # one flip, placement and jitter
        z = [head(model(_noisy(base, streams, aug.noise),
                        random_masks(streams, B, model.num_patches, mask_ratio)).mean(2))
             for _ in range(2)]
        return info_nce(z[0], z[1], temperature)

    def training(mode: bool) -> None:
        model.train(mode)
        head.train(mode)

    def checkpoint(t: int) -> None:
        if t in marks and on_checkpoint is not None:
            training(False)
            on_checkpoint(t)
            training(True)

    training(True)
    idx = next(batches)
    with torch.no_grad():
        losses[0] = loss_of(idx)
    checkpoint(0)
    for t in range(schedule.steps):
        for g in opt.param_groups:
            g["lr"] = schedule.lr_at(t)
        loss = loss_of(idx)
        opt.zero_grad(set_to_none=True)
        loss.sum().backward()
        clip_grad_norm_per_seed_(params, schedule.clip)
        opt.step()
        losses[t + 1] = loss.detach()
        checkpoint(t + 1)
        if progress is not None:
            progress(t + 1)
        idx = next(batches)
    training(False)
    return losses.cpu()
