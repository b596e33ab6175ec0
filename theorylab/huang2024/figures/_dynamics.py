"""The MAE dynamics of Huang et al. (2025) on the exact population loss: the two phases
(Thm 4.2, §5 of the paper as RECONSTRUCTED in docs/papers/huang2024.md §4.5) and a (Δ, γ)
phase diagram. Registered ids: ``huang2024-dynamics``, ``huang2024-phase-diagram``."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from theorylab.core.figures import FigureContext, FigureResult, new_figure, register, style_axes

from ..config import PAPER_NAME
from ..data import information_gap
from ..phases import EPS_REL, own_attention_target, read_phases
from ..predictions import has_phase_one, phase_one_prediction, reduced_gd, z_moments
from ..setups import ATTN_TOL, ETA_Q, family_sizes, figure_config
from ._cl import CL_STEPS, cl_collapses, end_mean, pair_run
from ._common import fmt, trained_run

__all__ = ["SECTION9_SIZES", "dynamics", "phase_diagram", "dynamics_settings", "pd_grid",
           "phase_one_end", "phase_one_heuristic", "PHASE_ONE_END_LABEL",
           "PHASE_ONE_HEURISTIC_LABEL", "mae_plateau",
           "MAE_PLATEAU_TOL"]


# -- the predicted end of Phase I ------------------------------------------------------------------
#: Legend label of [`phase_one_end`][]'s value.
PHASE_ONE_END_LABEL = "derived value (reduced population GD)"
#: Legend label of [`phase_one_heuristic`][]'s value.
PHASE_ONE_HEURISTIC_LABEL = "notes' heuristic −(Δ/2) ln P"


def phase_one_end(cfg, max_steps: int | None = None, reduced=None) -> float:
    """The predicted Φ_glob of a local query at the end of Phase I for an MAE config, derived
    in the reconstructed model: Φ_glob(t_I) of the reduced population GD
    ([`phase_one_prediction`][theorylab.huang2024.predictions.phase_one_prediction]; `reduced`:
    an already computed [`reduced_gd`][theorylab.huang2024.predictions.reduced_gd] trajectory
    of `cfg`, read instead of running it again); NaN where the reduction does not apply (e.g.
    several clusters) or where it predicts no Phase I. The one place the dynamics figure
    and the phase diagram take this prediction from."""
    try:
        r = (phase_one_prediction(cfg, max_steps=max_steps) if reduced is None else
             read_phases(reduced, cfg, eps_rel=EPS_REL))
    except ValueError:
        return math.nan
    return float(r["phi_glob_end_I"]) if r["phase_I"] else math.nan


def phase_one_heuristic(cfg) -> float:
    """The notes' leading-order heuristic −(Δ/2) ln P for Φ_glob at the end of Phase I
    (docs/papers/huang2024.md §4.5, RECONSTRUCTED, not derived in the model), drawn as a
    reference only."""
    return -(cfg.delta / 2) * math.log(cfg.data.P)


# -- dynamics --------------------------------------------------------------------------------------
#: The notes' §9 sizes at P = 256: (C1, C) for Δ > 0 and Δ < 0.
SECTION9_SIZES = {"pos": (192, 4), "neg": (32, 16)}


def dynamics_settings(quick: bool) -> tuple[int, int, dict[str, tuple[int, int]]]:
    """(P, steps, {family: (C1, C)}): the notes' §9 sizes at P = 256 (Δ > 0: C1 = 192, C = 4;
    Δ < 0: C1 = 32, C = 16), or the same size families at P = 36 in quick mode."""
    if quick:
        return 36, 30, {fam: family_sizes(fam, 36) for fam in ("pos", "neg")}
    return 256, 300, dict(SECTION9_SIZES)


def _max_gap(measured: pd.Series, derived: pd.Series) -> float:
    """Largest |measured − derived| over the steps both trajectories have."""
    n = min(len(measured), len(derived))
    return float(np.max(np.abs(measured.to_numpy()[:n] - derived.to_numpy()[:n])))


def _summary(tr: pd.DataFrame, P: int, C1: int, C: int, gamma: float) -> dict:
    """The phase readings of a run with its Δ and whether its loss decreased at every step
    (``phase_I``: whether the first GD step lowers the mean global FP correlation of the local
    queries by more than it raises their own-area one, notes §4.5)."""
    out = read_phases(tr, C=C, gamma=gamma)
    out["delta"] = information_gap(P, C1, C)
    out["loss_monotone"] = bool(np.all(np.diff(tr.loss.to_numpy()) <= 0))
    return out


DYN_CAPTION = (
    "MAE dynamics of local-area queries in Huang et al. (2025)'s one-layer ViT (Thm 4.2 and the "
    "two phases of §5, RECONSTRUCTED in docs/papers/huang2024.md §4.5): exact population GD "
    "(population-laplace engine) from Q⁰ = 0 in the notes' §9 setting, P = 256 patches, one "
    "cluster, z ~ U[0.5, 1.5], Bernoulli masks with γ = 0.5, masked keys in the softmax, loss "
    "normalised by 1/P, η = 2P (per-query step 2, as in the claim checks; the notes' §9 "
    "computation used η = 200 with Monte Carlo batches). Left: Δ > 0 (C1 = 192, C = 4); right: "
    "Δ < 0 (C1 = 32, C = 16). Top: mean FP correlation Φ of a local-area patch with its own "
    "area's feature and with the global feature (thin: a global-area patch with its own, the "
    "global, feature); dashed curves: the same quantities derived from the reduced population "
    "GD of the reconstructed model (predictions.reduced_gd); the dashed horizontal line is the "
    f"derived end-of-Phase-I value Φ_glob(t_I), the dotted one the {PHASE_ONE_HEURISTIC_LABEL} "
    "(RECONSTRUCTED, not derived in the model, a reference only), both drawn only where a "
    "Phase I exists; "
    "vertical lines: t_I, the first step at which the own-area correlation grows at least as "
    "fast as the global one falls (Phase I is present when the first step already decouples), "
    "and t_II, the first step with own-area attention ≥ ½(1 − γ^{C−1}) (the claims' "
    "operational definitions). Bottom: attention of a masked local-area query on the unmasked "
    "keys of its own area, of the global area and on the masked keys, averaged over data and "
    "masks (exact); dotted: 1 − γ^{C−1}, the most it can put on its own area's unmasked keys. "
    "Areas are contiguous on the 16×16 grid (the notes' §9 used random ones; with one cluster "
    "the dynamics do not depend on the layout); the same run is drawn in huang2024-fig4. "
    "Third column: the CL trajectory (cl-montecarlo, InfoNCE on two masked views, τ = 0.1, 7 "
    "negatives (the Theorem 4.4 check uses 15), K = 4 clusters, otherwise the Theorem 4.4 "
    "check's setting, RECONSTRUCTED §3, 150 steps) "
    "against MAE (population-montecarlo) on the same data run to convergence (1,200 steps), "
    "for the Δ > 0 size family at P = 64 (CL at P = 256 would cost minutes; attention and Φ are "
    "Monte Carlo readings of each step's batch). Premise, checked: MAE's own-area attention of "
    "masked local queries is at its plateau, its mean over the last fifth of the run (shaded) "
    "within 0.02 of its mean over the fifth before (thick segments: the end-window means); the "
    "reading states whether it held. Steps on a symlog axis in this column. "
    "The measured numbers are in the manifest's reading and headline."
)


@register(
    "huang2024-dynamics",
    paper=PAPER_NAME,
    paper_figure="none (theorylab; the two phases of Thm 4.2 and §5)",
    title="MAE dynamics (Δ > 0 vs Δ < 0) and the CL trajectory: FP correlations and attention",
    caption=DYN_CAPTION,
    data_source="synthetic: exact population MAE loss of Def. 2.1 data (population-laplace)",
)
def dynamics(ctx: FigureContext) -> FigureResult:
    P, steps, sizes = dynamics_settings(ctx.quick)
    gamma = 0.5
    fig = new_figure((16.0, 6.4))
    axes = fig.subplots(2, 3, sharex="col")
    headline, reading, settings = {}, [], {}
    for col, fam in enumerate(("pos", "neg")):
        C1, C = sizes[fam]
        run = trained_run(P, C1, C, gamma, steps, "contiguous")
        tr = run.trajectory
        summ = _summary(tr, P, C1, C, gamma)
        delta, present = summ["delta"], summ["phase_I"]
        s = tr.step.to_numpy()
        ax, axa = axes[0, col], axes[1, col]
        ax.plot(s, tr.phi_own_lq, color="C2", label="Φ local patch → own area")
        ax.plot(s, tr.phi_glob_lq, color="C1", label="Φ local patch → global area")
        ax.plot(s, tr.phi_own_gq, color="C1", lw=0.8, ls=":", label="Φ global patch → global area")
        cfg = figure_config(P, C1, C, gamma=gamma, steps=steps)
        red = reduced_gd(cfg, steps)  # the derived curves, drawn dashed beside the measured
        pred = phase_one_end(cfg, reduced=red)
        heur = phase_one_heuristic(cfg)
        ax.plot(red.step, red.phi_own_lq, color="C2", ls="--", lw=1.2,
                label="derived (reduced population GD)")
        ax.plot(red.step, red.phi_glob_lq, color="C1", ls="--", lw=1.2)
        axa.plot(red.step, red.attn_own_lq, color="C2", ls="--", lw=1.2,
                 label="own area, derived")
        predicted_I = has_phase_one(P, C1, C, z_moments(cfg), gamma=gamma,
                                    mask_keys=cfg.model.mask_keys, loss_norm=cfg.model.loss_norm)
        if present and delta > 0:  # the end-of-Phase-I value exists only where Phase I does
            if math.isfinite(pred):
                ax.axhline(pred, color="C3", ls="--", lw=1.0,
                           label=f"end of Phase I, {PHASE_ONE_END_LABEL} = {pred:.2f}")
            ax.axhline(heur, color="C3", ls=":", lw=0.8,
                       label=f"{PHASE_ONE_HEURISTIC_LABEL} = {heur:.2f}")
        axa.plot(s, tr.attn_own_lq, color="C2", label="own area (unmasked keys)")
        axa.plot(s, tr.attn_glob_lq, color="C1", label="global area (unmasked keys)")
        axa.plot(s, tr.attn_masked_lq, color="0.4", label="masked keys")
        axa.axhline(1 - gamma ** (C - 1), color="C2", ls=":", lw=0.9,
                    label="1 − γ^{C−1} (own-area maximum)")
        for a in (ax, axa):
            for name, t, ls in (("t_I", summ["t_I"], "-."), ("t_II", summ["t_II"], "--")):
                if math.isfinite(t) and (name != "t_I" or present):
                    a.axvline(t, color="0.35", ls=ls, lw=0.9)
                    a.text(t, 0.97, f" {name} = {t:g}", transform=a.get_xaxis_transform(),
                           fontsize=7, va="top", color="0.25")
        style_axes(ax, None, "FP correlation Φ", f"Δ = {delta:+.3f}: P = {P}, C1 = {C1}, C = "
                   f"{C} ({'Phase I present' if present else 'no Phase I'})", legend=7)
        axa.set_ylim(-0.02, 1.02)
        style_axes(axa, "GD steps", "attention of a masked local query",
                   legend={"fontsize": 7, "loc": "center right"})
        last = tr.iloc[-1]
        h = {
            "P": P, "C1": C1, "C": C, "steps": steps, "delta": delta, "phase_I": present,
            **{k: summ[k] for k in ("t_I", "t_II", "T_star", "dphi_glob_1", "dphi_own_1",
                                    "final_rel_excess", "loss_monotone")},
            "phase_I_predicted": predicted_I,
            "phi_glob_end_I": summ["phi_glob_end_I"] if present else math.nan,
            "phi_glob_pred": pred if present and delta > 0 else math.nan,
            "phi_glob_heuristic": heur if present and delta > 0 else math.nan,
            "max_abs_phi_own_vs_derived": _max_gap(tr.phi_own_lq, red.phi_own_lq),
            "max_abs_phi_glob_vs_derived": _max_gap(tr.phi_glob_lq, red.phi_glob_lq),
            "min_phi_glob_lq": float(tr.phi_glob_lq.min()),
            **{f"final_{k}": float(last[k]) for k in ("phi_own_lq", "phi_glob_lq", "attn_own_lq",
                                                      "attn_glob_lq", "attn_masked_lq",
                                                      "attn_own_gq")},
        }
        headline[fam] = h
        settings[fam] = cfg.resolved().to_dict()
        if present:
            ph = (f"Phase I is present: the first step moves Φ_glob by {h['dphi_glob_1']:.3g} "
                  f"and Φ_own by {h['dphi_own_1']:+.3g}; it ends at t_I = {fmt(h['t_I'])} with "
                  f"Φ_glob = {fmt(h['phi_glob_end_I'])} against the {PHASE_ONE_END_LABEL} "
                  f"{fmt(pred)} and the {PHASE_ONE_HEURISTIC_LABEL} {heur:.3f} "
                  f"(ratio to the heuristic {fmt(h['phi_glob_end_I'] / heur)})")
        else:
            ph = (f"no Phase I: the first step already raises Φ_own by {h['dphi_own_1']:.3g}, "
                  f"more than Φ_glob falls ({h['dphi_glob_1']:.3g})")
        ph += ("; the derived first-step rates (predictions.has_phase_one) "
               + ("also predict" if predicted_I == present else "predict the opposite:")
               + (" a Phase I" if predicted_I else " no Phase I"))
        ph += (f"; the derived curves are within {h['max_abs_phi_own_vs_derived']:.2g} "
               f"(Φ_own) and {h['max_abs_phi_glob_vs_derived']:.2g} (Φ_glob) of the measured ones")
        reading.append(
            f"Δ = {delta:+.3f} (P = {P}, C1 = {C1}, C = {C}): {ph}; the own-area attention "
            f"reaches ½(1 − γ^(C−1)) at t_II = {fmt(h['t_II'])} and L − L* falls to 5% of its "
            f"initial value at T* = {fmt(h['T_star'])}; after {steps} steps Φ_own = "
            f"{h['final_phi_own_lq']:.3f}, Φ_glob = {h['final_phi_glob_lq']:.3f}, attention "
            f"own/global/masked = {h['final_attn_own_lq']:.3f}/{h['final_attn_glob_lq']:.3f}/"
            f"{h['final_attn_masked_lq']:.3f} (maximum own {1 - gamma ** (C - 1):.3f}).")
    settings["eta_q"] = ETA_Q
    _cl_column(axes[0, 2], axes[1, 2], ctx.quick, headline, reading, settings)
    return FigureResult(fig, headline=headline, settings=settings, reading=reading)


#: Patch count of the CL column of huang2024-dynamics (the Δ > 0 size family at this P).
DYN_CL_P = 64
#: GD steps of the MAE reference of the CL column (``population-montecarlo`` in the Theorem 4.4
#: setting of [`pair_run`][], read at 201 linearly spaced steps): its own-area attention is at
#: its plateau ([`mae_plateau`][]) by then (measured at P = 64: window means 0.659, 0.683, 0.684
#: over the third, fourth and last fifth of 1,200 steps; at P = 36, 0.426, 0.436, 0.443 over
#: 800).
DYN_MAE_STEPS = 1200
#: The MAE reference is at its plateau when the own-area attention of masked local queries,
#: averaged over the last fifth of the run, is within MAE_PLATEAU_TOL of its average over the
#: fifth before (the Theorem 4.4 check's ATTN_TOL: the per-step readings scatter by ≈ 0.08,
#: so a window mean of ≥ 40 readings has a standard error ≤ 0.013 and 0.02 is well above it
#: while far below the 0.3–0.5 rise of an unconverged run).
MAE_PLATEAU_TOL = ATTN_TOL


def cl_column_settings(quick: bool) -> tuple[int, int, int]:
    """(P, CL steps, MAE steps) of the CL column (quick: P = 36)."""
    return (36, 30, 800) if quick else (DYN_CL_P, CL_STEPS, DYN_MAE_STEPS)


def mae_plateau(tr: pd.DataFrame, column: str = "attn_own_lq",
                tol: float = MAE_PLATEAU_TOL) -> dict:
    """Whether `column` of a trajectory is at its plateau: its mean over the last fifth of the
    steps (``end``) against its mean over the fifth before (``before``); ``plateau`` when they
    differ by at most `tol`. ``se``: the standard error of ``end`` (readings as independent)."""
    last = float(tr.step.iloc[-1])
    w_end = tr[tr.step >= 0.8 * last][column]
    w_before = tr[(tr.step >= 0.6 * last) & (tr.step < 0.8 * last)][column]
    end, before = float(w_end.mean()), float(w_before.mean())
    se = float(w_end.std(ddof=1) / math.sqrt(len(w_end))) if len(w_end) > 1 else math.nan
    ok = bool(len(w_before) and abs(end - before) <= tol)
    return {"end": end, "before": before, "change": end - before, "se": se, "plateau": ok,
            "tol": tol}


def _cl_column(ax, axa, quick: bool, headline: dict, reading: list, settings: dict) -> None:
    """The CL trajectory (the Theorem 4.4 check's setting, Δ > 0 size family) against MAE
    (population-montecarlo) on the same K = 4 data run to its plateau."""
    P, cl_steps, mae_steps = cl_column_settings(quick)
    C1, C = family_sizes("pos", P)
    runs = {"CL": pair_run(P, C1, C, 0.5, cl_steps, True),
            "MAE": pair_run(P, C1, C, 0.5, mae_steps, False, 201)}
    for name, r in runs.items():
        tr = r.trajectory
        ls = "-" if name == "CL" else "--"
        ax.plot(tr.step, tr.phi_own_lq, color="C2", ls=ls, label=f"{name}: Φ own area")
        ax.plot(tr.step, tr.phi_glob_lq, color="C1", ls=ls, label=f"{name}: Φ global area")
        axa.plot(tr.step, tr.attn_own_lq, color="C2", ls=ls, lw=0.8 if name == "MAE" else 1.5,
                 label=f"{name}: own area")
        axa.plot(tr.step, tr.attn_glob_lq, color="C1", ls=ls, lw=0.8 if name == "MAE" else 1.5,
                 label=f"{name}: global area")
    mae = mae_plateau(runs["MAE"].trajectory)
    mae_glob = mae_plateau(runs["MAE"].trajectory, "attn_glob_lq")
    cl = mae_plateau(runs["CL"].trajectory, "attn_glob_lq")
    axa.axvspan(0.8 * mae_steps, mae_steps, color="0.9", zorder=0,
                label=f"MAE end window (own {mae['end']:.3f}, "
                + ("plateau" if mae["plateau"] else "NOT at plateau") + ")")
    for col, w in (("C2", mae), ("C1", mae_glob)):
        axa.hlines(w["end"], 0.8 * mae_steps, mae_steps, color=col, lw=2.0)
    for a in (ax, axa):  # CL's plateau comes within tens of steps, MAE's after hundreds
        a.set_xscale("symlog", linthresh=10)
    delta = runs["CL"].config.delta
    style_axes(ax, None, "FP correlation Φ", f"CL ({cl_steps} steps) vs converged MAE "
               f"({mae_steps}), K = 4\nΔ = {delta:+.3f}: P = {P}, C1 = {C1}, C = {C}",
               title_size=9, legend=7)
    axa.set_ylim(-0.02, 1.02)
    style_axes(axa, "GD steps", "attention of a masked local query", legend=7)
    ends = {name: r.trajectory.iloc[-1] for name, r in runs.items()}
    headline["cl"] = {"P": P, "C1": C1, "C": C, "delta": delta, "steps": cl_steps,
                      "mae_steps": mae_steps, "mae_plateau": mae["plateau"],
                      "mae_attn_own_end_window": mae["end"],
                      "mae_attn_own_before_window": mae["before"],
                      "mae_attn_own_end_se": mae["se"], "mae_plateau_tol": mae["tol"],
                      "mae_attn_glob_end_window": mae_glob["end"],
                      "cl_attn_glob_end_window": cl["end"], "cl_plateau": cl["plateau"],
                      **{f"{name.lower()}_final_{k}": float(ends[name][k])
                         for name in runs for k in ("attn_own_lq", "attn_glob_lq",
                                                    "phi_own_lq", "phi_glob_lq")}}
    premise = (f"MAE is at its plateau (own-area attention {mae['end']:.3f} ± {mae['se']:.3f} "
               f"over the last fifth of {mae_steps} steps, {mae['before']:.3f} over the fifth "
               f"before: change {mae['change']:+.3f}, within {mae['tol']:g})"
               if mae["plateau"] else
               f"premise failed: MAE is NOT at its plateau after {mae_steps} steps (own-area "
               f"attention {mae['before']:.3f} → {mae['end']:.3f}, change {mae['change']:+.3f} "
               f"> {mae['tol']:g}), so the comparison below is with an unconverged MAE")
    reading.append(
        f"CL (P = {P}, C1 = {C1}, C = {C}, Δ = {delta:+.3f}, {cl_steps} steps) against MAE on "
        f"the same data: {premise}. Masked local queries end with own/global attention "
        f"{ends['CL'].attn_own_lq:.3f}/{ends['CL'].attn_glob_lq:.3f} under CL (global "
        f"{cl['end']:.3f} over its last fifth, "
        + ("a plateau" if cl["plateau"] else "still moving") + ") against "
        f"{mae['end']:.3f}/{mae_glob['end']:.3f} "
        f"for the converged MAE (end-window means); Φ own/global "
        f"{ends['CL'].phi_own_lq:.3f}/{ends['CL'].phi_glob_lq:.3f} (CL) and "
        f"{ends['MAE'].phi_own_lq:.3f}/{ends['MAE'].phi_glob_lq:.3f} (MAE).")
    settings["cl"] = runs["CL"].config.to_dict()
    settings["cl_mae_reference"] = runs["MAE"].config.to_dict()


# -- phase diagram -------------------------------------------------------------------------------
PD_P, PD_C = 64, 4
PD_C1 = (8, 16, 24, 32, 40, 48, 56, 60)
PD_GAMMA = (0.25, 0.5, 0.75)
PD_STEPS = 50


def pd_grid(quick: bool) -> tuple[int, int, tuple[int, ...], tuple[float, ...], int]:
    """(P, C, global sizes C1, masking probabilities γ, steps)."""
    if quick:
        return 16, 2, (4, 8, 12), (0.5, 0.75), 20
    return PD_P, PD_C, PD_C1, PD_GAMMA, PD_STEPS


PD_CAPTION = (
    f"Where MAE learns the local areas, over the information gap Δ and the masking probability "
    f"γ (theorylab; Huang et al. (2025), Thm 4.1–4.2 as RECONSTRUCTED in "
    f"docs/papers/huang2024.md §4): exact population GD (population-laplace) from Q⁰ = 0 with "
    f"P = {PD_P}, one cluster, local areas of C = {PD_C} patches and global areas of "
    f"C1 ∈ {list(PD_C1)} (Δ = 2κ_s − κ_c − 1 from the sizes), γ ∈ {list(PD_GAMMA)}, "
    f"{PD_STEPS} steps with η = 2P, otherwise the notes' §9 setting. A cell counts as 'local "
    f"areas learned' when the own-area attention of masked local queries (unmasked keys of "
    f"their area, averaged over data and masks) is at least ½(1 − γ^(C−1)) after the last "
    f"step (half the most it can be; t_II in the cell is the first step at which it did), and "
    f"'Phase I' when the first step lowers the global FP "
    f"correlation of local queries by more than it raises their own-area one. Left: the four "
    f"combinations (colour) with the final own-area attention written in each cell; right: "
    f"Φ_glob at the end of Phase I divided by the predicted value, the {PHASE_ONE_END_LABEL} "
    f"(derived in the reconstructed model; cells "
    f"without a Phase I, or where it has not ended, left blank). Third panel, CL (Thm 4.4 as "
    f"RECONSTRUCTED, §4.4): the same sizes and γ trained by cl-montecarlo (InfoNCE on two "
    f"masked views, τ = 0.1, 7 negatives (the Theorem 4.4 check uses 15), mean pooling, K = 4 "
    f"clusters, {CL_STEPS} steps, otherwise the Theorem 4.4 check's setting) and, as its "
    f"reference, MAE by population-montecarlo on the "
    f"same K = 4 data; a cell 'collapses' when CL's global attention of masked local queries "
    f"(mean over the last fifth of the steps) rose by more than 0.02 and ends more than 0.02 "
    f"above MAE's (the check's rule); the number is CL's final global attention. Δ ≈ 0, "
    f"excluded by Thm 4.1, is inside the grid on purpose."
)

_CATS = ("not learned, no Phase I", "not learned, Phase I", "learned, no Phase I",
         "learned, Phase I")


@register(
    "huang2024-phase-diagram",
    paper=PAPER_NAME,
    paper_figure="none (theorylab; Thm 4.1–4.2)",
    title="Phase diagram over (Δ, γ): local areas learned by MAE, Phase I, CL collapse",
    caption=PD_CAPTION,
    data_source="synthetic: exact population MAE loss of Def. 2.1 data (population-laplace); "
    "CL by cl-montecarlo",
)
def phase_diagram(ctx: FigureContext) -> FigureResult:
    import seaborn as sns
    from matplotlib.colors import ListedColormap

    P, C, C1s, gammas, steps = pd_grid(ctx.quick)
    deltas = [information_gap(P, c1, C) for c1 in C1s]
    cat = np.zeros((len(gammas), len(C1s)), dtype=int)
    ratio = np.full(cat.shape, np.nan)
    collapsed = np.zeros(cat.shape, dtype=bool)
    cl_glob = np.full(cat.shape, np.nan)
    cells = []
    for i, g in enumerate(gammas):
        for j, c1 in enumerate(ctx.tqdm(C1s, desc=f"γ={g}")):
            run = trained_run(P, c1, C, g, steps, "contiguous")
            tr = run.trajectory
            summ = _summary(tr, P, c1, C, g)
            present = summ["phase_I"]
            a = float(tr.attn_own_lq.iloc[-1])
            learned = a >= own_attention_target(C, g)
            cat[i, j] = 2 * int(learned) + int(present)
            end = summ["phi_glob_end_I"] if present else math.nan
            pred = phase_one_end(figure_config(P, c1, C, gamma=g, steps=steps), steps)
            ratio[i, j] = end / pred if math.isfinite(end) and pred != 0 else math.nan
            cl_steps = steps if ctx.quick else CL_STEPS
            clr = pair_run(P, c1, C, g, cl_steps, True)
            mae_glob = end_mean(pair_run(P, c1, C, g, cl_steps, False).trajectory)
            collapsed[i, j] = cl_collapses(clr, mae_glob)
            cl_glob[i, j] = end_mean(clr.trajectory)
            cells.append({"gamma": g, "C1": c1, "delta": deltas[j], "learned": learned,
                          "phase_I": present, "final_attn_own_lq": a,
                          "target": own_attention_target(C, g), "t_I": summ["t_I"],
                          "t_II": summ["t_II"], "phi_glob_end_I": end, "phi_glob_pred": pred,
                          "final_phi_own_lq": float(tr.phi_own_lq.iloc[-1]),
                          "final_phi_glob_lq": float(tr.phi_glob_lq.iloc[-1]),
                          "cl_collapses": bool(collapsed[i, j]),
                          "cl_final_attn_glob_lq": float(cl_glob[i, j]),
                          "mae_mc_final_attn_glob_lq": mae_glob})
    fig = new_figure((17.0, 3.8))
    ax1, ax2, ax3 = fig.subplots(1, 3)
    pal = ["#d9d9d9", "#fdae6b", "#9ecae1", "#3182bd"]
    xt = [f"{d:+.2f}\n({c1})" for d, c1 in zip(deltas, C1s)]
    ticks = {"xticklabels": xt, "yticklabels": [f"{g:g}" for g in gammas],
             "annot_kws": {"fontsize": 7}}
    cells_kw = {"cbar": False, "linewidths": 0.5, "linecolor": "white", **ticks}
    annot = np.array([f"{c['final_attn_own_lq']:.2f}\nt_II {fmt(c['t_II'])}"
                      for c in cells]).reshape(cat.shape)  # cells run over γ, then C1
    sns.heatmap(cat, ax=ax1, cmap=ListedColormap(pal), vmin=-0.5, vmax=3.5, annot=annot, fmt="",
                **cells_kw)
    from matplotlib.patches import Patch

    ax1.legend(handles=[Patch(color=pal[k], label=_CATS[k]) for k in range(4)], fontsize=6,
               loc="upper left", bbox_to_anchor=(1.0, 1.0))
    ax1.set_title(f"after {steps} steps (cell: own-area attention, t_II)")
    sns.heatmap(ratio, ax=ax2, cmap="vlag", vmin=0.0, vmax=2.0, annot=True, fmt=".2f",
                cbar_kws={"label": "Φ_glob(t_I) / predicted"}, **ticks)
    ax2.set_title(f"end of Phase I against the {PHASE_ONE_END_LABEL}", fontsize=9)
    sns.heatmap(collapsed.astype(float), ax=ax3, cmap=ListedColormap(["#d9d9d9", "#e6550d"]),
                vmin=0, vmax=1, annot=cl_glob, fmt=".2f", **cells_kw)
    ax3.set_title("CL: global collapse (orange) and final global attention")
    for ax in (ax1, ax2, ax3):
        style_axes(ax, f"Δ (C1), P = {P}, C = {C}", "masking probability γ")
        ax.grid(False)
    n_pos = sum(d > 0 for d in deltas) * len(gammas)
    n_pos_I = int(sum(c["phase_I"] for c in cells if c["delta"] > 0))
    n_neg_I = int(sum(c["phase_I"] for c in cells if c["delta"] <= 0))
    headline = {
        "n_cells": len(cells), "n_learned": int(sum(c["learned"] for c in cells)),
        "n_phase_I": int(sum(c["phase_I"] for c in cells)),
        "n_delta_pos": n_pos, "n_phase_I_delta_pos": n_pos_I,
        "n_phase_I_delta_nonpos": n_neg_I,
        "smallest_delta_with_phase_I": {f"{g:g}": min(
            (c["delta"] for c in cells if c["gamma"] == g and c["phase_I"]), default=None)
            for g in gammas},
        "n_cl_collapses": int(collapsed.sum()),
        "n_learned_and_cl_collapses": int(sum(c["learned"] and c["cl_collapses"]
                                              for c in cells)),
        "deltas": deltas, "cells": cells,
    }
    ok = [r for r in ratio.ravel() if math.isfinite(r)]
    reading = [
        f"CL collapses onto the global area in {headline['n_cl_collapses']} of {len(cells)} "
        f"cells, {headline['n_learned_and_cl_collapses']} of them cells where MAE learns the "
        f"local areas; CL's final global attention of local queries "
        f"{np.nanmin(cl_glob):.2f}–{np.nanmax(cl_glob):.2f}.",
        f"{headline['n_learned']} of {len(cells)} cells learn the local areas within {steps} "
        f"steps; Phase I appears in {n_pos_I} of the {n_pos} cells with Δ > 0 and in {n_neg_I} "
        f"with Δ ≤ 0.",
        "Smallest Δ with a Phase I per γ: " + ", ".join(
            f"γ = {g}: {fmt(v) if v is not None else 'none'}"
            for g, v in headline["smallest_delta_with_phase_I"].items()) + ".",
        "Steps t_II to reach the threshold, from the smallest to the largest Δ: " + "; ".join(
            f"γ = {g:g}: " + ", ".join(fmt(c["t_II"]) for c in cells if c["gamma"] == g)
            for g in gammas) + ".",
        (f"Φ_glob at the end of Phase I is {min(ok):.2f}–{max(ok):.2f} times the "
         f"{PHASE_ONE_END_LABEL} over the {len(ok)} cells where Phase I ends within the run."
         if ok else
         "No cell has a Phase I that ends within the run."),
    ]
    settings = {"P": P, "C": C, "C1": list(C1s), "gamma": list(gammas), "steps": steps,
                "eta_q": ETA_Q, "areas": "contiguous", "learned_threshold":
                "attn_own_lq >= 0.5 (1 - gamma^(C-1))", "cl_steps": CL_STEPS if not ctx.quick
                else steps, "cl_rule": "end glob - start > 0.02 and end glob - MAE(mc) > 0.02",
                "base": figure_config(P, C1s[0], C, steps=steps).resolved().to_dict()}
    return FigureResult(fig, headline=headline, settings=settings, reading=reading)
