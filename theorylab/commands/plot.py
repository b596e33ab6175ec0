"""Plot a run folder or a sweep store: ``theorylab plot RUN_OR_SWEEP [--out FILE.png]``
(``python -m theorylab plot``), or [`plot_run`][] and [`plot_sweep`][] in Python.

- A **run folder** (``theorylab run``'s output, holding ``trajectory.csv``): one panel per
  recorded quantity against ``step`` (``--columns`` picks them; default: every numeric column
  that changes, at most 12). Quantities of either paper work: the panels are the table's columns.
- A **sweep store** (``theorylab sweep``'s output, holding ``results.parquet`` and
  ``sweep.json``) or a sweep table (``.parquet`` or ``.csv``): the phase diagram of one value
  (``--value``; default ``error_fair``, ``error``, ``test_error`` or ``loss``, the first present)
  over two axes (``--x``, ``--y``; default the spec's first two axes) as a heat map, the mean
  over seeds and any further axis (and over the recorded rows when more than one per point was
  kept: a store with ``keep = "trajectory"`` is reduced to each point's last step). With one axis,
  the value against it.

The PNG goes to ``--out`` (default: ``<RUN>/trajectory.png`` or ``<SWEEP>/phase_diagram.png``);
an existing PNG is replaced, any other existing file is refused. Bad input: one line
``error: <field>: ...`` on stderr, exit code 2.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from theorylab.core.atomic_io import atomic_write_bytes
from theorylab.core.cli import ArgumentParser

__all__ = ["main", "phase_table", "plot_run", "plot_sweep"]

#: the value a phase diagram shows when ``value`` is not given: the first of these present
SWEEP_VALUES = ("error_fair", "error", "test_error", "loss")
#: columns that label a row rather than measure something
_LABELS = {"step", "seed", "run", "point", "lr_A", "lr_v", "run_id", "status", "message"}
MAX_PANELS = 12


def _save(fig, out: Path) -> Path:
    import io

    if out.suffix.lower() != ".png":
        raise ValueError(f"out: must be a .png file (got {str(out)!r})")
    if out.is_dir():
        raise ValueError(f"out: is a folder, not a .png file (got {str(out)!r})")
    if not out.parent.is_dir():
        raise ValueError(f"out: no such folder {str(out.parent)!r}")
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=120, metadata={"Software": None})
    atomic_write_bytes(out, buf.getvalue())
    return out


def _numeric(df: pd.DataFrame) -> list[str]:
    return [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])
            and not pd.api.types.is_bool_dtype(df[c])]


def plot_run(run: str | Path, *, out: str | Path | None = None,
             columns: Sequence[str] | None = None) -> Path:
    """Plot ``run``'s ``trajectory.csv`` (one panel per column against ``step``) as a PNG.

    **Arguments:**

    - `run`: a run folder, or the path of its ``trajectory.csv``.
    - `out`: the PNG (default ``<run>/trajectory.png``).
    - `columns`: the quantities to plot (default: every numeric column that changes, at most
      [`MAX_PANELS`][]).

    **Returns:** the path written. ``ValueError`` naming the field on bad input.
    """
    from theorylab.core.figures import figure_theme, new_figure

    run = Path(run)
    path = run / "trajectory.csv" if run.is_dir() else run
    if not path.is_file() or path.name != "trajectory.csv":
        raise ValueError(f"run: no trajectory.csv in {str(run)!r} (a folder written by "
                         "theorylab run)")
    try:
        df = pd.read_csv(path)
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        raise ValueError(f"run: {path} is not a readable table ({e})") from None
    if "step" not in df.columns or len(df) == 0:
        raise ValueError(f"run: {path} has no recorded rows with a 'step' column")
    numeric = [c for c in _numeric(df) if c not in _LABELS]
    if columns:
        bad = [c for c in columns if c not in numeric]
        if bad:
            raise ValueError(f"columns: not a numeric column of {path.name} (got {bad[0]!r}); "
                             f"known: {', '.join(numeric)}")
        chosen = list(columns)
    else:
        chosen = [c for c in numeric if df[c].nunique(dropna=True) > 1
                  and not c.endswith("_se")][:MAX_PANELS]
    if not chosen:
        raise ValueError(f"run: {path} has no quantity that changes over the steps")
    cols = min(3, len(chosen))
    rows = -(-len(chosen) // cols)
    out = Path(out) if out is not None else path.parent / "trajectory.png"
    with figure_theme():
        fig = new_figure((3.2 * cols, 2.4 * rows))
        axes = np.atleast_1d(fig.subplots(rows, cols, squeeze=False)).ravel()
        groups = [(None, df)] if "run" not in df.columns else list(df.groupby("run"))
        for ax, col in zip(axes, chosen):
            for name, part in groups:
                ax.plot(part["step"], part[col], lw=1.2,
                        label=None if name is None else f"run {name}")
                se = f"{col}_se"
                if se in part.columns and part[se].notna().any():
                    ax.fill_between(part["step"], part[col] - 2 * part[se],
                                    part[col] + 2 * part[se], alpha=0.25, lw=0)
            ax.set_title(col)
            ax.set_xlabel("step")
        for ax in axes[len(chosen):]:
            ax.set_visible(False)
        if len(groups) > 1:
            axes[0].legend(fontsize="x-small")
        fig.suptitle(f"{path.parent.name}: trajectory")
        return _save(fig, out)


def _sweep_table(source: Path) -> tuple[pd.DataFrame, list[str], Path]:
    """The table, the spec's axes (from ``sweep.json`` when there is one) and the default PNG."""
    axes: list[str] = []
    if source.is_dir():
        table_path = source / "results.parquet"
        if not table_path.is_file():
            raise ValueError(f"sweep: no results.parquet in {str(source)!r} (a store written by "
                             "theorylab sweep)")
        manifest = source / "sweep.json"
        if manifest.is_file():
            try:
                axes = list(json.loads(manifest.read_text(encoding="utf-8")).get("axes") or {})
            except (json.JSONDecodeError, UnicodeDecodeError, AttributeError):
                raise ValueError(f"sweep: {manifest} is not a sweep manifest") from None
        default = source / "phase_diagram.png"
    else:
        table_path = source
        default = source.with_name(source.stem + "-phase_diagram.png")
    try:
        if table_path.suffix == ".parquet":
            df = pd.read_parquet(table_path)
        elif table_path.suffix == ".csv":
            df = pd.read_csv(table_path)
        else:
            raise ValueError(f"sweep: must be a sweep store, a .parquet or a .csv table (got "
                             f"{str(source)!r})")
    except (OSError, pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError) as e:
        raise ValueError(f"sweep: {table_path} is not a readable table "
                         f"({type(e).__name__})") from None
    if not axes:  # a bare table: its dotted columns are the axes ("data.q")
        axes = [c for c in df.columns if "." in str(c)]
    return df, [a for a in axes if a in df.columns], default


def phase_table(table: pd.DataFrame, keys: Sequence[str], value: str) -> pd.Series:
    """The mean of ``value`` per value of the ``keys`` columns, over each point's last recorded
    row (the rows of a ``run_id`` at its largest ``step``; every row when the table has no
    steps): what [`plot_sweep`][] draws."""
    if "step" in table.columns and "run_id" in table.columns:
        table = table[table["step"] == table.groupby("run_id")["step"].transform("max")]
    return table.groupby(list(keys))[value].mean()


def plot_sweep(sweep: str | Path, *, out: str | Path | None = None, x: str | None = None,
               y: str | None = None, value: str | None = None) -> Path:
    """Plot a sweep's phase diagram: ``value`` over the axes ``x`` and ``y`` as a heat map (or
    against ``x`` alone when the sweep has one axis), averaged over seeds and other axes.

    **Arguments:**

    - `sweep`: a sweep store folder, or a sweep table (``.parquet`` or ``.csv``).
    - `out`: the PNG (default ``<store>/phase_diagram.png``).
    - `x`, `y`: axis columns (``"data.q"``); default the spec's first two axes.
    - `value`: the column shown; default the first of [`SWEEP_VALUES`][] present.

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
    rest = [a for a in axes if a != x]
    y = y if y is not None else (rest[0] if rest else None)
    if y == x:
        raise ValueError(f"y: must differ from x (got {y!r} for both)")
    numeric = _numeric(df)
    if value is None:
        value = next((c for c in SWEEP_VALUES if c in numeric), None)
        if value is None:
            raise ValueError(f"value: none of {list(SWEEP_VALUES)} in the table; name a column "
                             f"with --value (numeric: {', '.join(numeric)})")
    elif value not in numeric:
        raise ValueError(f"value: not a numeric column of the sweep table (got {value!r}); "
                         f"numeric: {', '.join(numeric)}")
    keys = [x] if y is None else [y, x]
    grid = phase_table(df, keys, value)
    out = Path(out) if out is not None else default
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
        return _save(fig, out)


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
                     f"(results.parquet) or a sweep table (got {str(path)!r})")


def main(argv: list[str] | None = None) -> int:
    p = ArgumentParser(prog="theorylab plot", description=__doc__.split("\n")[0])
    p.add_argument("input", help="a run folder (trajectory.csv), a sweep store "
                                 "(results.parquet) or a sweep table (.parquet, .csv)")
    p.add_argument("--out", help="the PNG to write (default: trajectory.png or "
                                 "phase_diagram.png next to the input)")
    p.add_argument("--columns", nargs="+", metavar="COL",
                   help="run: the quantities to plot (default: every one that changes)")
    p.add_argument("--x", help="sweep: the axis across (default: the spec's first axis)")
    p.add_argument("--y", help="sweep: the axis up (default: the spec's second axis)")
    p.add_argument("--value", help="sweep: the column shown (default: error_fair, error, "
                                   "test_error or loss, the first present)")
    a = p.parse_args(argv)
    path = Path(a.input)
    try:
        if a.out is not None and Path(a.out).exists() and Path(a.out).suffix.lower() != ".png":
            raise ValueError(f"out: refusing to overwrite {a.out!r}, which is not a PNG")
        kind = _kind(path)
        if kind == "run":
            if a.x or a.y or a.value:
                raise ValueError("--x/--y/--value: for a sweep; a run takes --columns")
            written = plot_run(path, out=a.out, columns=a.columns)
        else:
            if a.columns:
                raise ValueError("--columns: for a run; a sweep takes --x, --y and --value")
            written = plot_sweep(path, out=a.out, x=a.x, y=a.y, value=a.value)
    except ValueError as e:
        print(f"error: {e}", file=sys.stderr)
        return 2
    print(f"wrote {written}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
