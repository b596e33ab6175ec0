"""Real images: a small ViT trained on uncentred Fashion-MNIST items by MAE and by contrastive
learning (CL) from the same initialisation, and the diversity of its attention in every layer.

Huang, Wen, Chi & Liang (2025), Figures 1 and 3, compare the attention of pretrained ImageNet
ViT-B/16 models (MAE against a contrastive model): MAE's attention is local and differs between
query patches, CL's concentrates on the same global region for every query. Those models cannot
be downloaded here; this module is the offline analogue, beyond the paper's synthetic model.

**Setting (ours, not the paper's).** The small ViT of [`theorylab.vision.nets.ViT`][] (vanilla
attention, learned positional encodings, pre-norm blocks) on class-balanced Fashion-MNIST
subsets. Each item is average-pooled by ``item_pool`` (2: 14×14) and placed at a uniformly
random offset on a 28×28 canvas of background (a new offset every time a training image is
used; one fixed seeded offset per held-out image), so that the object sits anywhere on the
7×7 patch grid and a patch's neighbours, not a fixed position, say where the object is: the
locality that centred Fashion-MNIST lacks. ``item_pool = 1`` is the centred full-size data
set. One seed fixes the encoder's initial weights; the MAE and CL encoders both start from
exactly those weights (a copy), and the untrained encoder is measured as the reference.

- **MAE** (SimMIM-style, as the paper's model: masked patches are replaced by a mask token, so
  a masked patch's query carries only its position): a random fraction ``mask_ratio`` of the
  patches of each image is replaced by a learned mask token before the positional encodings
  are added; a light decoder (LayerNorm + one linear layer per token) predicts the patch's
  pixels; the loss is the mean squared error on the masked patches only.
- **CL** (SimCLR-style InfoNCE): two augmented views of each image (each its own random
  placement on the canvas, then random translations by up to ``shift`` pixels with
  [`translate_images`][theorylab.vision.nets.translate_images], random horizontal flips,
  random contrast and brightness, Gaussian pixel noise), mean-pooled encoder output, a
  two-layer projection head, cosine similarities over temperature ``τ``;
  for each image the other view of the same image is the positive and the other images of the
  batch are the negatives (cross-entropy in both directions).
- Both: AdamW with the parameter groups of [`theorylab.vision.nets.param_groups`][], linear
  warm-up and cosine decay, gradient clipping at 1, the same batch order (one generator seeded
  by the seed). The mean training loss of every epoch is recorded (the loss curves,
  [`CURVE_SCHEMA`][]).

**Measurement.** On ``n_eval`` held-out test images (placed once, no mask, no augmentation),
the attention maps of every head of every block, ``(images, heads, P, P)`` with P = (28/p)²
patches (no CLS token, so no renormalisation is needed). Per layer and head, averaged over
the images: the geometric NMI of Park et al. (ICLR 2023), the mean attention distance (in
patches and in pixels), and theorylab's sharpness decomposition total = shared + diverse
([`theorylab.huang2024.diversity`][]); ``head = -1`` rows are the averages over heads. Four
models per seed: ``init`` (the untrained encoder), ``mae``, ``cl`` and ``uniform`` (exactly
uniform attention 1/P, the reference every metric is read against).

**Command line.** ``python -m theorylab.huang2024.realvit --setting full --out DIR
[--device cuda]`` trains one setting ([`SETTINGS`][]) and writes ``realvit.csv`` and
``realvit-loss.csv`` into ``DIR``; see ``--help``.
"""

from __future__ import annotations

import argparse
import copy
import hashlib
import math
import pickle
import sys
import time
from dataclasses import asdict, dataclass, replace
from functools import lru_cache
from pathlib import Path

import numpy as np
import pandas as pd
import torch
from torch import nn

from theorylab.core.atomic_io import atomic_write_bytes, write_csv
from theorylab.core.claims import t_interval
from theorylab.core.sweep import active_cache
from theorylab.core.threads import limit_threads
from theorylab.vision.imagedata import default_fashion_mnist_dir, images_28
from theorylab.vision.nets import (
    MaskedEncoder,
    SSLConfig,
    ViT,
    place_items,
    random_offsets,
    resolve_device,
    train_ssl,
)

from .diversity import (
    mean_attention_distance,
    normalized_mutual_information,
    sharpness_decomposition,
)

__all__ = ["RealViTConfig", "MODELS", "METRICS", "TABLE_SCHEMA", "CURVE_SCHEMA", "QUICK",
           "FULL", "LARGE", "SETTINGS", "RealViTResult", "run_realvit", "cached_realvit",
           "stored_realvit", "run_key", "seed_summary",
           "layer_attention", "last_layer_attention", "metrics_table", "head_average", "main"]

#: The encoders measured, in table order, and the reference of exactly uniform attention.
MODELS = ("init", "mae", "cl", "uniform")
#: Metric columns of the table.
METRICS = ("nmi", "distance_patches", "distance_pixels", "total", "shared", "diverse")
#: Columns and dtypes of [`metrics_table`][] and of ``RealViTResult.table`` (``layer``: block
#: index from 0, the input side; ``head = -1``: the average over heads).
TABLE_SCHEMA = {"seed": "int64", "model": "object", "layer": "int64", "head": "int64",
                "n_images": "int64", **{m: "float64" for m in METRICS},
                "final_loss": "float64", "train_seconds": "float64"}
#: Columns and dtypes of ``RealViTResult.curves``: the mean training loss of every epoch.
CURVE_SCHEMA = {"seed": "int64", "model": "object", "epoch": "int64", "step": "int64",
                "loss": "float64"}


@dataclass(frozen=True)
class RealViTConfig:
    """Settings of the real-image experiment (validated; frozen).

    - ``n_train``: training images (class-balanced Fashion-MNIST subset); ``n_eval``: held-out
      test images the attention is measured on.
    - ``epochs``, ``batch_size``, ``lr``, ``weight_decay``: optimisation (AdamW, 5 % warm-up,
      cosine decay), the same for MAE and CL but for ``mae_epochs``: MAE's epochs (0: the same
      as ``epochs``; an MAE step costs about a third of a CL step, which encodes two views).
    - ``patch_size`` (divides 28), ``depth``, ``dim``, ``heads``, ``mlp_ratio``: the ViT.
    - ``mask_ratio``: fraction of patches masked per image for MAE, in (0, 1).
    - ``temperature``: InfoNCE temperature τ > 0; ``shift``: largest translation of a CL view in
      pixels; ``noise``: standard deviation of the Gaussian pixel noise of a CL view.
    - ``item_pool``: the 28×28 item is average-pooled by this factor (divides 28) and placed
      at a random offset on the 28×28 canvas; 1: the centred full-size images.
    - ``seeds``: one run per seed (initialisation, data subset, batch order, placements,
      masks, views).
    - ``threads``: torch/BLAS threads while training (0: leave unchanged).
    """

    n_train: int = 4096
    n_eval: int = 256
    epochs: int = 16
    mae_epochs: int = 32
    batch_size: int = 128
    lr: float = 2e-3
    weight_decay: float = 0.05
    patch_size: int = 4
    depth: int = 3
    dim: int = 48
    heads: int = 4
    mlp_ratio: float = 2.0
    mask_ratio: float = 0.6
    temperature: float = 0.2
    shift: int = 4
    noise: float = 0.1
    item_pool: int = 2
    seeds: tuple[int, ...] = (0, 1, 2)
    threads: int = 1

    def __post_init__(self) -> None:
        ints = {"n_train": 2, "n_eval": 1, "epochs": 1, "batch_size": 2, "patch_size": 1,
                "depth": 1, "dim": 1, "heads": 1, "shift": 0, "threads": 0, "item_pool": 1,
                "mae_epochs": 0}
        for name, lo in ints.items():
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, int) or v < lo:
                raise ValueError(f"realvit.{name}: must be an integer >= {lo} (got {v!r})")
        if 28 % self.patch_size:
            raise ValueError(f"realvit.patch_size: must divide 28 (got {self.patch_size})")
        if 28 % self.item_pool:
            raise ValueError(f"realvit.item_pool: must divide 28 (got {self.item_pool})")
        if self.dim % self.heads:
            raise ValueError(f"realvit.heads: must divide dim={self.dim} (got {self.heads})")
        for name in ("lr", "temperature", "mlp_ratio"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v > 0):
                raise ValueError(f"realvit.{name}: must be a finite number > 0 (got {v!r})")
        for name in ("weight_decay", "noise"):
            v = getattr(self, name)
            if not (isinstance(v, (int, float)) and math.isfinite(v) and v >= 0):
                raise ValueError(f"realvit.{name}: must be a finite number >= 0 (got {v!r})")
        if not (isinstance(self.mask_ratio, (int, float)) and 0 < self.mask_ratio < 1):
            raise ValueError(f"realvit.mask_ratio: must be in (0, 1) (got {self.mask_ratio!r})")
        m = round(self.mask_ratio * (28 // self.patch_size) ** 2)
        if not 1 <= m < (28 // self.patch_size) ** 2:
            raise ValueError(f"realvit.mask_ratio: masks {m} patches; need at least 1 masked "
                             "and 1 visible")
        if (not isinstance(self.seeds, tuple) or not self.seeds
                or any(isinstance(s, bool) or not isinstance(s, int) or s < 0
                       for s in self.seeds) or len(set(self.seeds)) != len(self.seeds)):
            raise ValueError(f"realvit.seeds: must be a non-empty tuple of distinct integers "
                             f">= 0 (got {self.seeds!r})")

    @property
    def patches(self) -> int:
        """P = (28 / patch_size)² patches per image."""
        return (28 // self.patch_size) ** 2

    @property
    def steps(self) -> int:
        """Optimiser steps of CL per seed: epochs × ⌊n_train / batch_size⌋."""
        return self.epochs_of("cl") * self.steps_per_epoch

    @property
    def steps_per_epoch(self) -> int:
        """⌊n_train / batch_size⌋ (at least 1)."""
        return max(1, self.n_train // min(self.batch_size, self.n_train))

    def epochs_of(self, objective: str) -> int:
        """Epochs of ``"mae"`` (``mae_epochs``, or ``epochs`` when 0) or ``"cl"``."""
        return self.mae_epochs if objective == "mae" and self.mae_epochs else self.epochs

    def as_dict(self) -> dict:
        d = asdict(self)
        d["seeds"] = list(self.seeds)
        return d


#: The --quick setting: 64 images, four epochs, two seeds, a tiny ViT (seconds); it runs the
#: whole path (placement, both objectives, every layer, loss curves, references).
QUICK = RealViTConfig(n_train=64, n_eval=32, epochs=4, mae_epochs=0, batch_size=32, depth=2,
                      dim=32, heads=2, seeds=(0, 1))
#: The full setting of ``check`` (3 seeds × 512 steps per objective; see docs/reproducing.md
#: for its measured runtime on one core).
FULL = RealViTConfig()
#: A larger setting for a GPU or a long CPU run (``--setting large``): 4× the steps, a wider
#: ViT, the same data and objectives.
LARGE = replace(FULL, n_train=16384, epochs=32, mae_epochs=64, dim=64, seeds=(0, 1, 2, 3, 4))
#: The named settings of the command line.
SETTINGS = {"quick": QUICK, "full": FULL, "large": LARGE}


# -- training (the self-supervised loops are theorylab.vision.nets.train_ssl) ---------------------
def _placer(cfg: RealViTConfig, fill: float):
    """Each use of an item: a fresh uniform placement of the pooled item on the canvas."""
    largest = 28 - 28 // cfg.item_pool

    def place(items: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
        return place_items(items, random_offsets(len(items), largest, gen), fill)
    return place


def _train(objective: str, enc: MaskedEncoder, head: nn.Module, items: torch.Tensor,
           cfg: RealViTConfig, seed: int, fill: float) -> list[float]:
    """Train ``enc`` (and ``head``: the decoder or the projection head) in place on the pooled
    ``items``, placed at fresh random offsets for every use; returns the mean loss of every
    epoch ([`train_ssl`][theorylab.vision.nets.train_ssl] with this experiment's settings)."""
    ssl = SSLConfig(epochs=cfg.epochs_of(objective), batch_size=cfg.batch_size, lr=cfg.lr,
                    weight_decay=cfg.weight_decay, mask_ratio=cfg.mask_ratio,
                    temperature=cfg.temperature, shift=cfg.shift, noise=cfg.noise)
    return train_ssl(objective, enc, head, items, ssl, seed, fill, _placer(cfg, fill))


# -- measurement -----------------------------------------------------------------------------------
def layer_attention(enc: MaskedEncoder, images: np.ndarray | torch.Tensor, chunk: int = 128
                    ) -> np.ndarray:
    """(layers, n, heads, P, P) float64 attention maps of every block on clean ``images``."""
    dev = enc.vit.pos.device
    x = torch.as_tensor(images, dtype=torch.float32)
    out = [enc.attentions(x[i:i + chunk].to(dev)).double().cpu().numpy()
           for i in range(0, len(x), chunk)]
    return np.concatenate(out, axis=1)


def last_layer_attention(enc: MaskedEncoder, images: np.ndarray, chunk: int = 128
                         ) -> np.ndarray:
    """(n, heads, P, P) float64 attention maps of the last block on clean ``images``."""
    return layer_attention(enc, images, chunk)[-1]


def metrics_table(maps: np.ndarray, *, seed: int, model: str, patch_size: int, layer: int = 0,
                  final_loss: float = math.nan, train_seconds: float = 0.0) -> pd.DataFrame:
    """Per-head metrics (means over the images) and their head average (``head = -1``) of
    attention maps ``(n, heads, P, P)`` of one layer; rows follow [`TABLE_SCHEMA`][]."""
    if maps.ndim != 4:
        raise ValueError(f"maps: must have shape (n, heads, P, P) (got {maps.shape})")
    sh = sharpness_decomposition(maps)
    dist = mean_attention_distance(maps)
    per = {"nmi": normalized_mutual_information(maps), "distance_patches": dist,
           "distance_pixels": dist * patch_size, "total": sh.total, "shared": sh.shared,
           "diverse": sh.diverse}
    common = {"seed": seed, "model": model, "layer": layer, "n_images": maps.shape[0],
              "final_loss": final_loss, "train_seconds": train_seconds}
    rows = [{**common, "head": h, **{k: float(v[:, h].mean()) for k, v in per.items()}}
            for h in range(maps.shape[1])]
    rows.append({**common, "head": -1, **{k: float(v.mean()) for k, v in per.items()}})
    return pd.DataFrame(rows).astype(TABLE_SCHEMA)[list(TABLE_SCHEMA)]


def head_average(table: pd.DataFrame, layer: int | None = None) -> pd.DataFrame:
    """The ``head = -1`` rows (averages over heads), one per (seed, model, layer); with
    `layer`, only that layer's (−1: the last layer of the table)."""
    out = table[table["head"] == -1]
    if layer is not None and "layer" in out:
        out = out[out["layer"] == (int(out["layer"].max()) if layer == -1 else layer)]
    return out.reset_index(drop=True)


def seed_summary(table: pd.DataFrame, layer: int = -1,
                 metrics: tuple[str, ...] = METRICS) -> pd.DataFrame:
    """Mean and 95 % t-interval over the seeds of the head-averaged `metrics` of one `layer`
    (−1: the last): one row per (model, metric), columns ``model``, ``metric``, ``mean``,
    ``lo``, ``hi``, ``n_seeds`` (``lo``/``hi`` NaN with one seed)."""
    avg = head_average(table, layer=layer)
    rows = []
    for model in avg.model.unique():
        sub = avg[avg.model == model]
        for m in metrics:
            mean, lo, hi = t_interval(sub[m].to_numpy(float))
            rows.append({"model": model, "metric": m, "mean": mean, "lo": lo, "hi": hi,
                         "n_seeds": len(sub)})
    return pd.DataFrame(rows)


@dataclass
class RealViTResult:
    """What [`run_realvit`][] returns: the tidy ``table`` ([`TABLE_SCHEMA`][]), the loss
    ``curves`` ([`CURVE_SCHEMA`][]), the attention maps of a few held-out images per
    (seed, model), every layer (``maps[(seed, model)]``, shape
    ``(layers, n_show, heads, P, P)``), those images (``images[seed]``, placed on the canvas),
    the config, the data description, the wall time and the data set's name
    (``"fashion-mnist"``, or ``"digits-28"`` for the stand-in of a quick figure)."""

    table: pd.DataFrame
    curves: pd.DataFrame
    maps: dict
    images: dict
    config: RealViTConfig
    description: str
    seconds: float
    data: str = "fashion-mnist"


def run_realvit(cfg: RealViTConfig, *, n_show: int = 4, progress=None,
                stand_in: bool = False, device: str = "cpu") -> RealViTResult:
    """Train MAE and CL from the same initialisation for every seed and measure the attention
    of every layer of the untrained, MAE and CL encoders on held-out images, beside exactly
    uniform attention. Without the Fashion-MNIST files this raises
    [`FashionMNISTMissingError`][theorylab.vision.imagedata.FashionMNISTMissingError], unless
    `stand_in`: then the digits upsampled to 28×28 are used (the result's ``data`` says so).
    `device`: ``"cpu"`` or ``"cuda"`` (the random draws stay on the CPU generators)."""
    dev = resolve_device(device)
    t0 = time.perf_counter()
    tables, curves, maps, images = [], [], {}, {}
    desc, data_name = "", "fashion-mnist"
    seeds = progress(cfg.seeds) if progress is not None else cfg.seeds
    with limit_threads(cfg.threads):
        for seed in seeds:
            data = images_28(cfg.n_train, cfg.n_eval, seed, quick=stand_in, pool=cfg.item_pool)
            desc, data_name = data.description, data.name
            fill = float(data.x_train.min())  # the background of the standardised items
            items = torch.as_tensor(data.x_train, dtype=torch.float32).to(dev)
            test_gen = torch.Generator().manual_seed(seed + 1)
            x_test = place_items(torch.as_tensor(data.x_test, dtype=torch.float32),
                                 random_offsets(cfg.n_eval, 28 - 28 // cfg.item_pool, test_gen),
                                 fill)
            torch.manual_seed(seed)
            init = MaskedEncoder(ViT(28, cfg.patch_size, 1, dim=cfg.dim, depth=cfg.depth,
                                heads=cfg.heads, mlp_ratio=cfg.mlp_ratio))
            heads_gen = torch.Generator().manual_seed(seed + 104729)
            with torch.random.fork_rng():
                torch.manual_seed(int(torch.randint(0, 2**31 - 1, (1,), generator=heads_gen)))
                decoder = nn.Sequential(nn.LayerNorm(cfg.dim),
                                        nn.Linear(cfg.dim, cfg.patch_size ** 2))
                proj = nn.Sequential(nn.Linear(cfg.dim, 2 * cfg.dim), nn.GELU(),
                                     nn.Linear(2 * cfg.dim, cfg.dim))
            init.to(dev)
            encs = {"init": (init, math.nan, 0.0)}
            for obj, head in (("mae", decoder), ("cl", proj)):
                enc = copy.deepcopy(init)  # the same initial encoder weights for both
                t1 = time.perf_counter()
                curve = _train(obj, enc, head.to(dev), items, cfg, seed, fill)
                encs[obj] = (enc, curve[-1], time.perf_counter() - t1)
                curves += [{"seed": seed, "model": obj, "epoch": e + 1,
                            "step": (e + 1) * cfg.steps_per_epoch, "loss": v}
                           for e, v in enumerate(curve)]
            images[seed] = x_test[:n_show].numpy()
            for name in MODELS:
                if name == "uniform":
                    P = cfg.patches
                    A = np.full((cfg.depth, 1, cfg.heads, P, P), 1.0 / P)
                    loss, secs = math.nan, 0.0
                else:
                    enc, loss, secs = encs[name]
                    enc.eval()
                    A = layer_attention(enc, x_test)
                    maps[(seed, name)] = A[:, :n_show]
                for layer in range(cfg.depth):
                    tables.append(metrics_table(A[layer], seed=seed, model=name, layer=layer,
                                                patch_size=cfg.patch_size, final_loss=loss,
                                                train_seconds=secs))
    table = pd.concat(tables, ignore_index=True).astype(TABLE_SCHEMA)
    curve_df = pd.DataFrame(curves, columns=list(CURVE_SCHEMA)).astype(CURVE_SCHEMA)
    return RealViTResult(table, curve_df, maps, images, cfg, desc, time.perf_counter() - t0,
                         data_name)


#: The modules whose source a stored run depends on (their text enters the store key).
_SOURCE_MODULES = ("theorylab.huang2024.realvit", "theorylab.huang2024.diversity",
                   "theorylab.vision.imagedata", "theorylab.vision.nets")


def run_key(cfg: RealViTConfig, stand_in: bool = False) -> str:
    """The store key of a run: a SHA-256 of the config, the stand-in flag, the data folder,
    the torch and numpy versions and the source text of every module that computes the run
    (``_SOURCE_MODULES``; a package contributes all its ``.py`` files), so that a changed
    setting or a changed line of code never reads a stale run."""
    import importlib
    import json

    h = hashlib.sha256()
    h.update(json.dumps({"config": cfg.as_dict(), "stand_in": stand_in,
                         "data": str(default_fashion_mnist_dir()), "torch": torch.__version__,
                         "numpy": np.__version__}, sort_keys=True).encode())
    for name in _SOURCE_MODULES:
        path = Path(importlib.import_module(name).__file__)
        files = sorted(path.parent.glob("*.py")) if path.name == "__init__.py" else [path]
        for f in files:
            h.update(f.name.encode() + b"\0" + f.read_bytes())
    return h.hexdigest()[:32]


def stored_realvit(cfg: RealViTConfig, folder: str | Path | None, *, stand_in: bool = False,
                   **kw) -> RealViTResult:
    """[`run_realvit`][] of `cfg`, read from ``folder/realvit/<run_key>.pkl`` when that file
    exists, else computed and written there (atomically); `folder` None: always computed.
    The file is theorylab's own pickle; a folder is only ever read by the machine that wrote
    it (the store of ``--cache DIR``)."""
    if folder is None:
        return run_realvit(cfg, stand_in=stand_in, **kw)
    path = Path(folder) / "realvit" / f"{run_key(cfg, stand_in)}.pkl"
    if path.is_file():
        with open(path, "rb") as fh:
            return pickle.load(fh)
    res = run_realvit(cfg, stand_in=stand_in, **kw)
    path.parent.mkdir(parents=True, exist_ok=True)
    atomic_write_bytes(path, pickle.dumps(res, protocol=pickle.HIGHEST_PROTOCOL))
    return res


@lru_cache(maxsize=4)
def _cached(quick: bool, stand_in: bool, folder: Path | None) -> RealViTResult:
    return stored_realvit(QUICK if quick else FULL, folder, stand_in=stand_in)


def cached_realvit(quick: bool, stand_in: bool = False) -> RealViTResult:
    """[`run_realvit`][] of [`QUICK`][] or [`FULL`][], computed once per process (the claim
    ``realvit-diversity`` and the figures fig1 and fig3 read the same runs) and, inside a
    ``--cache DIR`` block of the checks and figures, once per store
    ([`stored_realvit`][]: keyed by the setting and the source of the code, never stale).
    `stand_in`: see [`run_realvit`][] (the quick figures set it; the claim never does)."""
    return _cached(quick, stand_in, active_cache())


cached_realvit.cache_clear = _cached.cache_clear  # type: ignore[attr-defined]


# -- command line ----------------------------------------------------------------------------------
def main(argv: list[str] | None = None) -> int:
    """``python -m theorylab.huang2024.realvit --setting {quick,full,large} --out DIR
    [--device cpu|cuda] [--seeds 0 1 2]``: train one setting and write ``realvit.csv`` (the
    metrics table) and ``realvit-loss.csv`` (the loss curves) into ``DIR``."""
    ap = argparse.ArgumentParser(prog="python -m theorylab.huang2024.realvit",
                                 description="Train the real-image MAE and CL ViTs of one "
                                 "setting and write their attention metrics and loss curves.")
    ap.add_argument("--setting", choices=sorted(SETTINGS), default="full")
    ap.add_argument("--out", required=True, help="output folder (created)")
    ap.add_argument("--device", default="cpu", help="torch device: cpu (default) or cuda")
    ap.add_argument("--seeds", type=int, nargs="+", help="replace the setting's seeds")
    args = ap.parse_args(argv)
    if args.device not in ("cpu", "cuda"):
        print(f"error: --device: must be cpu or cuda (got {args.device!r})", file=sys.stderr)
        return 2
    if args.device == "cuda" and not torch.cuda.is_available():
        print("error: --device: cuda requested but torch.cuda.is_available() is False",
              file=sys.stderr)
        return 2
    cfg = SETTINGS[args.setting]
    if args.seeds:
        try:
            cfg = replace(cfg, seeds=tuple(args.seeds))
        except ValueError as exc:
            print(f"error: --seeds: {exc}", file=sys.stderr)
            return 2
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    res = run_realvit(cfg, device=args.device)
    write_csv(out / "realvit.csv", res.table)
    write_csv(out / "realvit-loss.csv", res.curves)
    print(f"{args.setting}: {len(cfg.seeds)} seed(s) × {cfg.epochs_of('mae')} MAE / "
          f"{cfg.epochs} CL epochs of {cfg.steps_per_epoch} steps in "
          f"{res.seconds:.0f} s on {args.device}; wrote {out / 'realvit.csv'} and "
          f"{out / 'realvit-loss.csv'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
