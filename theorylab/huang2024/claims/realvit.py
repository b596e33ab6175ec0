"""Real images (beyond the synthetic model): MAE's last-layer attention is more diverse than
CL's. Huang et al. (2025), Figures 1 and 3 (FOUND qualitatively: pretrained ImageNet ViT-B/16
models, MAE's attention maps differ between query patches, CL's collapse onto one global
region), checked on a small ViT trained here on Fashion-MNIST by MAE and by CL from the same
initialisation (module [`theorylab.huang2024.realvit`][]; the setting is ours).

Verdict (a pure function of the table): per seed, the head-averaged difference d = MAE − CL of
two diversity metrics, the geometric NMI of Park et al. (ICLR 2023) and theorylab's ``diverse``
part of the sharpness decomposition. A metric is decided when every seed's d has the same sign
beyond ``MIN_DIFF`` and |mean d| exceeds the seed spread (the larger standard deviation over
seeds of the MAE and of the CL values); otherwise it is undecided.
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from theorylab.core.claims import Claim, ClaimResult
from theorylab.core.claims.verdict import Verdict

from ..config import PAPER_NAME
from ..realvit import MODELS, cached_realvit, head_average

__all__ = ["CLAIM", "MIN_DIFF", "JUDGED_METRICS", "metric_direction", "judge"]

#: Smallest per-seed difference that counts, in units of the metrics (both in [0, 1]): 0.005
#: is about the image-to-image standard error of a head-averaged NMI over 256 held-out images
#: in the full run, and 5 % of the largest values measured.
MIN_DIFF = 0.005
#: The diversity metrics the verdict reads (NMI: Park et al.; diverse: theorylab's own).
JUDGED_METRICS = ("nmi", "diverse")


def metric_direction(avg: pd.DataFrame, metric: str, min_diff: float = MIN_DIFF
                     ) -> tuple[str, str]:
    """(``"mae>cl"`` / ``"cl>mae"`` / ``"undecided"`` / ``"nan"``, reason) for one metric of the
    head-averaged rows ``avg`` (columns seed, model, metric)."""
    piv = avg.pivot_table(index="seed", columns="model", values=metric, aggfunc="mean")
    if not {"mae", "cl"} <= set(piv.columns) or len(piv) == 0:
        return "nan", f"{metric}: no MAE/CL pair"
    mae, cl = piv["mae"].to_numpy(float), piv["cl"].to_numpy(float)
    if not (np.all(np.isfinite(mae)) and np.all(np.isfinite(cl))):
        return "nan", f"{metric}: a value is NaN"
    d = mae - cl
    spread = max(float(np.std(mae, ddof=1)), float(np.std(cl, ddof=1))) if len(d) > 1 else 0.0
    txt = (f"{metric}: MAE − CL per seed " + ", ".join(f"{x:+.4f}" for x in d)
           + f" (mean {d.mean():+.4f}, seed spread {spread:.4f})")
    if np.all(d > min_diff) and d.mean() > spread:
        return "mae>cl", txt
    if np.all(d < -min_diff) and -d.mean() > spread:
        return "cl>mae", txt
    return "undecided", txt + f" (seeds disagree, or within {min_diff:g} or the spread)"


def judge(tables: dict[str, pd.DataFrame]) -> Verdict:
    """``agrees`` when both judged metrics say MAE > CL, ``disagrees`` when both say CL > MAE,
    ``partial`` when one is decided and the other undecided, ``inconclusive`` when neither is
    decided, they contradict each other, or a value is NaN."""
    avg = head_average(tables["table"])
    dirs = [metric_direction(avg, m) for m in JUDGED_METRICS]
    kinds = [k for k, _ in dirs]
    reasons = tuple(r for _, r in dirs)
    if "nan" in kinds:
        return Verdict("inconclusive", reasons)
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
    predicted="NMI and theorylab's diverse part are larger for MAE than for CL on every seed, "
    "by more than 0.005 and more than the seed spread.",
    untested="ImageNet, ViT-B/16 and the pretrained models of the paper (not available "
    "offline); other depths, widths, masking and augmentation choices; longer training.",
    run=run,
    judge=judge,
)
