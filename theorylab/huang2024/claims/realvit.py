"""Real images (beyond the synthetic model): MAE's last-layer attention is more diverse than
CL's. Huang et al. (2025), Figures 1 and 3 (FOUND qualitatively: pretrained ImageNet ViT-B/16
models, MAE's attention maps differ between query patches, CL's collapse onto one global
region), checked on a small ViT trained here on Fashion-MNIST by MAE and by CL from the same
initialisation (module [`theorylab.huang2024.realvit`][]; the setting is ours).

Verdict (a pure function of the table): per seed, the head-averaged difference d = MAE − CL of
two diversity metrics, the geometric NMI of Park et al. (ICLR 2023) and theorylab's ``diverse``
part of the sharpness decomposition. A metric is decided when the 95 % t-interval over the
seeds of the mean d lies beyond ``MIN_DIFF`` on one side; otherwise it is undecided.

Premise: the trained encoders' attention is measurably away from uniform, else a diversity
difference compares two near-uniform maps: for MAE and for CL the interval over seeds of the
head-averaged focus ``total`` = 1 − H(K|Q)/log P must lie above ``MIN_FOCUS`` = ln 2 / ln P,
the focus of attention spread evenly over half of the patches.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from theorylab.core.claims import (
    Claim,
    ClaimResult,
    Threshold,
    format_interval,
    t_interval,
    threshold_values,
)
from theorylab.core.claims.verdict import Verdict

from ..config import PAPER_NAME
from ..realvit import MODELS, cached_realvit, head_average

__all__ = ["CLAIM", "MIN_DIFF", "MIN_FOCUS", "JUDGED_METRICS", "THRESHOLDS", "metric_direction",
           "focus_premise", "judge"]

#: Smallest difference of the metrics (both in [0, 1]) that counts: one hundredth of their
#: range; the seed-to-seed noise is handled by the interval.
MIN_DIFF = 0.01
#: Patches of the measured ViT (7 × 7 grid of 4-pixel patches on 28-pixel images).
P_PATCHES = 49
#: Focus 1 − H(K|Q)/log P of attention spread evenly over half of the P keys: ln 2 / ln P.
MIN_FOCUS = math.log(2) / math.log(P_PATCHES)
#: The diversity metrics the verdict reads (NMI: Park et al.; diverse: theorylab's own).
JUDGED_METRICS = ("nmi", "diverse")

THRESHOLDS = (
    Threshold("MIN_FOCUS", MIN_FOCUS, "project choice",
              "'measurably away from uniform' read as at least the focus of attention spread "
              "evenly over half of the 49 patches, ln 2 / ln 49",
              role="premise: the focus interval of MAE and of CL above it"),
    Threshold("MIN_DIFF", MIN_DIFF, "project choice",
              "one hundredth of the metrics' range [0, 1]; the seed noise is in the interval",
              role="a metric is decided when the interval of mean(MAE − CL) clears ±MIN_DIFF"),
)


def metric_direction(avg: pd.DataFrame, metric: str, min_diff: float = MIN_DIFF
                     ) -> tuple[str, str]:
    """(``"mae>cl"`` / ``"cl>mae"`` / ``"undecided"`` / ``"nan"``, reason) for one metric of the
    head-averaged rows ``avg`` (columns seed, model, metric): the 95 % t-interval over the seeds
    of the mean of d = MAE − CL (paired by seed) beyond ±`min_diff` decides it; fewer than 2
    seeds: undecided."""
    piv = avg.pivot_table(index="seed", columns="model", values=metric, aggfunc="mean")
    if not {"mae", "cl"} <= set(piv.columns) or len(piv) == 0:
        return "nan", f"{metric}: no MAE/CL pair"
    mae, cl = piv["mae"].to_numpy(float), piv["cl"].to_numpy(float)
    if not (np.all(np.isfinite(mae)) and np.all(np.isfinite(cl))):
        return "nan", f"{metric}: a value is NaN"
    d = mae - cl
    m, lo, hi = t_interval(d)
    txt = (f"{metric}: MAE − CL per seed " + ", ".join(f"{x:+.4f}" for x in d)
           + f", mean {format_interval(m, lo, hi, len(d), '+.4f')} (95 % t-interval)")
    if lo > min_diff:
        return "mae>cl", txt
    if hi < -min_diff:
        return "cl>mae", txt
    return "undecided", txt + f" (the interval reaches within ±{min_diff:g})"


def focus_premise(avg: pd.DataFrame, min_focus: float = MIN_FOCUS) -> Verdict | None:
    """``inconclusive`` when the focus (``total``) of MAE or of CL is not measurably above
    `min_focus` (the lower end of its 95 % t-interval over the seeds; the mean with one seed),
    else None."""
    bad = []
    for model in ("mae", "cl"):
        tot = avg[avg.model == model].total.to_numpy(float)
        m, lo, hi = t_interval(tot)
        low = lo if math.isfinite(lo) else m
        if not low > min_focus:
            bad.append(f"{model} focus 1 − H(K|Q)/log P = "
                       f"{format_interval(m, lo, hi, len(tot), '.4f')}, not above {min_focus:.3f}")
    if not bad:
        return None
    return Verdict("inconclusive", ("premise failed: attention measurably away from uniform: "
                                    + "; ".join(bad),))


def judge(tables: dict[str, pd.DataFrame], values=None) -> Verdict:
    """Premise [`focus_premise`][] first (its failure gives ``inconclusive``, with the metric
    directions reported); then ``agrees`` when both judged metrics say MAE > CL, ``disagrees``
    when both say CL > MAE, ``partial`` when one is decided and the other undecided,
    ``inconclusive`` when neither is decided, they contradict each other, or a value is NaN."""
    th = threshold_values(THRESHOLDS, values)
    avg = head_average(tables["table"])
    dirs = [metric_direction(avg, m, th["MIN_DIFF"]) for m in JUDGED_METRICS]
    kinds = [k for k, _ in dirs]
    reasons = tuple(r for _, r in dirs)
    if "nan" in kinds:
        return Verdict("inconclusive", reasons)
    failed = focus_premise(avg, th["MIN_FOCUS"])
    if failed is not None:
        return Verdict("inconclusive", failed.reasons + reasons)
    if all(k == "mae>cl" for k in kinds):
        return Verdict("agrees", reasons)
    if all(k == "cl>mae" for k in kinds):
        return Verdict("disagrees", reasons)
    if "mae>cl" in kinds and "cl>mae" in kinds:
        return Verdict("inconclusive", reasons + ("the two metrics point opposite ways",))
    if all(k == "undecided" for k in kinds):
        return Verdict("inconclusive", reasons)
    return Verdict("partial", reasons)


def run(quick: bool) -> ClaimResult:
    res = cached_realvit(quick)
    cfg = res.config
    table = res.table
    v = judge({"table": table})
    avg = head_average(table)
    mean = avg.groupby("model", sort=False)[["nmi", "distance_pixels", "total", "shared",
                                               "diverse"]].agg(["mean", "std"])
    reading = [
        f"{res.description}; ViT with {cfg.depth} blocks, width {cfg.dim}, {cfg.heads} heads, "
        f"{cfg.patch_size}×{cfg.patch_size} patches (P = {cfg.patches}); {cfg.epochs} epochs of "
        f"{cfg.n_train} images per objective, batch {cfg.batch_size}; MAE mask ratio "
        f"{cfg.mask_ratio:g}; CL τ = {cfg.temperature:g}; seeds {list(cfg.seeds)}; measured "
        f"on {cfg.n_eval} held-out test images, last block, wall time {res.seconds:.0f} s.",
    ]
    for name in MODELS:
        row = mean.loc[name]
        reading.append(
            f"{name}: NMI {row[('nmi', 'mean')]:.4f} (sd over seeds "
            f"{_sd(row[('nmi', 'std')])}), attention distance "
            f"{row[('distance_pixels', 'mean')]:.2f} px, sharpness total / shared / diverse "
            f"{row[('total', 'mean')]:.4f} / {row[('shared', 'mean')]:.4f} / "
            f"{row[('diverse', 'mean')]:.4f}.")
    headline: dict[str, object] = {}
    for name in MODELS:
        for m in ("nmi", "distance_pixels", "shared", "diverse"):
            headline[f"{name} {m}"] = float(mean.loc[name][(m, "mean")])

    def figure(fig):
        axs = fig.subplots(1, 3)
        for ax, m, lab in zip(axs, ("nmi", "diverse", "distance_pixels"),
                              ("NMI (Park et al.)", "diverse (theorylab)",
                               "attention distance (px)")):
            for i, name in enumerate(MODELS):
                vals = avg[avg.model == name][m].to_numpy()
                ax.scatter(np.full(len(vals), i), vals, color=f"C{i}", s=18)
                ax.hlines(vals.mean(), i - 0.25, i + 0.25, color=f"C{i}")
            ax.set_xticks(range(len(MODELS)), MODELS)
            ax.set_ylabel(lab)
        axs[0].set_title("last-layer attention, per seed (dots) and mean")

    return ClaimResult("realvit-diversity", table, v, headline, reading, figure=figure)


def _sd(x: float) -> str:
    return f"{x:.4f}" if math.isfinite(x) else "n/a, one seed"


CLAIM = Claim(
    id="realvit-diversity",
    paper=PAPER_NAME,
    figsize=(10.0, 3.4),
    title="Real images: MAE's last-layer attention is more diverse than CL's",
    label="FOUND",
    source="Huang et al. (2025), Figures 1 and 3 (pretrained ImageNet ViT-B/16, MAE against a "
    "contrastive model; FOUND qualitatively, values not read); docs/papers/huang2024.md §5",
    statement="MAE's last-layer attention is more diverse (differs more between query "
    "patches) than CL's.",
    measured="A small ViT trained here on Fashion-MNIST (CPU) by MAE (mask token, pixel "
    "reconstruction of masked patches) and by CL (InfoNCE on two augmented views, in-batch "
    "negatives) from the same initialisation, several seeds; on held-out images, per head and "
    "averaged: Park et al.'s NMI, attention distance, theorylab's sharpness decomposition; the "
    "untrained encoder as reference.",
    predicted="NMI and theorylab's diverse part are larger for MAE than for CL: the 95 % "
    "t-interval over seeds of mean(MAE − CL) above 0.01, both encoders' attention measurably "
    "away from uniform.",
    thresholds=THRESHOLDS,
    premises=("attention measurably away from uniform: the focus 1 − H(K|Q)/log P of MAE and "
              "of CL above MIN_FOCUS = ln 2 / ln 49 (interval over seeds)",),
    seeds="3 seeds (initialisation, data order, masks, augmentations) per model; differences "
    "paired by seed with a 95 % t-interval",
    untested="ImageNet, ViT-B/16 and the pretrained models of the paper (not available "
    "offline); other depths, widths, masking and augmentation choices; longer training.",
    run=run,
    judge=judge,
)
