"""Plot a run folder or a sweep store: ``theorylab plot RUN_OR_SWEEP [--out FILE.png]``
(``python -m theorylab plot``), or [`plot_run`][] and [`plot_sweep`][] in Python.

- A **run folder** (``theorylab run``'s output, holding ``trajectory.csv``): one panel per
  recorded quantity against ``step`` (``--columns`` picks them; default: every quantity of the
  paper's trajectory that changes, at most 12, columns constant to rounding or equal at every
  step said in a note instead), the paper's phase readings of the run marked, a logarithmic
  step axis for plateau-and-escape runs, the setting in the title.
- A **sweep store** (``theorylab sweep``'s output, holding ``results.parquet`` and
  ``sweep.json``) or a sweep table (``.parquet`` or ``.csv``): the phase diagram of one value
  (``--value``; default ``error_fair``, ``error``, ``test_error`` or ``loss``, the first present)
  over two axes (``--x``, ``--y``; default the spec's first two axes) as a heat map, the mean
  over seeds and any further axis (and over the recorded rows when more than one per point was
  kept: a store with ``keep = "trajectory"`` is reduced to each point's last step). With one axis,
  the value against it. A store that keeps whole trajectories (the README's Δ sweep) is drawn,
  without ``--value``, as one panel per kept value against the step, one line per point, each
  labelled with what sets it apart (C1 and the Δ it gives).

The PNG goes to ``--out`` (default: ``<RUN>/trajectory.png`` or ``<SWEEP>/phase_diagram.png``).
An existing file is replaced only when this command wrote it (its PNG says so, or it is the
default plot of a folder theorylab wrote); any other file only with ``--force``; the committed
folders never. A run's torn last line (a live or killed run) is left out; values beyond ±1e300
(a diverging run's last rows) are left out of the panels and counted in the panel's title. Bad
input: one line ``error: <field>: ...`` on stderr, exit code 2.
"""

from __future__ import annotations

import io
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from theorylab.core.cli import ArgumentParser, output_argument
from theorylab.core.faults import command
from theorylab.core.folders import check_output_file, folder_kind, write_output
from theorylab.core.trajectory import read_trajectory

__all__ = ["main", "phase_table", "plot_run", "plot_sweep"]

#: the value a phase diagram shows when ``value`` is not given: the first of these present
SWEEP_VALUES = ("error_fair", "error", "test_error", "loss")
#: columns that label a row rather than measure something
_LABELS = {"step", "seed", "run", "point", "lr_A", "lr_v", "run_id", "status", "message"}
MAX_PANELS = 12
#: The ``Software`` text of every PNG this command writes (how it knows its own files).
SOFTWARE = "theorylab plot"
#: Values beyond this magnitude are not drawn (matplotlib's ticks overflow near 1e308).
DRAWN_MAX = 1e300


def _text(value) -> str:
    """Text for a title: a path's undecodable bytes (a name in another encoding) as U+FFFD."""
    return str(value).encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def written_by_plot(path: Path) -> bool:
    """True when ``path`` is a PNG whose ``Software`` text chunk is [`SOFTWARE`][]."""
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16)
    except OSError:
        return False
    if not head.startswith(b"\x89PNG\r\n\x1a\n"):
        return False
    pos = 8
    while pos + 8 <= len(head):
        size = int.from_bytes(head[pos:pos + 4], "big")
        kind = head[pos + 4:pos + 8]
        if kind == b"tEXt" and head[pos + 8:pos + 8 + size].startswith(b"Software\0"):
            return head[pos + 8 + 9:pos + 8 + size] == SOFTWARE.encode()
        if kind == b"IDAT":
            return False
        pos += 12 + size
    return False


def _check_out(out: Path, *, default: bool, force: bool) -> Path:
    """``out`` as a PNG this command may write (``ValueError("out: ...")`` otherwise)."""

    def ours(p: Path) -> bool:  # our PNG, or the default plot of a folder theorylab wrote
        return written_by_plot(p) or (default and folder_kind(p.parent) is not None)

    return check_output_file(out, ".png", command="theorylab plot", ours=ours, force=force)


def _save(fig, out: Path, *, default: bool = False, force: bool = False) -> Path:
    out = _check_out(out, default=default, force=force)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120, metadata={"Software": SOFTWARE})
    return write_output(out, buf.getvalue(), command=SOFTWARE, mark=False)  # its text chunk


def _read_trajectory(path: Path) -> pd.DataFrame:
    """``trajectory.csv``'s whole rows ([`theorylab.core.trajectory.read_trajectory`][])."""
    return read_trajectory(path)


def _huge_values():
    """A context in which arithmetic on a diverged run's values (±1e308) gives inf or NaN
    without a warning: the panels are chosen among them all the same."""
    return np.errstate(over="ignore", invalid="ignore")


def _drawable(values: pd.Series) -> tuple[pd.Series, int]:
    """``values`` with those beyond ±[`DRAWN_MAX`][] (or infinite) as NaN, and their count."""
    v = pd.to_numeric(values, errors="coerce").astype(float)
    bad = ~np.isfinite(v) & v.notna() | (v.abs() > DRAWN_MAX)
    return v.mask(bad), int(bad.sum())


def _numeric(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])
            and not pd.api.types.is_bool_dtype(df[c])]


def _run_setting(folder: Path):
    """The paper and the resolved config of a run folder (its ``config.toml``), or
    ``(None, None)`` when there is none or it cannot be read as a config of a known paper."""
    path = folder / "config.toml"
    if not path.is_file():
        return None, None
    from theorylab.core.config import paper_of, read_toml
    from theorylab.papers import DEFAULT_PAPER, PAPERS

    try:
        tables = read_toml(path)
        paper = PAPERS[paper_of(tables, tuple(PAPERS), DEFAULT_PAPER)]
        return paper, paper.config_from_tables(tables)
    except (ValueError, KeyError, TypeError):
        return None, None


def _run_columns(df: pd.DataFrame, paper) -> list[str]:
    """The quantities of a trajectory: its numeric columns that measure something (in the
    paper's trajectory schema when known), without standard errors and labels."""
    schema = getattr(paper, "trajectory_schema", None) or {}
    return [c for c in _numeric(df) if c not in _LABELS and not c.endswith("_se")
            and (not schema or c in schema)]


def _note_box(fig, notes: Sequence[str], width_in: float) -> None:
    """The figure's notes under its panels (the layout leaves them room)."""
    import textwrap

    if not notes:
        return
    chars = max(40, int(width_in * 15))
    text = "\n".join(textwrap.fill(f"Note: {n}", chars) for n in notes)
    lines = text.count("\n") + 1
    height = fig.get_figheight()
    bottom = min(0.4, (0.12 + 0.14 * lines) / height)
    fig.get_layout_engine().set(rect=(0, bottom, 1, 1 - bottom))
    fig.text(0.01, 0.01, text, fontsize="x-small", va="bottom", ha="left", wrap=False)


def _step_axis(ax, steps: pd.Series, logx: bool) -> None:
    """The step axis: logarithmic (symlog, linear below 1 so that step 0 shows) or linear,
    from the first recorded step to the last."""
    if logx:
        ax.set_xscale("symlog", linthresh=1.0)
    ax.set_xlim(float(steps.min()), float(steps.max()))
    ax.set_xlabel("step (log)" if logx else "step")


def plot_run(run: str | Path, *, out: str | Path | None = None,
             columns: Sequence[str] | None = None, force: bool = False) -> Path:
    """Plot ``run``'s ``trajectory.csv`` (one panel per quantity against ``step``) as a PNG.

    **Arguments:**

    - `run`: a run folder, or the path of its ``trajectory.csv``.
    - `out`: the PNG (default ``<run>/trajectory.png``).
    - `columns`: the quantities to plot (default: every numeric column of the paper's
      trajectory that changes, at most [`MAX_PANELS`][]; see below).
    - `force`: replace an existing file that this command did not write.

    By default a column constant to rounding gets no panel and columns equal at every step
    share one ([`theorylab.core.plotting.choose_panels`][]), both said in a note under the
    panels; the step axis is logarithmic for plateau-and-escape runs
    ([`theorylab.core.plotting.log_steps`][]); the paper's phase readings of the run
    (``Paper.phase_readings``) are marked by vertical lines, and the title names the setting
    (``Paper.describe`` of the folder's ``config.toml``).

    **Returns:** the path written. ``ValueError`` naming the field on bad input.
    """
    from theorylab.core.figures import figure_theme, new_figure
    from theorylab.core.plotting import Panels, choose_panels, log_steps, phase_marks

    run = Path(run)
    path = run / "trajectory.csv" if run.is_dir() else run
    if not path.is_file() or path.name != "trajectory.csv":
        raise ValueError(f"run: no trajectory.csv in {_text(run)!r} (a folder written by "
                         "theorylab run)")
    df = _read_trajectory(path)
    if "step" not in df.columns or len(df) == 0:
        raise ValueError(f"run: {path} has no recorded rows with a 'step' column")
    paper, cfg = _run_setting(path.parent)
    numeric = [c for c in _numeric(df) if c not in _LABELS]
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
    if marks:
        chosen.notes.append("dotted lines: the paper's phase readings of this run ("
                            + ", ".join(f"{k} = {v:g}" for k, v in marks.items()) + ")")
    with _huge_values():
        logx = log_steps(df, chosen.panels)
    n = len(chosen.panels)
    cols = min(3, n)
    rows = -(-n // cols)
    default = out is None
    out = Path(out) if out is not None else path.parent / "trajectory.png"
    _check_out(out, default=default, force=force)
    with figure_theme():
        fig = new_figure((3.4 * cols, 2.5 * rows + 0.5 + 0.2 * len(chosen.notes)))
        axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
        groups = [(None, df)] if "run" not in df.columns else list(df.groupby("run"))
        for ax, group in zip(axes, chosen.panels):
            col = group[0]
            hidden = 0
            for name, part in groups:
                part = part.sort_values("step")
                y, n_hidden = _drawable(part[col])
                hidden += n_hidden
                ax.plot(part["step"], y, lw=1.2, label=None if name is None else f"run {name}")
                se = f"{col}_se"
                if se in part.columns and part[se].notna().any():
                    lo, _ = _drawable(y - 2 * part[se])
                    hi, _ = _drawable(y + 2 * part[se])
                    ax.fill_between(part["step"], lo, hi, alpha=0.25, lw=0)
            for i, (label, t) in enumerate(marks.items()):
                ax.axvline(t, color=f"C{(i + 3) % 10}", ls=":", lw=1.3, label=label)
            name = " = ".join(group)
            ax.set_title(name if not hidden else f"{name} ({hidden} beyond ±1e300 not drawn)",
                         fontsize="medium" if len(group) == 1 and not hidden else "small")
            _step_axis(ax, df["step"], logx)
        for ax in axes[n:]:
            ax.set_visible(False)
        if len(groups) > 1 or marks:
            axes[0].legend(fontsize="x-small")
        if paper is not None and cfg is not None and paper.describe is not None:
            title = f"{paper.name}: {paper.describe(cfg)}"
        else:
            title = f"{_text(path.parent.name)}: trajectory"
        fig.suptitle(title, fontsize="medium")
        _note_box(fig, chosen.notes, fig.get_figwidth())
        return _save(fig, out, default=default, force=force)


def _manifest(source: Path) -> dict:
    """A sweep store's ``sweep.json`` ({} for a bare table or a store without one)."""
    manifest = source / "sweep.json"
    if not (source.is_dir() and manifest.is_file()):
        return {}
    try:
        found = json.loads(manifest.read_text(encoding="utf-8"))
        if not isinstance(found, dict):
            raise AttributeError
        return found
    except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
        raise ValueError(f"sweep: {manifest} is not a sweep manifest") from None


def _point_settings(manifest: dict, points: pd.DataFrame, axes: Sequence[str]) -> tuple[
        str, dict]:
    """The setting the points share (a title) and, per row of `points` (one per combination
    of the `axes` values), what sets it apart (a legend label): the paper's ``describe`` of
    each point's config, split at ", ", the common parts in the title, the others in the label
    (a huang2024 sweep over C1 gets its Δ in each label). Falls back to ``axis = value``."""
    def fallback(row) -> str:
        return ", ".join(f"{a} = {_tick(row[a])}" for a in axes)

    labels = {i: fallback(row) for i, row in points.iterrows()}
    try:
        from theorylab.papers import PAPERS

        paper = PAPERS[manifest["paper"]]
        base = manifest["base"]
        if paper.describe is None or not isinstance(base, dict):
            raise KeyError("describe")
        parts = {}
        for i, row in points.iterrows():
            tables = json.loads(json.dumps(base))
            for a in axes:
                section, key = a.split(".", 1)
                value = row[a]
                tables.setdefault(section, {})[key] = value.item() if hasattr(
                    value, "item") else value
            parts[i] = paper.describe(paper.config_from_tables(tables)).split(", ")
    except (KeyError, ValueError, TypeError, AttributeError):
        return "", labels
    common = [p for p in next(iter(parts.values()), []) if all(p in q for q in parts.values())]
    for i, q in parts.items():
        own = [p for p in q if p not in common]
        labels[i] = ", ".join(own) or labels[i]
    return f"{manifest['paper']}: " + ", ".join(common), labels


def _tick(v) -> str:
    return f"{v:g}" if isinstance(v, float) else str(v)


#: columns of a sweep table that are not measured values
_SWEEP_META = {"point", "run_id", "status", "message", "runtime_s", "host", "device", "dtype",
               "version", "git_rev"}


def _plot_sweep_trajectories(df: pd.DataFrame, axes: list[str], manifest: dict,
                             values: list[str], out: Path, *, default: bool = False,
                             force: bool = False) -> Path:
    """The kept values of a sweep that keeps whole trajectories: one panel per value against
    the step, one line per point (mean over seeds), labelled by what sets the point apart."""
    from theorylab.core.figures import figure_theme, new_figure
    from theorylab.core.plotting import choose_panels, log_steps

    with _huge_values():
        chosen = choose_panels(df, values, limit=MAX_PANELS)
    if not chosen.panels:
        raise ValueError("value: no kept value of the sweep changes over the steps")
    keys = axes or ["run_id"]
    points = df[keys].drop_duplicates().reset_index(drop=True)
    title, labels = _point_settings(manifest, points, axes)
    averaged = ["seed"] if "seed" in df.columns or "train.seed" in df.columns else []
    if averaged:
        chosen.notes.append("lines: means over the seeds of each point")
    with _huge_values():
        logx = log_steps(df, chosen.panels)
    n = len(chosen.panels)
    cols = min(3, n)
    rows = -(-n // cols)
    with figure_theme():
        fig = new_figure((3.6 * cols, 2.6 * rows + 0.9 + 0.2 * len(chosen.notes)))
        axs = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
        for ax, group in zip(axs, chosen.panels):
            for i, row in points.iterrows():
                mask = np.logical_and.reduce([df[k] == row[k] for k in keys])
                line = df[mask].groupby("step")[group[0]].mean()
                ax.plot(line.index, line.to_numpy(), lw=1.2, label=labels[i])
            ax.set_title(" = ".join(group), fontsize="medium" if len(group) == 1 else "small")
            _step_axis(ax, df["step"], logx)
        for ax in axs[n:]:
            ax.set_visible(False)
        handles, names = axs[0].get_legend_handles_labels()
        fig.legend(handles, names, loc="outside right upper", fontsize="x-small")
        fig.suptitle(title or f"sweep over {', '.join(axes) or 'its points'}",
                     fontsize="medium")
        _note_box(fig, chosen.notes, fig.get_figwidth())
        return _save(fig, out, default=default, force=force)


def _sweep_table(source: Path) -> tuple[pd.DataFrame, list[str], Path]:
    """The table, the spec's axes (from ``sweep.json`` when there is one) and the default PNG."""
    axes: list[str] = []
    if source.is_dir():
        table_path = source / "results.parquet"
        if not table_path.is_file():
            raise ValueError(f"sweep: no results.parquet in {str(source)!r} (a store written by "
                             "theorylab sweep)")
        axes = list(_manifest(source).get("axes") or {})
        default = source / "phase_diagram.png"
    else:
        table_path = source
        default = source.with_name(source.stem + "-phase_diagram.png")
    if table_path.suffix not in (".parquet", ".csv"):
        raise ValueError(f"sweep: must be a sweep store, a .parquet or a .csv table (got "
                         f"{_text(source)!r})")
    try:
        df = (pd.read_parquet(table_path) if table_path.suffix == ".parquet"
              else pd.read_csv(table_path))
    except Exception as e:  # pyarrow's and pandas' errors alike: a damaged or foreign file
        raise ValueError(f"sweep: {_text(table_path)} is not a readable table "
                         f"({type(e).__name__})") from None
    if not axes:  # a bare table: its dotted columns are the axes ("data.q")
        axes = [c for c in df.columns if "." in str(c)]
    return df, [a for a in axes if a in df.columns], default


def _hashable(value):
    """An axis value as a group key: a list or array (a list-valued axis) as its text."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return str(list(np.asarray(value).tolist()))
    return value


def phase_table(table: pd.DataFrame, keys: Sequence[str], value: str) -> pd.Series:
    """The mean of ``value`` per value of the ``keys`` columns, over each point's last recorded
    row (the rows of a ``run_id`` at its largest ``step``; every row when the table has no
    steps): what [`plot_sweep`][] draws. A list-valued axis is grouped by its text."""
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
    - `value`: the column shown; default the first of [`SWEEP_VALUES`][] present, else the
      first kept value.
    - `force`: replace an existing file that this command did not write.

    **Returns:** the path written. ``ValueError`` naming the field on bad input.
    """
    from theorylab.core.figures import figure_theme, new_figure

    source = Path(sweep)
    if not source.exists():
        raise ValueError(f"sweep: no such file or folder {str(source)!r}")
    df, axes, default = _sweep_table(source)
    if "status" in df.columns:
        df = df[df["status"] == "ok"]
    if len(df) == 0:
        raise ValueError(f"sweep: {source} has no finished points to plot")
    for name, given in (("x", x), ("y", y)):
        if given is not None and given not in df.columns:
            raise ValueError(f"{name}: not a column of the sweep table (got {given!r}); axes: "
                             f"{', '.join(axes) or '(none)'}")
    x = x or (axes[0] if axes else None)
    if x is None:
        raise ValueError("x: the sweep has no axis; name a column with --x")
    manifest = _manifest(source)
    # zipped axes move together (one line of points): by default they are drawn against x alone
    rest = [a for a in axes if a != x] if manifest.get("mode") != "zip" else []
    y = y if y is not None else (rest[0] if rest else None)
    if y == x:
        raise ValueError(f"y: must differ from x (got {y!r} for both)")
    numeric = _numeric(df)
    kept = [c for c in (manifest.get("keep") or []) if c in numeric] if isinstance(
        manifest.get("keep"), list) else []
    measured = kept or [c for c in numeric if c not in _SWEEP_META and c not in axes
                        and c != "step" and not str(c).startswith("train.seed")
                        and c != "seed"]
    trajectories = ("step" in df.columns and "run_id" in df.columns
                    and df.groupby("run_id")["step"].nunique().max() > 1)
    if value is None and y is None and trajectories and (x is None or x in axes):
        is_default = out is None
        out = Path(out) if out is not None else default
        _check_out(out, default=is_default, force=force)
        return _plot_sweep_trajectories(df, [x] + [a for a in axes if a != x] if x else axes,
                                        manifest, measured, out, default=is_default,
                                        force=force)
    if value is None:
        value = next((c for c in SWEEP_VALUES if c in numeric), None)
        if value is None:
            value = next(iter(measured), None)
        if value is None:
            raise ValueError(f"value: none of {list(SWEEP_VALUES)} in the table; name a column "
                             f"with --value (numeric: {', '.join(numeric)})")
    elif value not in numeric:
        raise ValueError(f"value: not a numeric column of the sweep table (got {value!r}); "
                         f"numeric: {', '.join(numeric)}")
    keys = [x] if y is None else [y, x]
    grid = phase_table(df, keys, value)
    is_default = out is None
    out = Path(out) if out is not None else default
    _check_out(out, default=is_default, force=force)
    with figure_theme():
        fig = new_figure((5.0, 3.8))
        ax = fig.subplots()
        if y is None:
            ax.plot(grid.index, grid.to_numpy(), marker="o")
            ax.set_xlabel(x)
            ax.set_ylabel(value)
        else:
            table = grid.unstack(x)
            mesh = ax.imshow(table.to_numpy(dtype=float), origin="lower", aspect="auto",
                             cmap="viridis")
            ax.set_xticks(range(table.shape[1]), [f"{v:g}" if isinstance(v, float) else str(v)
                                                  for v in table.columns])
            ax.set_yticks(range(table.shape[0]), [f"{v:g}" if isinstance(v, float) else str(v)
                                                  for v in table.index])
            ax.set_xlabel(x)
            ax.set_ylabel(y)
            fig.colorbar(mesh, ax=ax, label=value)
        averaged = [a for a in axes if a not in keys] + (["seed"] if "seed" in df.columns else [])
        note = f" (mean over {', '.join(averaged)})" if averaged else ""
        ax.set_title(f"{value}{note}", fontsize="small")
        return _save(fig, out, default=is_default, force=force)


def _kind(path: Path) -> str:
    if path.is_dir():
        if (path / "trajectory.csv").is_file():
            return "run"
        if (path / "results.parquet").is_file():
            return "sweep"
    elif path.name == "trajectory.csv":
        return "run"
    elif path.suffix in (".parquet", ".csv") and path.is_file():
        return "sweep"
    raise ValueError(f"input: not a run folder (trajectory.csv), a sweep store "
                     f"(results.parquet) or a sweep table (got {_text(path)!r})")


@command("plot")
def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(prog="theorylab plot", description=(
        "Plot a run folder (its trajectory, one panel per recorded quantity, the phase "
        "readings marked) or a sweep store (the phase diagram of --value over the axes --x and "
        "--y, or the kept trajectories) into a PNG (default: RUN/trajectory.png or "
        "SWEEP/phase_diagram.png). Exit codes: 0, 2 on bad input (one line error: <field>: "
        "...)."))
    p.add_argument("input", help="a run folder (trajectory.csv), a sweep store "
                                 "(results.parquet) or a sweep table (.parquet, .csv)")
    output_argument(p, "--out", writes=".png", metavar="FILE",
                    help="the PNG to write (default: trajectory.png or phase_diagram.png next "
                         "to the input)")
    p.add_argument("--columns", nargs="+", metavar="COL",
                   help="run: the quantities to plot (default: every one that changes)")
    p.add_argument("--x", help="sweep: the axis across (default: the spec's first axis)")
    p.add_argument("--y", help="sweep: the axis up (default: the spec's second axis)")
    p.add_argument("--value", help="sweep: the column shown (default: error_fair, error, "
                                   "test_error or loss, the first present)")
    p.add_argument("--force", action="store_true",
                   help="replace an existing --out file that this command did not write")
    a = p.parse_args(argv)
    path = Path(a.input)
    try:
        if a.out is not None:  # the output gate, before anything is read or drawn
            _check_out(Path(a.out), default=False, force=a.force)
        kind = _kind(path)
        if kind == "run":
            if a.x or a.y or a.value:
                raise ValueError("--x/--y/--value: for a sweep; a run takes --columns")
            written = plot_run(path, out=a.out, columns=a.columns, force=a.force)
        else:
            if a.columns:
                raise ValueError("--columns: for a run; a sweep takes --x, --y and --value")
            written = plot_sweep(path, out=a.out, x=a.x, y=a.y, value=a.value, force=a.force)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {_text(written)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
