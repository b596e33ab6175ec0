"""A short, seeded training loop for the image classifiers (AdamW, warm-up + cosine schedule)."""

from __future__ import annotations

import math
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch
from torch import nn

from theorylab.vision.nets._augment import random_patch_shifts, translate_images

__all__ = [
    "TrainConfig",
    "TrainResult",
    "cpu_threads",
    "evaluate",
    "param_groups",
    "resolve_device",
    "train_classifier",
    "warmup_cosine",
]

DEFAULT_CPU_THREADS = 1
"""Intra-op threads used by `train_classifier` on CPU. The models here are tiny (batches of
64-128 images, widths 16-64), so threads add synchronisation and gain little; on a busy 2-core
machine 2 threads made a digits run 2x to 100x slower than 1 thread (5.5 s vs 546 s)."""


AUGMENT_SEED_OFFSET = 1_000_003
"""The translation shifts of `train_classifier` are drawn from a generator seeded by
`seed + AUGMENT_SEED_OFFSET`."""


@contextmanager
def cpu_threads(n: int | None) -> Iterator[None]:
    """Temporarily set torch's intra-op CPU threads to `n` (no change if `n` is None)."""
    if n is None:
        yield
        return
    if n < 1:
        raise ValueError(f"threads must be >= 1, got {n}")
    old = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(old)


def resolve_device(device: str | torch.device) -> torch.device:
    """`torch.device` for `device`, failing clearly when CUDA is asked for but absent."""
    dev = torch.device(device)
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise RuntimeError("device 'cuda' requested but torch.cuda.is_available() is False")
    return dev


def warmup_cosine(step: int, lr: float, warmup: int, total: int) -> float:
    """The learning rate of step `step` (0-based) of `total`: linear warm-up to `lr` over the
    first `warmup` steps, then cosine decay to 0."""
    if step < warmup:
        return lr * (step + 1) / warmup
    t = (step - warmup) / max(1, total - warmup)
    return lr * 0.5 * (1.0 + math.cos(math.pi * t))


@dataclass(frozen=True)
class TrainConfig:
    """Optimisation settings of `train_classifier`.

    **Arguments:**

    - `epochs`: passes over the training set (>= 1).
    - `batch_size`: mini-batch size (>= 1); the last incomplete batch is dropped unless it is the
      only one.
    - `lr`: peak AdamW learning rate (> 0).
    - `weight_decay`: AdamW decoupled weight decay (>= 0).
    - `warmup_frac`: fraction of all steps with a linear warm-up, then cosine decay to 0.
    - `grad_clip`: max global gradient norm (None: no clipping).
    - `log_every`: record the mean training loss every this many steps.
    - `evals_per_epoch`: test-accuracy evaluations per epoch (>= 1).
    - `translate_patches`: data augmentation; if > 0, every training image of every mini-batch
      is translated by `translate_unit * k` pixels along each axis, `k` drawn uniformly and
      independently in `{-translate_patches, ..., translate_patches}`, the uncovered border
      filled with `translate_fill` (see `translate_images`). 0 (default): no augmentation. Test
      images are never translated.
    - `translate_unit`: pixels per unit of translation (the ViT patch size, so that a shift
      moves whole patches).
    - `translate_fill`: value of the uncovered pixels; None: the minimum of the training images
      (the background for Fashion-MNIST and digits, whose background is 0 before
      standardisation).
    - `pos_weight_decay`: weight decay of the positional encodings (parameters named `pos`);
      None (default): the same as `weight_decay`.
    """

    epochs: int = 10
    batch_size: int = 128
    lr: float = 1e-3
    weight_decay: float = 0.05
    warmup_frac: float = 0.05
    grad_clip: float | None = 1.0
    log_every: int = 10
    evals_per_epoch: int = 1
    translate_patches: int = 0
    translate_unit: int = 1
    translate_fill: float | None = None
    pos_weight_decay: float | None = None

    def __post_init__(self) -> None:
        if self.epochs < 1:
            raise ValueError(f"epochs must be >= 1, got {self.epochs}")
        if self.batch_size < 1:
            raise ValueError(f"batch_size must be >= 1, got {self.batch_size}")
        if not self.lr > 0:
            raise ValueError(f"lr must be > 0, got {self.lr}")
        if self.weight_decay < 0:
            raise ValueError(f"weight_decay must be >= 0, got {self.weight_decay}")
        if not 0 <= self.warmup_frac < 1:
            raise ValueError(f"warmup_frac must be in [0, 1), got {self.warmup_frac}")
        if self.log_every < 1 or self.evals_per_epoch < 1:
            raise ValueError("log_every and evals_per_epoch must be >= 1")
        if self.translate_patches < 0 or self.translate_unit < 1:
            raise ValueError("translate_patches must be >= 0 and translate_unit >= 1, got "
                             f"{self.translate_patches}, {self.translate_unit}")
        if self.pos_weight_decay is not None and self.pos_weight_decay < 0:
            raise ValueError(f"pos_weight_decay must be >= 0, got {self.pos_weight_decay}")


@dataclass
class TrainResult:
    """What `train_classifier` returns.

    - `model`: the trained model (in eval mode, on the training device).
    - `history`: tidy DataFrame, one row per logged step, columns `step` (int64), `epoch`
      (float64, fractional), `train_loss` (float64, NaN on evaluation-only rows) and `test_acc`
      (float64 in [0, 1], NaN where not evaluated).
    - `test_acc`: final test accuracy in [0, 1].
    - `seconds`: wall-clock training time.
    """

    model: nn.Module
    history: pd.DataFrame
    test_acc: float
    seconds: float


@torch.no_grad()
def evaluate(model: nn.Module, x: torch.Tensor, y: torch.Tensor, batch_size: int = 512) -> float:
    """Accuracy of `model` on `(x, y)` (already on the model's device), in eval mode."""
    was_training = model.training
    model.eval()
    correct = 0
    for i in range(0, x.shape[0], batch_size):
        correct += int((model(x[i : i + batch_size]).argmax(-1) == y[i : i + batch_size]).sum())
    model.train(was_training)
    return correct / max(1, x.shape[0])


def train_classifier(
    make_model: Callable[[], nn.Module],
    x_train: np.ndarray,
    y_train: np.ndarray,
    x_test: np.ndarray,
    y_test: np.ndarray,
    config: TrainConfig,
    *,
    seed: int,
    device: str | torch.device = "cpu",
    progress: Callable | None = None,
    threads: int | None = DEFAULT_CPU_THREADS,
) -> TrainResult:
    """Train a classifier with cross-entropy, AdamW and a warm-up + cosine schedule.

    Deterministic given `seed` on one device and thread count: the model is built by
    `make_model()` right after `torch.manual_seed(seed)`, and mini-batches are drawn with a
    dedicated generator seeded by `seed`. On CUDA, cuDNN is switched to its deterministic
    algorithms (`torch.backends.cudnn.deterministic = True`, `benchmark = False`; global
    settings). No data augmentation unless `config.translate_patches > 0` (random translations
    by whole patches, drawn from a second generator seeded by `seed + AUGMENT_SEED_OFFSET`, so
    that the batch order is the same as without augmentation).

    **Arguments:**

    - `make_model`: builds the (untrained) model.
    - `x_train`, `y_train`, `x_test`, `y_test`: float32 images `(N, C, H, W)`, int64 labels `(N,)`.
    - `config`: a `TrainConfig`.
    - `seed`: seed of the initialisation and of the batch order.
    - `device`: torch device (`"cpu"` or `"cuda"`).
    - `progress`: optional callable wrapping the epoch iterator (e.g. a tqdm factory).
    - `threads`: torch intra-op threads while training on CPU, restored afterwards (default 1,
      see `DEFAULT_CPU_THREADS`); None keeps torch's current setting.
    """
    dev = resolve_device(device)
    with cpu_threads(threads if dev.type == "cpu" else None):
        return _train(make_model, x_train, y_train, x_test, y_test, config, seed, dev, progress)


def param_groups(model: nn.Module, config: TrainConfig) -> list[dict]:
    """AdamW parameter groups: weight decay `config.weight_decay` on matrices, none on biases
    and 1-d parameters (LayerNorm), `config.pos_weight_decay` (if not None) on the positional
    encodings (parameters named `pos`)."""
    decay, no_decay, pos = [], [], []
    for name, p in model.named_parameters():
        if config.pos_weight_decay is not None and name.split(".")[-1] == "pos":
            pos.append(p)
        elif p.ndim < 2 or name.endswith("bias"):
            no_decay.append(p)
        else:
            decay.append(p)
    groups = [{"params": decay, "weight_decay": config.weight_decay},
              {"params": no_decay, "weight_decay": 0.0}]
    if pos:
        groups.append({"params": pos, "weight_decay": config.pos_weight_decay})
    return groups


def _train(make_model, x_train, y_train, x_test, y_test, config, seed, dev, progress):
    if dev.type == "cuda":
        torch.backends.cudnn.deterministic = True
        torch.backends.cudnn.benchmark = False
    torch.manual_seed(seed)
    model = make_model().to(dev)
    xtr = torch.as_tensor(x_train, dtype=torch.float32, device=dev)
    ytr = torch.as_tensor(y_train, dtype=torch.int64, device=dev)
    xte = torch.as_tensor(x_test, dtype=torch.float32, device=dev)
    yte = torch.as_tensor(y_test, dtype=torch.int64, device=dev)
    n = xtr.shape[0]
    bs = min(config.batch_size, n)
    steps_per_epoch = max(1, n // bs)
    total = steps_per_epoch * config.epochs
    warmup = int(config.warmup_frac * total)

    opt = torch.optim.AdamW(param_groups(model, config), lr=config.lr)
    fill = (float(xtr.min()) if config.translate_fill is None else config.translate_fill)
    # a separate stream, so that the batch order is that of the run without augmentation (and
    # offset, so that it does not replay the raw bits of the batch-order generator)
    aug_gen = (torch.Generator().manual_seed(seed + AUGMENT_SEED_OFFSET)
               if config.translate_patches else None)

    gen = torch.Generator().manual_seed(seed)
    eval_at = {
        int(round(steps_per_epoch * (e + (k + 1) / config.evals_per_epoch))) - 1
        for e in range(config.epochs)
        for k in range(config.evals_per_epoch)
    }
    rows: list[tuple[int, float, float, float]] = []
    loss_fn = nn.CrossEntropyLoss()
    running, count = 0.0, 0
    t0 = time.perf_counter()
    model.train()
    epochs = range(config.epochs)
    step = 0
    for _ in progress(epochs) if progress is not None else epochs:
        order = torch.randperm(n, generator=gen).to(dev)
        for b in range(steps_per_epoch):
            idx = order[b * bs : (b + 1) * bs]
            for group in opt.param_groups:
                group["lr"] = warmup_cosine(step, config.lr, warmup, total)
            xb = xtr[idx]
            if aug_gen is not None:
                shifts = random_patch_shifts(xb.shape[0], config.translate_patches,
                                             config.translate_unit, aug_gen)
                xb = translate_images(xb, shifts, fill)
            loss = loss_fn(model(xb), ytr[idx])
            opt.zero_grad(set_to_none=True)
            loss.backward()
            if config.grad_clip is not None:
                nn.utils.clip_grad_norm_(model.parameters(), config.grad_clip)
            opt.step()
            running += float(loss.detach())
            count += 1
            logged = (step + 1) % config.log_every == 0
            evaluated = step in eval_at
            if logged or evaluated:
                rows.append((step + 1, (step + 1) / steps_per_epoch,
                             running / count if logged else float("nan"),
                             evaluate(model, xte, yte) if evaluated else float("nan")))
            if logged:
                running, count = 0.0, 0
            step += 1
    model.eval()
    history = pd.DataFrame(rows, columns=["step", "epoch", "train_loss", "test_acc"]).astype(
        {"step": "int64", "epoch": "float64", "train_loss": "float64", "test_acc": "float64"}
    )
    # the last step is always evaluated (eval_at holds steps_per_epoch * epochs - 1)
    test_acc = float(history["test_acc"].dropna().iloc[-1])
    return TrainResult(model, history, test_acc, time.perf_counter() - t0)
