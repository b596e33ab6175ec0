"""Real images: which self-supervised objective de-localises a ViT's attention? MAE and CL
trained from the same **local** start on uncentred Fashion-MNIST items, every layer and head
measured against the start, an untrained encoder and uniform attention.

Huang, Wen, Chi & Liang (2025), Figures 1 and 3, compare pretrained ImageNet ViT-B/16 models:
MAE's attention is local and differs between query patches, a contrastive model's concentrates
on one global region for every query; their Theorem 4.4 says CL "collapses to a single global
pattern" while MAE keeps local feature–position correlations. Those models cannot be
downloaded here, and growing locality from scratch is beyond a CPU budget (every published
MAE-against-contrastive attention comparison pre-trains for hundreds of ImageNet epochs). The
direction of the claim is cheap to test instead: start both objectives from the same local
attention and ask which one moves it away ([`theorylab.vision.nets.SeedViT`][] for the
model and its initialisations, [`theorylab.vision.nets.train_seeds`][] for the objectives).

**Setting (ours, not the paper's).** Class-balanced Fashion-MNIST subsets, each item
average-pooled to 14×14 and pasted at a random offset on a 28×28 canvas of background (a
new offset, flip and jitter at every use: the same augmentations for both objectives), 4×4
patches (a 7 × 7 grid, P = 49). A ViT without CLS token (``depth`` blocks, width ``dim``,
``heads`` heads) whose attention logits carry a learned relative-position bias per head;
``init = "local"`` starts every head of every layer on the Gaussian window −|δ|²/(2σ²)
(σ in patches), ``"scratch"`` on a zero bias (today's from-scratch control). All seeds train
in one process as one seed-batched model. The MAE and CL encoders of a seed start from the
same weights and see the same items in the same order; both take ``steps`` optimiser steps.

**Measurement.** On ``n_eval`` held-out images (placed once, no mask, no augmentation: the
MAE encoder is read on unmasked inputs), the attention of every head of every layer, and per
layer and head, averaged over images: the geometric NMI of Park et al. (ICLR 2023), the mean
attention distance (patches and pixels), theorylab's focus decomposition total = shared +
diverse ([`theorylab.huang2024.diversity`][]), the Jensen–Shannon divergence from the same
seed's start (``js_start``) and the mean divergence from the layer's other heads
(``head_js``, between-head diversity; [`theorylab.vision.attention_metrics`][]). Rows with
``head = −1`` are the means of the per-head values over the heads (the metric of each head,
then averaged; never the metric of a head-averaged map). Five models per seed (``MODELS``):
``untrained`` (the same weights with a zero bias: a ViT before training from scratch),
``initial`` (the start of both objectives), ``mae``, ``cl`` and ``uniform`` (every weight
1/P). The same metrics at checkpoints of training on ``n_traj`` images form the trajectory;
the loss of every step is recorded (window means), with the two plateau levels a loss must
leave: the mean-predictor MSE (MAE) and log B (CL).

[`run_realvit`][] runs one reading; the arms it trains are kept in the real-image store shared
with the other paper's image figures ([`theorylab.vision.store`][]: in the process, and with
``--cache DIR`` as files read without pickle), keyed by the settings each arm depends on
([`store_key`][]), so readings that change only MAE's mask ratio reuse the CL arm.
"""

from __future__ import annotations

import math
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field, replace

import numpy as np
import pandas as pd
import torch

from theorylab.core.claims import t_interval
from theorylab.core.config import check_choice, check_fields, check_float, check_int, frozen_set
from theorylab.core.threads import limit_threads
from theorylab.vision.attention_metrics import (
    attention_maps,
    head_average,
    head_divergence,
    js_divergence,
    metric_rows,
    seed_summary,
)
from theorylab.vision.imagedata import images_28
from theorylab.vision.nets import (
    INITS,
    Augment,
    SeedStreams,
    SeedViT,
    SSLSchedule,
    cl_projector,
    mae_decoder,
    mean_predictor_mse,
    resolve_device,
    train_seeds,
)
from theorylab.vision.placed import PlacedImages, placed_images
from theorylab.vision.store import RunStore, active_store, code_digest, remembered, run_key

from .diversity import (
    mean_attention_distance,
    normalized_mutual_information,
    sharpness_decomposition,
)

__all__ = ["RealViTConfig", "ARMS", "CONTROLS", "ARM_VIEWS", "MODELS", "METRICS",
           "TABLE_SCHEMA", "TRAJECTORY_SCHEMA", "CURVE_SCHEMA", "LEVEL_SCHEMA", "QUICK", "FULL",
           "GPU", "SETTINGS", "ArmRun", "RealViTResult", "load_data", "arm_key", "train_arm",
           "reference_run", "run_realvit", "cached_realvit", "store_key", "metrics_rows",
           "head_average", "seed_summary", "uniform_distance", "ORIENTED",
           "oriented_differences", "t_interval"]

#: The two objectives trained from the same start.
ARMS = ("mae", "cl")
#: The augmentation controls ([`run_realvit`][]'s ``controls``): each objective trained with
#: the other's augmentation ([`theorylab.vision.nets.train_seeds`][]'s ``views``):
#: ``mae_clviews`` reconstructs the masked patches of the other view of a CL positive pair
#: (another flip, placement and jitter), ``cl_maeviews`` contrasts two copies of one view that
#: differ only by their masks (MAE's mask ratio) and their pixel noise.
CONTROLS = ("mae_clviews", "cl_maeviews")
#: Every trained arm: its objective and the objective whose augmentation it sees.
ARM_VIEWS = {"mae": ("mae", "mae"), "cl": ("cl", "cl"), "mae_clviews": ("mae", "cl"),
             "cl_maeviews": ("cl", "mae")}
#: The models measured per seed, in table order (the controls only where they were run).
MODELS = ("untrained", "initial", "mae", "cl", *CONTROLS, "uniform")
#: Metric columns (module docstring).
METRICS = ("nmi", "distance_patches", "distance_pixels", "total", "shared", "diverse",
           "js_start", "head_js")
#: Columns and dtypes of the metrics table (``layer`` from 0, the input side; ``head = −1``:
#: the mean over heads of the per-head values).
TABLE_SCHEMA = {"seed": "int64", "model": "object", "layer": "int64", "head": "int64",
                "n_images": "int64", **{m: "float64" for m in METRICS}}
#: The trajectory: the metrics of the trained arms at checkpoints (``step``).
TRAJECTORY_SCHEMA = {"seed": "int64", "model": "object", "step": "int64", "layer": "int64",
                     "head": "int64", "n_images": "int64", **{m: "float64" for m in METRICS}}
#: The loss curves: ``step`` 0 is the untrained model's loss on the first batch; a later row is
#: the mean loss of the steps of its window, labelled by the window's last step.
CURVE_SCHEMA = {"seed": "int64", "model": "object", "step": "int64", "loss": "float64"}
#: The plateau levels per seed: the MAE loss of the mean predictor (every masked pixel
#: predicted by its mean over views) and log B (InfoNCE of indistinguishable embeddings).
LEVEL_SCHEMA = {"seed": "int64", "mae_mean_predictor": "float64", "cl_chance": "float64"}


@dataclass(frozen=True)
class RealViTConfig:
    """Settings of the real-image experiment (validated; frozen).

    - ``n_train``: training items per seed (class-balanced Fashion-MNIST subset); ``n_eval``:
      held-out images the final attention is measured on; ``n_traj``: the first ``n_traj``
      of them are measured at the checkpoints; ``n_show``: attention maps kept for figures.
    - ``steps``, ``batch_size``, ``lr``, ``weight_decay``, ``warmup``: AdamW, linear warm-up
      over a fraction ``warmup`` of the steps, cosine decay; the same for both objectives.
    - ``patch_size`` (divides 28), ``depth``, ``dim``, ``heads``, ``mlp_ratio``: the ViT.
    - ``init``: ``"local"`` or ``"scratch"`` ([`theorylab.vision.nets.INITS`][]);
      ``sigma``: width of the local window in patches.
    - ``mask_ratio``: fraction of the patches masked per view for MAE, in (0, 1).
    - ``temperature``: InfoNCE temperature τ > 0 (CL); ``noise``: pixel noise of a view.
    - ``item_pool``: the 28×28 item is average-pooled by this factor (2: 14×14) and placed at
      random offsets on the 28×28 canvas; must be ≥ 2 (a full-size item has no room to move).
    - ``seeds``: the models of the seed batch (initialisation, data subset, batch order,
      placements, masks, views).
    - ``threads``: torch/BLAS threads while training (0: leave the entry point's setting).
    """

    n_train: int = 4096
    n_eval: int = 256
    n_traj: int = 64
    n_show: int = 4
    steps: int = 500
    batch_size: int = 32
    lr: float = 2e-3
    weight_decay: float = 0.05
    warmup: float = 0.05
    patch_size: int = 4
    depth: int = 3
    dim: int = 48
    heads: int = 4
    mlp_ratio: float = 2.0
    init: str = "local"
    sigma: float = 1.0
    mask_ratio: float = 0.6
    temperature: float = 0.2
    noise: float = 0.1
    item_pool: int = 2
    seeds: tuple[int, ...] = (0, 1, 2, 3, 4, 5)
    threads: int = 0

    def __post_init__(self) -> None:
        ints = {"n_train": 2, "n_eval": 1, "n_traj": 1, "n_show": 1, "steps": 1,
                "batch_size": 2, "patch_size": 1, "depth": 1, "dim": 1, "heads": 1,
                "threads": 0, "item_pool": 2}
        for name, lo in ints.items():
            frozen_set(self, name, check_int(f"realvit.{name}", getattr(self, name), lo=lo))
        for name in ("patch_size", "item_pool"):
            if 28 % getattr(self, name):
                raise ValueError(f"realvit.{name}: must divide 28 (got {getattr(self, name)})")
        if self.dim % self.heads:
            raise ValueError(f"realvit.heads: must divide dim={self.dim} (got {self.heads})")
        if self.n_traj > self.n_eval or self.n_show > self.n_eval:
            raise ValueError(f"realvit.n_traj: n_traj and n_show must be at most n_eval="
                             f"{self.n_eval} (got {self.n_traj}, {self.n_show})")
        check_choice("realvit.init", self.init, INITS)
        check_fields(self, "realvit", check_float, ("lr", "temperature", "mlp_ratio", "sigma"),
                     lo=0.0, lo_open=True)
        check_fields(self, "realvit", check_float, ("weight_decay", "noise"), lo=0.0)
        if not (isinstance(self.warmup, (int, float)) and 0 <= self.warmup < 1):
            raise ValueError(f"realvit.warmup: must be in [0, 1) (got {self.warmup!r})")
        if not (isinstance(self.mask_ratio, (int, float)) and 0 < self.mask_ratio < 1):
            raise ValueError(f"realvit.mask_ratio: must be in (0, 1) (got {self.mask_ratio!r})")
        m = round(self.mask_ratio * self.patches)
        if not 1 <= m < self.patches:
            raise ValueError(f"realvit.mask_ratio: masks {m} of {self.patches} patches; need "
                             "at least 1 masked and 1 visible")
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
    def checkpoints(self) -> tuple[int, ...]:
        """The steps at which the trajectory is measured: 0, 1/16, 1/8, 1/4, 1/2, 3/4 and all
        of the steps (rounded, distinct)."""
        fr = (0, 1 / 16, 1 / 8, 1 / 4, 1 / 2, 3 / 4, 1)
        return tuple(sorted({int(round(f * self.steps)) for f in fr}))

    @property
    def curve_window(self) -> int:
        """Steps per point of the loss curves (about 40 points)."""
        return max(1, self.steps // 40)

    def augment(self) -> Augment:
        """The views of both objectives."""
        return Augment(canvas=28, noise=self.noise)

    def schedule(self) -> SSLSchedule:
        return SSLSchedule(steps=self.steps, batch_size=self.batch_size, lr=self.lr,
                           weight_decay=self.weight_decay, warmup=self.warmup)

    def as_dict(self) -> dict:
        d = asdict(self)
        d["seeds"] = list(self.seeds)
        return d


#: The quick setting: 256 items, 30 steps, two seeds, a tiny ViT (seconds): the whole path
#: (placement, both objectives, every layer and head, references, trajectory, curves).
QUICK = RealViTConfig(n_train=256, n_eval=32, n_traj=16, steps=30, batch_size=32, depth=2,
                      dim=16, heads=2, seeds=(0, 1))
#: The full setting of ``check`` (6 seeds × 500 steps of batch 32 per arm; docs/reproducing.md
#: gives its measured runtime).
FULL = RealViTConfig()
#: The setting of ``check --device cuda`` on one GPU: 8 seeds, 4× the items, a wider and
#: deeper ViT, 1,000 steps of 4× the batch (docs/claims/huang2024/realvit-diversity.md gives
#: the command and its budget).
GPU = replace(FULL, n_train=16384, n_eval=256, n_traj=32, steps=1000, batch_size=256,
              dim=96, depth=4, heads=4, seeds=tuple(range(8)))
#: The named settings.
SETTINGS = {"quick": QUICK, "full": FULL, "gpu": GPU}


# -- data ------------------------------------------------------------------------------------------
def load_data(cfg: RealViTConfig, *, stand_in: bool = False, device="cpu") -> PlacedImages:
    """The items and held-out images of every seed of `cfg`
    ([`theorylab.vision.placed.placed_images`][])."""
    return placed_images(cfg.n_train, cfg.n_eval, cfg.seeds, item_pool=cfg.item_pool,
                         stand_in=stand_in, device=device)


# -- measurement -----------------------------------------------------------------------------------
def uniform_distance(cfg: RealViTConfig) -> float:
    """Mean attention distance of uniform attention on the grid (patches)."""
    P = cfg.patches
    return float(mean_attention_distance(np.full((P, P), 1.0 / P)))


def metrics_rows(maps: np.ndarray, start: np.ndarray | None, cfg: RealViTConfig, model: str,
                 step: int | None = None) -> pd.DataFrame:
    """Per (seed, layer, head) metrics of the attention maps ``(layers, S, n, heads, P, P)``
    of `model` for the seeds of `cfg` against the start's maps `start` (same shape, or
    broadcastable; None: ``js_start`` NaN), means over the images, and their head means
    (``head = −1``); rows follow [`TABLE_SCHEMA`][] (with ``step`` when given:
    [`TRAJECTORY_SCHEMA`][])."""
    def metrics(layer: int, s: int, A: np.ndarray) -> dict:
        sh = sharpness_decomposition(A)
        dist = mean_attention_distance(A)
        return {"nmi": normalized_mutual_information(A), "distance_patches": dist,
                "distance_pixels": dist * cfg.patch_size, "total": sh.total,
                "shared": sh.shared, "diverse": sh.diverse,
                "js_start": (js_divergence(A, start[layer, s]) if start is not None
                             else np.full(A.shape[:2], np.nan)),
                "head_js": head_divergence(A)}

    labels = {"model": model} if step is None else {"model": model, "step": step}
    return metric_rows(maps, metrics, seeds=cfg.seeds, **labels,
                       columns=TABLE_SCHEMA if step is None else TRAJECTORY_SCHEMA)


# -- the arms --------------------------------------------------------------------------------------
_ARM_FIELDS = {
    "mae": ("mask_ratio",),
    "cl": ("temperature",),
    "mae_clviews": ("mask_ratio",),
    "cl_maeviews": ("temperature", "mask_ratio"),
    "reference": (),
}
#: The fields that are not shared: some arms' own (``_ARM_FIELDS``), and ``threads`` (no
#: result depends on it); the reference trains nothing, so no training field enters its key.
_NOT_SHARED = ("mask_ratio", "temperature", "threads")
_TRAINING = ("steps", "batch_size", "lr", "weight_decay", "warmup", "noise")


def arm_key(cfg: RealViTConfig, arm: str, *, stand_in: bool = False, device="cpu") -> dict:
    """The settings an arm's result depends on (``"mae"``, ``"cl"``, a control of
    [`CONTROLS`][] or ``"reference"``: the untrained, initial and uniform models, which no
    objective trains): the config's shared fields and the arm's own (MAE's mask ratio, CL's
    temperature; both for CL with MAE's masked views), the stand-in flag and the device
    kind. Two readings with equal keys share the arm."""
    if arm not in _ARM_FIELDS:
        raise ValueError(f"arm: must be one of {list(_ARM_FIELDS)} (got {arm!r})")
    d = cfg.as_dict()
    skip = _NOT_SHARED + (_TRAINING if arm == "reference" else ())
    fields = [f for f in d if f not in skip] + list(_ARM_FIELDS[arm])
    return {"arm": arm, **{f: d[f] for f in fields}, "stand_in": stand_in,
            "device": resolve_device(device).type}


@dataclass
class ArmRun:
    """What one arm gives: its metrics rows (``table``), trajectory, loss curve and levels
    (empty for the reference), the attention maps of the first ``n_show`` held-out images
    per (seed, model) (``(layers, n_show, heads, P, P)``), and its wall time."""

    table: pd.DataFrame
    trajectory: pd.DataFrame
    curves: pd.DataFrame
    levels: pd.DataFrame
    maps: dict
    seconds: float


def _model(cfg: RealViTConfig, init: str | None = None) -> SeedViT:
    return SeedViT(cfg.seeds, image_size=28, patch_size=cfg.patch_size, dim=cfg.dim,
                   depth=cfg.depth, heads=cfg.heads, mlp_ratio=cfg.mlp_ratio,
                   init=init or cfg.init, sigma=cfg.sigma)


def _maps_of(A: np.ndarray, cfg: RealViTConfig, model: str) -> dict:
    return {(seed, model): A[:, s, :cfg.n_show].astype(np.float64)
            for s, seed in enumerate(cfg.seeds)}


def reference_run(cfg: RealViTConfig, data: PlacedImages) -> ArmRun:
    """The untrained, initial and uniform models of every seed on the held-out images."""
    t0 = time.perf_counter()
    dev = data.items.device
    start = attention_maps(_model(cfg).to(dev), data.x_eval)
    rows = [metrics_rows(start, start, cfg, "initial")]
    maps = _maps_of(start, cfg, "initial")
    A = attention_maps(_model(cfg, "scratch").to(dev), data.x_eval)
    rows.append(metrics_rows(A, start, cfg, "untrained"))
    maps.update(_maps_of(A, cfg, "untrained"))
    P = cfg.patches
    U = np.full((cfg.depth, len(cfg.seeds), 1, cfg.heads, P, P), 1.0 / P)
    # one uniform map (n_images 1), its divergence from the start averaged over every image
    rows.append(metrics_rows(U, start, cfg, "uniform"))
    empty = [pd.DataFrame(columns=list(schema)).astype(schema)
             for schema in (TRAJECTORY_SCHEMA, CURVE_SCHEMA, LEVEL_SCHEMA)]
    return ArmRun(pd.concat(rows, ignore_index=True), *empty, maps=maps,
                  seconds=time.perf_counter() - t0)


def _curve_rows(losses: torch.Tensor, cfg: RealViTConfig, arm: str) -> pd.DataFrame:
    """Window means of the (steps + 1, S) losses; step 0 on its own."""
    L = losses.double().numpy()
    w = cfg.curve_window
    ends = [*range(w, cfg.steps + 1, w), *([cfg.steps] if cfg.steps % w else [])]
    rows = []
    for s, seed in enumerate(cfg.seeds):
        rows.append({"seed": seed, "model": arm, "step": 0, "loss": float(L[0, s])})
        rows += [{"seed": seed, "model": arm, "step": end,
                  "loss": float(L[lo + 1:end + 1, s].mean())} for lo, end in zip([0, *ends], ends)]
    return pd.DataFrame(rows).astype(CURVE_SCHEMA)


def train_arm(cfg: RealViTConfig, arm: str, data: PlacedImages,
              progress: Callable[[int], None] | None = None) -> ArmRun:
    """Train one arm of [`ARM_VIEWS`][] (an objective with its own or the other's
    augmentation) for every seed of `cfg` from the start of `cfg` (``init``, ``sigma``) and
    measure it (module docstring)."""
    t0 = time.perf_counter()
    dev = data.items.device
    model = _model(cfg).to(dev)
    objective, views = ARM_VIEWS[arm]
    head = (mae_decoder(cfg.seeds, cfg.dim, cfg.patch_size ** 2) if objective == "mae"
            else cl_projector(cfg.seeds, cfg.dim)).to(dev)
    x_traj = data.x_eval[:, :cfg.n_traj]
    start = attention_maps(model, x_traj)
    traj = []

    def at_checkpoint(t: int) -> None:
        traj.append(metrics_rows(attention_maps(model, x_traj), start, cfg, arm, step=t))

    losses = train_seeds(objective, model, head, data.items, data.fill, cfg.schedule(),
                         cfg.augment(), mask_ratio=cfg.mask_ratio,
                         temperature=cfg.temperature, views=views,
                         streams=SeedStreams(cfg.seeds, dev), checkpoints=cfg.checkpoints,
                         on_checkpoint=at_checkpoint, progress=progress)
    seconds = time.perf_counter() - t0
    A = attention_maps(model, data.x_eval)
    # against the start's maps on every held-out image (the trajectory's start: the first n_traj)
    table = metrics_rows(A, attention_maps(_model(cfg).to(dev), data.x_eval), cfg, arm)
    # the plateau levels from their own streams (the training draws are not shifted)
    mp = mean_predictor_mse(data.items, SeedStreams(tuple(s + 31337 for s in cfg.seeds), dev),
                            data.fill, cfg.augment())
    levels = pd.DataFrame({"seed": list(cfg.seeds),
                           "mae_mean_predictor": mp.double().cpu().numpy(),
                           "cl_chance": math.log(min(cfg.batch_size, cfg.n_train))}
                          ).astype(LEVEL_SCHEMA)
    return ArmRun(table, pd.concat(traj, ignore_index=True), _curve_rows(losses, cfg, arm),
                  levels, _maps_of(A, cfg, arm), seconds)


# -- one reading -----------------------------------------------------------------------------------
@dataclass
class RealViTResult:
    """What [`run_realvit`][] returns: the metrics ``table`` ([`TABLE_SCHEMA`][], every model
    of every seed), the ``trajectory`` of both arms, the loss ``curves``, the plateau
    ``levels``, the attention maps of ``n_show`` held-out images per (seed, model)
    (``maps[(seed, model)]``: ``(layers, n_show, heads, P, P)``), those images
    (``images[seed]``), the config, the data description and name (``"fashion-mnist"``, or
    ``"digits-28"`` for the stand-in of a quick figure), the wall time of each arm
    (``seconds``: arm → seconds of training and measurement, 0 for an arm reused from the
    memo) and the total."""

    table: pd.DataFrame
    trajectory: pd.DataFrame
    curves: pd.DataFrame
    levels: pd.DataFrame
    maps: dict
    images: dict
    config: RealViTConfig
    description: str
    data: str
    seconds: dict = field(default_factory=dict)

    @property
    def total_seconds(self) -> float:
        return float(sum(self.seconds.values()))


#: The functions whose source (with the modules they import from their own package) enters
#: the key of a stored arm.
_CODE = (train_arm, sharpness_decomposition, load_data, metrics_rows, attention_maps,
         SeedViT, train_seeds, images_28)
_ARM_TABLES = ("table", "trajectory", "curves", "levels")


def store_key(cfg: RealViTConfig, arm: str, stand_in: bool = False, device="cpu") -> dict:
    """What a stored arm was computed from ([`theorylab.vision.store.run_key`][]): its
    [`arm_key`][], the identity of the data, the library versions and the digest of the
    source of the modules that compute it."""
    return run_key("huang2024 realvit arm", arm_key(cfg, arm, stand_in=stand_in, device=device),
                   stand_in=stand_in, code=code_digest(_CODE))


def _encode(run: ArmRun) -> tuple[dict, dict, dict]:
    arrays = {f"maps/{seed}/{model}": np.asarray(a) for (seed, model), a in run.maps.items()}
    return arrays, {name: getattr(run, name) for name in _ARM_TABLES}, {"seconds": run.seconds}


def _decode(entry) -> ArmRun:
    maps = {}
    for name, a in entry.arrays.items():
        parts = name.split("/")
        if parts[0] != "maps" or len(parts) != 3:
            raise ValueError(f"unexpected array {name!r}")
        maps[(int(parts[1]), parts[2])] = a
    return ArmRun(*(entry.tables[name] for name in _ARM_TABLES), maps,
                  float(entry.meta.get("seconds", 0.0)))


def _arm(cfg: RealViTConfig, arm: str, data: PlacedImages, stand_in: bool, device,
         store: RunStore | None = None, progress=None) -> tuple[ArmRun, bool]:
    """(the arm's run, whether it was computed now): from the process memo, else from
    `store`, else computed (and put into `store`; [`theorylab.vision.store.remembered`][])."""
    def compute() -> ArmRun:
        return (reference_run(cfg, data) if arm == "reference"
                else train_arm(cfg, arm, data, progress))

    return remembered(store_key(cfg, arm, stand_in, device), compute, encode=_encode,
                      decode=_decode, store=store)


def run_realvit(cfg: RealViTConfig, *, stand_in: bool = False, device="cpu", store=None,
                progress=None, controls: bool = False) -> RealViTResult:
    """One reading: the reference models and both arms of every seed of `cfg` (with
    `controls`, also the augmentation controls [`CONTROLS`][]), each taken from the process
    memo when an equal arm was run before ([`arm_key`][]), else from `store`, else trained.
    `device`: ``"cpu"`` or ``"cuda"``. Without the Fashion-MNIST files
    this raises [`FashionMNISTMissingError`][theorylab.vision.imagedata.FashionMNISTMissingError]
    unless `stand_in` (see [`load_data`][])."""
    with limit_threads(cfg.threads):
        data = load_data(cfg, stand_in=stand_in, device=device)
        runs, seconds = {}, {}
        trained = (*ARMS, *(CONTROLS if controls else ()))
        for arm in ("reference", *trained):
            runs[arm], fresh = _arm(cfg, arm, data, stand_in, device, store,
                                    progress(arm) if progress is not None else None)
            seconds[arm] = runs[arm].seconds if fresh else 0.0
    order = {m: i for i, m in enumerate(MODELS)}
    table = pd.concat([r.table for r in runs.values()], ignore_index=True)
    table = table.sort_values(["seed", "model", "layer", "head"],
                              key=lambda c: c.map(order) if c.name == "model" else c,
                              kind="stable").reset_index(drop=True).astype(TABLE_SCHEMA)
    traj = pd.concat([runs[a].trajectory for a in trained], ignore_index=True)
    curves = pd.concat([runs[a].curves for a in trained], ignore_index=True)
    levels = runs["mae"].levels
    maps = {k: v for r in runs.values() for k, v in r.maps.items()}
    x = data.x_eval[:, :cfg.n_show].cpu().numpy()
    images = {seed: x[s] for s, seed in enumerate(cfg.seeds)}
    return RealViTResult(table, traj, curves, levels, maps, images, cfg, data.description,
                         data.name, seconds)


def cached_realvit(quick: bool, stand_in: bool = False, readings: dict | None = None,
                   store: RunStore | None = None, *, controls: bool = False,
                   device="cpu") -> RealViTResult:
    """[`run_realvit`][] of [`QUICK`][] or [`FULL`][] with the config overrides `readings`
    (field → value, e.g. ``{"mask_ratio": 0.75}``); arms already run in this process are
    reused (the claim's readings and the figures fig1 and fig3 share them), and inside a
    ``--cache DIR`` block of the checks and figures (or with `store`) kept in its
    [`theorylab.vision.store.RunStore`][]. `stand_in`: see [`load_data`][] (the quick
    figures set it; the claim never does). `controls`: also the augmentation controls.
    `device` ``"cuda"``: the [`GPU`][] setting on the GPU (`quick` then takes the quick
    setting there)."""
    store = store if store is not None else active_store()
    base = QUICK if quick else GPU if resolve_device(device).type == "cuda" else FULL
    cfg = replace(base, **(readings or {}))
    return run_realvit(cfg, stand_in=stand_in, store=store, controls=controls, device=device)


# -- summaries -------------------------------------------------------------------------------------
#: The last layer's oriented differences that decide the claim: name → (column, orientation,
#: scale); the per-seed difference is orientation × (CL − MAE) / scale, positive when CL's
#: attention is the more global one ("uniform": divided by uniform attention's value).
ORIENTED = {"distance": ("distance_patches", +1, "uniform"),
            "nmi": ("nmi", -1, None),
            "moved": ("js_start", +1, None)}


def oriented_differences(table: pd.DataFrame, name: str) -> np.ndarray:
    """Per seed (in seed order), the oriented difference `name` of [`ORIENTED`][] on the last
    layer's head means; a single NaN when the MAE or CL rows are missing."""
    col, sign, scale = ORIENTED[name]
    last = head_average(table, layer=-1)
    piv = last.pivot_table(index="seed", columns="model", values=col, aggfunc="mean")
    if not {"mae", "cl"} <= set(piv.columns):
        return np.array([np.nan])
    d = sign * (piv["cl"] - piv["mae"]).to_numpy(float)
    if scale == "uniform":
        u = piv["uniform"].to_numpy(float) if "uniform" in piv else np.full(d.shape, np.nan)
        d = d / u
    return d
