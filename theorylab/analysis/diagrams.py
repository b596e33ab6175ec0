"""The summaries of a sweep a talk shows ([`theorylab.analysis.plots.plot_sweep`][] draws them;
[`plot_reading`][] is ``theorylab plot SWEEP --reading R --x AXIS``):

- a **heat map** of a value or a phase reading over two axes: each cell the mean over the
  seeds (and any further axis), written in it with ± half its seed interval, no grid lines
  through the cells, a cell whose runs have no such phase (no Phase I) or did not reach it by
  their last step hatched in a colour of its own (no colour of the colour map) with its legend
  entry;
- a **reading against an axis**: one point per setting with its seed interval (the 95 %
  Student-t interval of the mean for three seeds or more, the min–max for two: the legend says
  which), one series per value of any further axis, settings without the reading as crosses on
  the axis floor with their own legend entry, log axes on request, and the least-squares slope
  of the runs (every seed a point) with its 95 % interval in the legend.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .labels import (
    axis_label,
    check_out,
    default_png,
    note_box,
    paper_named,
    point_settings,
    save,
    symbol,
    tick,
)
from .questions import linear_law, power_law, reading_points, sweep_values

__all__ = ["heat_map", "plot_reading", "reading_plot"]

#: Heat-map cells without a value: face colour and hatch per kind (no such phase / not
#: reached), apart from every colour of the colour map (viridis has no grey).
_MISSING_STYLES = {"missing": ("#bdbdbd", "//"), "censored": ("#ffffff", "xx"),
                   "other": ("#f2f2f2", "..")}
_INTERVAL_TEXT = {"t95": "95 % t-interval of the mean over {n} seeds",
                  "minmax": "min–max over {n} seeds", "one": "one run per point"}




def _per_seed(rows: pd.DataFrame, axes: Sequence[str], keep: Sequence[str]) -> pd.DataFrame:
    """`rows` averaged over every axis but `keep` and the seed, one row per setting and seed
    (a missing reading's longest reason kept): a setting's spread is then its seeds' alone,
    not the other axes'."""
    others = [a for a in axes if a not in (*keep, "train.seed")]
    if not others:
        return rows
    keys = [*keep] + (["train.seed"] if "train.seed" in rows.columns else [])
    return rows.groupby(keys, dropna=False).agg(
        value=("value", "mean"), reason=("reason", lambda r: max(r, key=len, default="")),
        censored=("censored", "all")).reset_index()


def _setting_title(manifest: dict, rows: pd.DataFrame, axes: Sequence[str]) -> str:
    """The setting every run of `rows` shares (the parts of the paper's ``describe`` common to
    all its points), "" when the paper has no ``describe``."""
    points = rows[list(axes)].drop_duplicates().reset_index(drop=True) if axes else rows.iloc[:1]
    title, _ = point_settings(manifest, points, list(axes))
    return title


def _missing_kind(reason: str) -> str:
    if not reason:
        return "other"
    return "censored" if reason.startswith("not reached") else "missing"


def _missing_label(reason: str) -> str:
    """A legend entry for cells without a value: the reason's head (``no Phase I``)."""
    if reason.startswith("not reached"):
        return "not reached by the last step"
    head = reason.split(":")[0].replace(" in this run", "").strip()
    return head or "no value"


def _cell_text(row) -> str:
    """A cell's mean, ± half its seed interval, and how many of its runs have a value when
    not all do."""
    out = f"{row['mean']:.3g}"
    if row["kind"] in ("t95", "minmax"):
        out += f"\n±{(row['high'] - row['low']) / 2:.2g}"
    if row["finite"] < row["n"]:
        out += f"\n({row['finite']} of {row['n']} runs)"
    return out


def heat_map(source: Path, value: str, x: str, y: str, out: Path, *, default: bool,
             force: bool) -> Path:
    """A heat map of `value` over `x` and `y`: means over seeds and other axes in the cells,
    no grid lines through them, cells without a value in their own colour and legend."""
    from matplotlib.patches import Patch, Rectangle

    from theorylab.core.figures import figure_theme, new_figure, style_axes

    rows, axes, manifest = sweep_values(source, value)
    paper = paper_named(manifest.get("paper"))
    setting = _setting_title(manifest, rows, axes)  # list-valued axes: keyed by sweep_values
    cells = reading_points(_per_seed(rows, axes, [x, y]), x, by=[y])
    xs, ys = sorted(cells[x].unique()), sorted(cells[y].unique())
    grid = np.full((len(ys), len(xs)), np.nan)
    for _, c in cells.iterrows():
        grid[ys.index(c[y]), xs.index(c[x])] = c["mean"]
    averaged = [symbol(a, paper) for a in axes if a not in (x, y, "train.seed")]
    with figure_theme():
        fig = new_figure((6.4, 4.8))
        ax = fig.subplots()
        ax.grid(False)
        finite = grid[np.isfinite(grid)]
        lo, hi = (finite.min(), finite.max()) if finite.size else (None, None)
        mesh = ax.imshow(np.ma.masked_invalid(grid), origin="lower", aspect="auto",
                         cmap="viridis", vmin=lo, vmax=hi)
        ax.set_xticks(range(len(xs)), [tick(v) for v in xs])
        ax.set_yticks(range(len(ys)), [tick(v) for v in ys])
        ax.tick_params(length=0)
        for side in ax.spines.values():
            side.set_visible(False)
        style_axes(ax, axis_label(x, paper), axis_label(y, paper))
        fig.colorbar(mesh, ax=ax, label=axis_label(value, paper))
        handles = {}
        annotate = len(xs) * len(ys) <= 64
        for _, c in cells.iterrows():
            i, j = ys.index(c[y]), xs.index(c[x])
            if c["finite"] == 0:
                kind = _missing_kind(c["missing"])
                face, hatch = _MISSING_STYLES[kind]
                ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, facecolor=face, hatch=hatch,
                                       edgecolor="#606060", lw=0))
                label = _missing_label(c["missing"])
                handles.setdefault(label, Patch(facecolor=face, hatch=hatch,
                                                edgecolor="#606060", label=label))
            elif annotate:
                level = (c["mean"] - lo) / (hi - lo) if hi > lo else 0.5
                ax.text(j, i, _cell_text(c), ha="center", va="center", fontsize="small",
                        color="black" if level > 0.6 else "white")
        if handles:
            ax.legend(handles=list(handles.values()), loc="upper center",
                      bbox_to_anchor=(0.5, -0.14), ncol=2, fontsize="small", frameon=False)
        kinds = [k for k in ("t95", "minmax") if k in set(cells["kind"])]
        n_seeds = int(cells["finite"].max()) if len(cells) else 0
        over = averaged + ([f"{n_seeds} seeds"] if "train.seed" in axes else [])
        what = f"{symbol(value, paper)}, mean over {', '.join(over)}" if over else \
            symbol(value, paper)
        if kinds:
            what += "\ncells: mean ± half its " + " or ".join(
                {"t95": "95 % t-interval", "minmax": "min–max range"}[k] for k in kinds)
        ax.set_title(what, fontsize="medium")
        if setting:
            fig.suptitle(setting, fontsize="small")
        return save(fig, out, default=default, force=force)


def plot_reading(sweep: str | Path, reading: str, x: str, *, log: bool = False,
                 out: str | Path | None = None, fit: bool = True, force: bool = False) -> Path:
    """Plot a reading of every run of a sweep against one of its axes: one point per setting
    (the mean over its seeds) with its seed interval (95 % Student-t interval of the mean for
    three or more seeds, the min–max for two; said in the legend), one series per value of any
    further axis, and the least-squares slope with its 95 % interval in the legend (on log
    axes: the exponent of a power law).

    **Arguments:**

    - `sweep`: a sweep store (or a sweep table).
    - `reading`: a phase reading of the sweep's paper (``t_I``, ``T_star``, ``phi_glob_end_I``;
      a run without that phase is said in a note, never drawn as a value) or a column of the
      table (its value at each run's last recorded step).
    - `x`: the sweep axis across (``data.P``).
    - `log`: logarithmic axes, the fit of ln y against ln x.
    - `out`: the PNG (default ``<store>/<reading>-<x>.png``).
    - `fit`: draw the fitted line and its slope.
    - `force`: replace an existing file that the plots did not write.

    **Returns:** the path written. ``ValueError`` naming the field on bad input.
    """
    source = Path(sweep)
    default = out is None
    out = Path(out) if out is not None else default_png(source, f"{reading}-{x}".replace(
        "/", "_"))
    return reading_plot(source, reading, x, log=log, out=out, fit=fit, series=True,
                         default=default, force=force)


def reading_plot(source: Path, reading: str, x: str, *, log: bool, out: Path, fit: bool,
                 series: bool, default: bool, force: bool) -> Path:
    """[`plot_reading`][]'s figure; `series` False: the other axes averaged, one series."""
    from matplotlib.transforms import blended_transform_factory

    from theorylab.core.figures import figure_theme, new_figure, style_axes

    rows, axes, manifest = sweep_values(source, reading)
    if x not in rows.columns:
        raise ValueError(f"x: not an axis of the sweep (got {x!r}); axes: "
                         f"{', '.join(a for a in axes if a != 'train.seed') or '(none)'}")
    paper = paper_named(manifest.get("paper"))
    by = [a for a in axes if a not in (x, "train.seed")]
    if manifest.get("mode") == "zip" or not series:
        by = []  # zipped axes move with x: one series
    setting = _setting_title(manifest, rows, axes)
    rows = _per_seed(rows, axes, [x, *by])
    points = reading_points(rows, x, by=by)
    if log and (pd.to_numeric(points[x], errors="coerce") <= 0).any():
        raise ValueError(f"--log: the axis {x} has values ≤ 0")
    check_out(out, default=default, force=force)
    notes = []
    with figure_theme():
        many = bool(by) and len(points[by].drop_duplicates()) > 3
        fig = new_figure((9.6 if many else 6.4, 4.8))
        ax = fig.subplots()
        series = [((), points)] if not by else list(points.groupby(by, sort=True))
        ok_all = points[points["finite"] > 0]
        kinds = sorted(set(ok_all["kind"]) - {"none"}, key=list(_INTERVAL_TEXT).index)
        n_seeds = int(ok_all["finite"].max()) if len(ok_all) else 0
        spread = "; ".join(_INTERVAL_TEXT[k].format(n=n_seeds) for k in kinds)
        spread = spread if kinds == ["one"] else f"mean, bars: {spread}"
        fitted = 0
        for i, (key, part) in enumerate(series):
            key = key if isinstance(key, tuple) else (key,)
            name = ", ".join(f"{symbol(a, paper)} = {tick(v)}" for a, v in zip(by, key))
            colour = f"C{i % 10}"
            ok = part[part["finite"] > 0]
            label = name or spread  # several series: what the points are is the legend's title
            xv = _dodged(ok[x].to_numpy(dtype=float), points[x], i, len(series), log)
            yv = ok["mean"].to_numpy(dtype=float)
            err = np.vstack([yv - ok["low"].to_numpy(dtype=float),
                             ok["high"].to_numpy(dtype=float) - yv])
            ax.errorbar(xv, yv, yerr=np.clip(err, 0, None), fmt="o", color=colour, ms=5,
                        capsize=4, lw=1.4, label=label, zorder=3)
            gone = part[part["finite"] < part["n"]]
            absent = part[part["finite"] == 0]
            for reason, where in absent.groupby("missing", sort=False):
                # a setting without the reading: a cross on the axis floor, its own legend
                ax.plot(where[x].to_numpy(dtype=float), np.zeros(len(where)), ls="none",
                        marker="X", ms=10, mfc="white", mec="#404040", mew=1.6, clip_on=False,
                        transform=blended_transform_factory(ax.transData, ax.transAxes),
                        label=_missing_label(reason) if reason else "no value", zorder=4)
            for _, g in gone[gone["finite"] > 0].iterrows():  # some of its runs: said below
                what = _missing_label(g["missing"]) if g["missing"] else "no value"
                notes.append(f"{(name + ', ') if name else ''}{symbol(x, paper)} = "
                             f"{tick(g[x])}: {what} in {g['n'] - g['finite']} of {g['n']} "
                             "runs (the point is the mean of the others)")
            if fit:
                fitted += _draw_fit(ax, rows if not by else rows[np.logical_and.reduce(
                    [rows[a] == v for a, v in zip(by, key)])], x, log, colour, name)
        if log:
            _log_axes(ax, points, x)
        style_axes(ax, axis_label(x, paper), axis_label(reading, paper), f"{symbol(reading, paper)}"
                   f" against {symbol(x, paper)}" + (" (log–log)" if log else ""),
                   title_size="medium")
        if setting:
            fig.suptitle(setting, fontsize="small")
        title = (spread + ("\ndashed: least-squares fits, slope ± its 95 % interval"
                           if fitted else "")) if by else None
        handles, names = ax.get_legend_handles_labels()
        unique = dict(zip(names, handles))  # one entry per missing reading's reason
        where = {"loc": "upper left", "bbox_to_anchor": (1.02, 1.0)} if many else {"loc": "best"}
        ax.legend(unique.values(), unique.keys(), fontsize="small", title=title,
                  title_fontsize="small", **where)
        note_box(fig, notes, fig.get_figwidth())
        return save(fig, out, default=default, force=force)


def _dodged(xs: np.ndarray, every, i: int, n: int, log: bool) -> np.ndarray:
    """Series `i` of `n` drawn beside the others at each setting (1 % of the axis apart, in
    log space on a log axis), so that their intervals do not hide each other."""
    if n < 2:
        return xs
    all_x = pd.to_numeric(every, errors="coerce").to_numpy(dtype=float)
    shift = 0.01 * (i - (n - 1) / 2)
    if log:
        span = np.log10(np.nanmax(all_x) / np.nanmin(all_x)) or 1.0
        return xs * 10 ** (shift * span)
    span = (np.nanmax(all_x) - np.nanmin(all_x)) or 1.0
    return xs + shift * span


def _log_axes(ax, points: pd.DataFrame, x: str) -> None:
    """Logarithmic axes, with labelled ticks even where the values span less than a decade
    (a nearly constant reading: its axis widened to a factor 4 around it)."""
    from matplotlib.ticker import FixedLocator, FuncFormatter, LogLocator, NullFormatter

    ax.set_xscale("log")
    ax.set_yscale("log")
    values = points[["low", "mean", "high"]].to_numpy(dtype=float)
    values = values[np.isfinite(values) & (values > 0)]
    if values.size and values.max() / values.min() < 10:
        mid = math.sqrt(values.max() * values.min())
        ax.set_ylim(min(values.min(), mid / 2) / 1.1, max(values.max(), mid * 2) * 1.1)
    xs = np.unique(pd.to_numeric(points[x], errors="coerce").dropna().to_numpy(dtype=float))
    if 0 < xs.size <= 8:  # a sweep's few settings: each its own tick
        ax.xaxis.set_major_locator(FixedLocator(xs))
    else:
        ax.xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 3.0, 5.0)))
    for axis in (ax.xaxis, ax.yaxis):
        axis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}".replace("-", "−")))
        axis.set_minor_formatter(NullFormatter())


def _draw_fit(ax, rows: pd.DataFrame, x: str, log: bool, colour: str, name: str = "") -> bool:
    """The least-squares line of one series over its runs (every seed a point), its slope
    and 95 % interval in the legend; nothing (False) when fewer than three runs have a
    value."""
    try:
        found = (power_law if log else linear_law)(rows, x, "value")
    except ValueError:
        return False
    xs = np.asarray(sorted(pd.to_numeric(rows[x]).unique()), dtype=float)
    grid = np.geomspace(xs.min(), xs.max(), 50) if log else np.linspace(xs.min(), xs.max(), 50)
    line = (found["sign"] * np.exp(found["intercept"]) * grid ** found["slope"] if log
            else found["intercept"] + found["slope"] * grid)
    half = (found["slope_hi"] - found["slope_lo"]) / 2
    shown = (f"{found['slope']:.3f} ± {half:.3f}" if math.isfinite(half) else
             f"{found['slope']:.3f}").replace("-", "−")
    ax.plot(grid, line, ls="--", color=colour, lw=1.2,
            label=f"{name}: slope {shown} ({found['n']} runs)" if name else
            f"least-squares fit: {'log–log ' if log else ''}slope {shown} (95 % interval, "
            f"{found['n']} runs)")
    return True
