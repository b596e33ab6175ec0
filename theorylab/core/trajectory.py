"""A run's ``trajectory.csv`` as the commands that read it (plot, phases, export) take it.

[`read_trajectory`][] gives the whole rows written so far (a torn last line, the append of a
run still writing or killed mid-line, is dropped, as a resume drops it) and refuses, with one
line ``ValueError("<field>: ...")`` naming the file, what is not one run's rows: text that is
not UTF-8 or not a table, a table without a numeric ``step`` column, a header without rows,
and steps that do not increase (a row repeated, or rows in reverse order: one row per recorded
step, in order, is what a run writes).
"""

from __future__ import annotations

import io
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["read_trajectory"]


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
