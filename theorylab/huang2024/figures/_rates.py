"""The FP-correlation rates of Lemma 5.1 (RECONSTRUCTED, docs/papers/huang2024.md §4.5) at
Q⁰ = 0: the engine's gradient against the rates DERIVED in the reconstructed model
([`theorylab.huang2024.predictions`][]), exactly and to leading order in P, over a P ladder of
the Δ > 0 and Δ < 0 size families with masked keys in and out of the softmax. Registered id:
``huang2024-rates``."""

from __future__ import annotations

import math

import numpy as np
from matplotlib.ticker import NullFormatter

from theorylab.core.figures import FigureContext, FigureResult, new_figure, register, style_axes

from ..config import PAPER_NAME
from ..data import information_gap
from ..engines import make_engine
from ..predictions import initial_rates, leading_rates, lemma51_ratio, z_moments
from ..setups import FAMILIES, GAMMA, family_sizes, mae_config

__all__ = ["RATES_LADDER", "RATES_LADDER_QUICK", "NEG_MEASURED_MAX_P", "COORDS", "rates_ladder",
           "family_shape", "measured_rates", "derived_rates", "rates"]

#: The P ladder of the measured rates (2.2 decades) and its quick version (1.6 decades).
RATES_LADDER = (16, 36, 64, 144, 256, 576, 1024, 2304)
RATES_LADDER_QUICK = (16, 64, 576)
#: The largest P at which the Δ < 0 family's engine gradient is measured: its many small local
#: areas (C1 ≈ P^{1/2}, C ≈ P^{1/4}) make one exact evaluation cost 18 s at P = 625 and minutes
#: beyond; its derived curves go on over the whole ladder.
NEG_MEASURED_MAX_P = 576
#: The rates of a masked local-area query drawn: its own area, the global area, another local
#: area (colour of each).
COORDS = {"own": "C2", "glob": "C1", "other": "C0"}
_DENSE = 36  # P values of the derived curves


def rates_ladder(quick: bool, family: str = "pos") -> tuple[int, ...]:
    """The P values at which the engine's gradient is measured (the Δ < 0 family up to
    [`NEG_MEASURED_MAX_P`][])."""
    ladder = RATES_LADDER_QUICK if quick else RATES_LADDER
    return ladder if family == "pos" else tuple(P for P in ladder if P <= NEG_MEASURED_MAX_P)


def family_shape(P: int, fam: str) -> tuple[int, int, list[int]]:
    """(C1, C, area sizes) of size family `fam` (``"pos"``: Δ > 0, ``"neg"``: Δ < 0;
    [`theorylab.huang2024.setups.FAMILIES`][]) at P; area 0 is the global area."""
    C1, C = family_sizes(fam, P)
    return C1, C, [C1] + [C] * ((P - C1) // C)


def measured_rates(P: int, fam: str, mask_keys: bool) -> dict:
    """The rates −∂L/∂Φ at Q⁰ = 0 of the ``population-laplace`` engine (one cluster, the
    notes' §9 setting of [`mae_config`][]), read for the masked local-area queries: means
    over them of the own-area, global and other-local-area entries (NaN: no other local area),
    and ``spread``, the largest deviation of one query's entry from its mean relative to the
    largest rate (all local queries are equivalent with one cluster, so it is rounding)."""
    C1, C, _ = family_shape(P, fam)
    cfg = mae_config(P, C1, C, mask_keys=mask_keys).resolved()
    eng = make_engine(cfg)
    r = -eng.evaluate(eng.initial_params(), 0, need_grad=True, record=False).grads["Phi"]
    lab = eng.structure.labels[0]
    loc = np.flatnonzero(lab > 0)
    n_areas = int(lab.max()) + 1
    own, glob = r[loc, lab[loc]], r[loc, 0]
    other = np.array([r[p, m] for p in loc for m in range(1, n_areas) if m != lab[p]])
    parts = [own, glob] + ([other] if other.size else [])
    scale = max(float(np.abs(x).max()) for x in parts)
    spread = max(float(np.abs(x - x.mean()).max()) for x in parts) / scale
    return {"own": float(own.mean()), "glob": float(glob.mean()),
            "other": float(other.mean()) if other.size else math.nan, "spread": spread}


def derived_rates(P: int, fam: str, mask_keys: bool) -> dict:
    """The derived exact and leading-order rates of a masked local-area query (area 1) at Q⁰
    = 0, the leading-order neglected orders 1/P (own) and 1/(P a_1) (global; a_1 the global
    area's mean attention mass), and [`lemma51_ratio`][]'s ratios."""
    C1, C, sizes = family_shape(P, fam)
    mu = z_moments(mae_config(P, C1, C))
    kw = {"gamma": GAMMA, "mask_keys": mask_keys, "loss_norm": "P"}
    ex, ld = initial_rates(P, sizes, 1, mu, **kw), leading_rates(P, sizes, 1, mu, **kw)
    a1 = (1 - GAMMA) * C1 / P if mask_keys else C1 / (P - 1)
    ratio = lemma51_ratio(P, C1, C, mu, **kw)
    out = {"P": P, "C1": C1, "C": C, "delta": information_gap(P, C1, C), "order_own": 1 / P,
           "order_glob": 1 / (P * a1),
           "ratio_exact": ratio["exact"], "ratio_leading": ratio["leading"],
           "ratio_notes": ratio["notes"]}
    for k, idx in (("own", 1), ("glob", 0), ("other", 2)):
        has = idx < len(sizes)
        out[f"{k}_exact"] = float(ex[idx]) if has else math.nan
        out[f"{k}_leading"] = float(ld[idx]) if has else math.nan
    return out


def _dense_P(ladder: tuple[int, ...]) -> list[int]:
    return sorted({int(round(x)) for x in np.geomspace(ladder[0], ladder[-1], _DENSE)}
                  | set(ladder))


def _rel(a: float, b: float) -> float:
    return abs(a - b) / abs(b) if math.isfinite(a) and math.isfinite(b) and b else math.nan


def _nanmax(xs) -> float:
    xs = [x for x in xs if math.isfinite(x)]
    return max(xs) if xs else math.nan


RATES_CAPTION = (
    "The FP-correlation rates at initialisation of Huang et al. (2025)'s Lemma 5.1 "
    "(RECONSTRUCTED, docs/papers/huang2024.md §4.5): measured against derived. Rates r = "
    "−∂L/∂Φ at Q⁰ = 0 (the change of Φ in one GD step divided by η) of a masked local-area "
    "query p, on its own area's feature (green), the global feature (orange) and another local "
    "area's feature (blue), in the notes' §9 setting (one cluster, z ~ U[0.5, 1.5], "
    "Bernoulli(0.5) masks, loss normalised by 1/P). Rows: the Δ > 0 size family (Δ = 0.65, "
    "C = round(P^{1/4}), C1 ≈ P^0.95) and the Δ < 0 family (Δ = −1/4, C = round(P^{1/4}), "
    "C1 ≈ P^{1/2}), the ladders' families (setups.FAMILIES), C1 the admissible size whose Δ is "
    "closest to the family's (Δ held fixed up to the rounding of sizes). Marks: measured, "
    "the exact "
    "population gradient of the population-laplace engine (means over the local queries; "
    "the Δ < 0 family's many small local areas make it measured up to P = 576 only, where "
    "one exact evaluation costs seconds to minutes; "
    "filled: r > 0, open: r < 0); solid lines: the derived exact rates "
    "(predictions.initial_rates, a finite sum over the binomial law of the unmasked count and "
    "the coefficient moments); dashed: their leading order in P (predictions.leading_rates, "
    "the rates at the mean attention masses), both drawn at every P of a denser grid (the "
    "jumps are the rounding of the family's sizes). First two columns: |r| with masked keys in "
    "and out of the softmax (log axes). Third column: the ratio |r_glob| / r_own (circles: "
    "masked keys in, squares: out) with its exact and leading-order derived values; dotted "
    "grey: the notes' earlier heuristic a_1²/a_j, which is WRONG in the reconstructed model (it "
    "drops the factor (1 − a_1) of the global rate, the cross terms and the C − 1 own-area "
    "keys) and is drawn as a labelled reference only. Fourth column: the relative difference "
    "between the measured rates and their leading order, against the stated neglected orders "
    "1/P (own rate) and 1/(P a_1) (global rate, a_1 the global area's mean attention mass). "
    "The largest differences per panel are in the manifest's headline and reading."
)


@register(
    "huang2024-rates",
    paper=PAPER_NAME,
    paper_figure="none (theorylab; Lemma 5.1)",
    title="Lemma 5.1 rates at initialisation: engine gradient against the derived rates over P",
    caption=RATES_CAPTION,
    data_source="synthetic: exact population MAE gradient of Def. 2.1 data at Q⁰ = 0 "
    "(population-laplace) and the derived rates of theorylab.huang2024.predictions",
)
def rates(ctx: FigureContext) -> FigureResult:
    ladder = rates_ladder(ctx.quick)
    dense = _dense_P(ladder)
    fig = new_figure((19.0, 8.0))
    axes = fig.subplots(2, 4)
    headline: dict = {"ladder": list(ladder)}
    reading: list[str] = []
    points: list[dict] = []
    for row, fam in enumerate(("pos", "neg")):
        curves = {mk: [derived_rates(P, fam, mk) for P in dense] for mk in (True, False)}
        measured_at = rates_ladder(ctx.quick, fam)
        meas = {mk: [{**derived_rates(P, fam, mk), **measured_rates(P, fam, mk)}
                     for P in ctx.tqdm(measured_at, desc=f"{fam}/{mk}")]
                for mk in (True, False)}
        fam_name = "Δ > 0" if fam == "pos" else "Δ < 0"
        for col, (mk, keys) in enumerate(((True, "in"), (False, "out"))):
            ax = axes[row, col]
            cv, ms = curves[mk], meas[mk]
            for k, color in COORDS.items():
                x = [c["P"] for c in cv]
                ax.plot(x, [abs(c[f"{k}_exact"]) for c in cv], color=color, lw=1.2,
                        label=f"{k}: derived exact")
                ax.plot(x, [abs(c[f"{k}_leading"]) for c in cv], color=color, lw=1.0, ls="--",
                        label=f"{k}: leading order")
                for m in ms:
                    v = m[k]
                    if math.isfinite(v):
                        ax.plot(m["P"], abs(v), "o", ms=6, color=color,
                                mfc=color if v > 0 else "white")
            worst_ex = _nanmax(_rel(m[k], m[f"{k}_exact"]) for m in ms for k in COORDS)
            big = ms[-1]
            worst_ld = {k: _rel(big[k], big[f"{k}_leading"]) for k in COORDS}
            style_axes(ax, "P", "|rate| at Q⁰ = 0", f"{fam_name}, masked keys {keys}: max "
                       f"|meas − exact|/|exact| = {worst_ex:.1e}", log="xy", title_size=8,
                       legend={"fontsize": 6, "ncol": 3, "loc": "lower left"}
                       if row == 0 and col == 0 else None)
            panel = f"{fam}/{keys}"
            headline[panel] = {
                "max_rel_diff_exact": worst_ex,
                **{f"rel_diff_leading_{k}_at_Pmax": worst_ld[k] for k in COORDS},
                "max_within_kind_spread": max(m["spread"] for m in ms),
                "delta_range": [min(m["delta"] for m in ms), max(m["delta"] for m in ms)],
            }
            for m in ms:
                points.append({"family": fam, "mask_keys": mk, **{
                    k: m[k] for k in ("P", "C1", "C", "delta", "own", "glob", "other",
                                      "own_exact", "glob_exact", "other_exact", "own_leading",
                                      "glob_leading", "other_leading", "ratio_exact",
                                      "ratio_leading", "ratio_notes")}})
            reading.append(
                f"{fam_name}, masked keys {keys} (P = {measured_at[0]}–{measured_at[-1]} "
                "measured, Δ = "
                f"{min(m['delta'] for m in ms):+.3f} to {max(m['delta'] for m in ms):+.3f}): "
                f"engine = derived exact rates to {worst_ex:.1e} (relative, largest over P and "
                f"the three rates); at P = {big['P']} the leading order is off by "
                + ", ".join(f"{worst_ld[k]:.2%} ({k})" for k in COORDS
                            if math.isfinite(worst_ld[k]))
                + "; signs of the measured other-local rate over the ladder: "
                + "".join("+" if m["other"] > 0 else "−" if m["other"] < 0 else "·"
                          for m in ms if math.isfinite(m["other"])) + ".")
        _ratio_panel(axes[row, 2], fam_name, curves, meas, headline, fam, reading)
        _order_panel(axes[row, 3], fam_name, meas)
    headline["points"] = points
    for ax in axes.ravel():  # the ladder's P values as plain tick labels
        ax.set_xticks(ladder, [str(P) for P in ladder])
        ax.xaxis.set_minor_formatter(NullFormatter())
    settings = {"ladder": list(ladder), "dense_P": dense, "families": {
        f: [FAMILIES[f].kappa_s, FAMILIES[f].kappa_c] for f in ("pos", "neg")}, "gamma": GAMMA,
        "engine":
        "population-laplace", "query": "masked local-area query (area 1)",
        "base": mae_config(16, 14, 2, steps=0).resolved().to_dict()}  # rates at Q⁰ = 0
    return FigureResult(fig, headline=headline, settings=settings, reading=reading)


def _ratio_panel(ax, fam_name: str, curves: dict, meas: dict, headline: dict, fam: str,
                 reading: list) -> None:
    for mk, mark, keys, shade in ((True, "o", "in", "k"), (False, "s", "out", "0.45")):
        x = [c["P"] for c in curves[mk]]
        ax.plot(x, [c["ratio_exact"] for c in curves[mk]], color=shade, lw=1.2,
                label=f"derived exact ({keys})")
        ax.plot(x, [c["ratio_leading"] for c in curves[mk]], color=shade, lw=1.0, ls="--",
                label=f"leading order ({keys})")
        ax.plot(x, [c["ratio_notes"] for c in curves[mk]], color="0.6", lw=1.0, ls=":",
                label="notes' old heuristic a_1²/a_j (wrong)" if mk else None)
        ms = meas[mk]
        r_meas = [-m["glob"] / m["own"] for m in ms]
        ax.plot([m["P"] for m in ms], r_meas, mark, color="C3", mfc="none", ms=7,
                label=f"measured ({keys})")
        d = headline[f"{fam}/{keys}"]
        d["ratio_max_rel_diff_exact"] = max(_rel(r, m["ratio_exact"]) for r, m in zip(r_meas, ms))
        d["ratio_rel_diff_leading_at_Pmax"] = _rel(r_meas[-1], ms[-1]["ratio_leading"])
        folds = [m["ratio_notes"] / r for r, m in zip(r_meas, ms)]
        d["notes_heuristic_over_measured"] = [min(folds), max(folds)]
        reading.append(
            f"{fam_name}, masked keys {keys}: |r_glob|/r_own measured "
            + ", ".join(f"{r:.4g} (P = {m['P']})" for r, m in zip(r_meas, ms))
            + f"; equal to the derived exact ratio to {d['ratio_max_rel_diff_exact']:.1e}, "
            f"{d['ratio_rel_diff_leading_at_Pmax']:.2%} from the leading order at P = "
            f"{ms[-1]['P']}; the notes' old heuristic is {min(folds):.3g}–{max(folds):.3g} "
            "times the measured ratio.")
    ax.axhline(1.0, color="0.3", lw=0.7)
    style_axes(ax, "P", "|r_glob| / r_own (local query)", f"{fam_name}: ratio (> 1: Phase I "
               "starts)", log="xy", title_size=8, legend={"fontsize": 6, "loc": "best"})


def _order_panel(ax, fam_name: str, meas: dict) -> None:
    for mk, mark, keys in ((True, "o", "in"), (False, "s", "out")):
        ms = meas[mk]
        x = [m["P"] for m in ms]
        for k, order in (("own", "order_own"), ("glob", "order_glob")):
            ax.plot(x, [_rel(m[f"{k}_leading"], m[k]) for m in ms], mark + "-", color=COORDS[k],
                    mfc=COORDS[k] if mk else "white", lw=0.8, ms=5,
                    label=f"{k}, keys {keys}")
            ax.plot(x, [m[order] for m in ms], color=COORDS[k], lw=0.8, ls=":",
                    alpha=1.0 if mk else 0.5,
                    label=("1/P" if k == "own" else "1/(P a_1)") + f" ({keys})")
    style_axes(ax, "P", "|leading − measured| / |measured|",
               f"{fam_name}: leading order against its neglected order", log="xy", title_size=8,
               legend={"fontsize": 6, "ncol": 2, "loc": "lower left"})
