"""Figure 4 of Huang et al. (2025): how a masked patch attends through FP correlations, drawn
from a trained model. Registered id: ``huang2024-fig4``."""

from __future__ import annotations

import math

import numpy as np

from theorylab.core.figures import FigureContext, FigureResult, new_figure, register
from theorylab.core.figures.axes import image_axes, style_axes

from ..config import PAPER_NAME
from ._common import draw_areas, expected_attention, fmt, grid_of, trained_run
from ._dynamics import dynamics_settings

__all__ = ["fig4", "pick_queries", "attention_split"]


def pick_queries(labels: np.ndarray) -> tuple[int, int]:
    """(a local-area query, a global-area query): the first patch of the middle local area and
    the middle patch of the global area (in patch order)."""
    n = int(labels.max()) + 1
    local = int(np.flatnonzero(labels == max(1, n // 2))[0])
    glob = np.flatnonzero(labels == 0)
    return local, int(glob[len(glob) // 2])


def attention_split(maps: np.ndarray, mask: np.ndarray, labels: np.ndarray, p: int) -> dict:
    """Per-draw attention of masked query p (rows ``maps[:, p]``) split into the unmasked keys
    of its own area, the unmasked keys of the global area, the unmasked keys of the other
    local areas, and the masked keys (the query itself included); means and standard errors
    over the draws."""
    row = maps[:, p, :]  # (n, P)
    msk = mask.copy()
    msk[:, p] = True
    own = labels == labels[p]
    parts = {
        "own": (row * (~msk & own)).sum(axis=1),
        "global": (row * (~msk & (labels == 0))).sum(axis=1) if labels[p] != 0 else None,
        "other_local": (row * (~msk & ~own & (labels != 0))).sum(axis=1),
        "masked": (row * msk).sum(axis=1),
    }
    out = {}
    for k, v in parts.items():
        if v is None:
            continue
        out[f"attn_{k}"] = float(v.mean())
        out[f"attn_{k}_se"] = float(v.std(ddof=1) / math.sqrt(len(v))) if len(v) > 1 else 0.0
    return out


FIG4_CAPTION = (
    "How a masked patch attends through feature–position (FP) correlations (Huang et al. "
    "(2025), Figure 4, redrawn from a trained model). The model is the trained Δ > 0 run of "
    "huang2024-dynamics (P = 256 on a 16×16 grid, one cluster, contiguous areas: a global area "
    "of C1 = 192 patches, the top 12 rows, and 16 local areas of C = 4; exact population GD, "
    "300 steps, the notes' §9 setting; RECONSTRUCTED model: a masked patch's query is its "
    "position e_p alone, the logit of an unmasked key q of area m is z_m Φ[p, v_m] + Υ[p, q] "
    "and of a masked key Υ[p, q], docs/papers/huang2024.md §2.2–§2.3). Top row: a masked "
    "query in a local area; bottom row: a masked query in the global area (red square). Left: "
    "its attention on one draw of the coefficients and the mask (dots: masked patches); "
    "middle: its attention averaged over Monte Carlo draws of coefficients and masks (log "
    "colour scale); own area outlined in green, the global area in orange. Right: its learned "
    "FP correlations Φ[p, v_m] with every area's feature m (G = global), and its positional "
    "correlations Υ averaged over the keys of its own area, of the other areas, and Υ[p, p]. "
    "The masked query has no content, so it finds its area's unmasked patches only through "
    "the large own-area Φ, which multiplies their content z_m. The reading compares the Monte "
    "Carlo own-area attention with the exact engine's."
)


@register(
    "huang2024-fig4",
    paper=PAPER_NAME,
    paper_figure="Figure 4",
    title="A masked patch attends its own area through the learned FP correlations",
    caption=FIG4_CAPTION,
    data_source="synthetic: trained one-layer MAE (population-laplace) on Def. 2.1 data",
)
def fig4(ctx: FigureContext) -> FigureResult:
    from matplotlib.colors import LogNorm
    from matplotlib.patches import Rectangle

    P, steps, sizes = dynamics_settings(ctx.quick)
    C1, C = sizes["pos"]
    gamma = 0.5
    run = trained_run(P, C1, C, gamma, steps, "contiguous")
    s = run.structure
    lab = s.labels[0]
    n = 64 if ctx.quick else 256
    maps, batch = expected_attention(run, n_samples=n, seed=ctx.seed)
    mask = batch["mask"]
    q_loc, q_glob = pick_queries(lab)
    side = math.isqrt(P)
    fig = new_figure((12.5, 7.6))
    axes = fig.subplots(2, 3, gridspec_kw={"width_ratios": [1, 1.15, 1.1]})
    headline, reading = {}, []
    last = run.trajectory.iloc[-1]
    for row, (name, p) in enumerate((("local", q_loc), ("global", q_glob))):
        j = int(lab[p])
        own = lab == j
        others = [b for b in range(n) if np.any(~mask[b] & own & (np.arange(P) != p))]
        b = others[0] if others else 0
        mean_map = maps[:, p, :].mean(axis=0)
        vmin = max(float(mean_map.min()), 1e-6)
        hl = {j: ("C2", 2.4)} if j != 0 else {}
        hl[0] = ("C1", 2.4) if j != 0 else ("C2", 2.4)
        for col, (vals, title) in enumerate((
                (maps[b, p, :], f"one draw (draw {b}): attention of patch {p}"),
                (mean_map, f"mean over {n} draws of z and masks"))):
            ax = axes[row, col]
            im = ax.imshow(grid_of(vals), cmap="magma",
                           norm=LogNorm(vmin=vmin, vmax=max(float(vals.max()), vmin * 10)))
            draw_areas(ax, lab, color="0.6", lw=0.4, highlight=hl)
            r, c = divmod(p, side)
            ax.add_patch(Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, edgecolor="red", lw=2.0,
                                   zorder=5))
            if col == 0:
                mr, mc = np.divmod(np.flatnonzero(mask[b]), side)
                ax.plot(mc, mr, ".", color="0.85", ms=2.5)
            image_axes(ax)
            ax.set_title(title, fontsize=8)
            fig.colorbar(im, ax=ax, shrink=0.8)
        phi = run.Phi[p, s.offset[0]:s.offset[0] + int(s.n_areas[0])]
        ax = axes[row, 2]
        cols = ["C2" if m == j else ("C1" if m == 0 else "0.6") for m in range(len(phi))]
        ax.bar(np.arange(len(phi)), phi, color=cols)
        ax.set_xticks(np.arange(len(phi)), ["G" if m == 0 else str(m) for m in range(len(phi))],
                      fontsize=6 if len(phi) > 12 else 8)
        ax.axhline(0, color="0.3", lw=0.6)
        ups = run.Ups[p]
        mates = own & (np.arange(P) != p)
        u_own = float(ups[mates].mean()) if mates.any() else math.nan
        u_oth = float(ups[~own].mean())
        ax.text(0.02, 0.98, f"Υ own area {fmt(u_own)}\nΥ other areas {fmt(u_oth)}\n"
                f"Υ[p, p] {fmt(float(ups[p]))}", transform=ax.transAxes, va="top", fontsize=7)
        style_axes(ax, "area m of the feature v_m", f"Φ[p = {p}, v_m]", f"{name}-area query "
                   f"(area {'G' if j == 0 else j}): learned FP correlations", title_size=8)
        split = attention_split(maps, mask, lab, p)
        others_phi = np.delete(phi, [j] if j == 0 else [0, j])
        tag = "lq" if j != 0 else "gq"
        h = {"patch": p, "area": j, "phi_own": float(phi[j]), "phi_global": float(phi[0]),
             "phi_other_local_max": float(others_phi.max()) if others_phi.size else math.nan,
             "phi_argmax_area": int(np.argmax(phi)), "ups_own_mean": u_own,
             "ups_other_mean": u_oth, "ups_self": float(ups[p]), **split,
             "exact_attn_own": float(last[f"attn_own_{tag}"]),
             "exact_attn_masked": float(last[f"attn_masked_{tag}"])}
        headline[name] = h
        reading.append(
            f"Masked {name}-area patch {p} (area {'G' if j == 0 else j}): Φ own = "
            f"{h['phi_own']:.3f}, Φ global = {h['phi_global']:.3f}, largest Φ to another local "
            f"area {fmt(h['phi_other_local_max'])}; Υ own/other/self = {fmt(u_own)}/"
            f"{fmt(u_oth)}/{fmt(h['ups_self'])}. Attention on its own area's unmasked keys "
            f"{h['attn_own']:.3f} ± {h['attn_own_se']:.3f} (Monte Carlo, {n} draws) against "
            f"{h['exact_attn_own']:.3f} exact (mean over {name}-area queries); masked keys "
            f"{h['attn_masked']:.3f}, other local areas {h['attn_other_local']:.3g}.")
    settings = {"P": P, "C1": C1, "C": C, "gamma": gamma, "steps": steps, "areas": "contiguous",
                "mc_draws": n, "seed": ctx.seed, "queries": {"local": q_loc, "global": q_glob}}
    return FigureResult(fig, headline=headline, settings=settings, reading=reading)
