"""Transfer: fine-tuning a pretrained positional attention on a downstream task against training
from scratch (``jelassi2022-transfer``; former id ``theorylab-transfer``)."""

from __future__ import annotations

import dataclasses

import numpy as np

from theorylab.core.figures import FigureContext, FigureResult, new_figure, register
from theorylab.core.figures.axes import merged_legend, style_axes, twin_y

from ..config import PAPER_NAME, ExperimentConfig, TrainConfig
from ..data import bayes_error
from ..partition import Partition
from ..setups import REF_SETS, reference_config
from ..trainer import run_experiment
from ..transfer import DOWNSTREAM, N_VAL, downstream_fields, finetune, finetune_summary
from ._common import backend_fields, positive_v0_seed

__all__ = ["transfer"]


TR_N = (10, 20, 50, 100, 200, 500, 1000, 2000)
TR_STEPS = 4000
TR_TRAIN = dict(engine="empirical", lr_v=0.3, steps=TR_STEPS, n_test=10_000, init_v="gaussian",
                v0_scale=0.05, record="log", n_records=10, offdiag0=0.0, dtype="float32")

TR_CAPTION = (
    "Transfer (Section 5, Theorem 5.1; RECONSTRUCTED: the theorem's statement was not found). "
    "Pre-training: exact population GD in the Figure 4 setting of notes §9 (D = 10, C = 2, "
    "Figure 4's sets, d = 100, q = ln(d)/D, cubic σ, temperature 1, value_scale 1, frozen diagonal "
    "ln ln d, lr 0.1, 2×10⁴ steps) with feature w*. Downstream data: same partition and q, a new "
    f"feature w̃* (data seed 1), d = {DOWNSTREAM['d']} and noise σ = "
    f"{DOWNSTREAM['sigma_units']:g}/√d, orthogonal to w̃* (at σ = 1/√d the frozen arm is at the "
    "Bayes error from a few samples; the noise does not change the Bayes error, only how many "
    f"samples it takes to find w̃*). Fine-tuning on Ñ samples, {TR_STEPS} full-batch GD steps, "
    "lr 0.3, "
    "v⁰ ~ N(0, 0.05² I) with a seed whose ⟨v⁰, w̃*⟩ > 0 (the same v⁰ and samples for every arm): "
    "(i) A frozen at the pre-trained A, only v trained; (ii) uniform attention (A = 0, diagonal "
    "0), only v trained; (iii) A (diagonal ln ln d, off-diagonal N(0, 10⁻⁶)) and v trained from "
    "scratch with lr 0.3 for both. Left: test error on 10⁴ fresh downstream points at the best "
    f"recorded step (solid; early stopping on a validation split of {N_VAL} further points, "
    "never on the test points) and at the last step (dotted); the Ñ axis starts where no arm is "
    "at the Bayes error yet; mean over 2 seeds (samples and v⁰), bars: "
    "min–max (float32). Right, frozen arm: cos(v, w̃*) and β = ‖v − ⟨v, w̃*⟩w̃*‖, the part of v "
    "in the d − 1 noise directions, at the best and the last step. With A frozen the last-step "
    "error can rise with Ñ: the many GD steps fit the noise directions of v (β grows) after the "
    "error's minimum; this is an effect of the fine-tuning protocol, not of pre-training, and "
    "the best-step error does not show it. The manifest's reading gives the numbers."
)


@register(
    "jelassi2022-transfer",
    aliases=("theorylab-transfer",),
    paper=PAPER_NAME,
    paper_figure="none (theorylab; Section 5, Theorem 5.1)",
    title="Transfer: test error vs fine-tuning samples for pre-trained, uniform and scratch A",
    caption=TR_CAPTION,
    data_source="synthetic: Assumption 1 data model with a new feature w̃* for fine-tuning",
)
def transfer(ctx: FigureContext) -> FigureResult:
    quick = ctx.quick
    pre_cfg = reference_config(steps=300 if quick else 20_000, record="log", n_records=20)
    pre = run_experiment(pre_cfg, progress=ctx.progress)
    A_pre = pre.A
    last = pre.trajectory.iloc[-1]
    Ns = (50, 200) if quick else TR_N
    seeds = (ctx.seed,) if quick else (ctx.seed, ctx.seed + 1)
    steps = 100 if quick else TR_STEPS
    ref = reference_config()  # the τ = 1 model on the reference data
    data = dataclasses.replace(ref.data, **downstream_fields())
    n_val = 200 if quick else N_VAL
    base = dict(TR_TRAIN, steps=steps, n_test=1000 if quick else TR_TRAIN["n_test"],
                **backend_fields(ctx.device))
    arms = ("pre-trained A, frozen", "uniform attention (A = 0)", "A and v from scratch")
    keys = ("test_error_best", "test_error_last", "cos_v_wstar_best", "cos_v_wstar_last",
            "beta_best", "beta_last", "best_step")
    res = {a: {k: np.full((len(Ns), len(seeds)), np.nan) for k in keys} for a in arms}
    for k, s0 in enumerate(seeds):
        seed = positive_v0_seed(data, base["v0_scale"], 100 * s0 + k)
        for i, n in enumerate(ctx.tqdm(Ns, desc="transfer")):
            tr = dict(base, n_train=n, seed=seed)
            cfg = ExperimentConfig(data=data, model=ref.model, train=TrainConfig(**tr))
            runs = (
                (cfg.replace(train={"lr_A": 0.0}), A_pre),
                (cfg.replace(model={"diag": 0.0}, train={"lr_A": 0.0}), None),
                (cfg.replace(train={"lr_A": base["lr_v"], "offdiag0_std": 1e-3}), None),
            )
            for a, (c, A0) in zip(arms, runs):
                summ = finetune_summary(finetune(c, A0, n_val))
                for key in keys:
                    res[a][key][i, k] = summ[key]
    bayes = bayes_error(Partition(tuple(tuple(s) for s in REF_SETS)), data.q)

    fig = new_figure((11.5, 4.2))
    ax, ax2 = fig.subplots(1, 2, gridspec_kw={"width_ratios": [1.3, 1]})
    for c, a in enumerate(arms):
        for key, ls, lab in (("test_error_best", ["-", "--", "-."][c], "best step"),
                             ("test_error_last", ":", "last step")):
            e = res[a][key]
            mean = e.mean(axis=1)
            ax.errorbar(Ns, mean, yerr=[mean - e.min(axis=1), e.max(axis=1) - mean], marker="o",
                        ms=3, capsize=2, color=f"C{c}", ls=ls, label=f"{a} ({lab})")
    ax.axhline(bayes, color="k", ls=":", lw=1, label=f"Bayes error {bayes:.4f}")
    style_axes(ax, "fine-tuning samples Ñ", "downstream test error", "transfer to a new feature "
               f"w̃* ({steps} fine-tuning steps)", log="x", legend=6)
    fz = res[arms[0]]
    ax2.plot(Ns, fz["cos_v_wstar_best"].mean(axis=1), "o-", color="C2", label="cos(v, w̃*) best")
    ax2.plot(Ns, fz["cos_v_wstar_last"].mean(axis=1), "o:", color="C2", label="cos(v, w̃*) last")
    style_axes(ax2, "fine-tuning samples Ñ", "cos(v, w̃*)", "frozen pre-trained A: alignment of v",
               log="x")
    ax2b = twin_y(ax2, "β = ‖v − ⟨v, w̃*⟩ w̃*‖")
    ax2b.plot(Ns, fz["beta_best"].mean(axis=1), "s-", color="C3", label="β = ‖v⊥‖ best")
    ax2b.plot(Ns, fz["beta_last"].mean(axis=1), "s:", color="C3", label="β = ‖v⊥‖ last")
    merged_legend(ax2, ax2b, fontsize=6)

    def mean(a, key):
        return [float(x) for x in res[a][key].mean(axis=1)]

    f_last, f_best = mean(arms[0], "test_error_last"), mean(arms[0], "test_error_best")
    f_bl, f_bb = mean(arms[0], "beta_last"), mean(arms[0], "beta_best")
    steps_best = mean(arms[0], "best_step")
    reading = [
        f"Frozen pre-trained A: last-step error {f_last[0]:.4f} at Ñ = {Ns[0]} and "
        f"{f_last[-1]:.4f} at Ñ = {Ns[-1]}; best-step error {f_best[0]:.4f} and {f_best[-1]:.4f} "
        f"(best steps {steps_best[0]:.0f} and {steps_best[-1]:.0f} of {steps}).",
        f"Over the fine-tuning the noise part of v grows: β = ‖v⊥‖ is {f_bb[0]:.3f} → "
        f"{f_bl[0]:.3f} (best → last step) at Ñ = {Ns[0]} and {f_bb[-1]:.3f} → {f_bl[-1]:.3f} at "
        f"Ñ = {Ns[-1]}; the last-step minus best-step error is "
        f"{min(a - b for a, b in zip(f_last, f_best)):.4f}–"
        f"{max(a - b for a, b in zip(f_last, f_best)):.4f} across Ñ.",
        f"At the smallest Ñ = {Ns[0]} the best-step errors are " + ", ".join(
            f"{a} {mean(a, 'test_error_best')[0]:.4f}" for a in arms)
        + f" against the Bayes error {bayes:.4f}"
        + (": no arm is at the Bayes error there." if min(
            mean(a, "test_error_best")[0] for a in arms) > bayes + 0.01
           else ": some arm is within 0.01 of the Bayes error there (the axis starts too late)."),
        "Uniform attention: best-step error " + ", ".join(
            f"{x:.4f}" for x in mean(arms[1], "test_error_best")) + "; from scratch: " + ", ".join(
            f"{x:.4f}" for x in mean(arms[2], "test_error_best")) + f" (Ñ = {list(Ns)}).",
    ]
    headline = {
        "N_tilde": list(Ns),
        **{f"error_best[{a}]": mean(a, "test_error_best") for a in arms},
        **{f"error_last[{a}]": mean(a, "test_error_last") for a in arms},
        "frozen_cos_last": mean(arms[0], "cos_v_wstar_last"),
        "frozen_beta_best": f_bb, "frozen_beta_last": f_bl,
        "frozen_best_step": steps_best,
        "per_seed": {a: {k: res[a][k].tolist() for k in keys} for a in arms},
        "bayes_error": bayes,
        "pretrained": {"gamma": float(last["gamma"]), "rho": float(last["rho"]),
                       "patch_association": bool(last["patch_association"])},
        "paper": "no numbers (Theorem 5.1 statement not found)",
    }
    settings = {"pretrain": pre_cfg.resolved().to_dict(), "finetune_train": base,
                "finetune_data_seed": 1, "seeds": list(seeds), "steps": steps}
    return FigureResult(fig, headline=headline, settings=settings, reading=reading)
