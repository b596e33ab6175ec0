"""Real images (beyond the synthetic model): MAE's last-layer attention is more diverse than
CL's. Huang et al. (2025), Figures 1 and 3 (FOUND qualitatively: pretrained ImageNet ViT-B/16
models, MAE's attention maps differ between query patches, CL's collapse onto one global
region), checked on a small ViT trained here by MAE and by CL from the same initialisation on
uncentred Fashion-MNIST items (module [`theorylab.huang2024.realvit`][]; the setting is ours).

Verdict (a pure function of the two tables: the metrics per seed, model, layer and head, and
the loss curves): per seed, the head-averaged difference d = MAE − CL in the last layer of two
diversity metrics, the geometric NMI of Park et al. (ICLR 2023) and theorylab's ``diverse``
part of the sharpness decomposition. A metric is decided when the 95 % t-interval over the
seeds of the mean d lies beyond ``MIN_DIFF`` on one side; otherwise it is undecided. The other
layers' directions are reported beside it, not judged.

Premises (each failure gives ``inconclusive`` with its numbers):

- **the losses plateaued:** for every seed and objective, the share of the loss's total
  decrease (first epoch's mean → last epoch's mean) that came in the last quarter of the epochs
  is at most ``MAX_LATE_DROP``;
- **attention measurably away from uniform:** in the judged layer, for MAE and for CL, the
  lower end of the interval over seeds of the head-averaged focus ``total`` =
  1 − H(K|Q)/log P lies above ``MIN_FOCUS`` = ln 2 / ln P, the focus of attention spread
  evenly over half of the patches (uniform attention: 0).
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
from ..realvit import FULL, MODELS, cached_realvit, head_average

__all__ = ["CLAIM", "MIN_DIFF", "MIN_FOCUS", "MAX_LATE_DROP", "JUDGED_METRICS", "THRESHOLDS",
           "metric_direction", "focus_premise", "late_drop", "plateau_premise",
           "layer_directions", "judge"]

#: Smallest difference of the metrics (both in [0, 1]) that counts: one hundredth of their
#: range; the seed-to-seed noise is handled by the interval.
MIN_DIFF = 0.01
#: Patches of the measured ViT (7 × 7 grid of 4-pixel patches on 28-pixel canvases).
P_PATCHES = FULL.patches
#: Focus 1 − H(K|Q)/log P of attention spread evenly over half of the P keys: ln 2 / ln P.
MIN_FOCUS = math.log(2) / math.log(P_PATCHES)
#: Largest share of the total loss decrease allowed in the last quarter of the epochs.
MAX_LATE_DROP = 0.1
#: The diversity metrics the verdict reads (NMI: Park et al.; diverse: theorylab's own).
JUDGED_METRICS = ("nmi", "diverse")

THRESHOLDS = (
    Threshold("MIN_FOCUS", MIN_FOCUS, "project choice",
              f"'measurably away from uniform' read as at least the focus of attention spread "
              f"evenly over half of the {P_PATCHES} patches, ln 2 / ln {P_PATCHES}",
              role="premise: the focus interval of MAE and of CL in the last layer above it"),
    Threshold("MAX_LATE_DROP", MAX_LATE_DROP, "project choice",
              "'the loss plateaued' read as: the last quarter of the epochs brought at most a "
              "tenth of the loss's total decrease (a still-falling loss sheds about a quarter "
              "or more there)",
              role="premise: for every seed and objective, the last quarter's share of the "
              "loss decrease at most this"),
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
    """``inconclusive`` when the focus (``total``) of MAE or of CL in the head-averaged rows
    `avg` (one layer) is not measurably above `min_focus` (the lower end of its 95 %
    t-interval over the seeds; the mean with one seed), else None."""
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


def late_drop(loss: np.ndarray) -> float:
    """Share of the total decrease of a loss curve (one value per epoch, ≥ 4 epochs) that came
    in its last quarter: (L[e₃] − L[E]) / (L[1] − L[E]), e₃ the epoch at 75 % of the E epochs.
    NaN with fewer than 4 epochs, a non-finite value, or no decrease (L[E] ≥ L[1])."""
    v = np.asarray(loss, dtype=np.float64)
    if v.size < 4 or not np.all(np.isfinite(v)) or not v[0] > v[-1]:
        return math.nan
    e3 = int(round(0.75 * v.size)) - 1
    return float((v[e3] - v[-1]) / (v[0] - v[-1]))


def plateau_premise(curves: pd.DataFrame | None, max_late_drop: float = MAX_LATE_DROP
                    ) -> tuple[Verdict | None, str]:
    """(``inconclusive`` or None, a summary line) of the plateau test: every (seed, objective)
    curve of `curves` (columns seed, model, epoch, loss) has a [`late_drop`][] of at most
    `max_late_drop`; a missing table, a NaN share (too few epochs, no decrease) fails."""
    if curves is None or len(curves) == 0:
        return Verdict("inconclusive", ("premise failed: the losses plateaued: no loss "
                                        "curves",)), "no loss curves"
    parts, bad = [], []
    for (seed, model), g in curves.sort_values("epoch").groupby(["seed", "model"], sort=True):
        share = late_drop(g.loss.to_numpy())
        parts.append(f"{model} seed {seed} {share:.3f}")
        if not share <= max_late_drop:
            bad.append(f"{model} seed {seed}: {share:.3f}" if math.isfinite(share) else
                       f"{model} seed {seed}: not testable (fewer than 4 epochs or no decrease)")
    line = "last quarter's share of the loss decrease: " + ", ".join(parts)
    if not bad:
        return None, line + f" (all ≤ {max_late_drop:g})"
    return Verdict("inconclusive", (f"premise failed: the losses plateaued (last quarter's "
                                    f"share of the decrease ≤ {max_late_drop:g}): "
                                    + "; ".join(bad),)), line


def layer_directions(table: pd.DataFrame, min_diff: float = MIN_DIFF) -> list[str]:
    """One line per layer but the last: the direction of each judged metric (reported beside
    the verdict, not judged)."""
    avg = head_average(table)
    if "layer" not in avg or avg.empty:
        return []
    last = int(avg.layer.max())
    out = []
    for layer in sorted(set(avg.layer) - {last}):
        sub = avg[avg.layer == layer]
        dirs = [f"{m} {metric_direction(sub, m, min_diff)[0]}" for m in JUDGED_METRICS]
        out.append(f"layer {layer} (not judged): " + ", ".join(dirs))
    return out


def judge(tables: dict[str, pd.DataFrame], values=None) -> Verdict:
    """Premises first, on the last layer's head averages: [`plateau_premise`][] on
    ``tables["loss"]`` and [`focus_premise`][] (a failure gives ``inconclusive``, with the
    metric directions reported); then ``agrees`` when both judged metrics say MAE > CL,
    ``disagrees`` when both say CL > MAE, ``partial`` when one is decided and the other
    undecided, ``inconclusive`` when neither is decided, they contradict each other, or a value
    is NaN. The other layers' directions are appended to the reasons."""
    th = threshold_values(THRESHOLDS, values)
    table = tables["table"]
    avg = head_average(table, layer=-1)
    dirs = [metric_direction(avg, m, th["MIN_DIFF"]) for m in JUDGED_METRICS]
    kinds = [k for k, _ in dirs]
    reasons = tuple(r for _, r in dirs) + tuple(layer_directions(table, th["MIN_DIFF"]))
    if "nan" in kinds:
        return Verdict("inconclusive", reasons)
    failed = [v for v in (plateau_premise(tables.get("loss"), th["MAX_LATE_DROP"])[0],
                          focus_premise(avg, th["MIN_FOCUS"])) if v is not None]
    if failed:
        return Verdict("inconclusive", sum((f.reasons for f in failed), ()) + reasons)
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
    table, curves = res.table, res.curves
    tables = {"table": table, "loss": curves}
    v = judge(tables)
    avg = head_average(table)
    reading = [
        f"{res.description}; each item placed at a random offset on a 28×28 canvas (a new one "
        f"per training use, a fixed one per held-out image); ViT with {cfg.depth} blocks, "
        f"width {cfg.dim}, {cfg.heads} heads, {cfg.patch_size}×{cfg.patch_size} patches "
        f"(P = {cfg.patches}); {cfg.epochs_of('mae')} (MAE) and {cfg.epochs} (CL) epochs of "
        f"{cfg.n_train} images = {cfg.epochs_of('mae') * cfg.steps_per_epoch} and {cfg.steps} "
        f"optimiser steps, batch {cfg.batch_size}, peak lr {cfg.lr:g}; MAE mask "
        f"ratio {cfg.mask_ratio:g}; CL τ = {cfg.temperature:g}; seeds {list(cfg.seeds)}; "
        f"measured on {cfg.n_eval} held-out images, every layer; wall time {res.seconds:.0f} s.",
        "Loss plateau test: " + plateau_premise(curves)[1] + ".",
    ]
    last = head_average(table, layer=-1)
    headline: dict[str, object] = {}
    for m in JUDGED_METRICS:
        piv = last.pivot_table(index="seed", columns="model", values=m)
        headline[f"last layer MAE − CL {m}"] = float((piv["mae"] - piv["cl"]).mean())
    for name in ("mae", "cl"):
        headline[f"last layer {name} focus"] = float(last[last.model == name].total.mean())
    shares = [late_drop(g.sort_values("epoch").loss.to_numpy())
              for _, g in curves.groupby(["seed", "model"])]
    headline["largest last-quarter share of the loss decrease"] = float(np.nanmax(shares)) \
        if np.isfinite(shares).any() else math.nan
    for layer in sorted(set(avg.layer)):
        sub = avg[avg.layer == layer]
        parts = []
        for name in MODELS:
            row = sub[sub.model == name]
            vals = ", ".join(f"{m} {_mean_iv(row[m].to_numpy())}"
                             for m in ("nmi", "distance_pixels", "total", "diverse"))
            parts.append(f"{name}: {vals}")
            for m in ("nmi", "distance_pixels", "total", "shared", "diverse"):
                headline[f"layer {layer} {name} {m}"] = float(row[m].mean())
        reading.append(f"Layer {layer} (head averages, mean [95 % interval] over seeds): "
                       + "; ".join(parts) + ".")

    def figure(fig):
        axs = fig.subplots(1, 4)
        layers = sorted(set(avg.layer))
        for ax, m, lab in zip(axs, ("nmi", "diverse", "total"),
                              ("NMI (Park et al.)", "diverse (theorylab)",
                               "focus 1 − H(K|Q)/log P")):
            for i, name in enumerate(MODELS):
                sub = avg[avg.model == name]
                x = np.array(layers) + (i - 1.5) * 0.12
                mean = [sub[sub.layer == k][m].mean() for k in layers]
                ax.plot(x, mean, color=f"C{(7, 0, 3, 5)[i]}", marker="o", ms=3, label=name,
                        ls=":" if name == "uniform" else "-")
                for xk, k in zip(x, layers):
                    vals = sub[sub.layer == k][m].to_numpy()
                    ax.scatter(np.full(len(vals), xk), vals, color=f"C{(7, 0, 3, 5)[i]}",
                               s=8, alpha=0.6)
            ax.set_xticks(layers)
            ax.set_xlabel("layer")
            ax.set_ylabel(lab)
        axs[2].axhline(MIN_FOCUS, color="k", lw=0.8, ls="--", label="MIN_FOCUS (premise)")
        axs[0].set_title("per layer: seeds (dots), mean (line)", fontsize=8)
        axs[2].legend(fontsize=6)
        for (seed, name), g in curves.groupby(["seed", "model"]):
            loss = g.sort_values("epoch").loss.to_numpy()
            axs[3].plot(g.sort_values("epoch").step, loss / loss[0],
                        color="C0" if name == "mae" else "C3", lw=0.8,
                        label=name if seed == cfg.seeds[0] else None)
        axs[3].set_xlabel("optimiser step")
        axs[3].set_ylabel("epoch-mean loss / first epoch's")
        axs[3].set_title("loss curves (every seed)", fontsize=8)
        axs[3].legend(fontsize=6)

    return ClaimResult("realvit-diversity", table, v, headline, reading, extra={"loss": curves},
                       figure=figure)


def _mean_iv(x: np.ndarray) -> str:
    m, lo, hi = t_interval(x)
    if not math.isfinite(lo):
        return f"{m:.4f}"
    return f"{m:.4f} [{lo:.4f}, {hi:.4f}]"


CLAIM = Claim(
    id="realvit-diversity",
    paper=PAPER_NAME,
    figsize=(14.0, 3.4),
    title="Real images: MAE's last-layer attention is more diverse than CL's",
    label="FOUND",
    source="Huang et al. (2025), Figures 1 and 3 (pretrained ImageNet ViT-B/16, MAE against a "
    "contrastive model; FOUND qualitatively, values not read); docs/papers/huang2024.md §5",
    statement="MAE's last-layer attention is more diverse (differs more between query "
    "patches) than CL's.",
    measured="A small ViT trained here (CPU) by MAE (mask token, pixel reconstruction of masked "
    "patches) and by CL (InfoNCE on two augmented views, in-batch negatives) from the same "
    "initialisation on uncentred Fashion-MNIST items (14×14 items at random offsets on a 28×28 "
    "canvas), several seeds; on held-out images, per layer and head and averaged over heads: "
    "Park et al.'s NMI, attention distance, theorylab's sharpness decomposition (focus, shared, "
    "diverse); the untrained encoder and exactly uniform attention as references; the loss "
    "curves.",
    predicted="NMI and theorylab's diverse part of the last layer are larger for MAE than for "
    "CL: the 95 % t-interval over seeds of mean(MAE − CL) above 0.01, with both losses "
    "plateaued and both encoders' attention measurably away from uniform.",
    thresholds=THRESHOLDS,
    premises=("the losses plateaued: for every seed and objective, the last quarter of the "
              "epochs brought at most MAX_LATE_DROP = 0.1 of the loss's total decrease",
              f"attention measurably away from uniform: the last layer's focus "
              f"1 − H(K|Q)/log P of MAE and of CL above MIN_FOCUS = ln 2 / ln {P_PATCHES} "
              "(lower end of the interval over seeds)"),
    seeds="3 seeds (initialisation, data subset, batch order, placements, masks, "
    "augmentations) per model; differences paired by seed with a 95 % t-interval",
    untested="ImageNet, ViT-B/16 and the pretrained models of the paper (not available "
    "offline); other depths, widths, masking and augmentation choices; training far beyond "
    "1024 (MAE) and 512 (CL) steps on the CPU (the `large` setting of "
    "`python -m theorylab.huang2024.realvit` is the longer run).",
    run=run,
    judge=judge,
)
