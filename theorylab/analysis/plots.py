"""Plots of a run folder or a sweep store (``theorylab plot``): [`plot_run`][],
[`plot_sweep`][], and [`plot_reading`][theorylab.analysis.diagrams.plot_reading] (its heat
maps and readings against an axis are drawn by [`theorylab.analysis.diagrams`][]).

- A **run folder** (``theorylab run``'s output, holding ``trajectory.csv``): one panel per
  recorded quantity against ``step`` (``columns`` picks them; default: every quantity of the
  paper's trajectory that changes, at most 12, columns constant to rounding or equal at every
  step said in a note instead), titled with its symbol, the paper's phase readings of the run
  marked by labelled lines (one style each; readings at the same step share one), a
  logarithmic step axis for plateau-and-escape runs, the setting in the title.
- A **sweep store** (``theorylab sweep``'s output, holding ``results.parquet`` and
  ``sweep.json``) or a sweep table (``.parquet`` or ``.csv``): the phase diagram of one value
  (default ``error_fair``, ``error``, ``test_error`` or ``loss``, the first present; or any
  phase reading, ``t_I``) over two axes as a heat map: each cell the mean over seeds and any
  further axis, written in the cell with its seed spread, a cell whose runs have no such phase
  (no Phase I) or did not reach it in a colour and legend entry of its own. With one axis, the
  value against it with seed intervals. A store that keeps whole trajectories is drawn, without
  a value, as one panel per kept value against the step, one line per point (the mean over
  seeds, the band their range), each labelled with what sets it apart (C₁ and the Δ it gives).
- A **reading against an axis** (``plot_reading``, ``--reading``): one point per setting
  with its seed interval, log axes on request and the fitted slope with its 95 % interval in
  the legend.

Axis labels and titles use the parameters' symbols ([`theorylab.analysis.labels`][]), and a
sweep's title the setting its points share. A PNG replaces an existing file only when the
plots wrote it (its PNG says so, or it is the default plot of a folder theorylab wrote); any
other file only with `force`; the committed folders never. Bad input: ``ValueError`` naming
the field.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from .diagrams import heat_map, plot_reading, reading_plot
from .labels import check_out, default_png, note_box, paper_named, point_settings, save, symbol
from .questions import finished_points, numeric_columns
from .questions import hashable as _hashable
from .runs import open_run, sweep_table, text

__all__ = ["DRAWN_MAX", "MAX_PANELS", "SWEEP_VALUES", "phase_table", "plot_reading",
           "plot_run", "plot_sweep"]

#: the value a phase diagram shows when ``value`` is not given: the first of these present
SWEEP_VALUES = ("error_fair", "error", "test_error", "loss")
#: columns that label a row rather than measure something
_LABELS = {"step", "seed", "run", "point", "lr_A", "lr_v", "run_id", "status", "message"}
#: columns of a sweep table that are not measured values
_SWEEP_META = {"point", "run_id", "status", "message", "runtime_s", "host", "device", "dtype",
               "version", "git_rev"}
MAX_PANELS = 12
#: Values beyond this magnitude are not drawn (matplotlib's ticks overflow near 1e308).
DRAWN_MAX = 1e300
#: Phase markers: colours and dash patterns apart from the data's lines, one per time.
_MARK_STYLES = (("#d62728", (0, (1, 1.2))), ("#2ca02c", (0, (5, 2))),
                ("#9467bd", (0, (6, 2, 1, 2))), ("#8c564b", (0, (2, 2))),
                ("#e377c2", (0, (8, 2, 1, 2, 1, 2))))
def _huge_values():
    """A context in which arithmetic on a diverged run's values (±1e308) gives inf or NaN
    without a warning: the panels are chosen among them all the same."""
    return np.errstate(over="ignore", invalid="ignore")


def _drawable(values: pd.Series) -> tuple[pd.Series, int]:
    """``values`` with those beyond ±[`DRAWN_MAX`][] (or infinite) as NaN, and their count."""
    v = pd.to_numeric(values, errors="coerce").astype(float)
    bad = ~np.isfinite(v) & v.notna() | (v.abs() > DRAWN_MAX)
    return v.mask(bad), int(bad.sum())


def _run_columns(df: pd.DataFrame, paper) -> list[str]:
    """The quantities of a trajectory: its numeric columns that measure something (in the
    paper's trajectory schema when known), without standard errors and labels."""
    schema = getattr(paper, "trajectory_schema", None) or {}
    return [c for c in numeric_columns(df) if c not in _LABELS and not c.endswith("_se")
            and (not schema or c in schema)]


def _step_axis(ax, steps: pd.Series, logx: bool) -> None:
    """The step axis: logarithmic (symlog, linear below 1 so that step 0 shows) or linear,
    from the first recorded step to the last with a margin, so that a mark at either end is
    drawn inside the panel rather than on its frame."""
    lo, hi = float(steps.min()), float(steps.max())
    if logx:
        ax.set_xscale("symlog", linthresh=1.0)
        ax.set_xlim(lo - 0.15 if lo <= 0 else lo / 1.15, hi * 1.15 if hi > 0 else hi + 0.15)
    else:
        pad = 0.02 * (hi - lo) if hi > lo else 0.5
        ax.set_xlim(lo - pad, hi + pad)
    ax.set_xlabel("step (log)" if logx else "step")


def _panel_title(ax, names: Sequence[str], tail: str = "") -> None:
    """A panel's title: its columns' symbols (several equal columns one per line when long),
    smaller when long."""
    import re

    def shown(t: str) -> int:  # its length as drawn, mathtext markup left out
        return len(re.sub(r"\\[a-zA-Z]+|[${}_^]", "", t))

    text_ = " = ".join(names)
    if shown(text_) > 45:
        text_ = " =\n".join(names)
    text_ += tail
    ax.set_title(text_, fontsize="medium" if shown(text_) <= 36 else "small")


def _mark_groups(marks: dict[str, float], paper) -> list[tuple[str, float]]:
    """Phase times at the same step as one marker, labelled ``t_II = T* = 250``."""
    by_step: dict[float, list[str]] = {}
    for name, t in marks.items():
        by_step.setdefault(t, []).append(symbol(name, paper))
    return [(" = ".join(names) + f" = {t:g}", t) for t, names in by_step.items()]


def _draw_marks(ax, groups: list[tuple[str, float]], legend: bool) -> None:
    """Vertical lines at the phase times, each in its own colour and dash pattern (named in
    the figure's legend), above the data."""
    for i, (label, t) in enumerate(groups):
        colour, dash = _MARK_STYLES[i % len(_MARK_STYLES)]
        ax.axvline(t, color=colour, ls=dash, lw=1.8, label=label if legend else None,
                   zorder=3)


def _panel_figure(df: pd.DataFrame, chosen, size: tuple[float, float, float]):
    """The figure of `chosen`'s panels, three a row (`size`: a panel's width and height and the
    height of the titles, in inches; each note adds a line), its axes flat with those past the
    last panel hidden, and whether the step axis is logarithmic. Inside ``figure_theme()``."""
    from theorylab.core.figures import new_figure
    from theorylab.core.plotting import log_steps

    with _huge_values():
        logx = log_steps(df, chosen.panels)
    n = len(chosen.panels)
    cols = min(3, n)
    rows = -(-n // cols)
    fig = new_figure((size[0] * cols, size[1] * rows + size[2] + 0.2 * len(chosen.notes)))
    axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
    for ax in axes[n:]:
        ax.set_visible(False)
    return fig, axes, logx


def _legend_in_free_panel(axes, n: int) -> bool:
    """The first panel's legend, at full size, in the first panel past the `n` drawn (False:
    there is none)."""
    if n >= len(axes):
        return False
    handles, names = axes[0].get_legend_handles_labels()
    axes[n].set_visible(True)
    axes[n].axis("off")
    axes[n].legend(handles, names, loc="center", fontsize="medium", frameon=False)
    return True


def plot_run(run: str | Path, *, out: str | Path | None = None,
             columns: Sequence[str] | None = None, force: bool = False) -> Path:
    """Plot ``run``'s ``trajectory.csv`` (one panel per quantity against ``step``) as a PNG.

    **Arguments:**

    - `run`: a run folder, or the path of its ``trajectory.csv``.
    - `out`: the PNG (default ``<run>/trajectory.png``).
    - `columns`: the quantities to plot (default: every numeric column of the paper's
      trajectory that changes, at most [`MAX_PANELS`][]; see below).
    - `force`: replace an existing file that the plots did not write.

    By default a column constant to rounding gets no panel and columns equal at every step
    share one ([`theorylab.core.plotting.choose_panels`][]), both said in a note under the
    panels; the step axis is logarithmic for plateau-and-escape runs
    ([`theorylab.core.plotting.log_steps`][]); the paper's phase readings of the run
    (``Paper.phase_readings``) are marked by labelled vertical lines, and the title names the
    setting (``Paper.describe`` of the folder's ``config.toml``).

    **Returns:** the path written. ``ValueError`` naming the field on bad input.
    """
    from theorylab.core.figures import figure_theme
    from theorylab.core.plotting import Panels, choose_panels, phase_marks

    opened = open_run(run, strict=False)
    df, paper, cfg, folder = opened.trajectory, opened.paper, opened.config, opened.path
    path = folder / "trajectory.csv"
    numeric = [c for c in numeric_columns(df) if c not in _LABELS]
    if columns:
        bad = [c for c in columns if c not in numeric]
        if bad:
            raise ValueError(f"columns: not a numeric column of {path.name} (got {bad[0]!r}); "
                             f"known: {', '.join(numeric)}")
        chosen = Panels(panels=[[c] for c in columns])
    else:
        candidates = _run_columns(df, paper)
        empty = [c for c in candidates if df[c].isna().all()]
        with _huge_values():
            chosen = choose_panels(df, [c for c in candidates if c not in empty],
                                   limit=MAX_PANELS)
        if empty:
            chosen.notes.append("not recorded by this engine (NaN): " + ", ".join(empty))
    if not chosen.panels:
        raise ValueError(f"run: {path} has no quantity that changes over the steps")
    marks = {}
    if paper is not None and paper.phase_readings is not None and "run" not in df.columns:
        try:
            marks = phase_marks(paper.phase_readings(df, cfg), df["step"])
        except (KeyError, ValueError, TypeError, IndexError) as e:
            chosen.notes.append(f"phase readings not available ({type(e).__name__}: {e})")
    groups = _mark_groups(marks, paper)
    if marks:
        chosen.notes.append("vertical lines: the paper's phase readings of this run ("
                            + ", ".join(f"{k} = {v:g}" for k, v in marks.items()) + ")")
    default = out is None
    out = Path(out) if out is not None else path.parent / "trajectory.png"
    check_out(out, default=default, force=force)
    with figure_theme():
        fig, axes, logx = _panel_figure(df, chosen, (3.6, 2.7, 0.6))
        runs = [(None, df)] if "run" not in df.columns else list(df.groupby("run"))
        for k, (ax, group) in enumerate(zip(axes, chosen.panels)):
            col = group[0]
            hidden = 0
            for name, part in runs:
                part = part.sort_values("step")
                y, n_hidden = _drawable(part[col])
                hidden += n_hidden
                ax.plot(part["step"], y, lw=1.4, label=None if name is None else f"run {name}")
                se = f"{col}_se"
                if se in part.columns and part[se].notna().any():
                    lo, _ = _drawable(y - 2 * part[se])
                    hi, _ = _drawable(y + 2 * part[se])
                    ax.fill_between(part["step"], lo, hi, alpha=0.25, lw=0,
                                    label="±2 standard errors" if k == 0 else None)
            _step_axis(ax, df["step"], logx)
            _draw_marks(ax, groups, legend=k == 0)
            _panel_title(ax, [symbol(c, paper) for c in group],
                         f" ({hidden} beyond ±1e300 not drawn)" if hidden else "")
        handles, _ = axes[0].get_legend_handles_labels()
        if handles and not _legend_in_free_panel(axes, len(chosen.panels)):
            axes[0].legend(fontsize="small", loc="best")
        if paper is not None and cfg is not None and paper.describe is not None:
            title = f"{paper.name}: {paper.describe(cfg)}"
        else:
            title = f"{text(path.parent.name)}: trajectory"
        fig.suptitle(title, fontsize="medium")
        note_box(fig, chosen.notes, fig.get_figwidth())
        return save(fig, out, default=default, force=force)


def phase_table(table: pd.DataFrame, keys: Sequence[str], value: str) -> pd.Series:
    """The mean of ``value`` per value of the ``keys`` columns, over each point's last recorded
    row (the rows of a ``run_id`` at its largest ``step``; every row when the table has no
    steps). A list-valued axis is grouped by its text."""
    if "step" in table.columns and "run_id" in table.columns:
        table = table[table["step"] == table.groupby("run_id")["step"].transform("max")]
    table = table.assign(**{k: table[k].map(_hashable) for k in keys
                            if table[k].dtype == object})
    return table.groupby(list(keys))[value].mean()


def plot_sweep(sweep: str | Path, *, out: str | Path | None = None, x: str | None = None,
               y: str | None = None, value: str | None = None, force: bool = False) -> Path:
    """Plot a sweep's phase diagram: ``value`` over the axes ``x`` and ``y`` as a heat map (or
    against ``x`` alone when the sweep has one axis), averaged over seeds and other axes. A
    sweep that keeps whole trajectories (``keep = [...]`` with a step column), given no
    ``value`` and no ``y``, is drawn as trajectories instead: one panel per kept value against
    the step, one line per point, labelled by what sets the point apart (its axis values and
    what the paper's ``describe`` derives from them, e.g. Δ), the shared setting in the title.

    **Arguments:**

    - `sweep`: a sweep store folder, or a sweep table (``.parquet`` or ``.csv``).
    - `out`: the PNG (default ``<store>/phase_diagram.png``).
    - `x`, `y`: axis columns (``"data.q"``); default the spec's first two axes.
    - `value`: the column or the paper's phase reading shown; default the first of
      [`SWEEP_VALUES`][] present, else the first kept value. A phase reading (``t_I``) is
      taken from the phase readings, so a run without that phase is a cell of its own colour.
    - `force`: replace an existing file that the plots did not write.

    **Returns:** the path written. ``ValueError`` naming the field on bad input.
    """
    source = Path(sweep)
    df, axes, manifest = sweep_table(source)
    default = default_png(source, "phase_diagram")
    df = finished_points(df, source)
    for name, given in (("x", x), ("y", y)):
        if given is not None and given not in df.columns:
            raise ValueError(f"{name}: not a column of the sweep table (got {given!r}); axes: "
                             f"{', '.join(axes) or '(none)'}")
    x = x or (axes[0] if axes else None)
    if x is None:
        raise ValueError("x: the sweep has no axis; name a column with --x")
    # zipped axes move together (one line of points): by default they are drawn against x alone
    rest = [a for a in axes if a not in (x, "train.seed")] if manifest.get("mode") != "zip" \
        else []
    y = y if y is not None else (rest[0] if rest else None)
    if y == x:
        raise ValueError(f"y: must differ from x (got {y!r} for both)")
    numeric = numeric_columns(df)
    kept = [c for c in (manifest.get("keep") or []) if c in numeric] if isinstance(
        manifest.get("keep"), list) else []
    measured = kept or [c for c in numeric if c not in _SWEEP_META and c not in axes
                        and c != "step" and not str(c).startswith("train.seed")
                        and c != "seed"]
    trajectories = ("step" in df.columns and "run_id" in df.columns
                    and df.groupby("run_id")["step"].nunique().max() > 1)
    is_default = out is None
    out = Path(out) if out is not None else default
    if value is None and y is None and trajectories and (x is None or x in axes):
        check_out(out, default=is_default, force=force)
        return _plot_sweep_trajectories(df, [x] + [a for a in axes if a != x] if x else axes,
                                        manifest, measured, out, default=is_default,
                                        force=force)
    if value is None:
        value = next((c for c in SWEEP_VALUES if c in numeric), None) or next(
            iter(measured), None)
        if value is None:
            raise ValueError(f"value: none of {list(SWEEP_VALUES)} in the table; name a column "
                             f"with --value (numeric: {', '.join(numeric)})")
    paper = paper_named(manifest.get("paper"))
    if value not in numeric and value not in (getattr(paper, "reading_times", None) or {}):
        raise ValueError(f"value: not a numeric column of the sweep table (got {value!r}); "
                         f"numeric: {', '.join(numeric)}")
    check_out(out, default=is_default, force=force)
    if y is None:
        return reading_plot(source, value, x, log=False, out=out, fit=False, series=False,
                            default=is_default, force=force)
    return heat_map(source, value, x, y, out, default=is_default, force=force)


def _plot_sweep_trajectories(df: pd.DataFrame, axes: list[str], manifest: dict,
                             values: list[str], out: Path, *, default: bool = False,
                             force: bool = False) -> Path:
    """The kept values of a sweep that keeps whole trajectories: one panel per value against
    the step, one line per point (mean over seeds, the band their range), labelled by what
    sets the point apart."""
    from theorylab.core.figures import figure_theme
    from theorylab.core.plotting import choose_panels

    with _huge_values():
        chosen = choose_panels(df, values, limit=MAX_PANELS)
    if not chosen.panels:
        raise ValueError("value: no kept value of the sweep changes over the steps")
    paper = paper_named(manifest.get("paper"))
    seeds = [a for a in axes if a == "train.seed"] or (["seed"] if "seed" in df.columns else [])
    keys = [a for a in axes if a not in seeds] or ["run_id"]
    points = df[keys].drop_duplicates().reset_index(drop=True)
    title, labels = point_settings(manifest, points, [k for k in keys if k != "run_id"])
    if seeds:
        chosen.notes.append("lines: means over the seeds of each point; bands: their range")
    with figure_theme():
        fig, axs, logx = _panel_figure(df, chosen, (3.8, 2.8, 0.9))
        for ax, group in zip(axs, chosen.panels):
            for i, row in points.iterrows():
                mask = np.logical_and.reduce([df[k] == row[k] for k in keys])
                by_step = df[mask].groupby("step")[group[0]]
                line = by_step.mean()
                drawn = ax.plot(line.index, line.to_numpy(), lw=1.4, label=labels[i])
                if seeds and by_step.size().max() > 1:
                    ax.fill_between(line.index, by_step.min().to_numpy(),
                                    by_step.max().to_numpy(), color=drawn[0].get_color(),
                                    alpha=0.2, lw=0)
            _panel_title(ax, [symbol(c, paper) for c in group])
            _step_axis(ax, df["step"], logx)
        if not _legend_in_free_panel(axs, len(chosen.panels)):
            fig.legend(*axs[0].get_legend_handles_labels(), loc="outside right upper",
                       fontsize="small")
        over = ", ".join(symbol(a, paper) for a in axes) or "its points"
        fig.suptitle(title or f"sweep over {over}", fontsize="medium")
        note_box(fig, chosen.notes, fig.get_figwidth())
        return save(fig, out, default=default, force=force)
