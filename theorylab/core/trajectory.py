"""A run's ``trajectory.csv`` as the commands that read it (plot, phases, export) take it.

[`read_run`][] opens a run folder (or its ``trajectory.csv``): its config tables and the paper
they name, and the rows; every reader of a run folder (``theorylab.analysis.open_run``, the
phase readings of a folder) goes through it.

[`read_trajectory`][] gives the whole rows written so far (a torn last line, the append of a
run still writing or killed mid-line, is dropped, as a resume drops it) and refuses, with one
line ``ValueError("<field>: ...")`` naming the file, what is not one run's rows: text that is
not UTF-8 or not a table, a table without a numeric ``step`` column, a header without rows,
and steps that do not increase (a row repeated, or rows in reverse order: one row per recorded
step, in order, is what a run writes).
"""

from __future__ import annotations

import io
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["RUN_TABLE", "read_run", "read_trajectory"]

#: The file of a run folder that holds its rows.
RUN_TABLE = "trajectory.csv"


def read_run(path: str | Path, paper_for: Callable[[dict], Any] | None, *,
             need_config: bool = True) -> tuple[Path, Any, dict | None, pd.DataFrame]:
    """``(folder, paper, tables, rows)`` of the run folder `path` (or its ``trajectory.csv``):
    the tables of its ``config.toml``, the paper ``paper_for(tables)`` names (a kernel
    ``Paper``, whose trajectory schema types the rows), and [`read_trajectory`][]'s rows.

    A folder without ``trajectory.csv`` is a ``ValueError("run: ...")``; one without
    ``config.toml`` too when `need_config`, else ``paper`` and ``tables`` are None (as they
    are when `paper_for` is None)."""
    from .config import read_toml

    path = Path(path)
    folder = path.parent if path.name == RUN_TABLE else path
    csv, toml = folder / RUN_TABLE, folder / "config.toml"
    if not csv.is_file():
        raise ValueError(f"run: no {RUN_TABLE} in {_shown(folder)!r} (a folder written by "
                         "theorylab run)")
    tables = paper = None
    if toml.is_file() and paper_for is not None:
        tables = read_toml(toml)
        paper = paper_for(tables)
    elif need_config:
        raise ValueError(f"run: no config.toml in {_shown(folder)!r}")
    schema = getattr(paper, "trajectory_schema", None)
    return folder, paper, tables, read_trajectory(csv, schema)


def _shown(path: Path) -> str:
    """A path for a message: undecodable bytes (a name in another encoding) as U+FFFD."""
    return str(path).encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def read_trajectory(path: str | Path, schema: Mapping[str, str] | None = None, *,
                    field: str = "run") -> pd.DataFrame:
    """The rows of the trajectory CSV ``path`` (module docstring), with the dtypes of
    ``schema`` (column → dtype) where they apply."""
    import pandas as pd

    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(f"{field}: {path} is not UTF-8 text ({e.reason} at offset {e.start})"
                         ) from None
    except OSError as e:
        raise ValueError(f"{field}: cannot read {path} ({e.strerror})") from None
    if text and not text.endswith("\n"):
        text = text[:text.rfind("\n") + 1]  # a torn last line: dropped, as a resume does
    if not text.strip():
        raise ValueError(f"{field}: {path} is empty (no header yet)")
    try:
        table = pd.read_csv(io.StringIO(text))
    except (pd.errors.ParserError, pd.errors.EmptyDataError) as e:
        raise ValueError(f"{field}: {path} is not a readable table "
                         f"({' '.join(str(e).split())})") from None
    if "step" not in table.columns:
        raise ValueError(f"{field}: {path} has no 'step' column (got "
                         f"{', '.join(map(str, table.columns[:6]))})")
    if len(table) == 0:
        raise ValueError(f"{field}: {path} has no recorded rows yet (a header only)")
    if not pd.api.types.is_numeric_dtype(table["step"]):
        raise ValueError(f"{field}: the step column of {path} is not numeric (got "
                         f"{str(table['step'].iloc[0])!r})")
    steps = table["step"].to_numpy()
    back = (steps[1:] <= steps[:-1]).nonzero()[0]
    if len(back):
        i = int(back[0]) + 1
        what = "repeats" if steps[i] == steps[i - 1] else "comes after"
        raise ValueError(f"{field}: the steps of {path} do not increase (row {i + 1}: step "
                         f"{steps[i]:g} {what} step {steps[i - 1]:g}); a run writes one row "
                         "per recorded step, in order")
    for col, dtype in (schema or {}).items():
        if col in table.columns and dtype != "string":
            try:
                table[col] = table[col].astype(dtype)
            except (TypeError, ValueError):
                pass
    return table
