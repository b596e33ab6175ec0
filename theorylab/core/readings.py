"""The phase readings of runs as one tidy table, for any paper: what
``theorylab.<paper>.phases.phase_readings`` return and ``theorylab phases`` prints.

A paper reads one run into ``{reading: value}`` (its ``Paper.phase_readings`` hook) and says,
in ``Paper.reading_times``, at which of its time readings each reading is taken (a time at
itself; an end value at its time; a constant at none), and in ``Paper.missing_readings``
which readings did not happen in a run and why. [`phase_table`][] turns that into one row per
(run, reading):

- ``run``: the run (its folder, its ``run`` key in a table of several, or its sweep point's
  ``run_id``), then a sweep's axes;
- ``reading``, ``value`` (a float; a flag is 1.0 or 0.0; NaN where the reading is missing);
- ``step``: the recorded step the reading is taken at (NaN for a constant or a missing one);
- ``resolution``: the steps between that record and the one before it, so the threshold was
  crossed after ``step - resolution`` and by ``step`` (0 at the first record; 1 when every
  step is recorded: exact to the step);
- ``censored``: the run's horizon cuts the reading: it sits at the last recorded step (the
  run may have stopped just as it was reached) or the run ended before it was reached;
- ``reason``: why a reading is missing ("" when it is read): not reached by the run's last
  recorded step, a phase that did not happen in this run (the paper's reason), or a column or
  config the reading needs.

The source is a run folder (``config.toml`` and ``trajectory.csv``, read as far as written),
a sweep store (``results.parquet``: the readings the workers stored, the recorded steps from
the kept trajectories or else from the point's record schedule), a trajectory table with its
config (several runs when it has a column ``run``), or a run's result (``trajectory`` and
``config``).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .config import EXPERIMENT
from .registry import get_paper
from .trainer import record_schedule
from .trajectory import RUN_TABLE, read_run

__all__ = ["READING_COLUMNS", "paper_phase_readings", "phase_table", "point_config",
           "reading_rows"]

#: The columns of one run's part of [`phase_table`][], after ``run`` and a sweep's axes.
READING_COLUMNS = ("reading", "value", "step", "resolution", "censored", "reason")


def point_config(paper, manifest: Mapping, labels: Mapping[str, Any]):
    """The config of a sweep point: the store's base config (``sweep.json``) with the point's
    axis values (its labels that name a config field)."""
    from .sweep.spec import set_dotted

    tables = json.loads(json.dumps(manifest.get("base", {})))
    for key, value in labels.items():
        if "." in key and value is not None and not (isinstance(value, float)
                                                     and math.isnan(value)):
            set_dotted(tables, key, value.item() if hasattr(value, "item") else value)
    return paper.config_from_tables(tables)


def _number(value) -> float:
    try:
        return float(value)
    except (TypeError, ValueError):
        return math.nan


def reading_rows(values: Mapping[str, Any], recorded: Sequence[float], *,
                 times: Mapping[str, str], missing: Mapping[str, str] | None = None
                 ) -> list[dict]:
    """One run's readings as rows of [`READING_COLUMNS`][] (module docstring).

    **Arguments:**

    - `values`: ``{reading: value}`` of the run (the paper's hook).
    - `recorded`: the run's recorded steps.
    - `times`: reading → the time reading it is taken at (itself for a time; absent for a
      constant).
    - `missing`: reading → why it did not happen in this run (it is then missing whatever its
      value); a reading taken at a missing time and not itself listed keeps its value without
      a step (the length of a phase that did not happen is 0)."""
    steps = np.unique(np.asarray(recorded, dtype=np.float64))
    steps = steps[np.isfinite(steps)]
    last = float(steps[-1]) if steps.size else math.nan
    missing = dict(missing or {})
    rows = []
    for name, raw in values.items():
        value = _number(raw)
        time = times.get(name)
        why = missing.get(name, "")
        time_missing = time is not None and time in missing
        at = math.nan if why or time is None or time_missing else _number(values.get(time))
        censored = False
        if why:
            value = math.nan
        elif time is not None and math.isnan(at) and not time_missing:
            value = math.nan
            censored = True
            why = (f"not reached by step {last:g}, the run's last recorded step"
                   if math.isfinite(last) else "not reached (no recorded step)")
        elif math.isnan(value):
            why = "not available from this run's columns or config"
        elif time is not None and at == last:
            censored = True
        rows.append({"reading": name, "value": value, "step": at,
                     "resolution": _resolution(steps, at), "censored": censored,
                     "reason": why})
    return rows


def _resolution(steps: np.ndarray, at: float) -> float:
    if math.isnan(at):
        return math.nan
    k = int(np.searchsorted(steps, at))
    if k >= steps.size or steps[k] != at:
        return math.nan
    return float(at - steps[k - 1]) if k > 0 else 0.0


def _one_run(paper, trajectory: pd.DataFrame, cfg) -> list[dict]:
    values = dict(paper.readings(trajectory, cfg))
    return _rows(paper, values, cfg, trajectory["step"].to_numpy())


def _rows(paper, values: Mapping[str, Any], cfg, recorded) -> list[dict]:
    why = paper.missing_readings(values, cfg) if paper.missing_readings is not None else {}
    return reading_rows(values, recorded, times=paper.reading_times or {}, missing=why)


def _table(rows: list[dict], front: Sequence[str]) -> pd.DataFrame:
    table = pd.DataFrame(rows, columns=[*front, *READING_COLUMNS])
    table["censored"] = table["censored"].astype(bool)
    return table


def _same_paper(paper, named: str, kind: str, where: Path, said: str = "") -> None:
    """``ValueError("<kind>: ...")`` when the run or sweep at `where` is of the paper `named`
    (as its files say: `said`), not of `paper`."""
    if named != paper.name:
        raise ValueError(f"{kind}: {str(where)!r} is a {kind} of {named}{said}, not of "
                         f"{paper.name}; read it with theorylab.{named}.phases.phase_readings")


def _open_run(paper, path: Path) -> tuple[pd.DataFrame, Any, str]:
    def this_paper(tables: Mapping[str, Any]):
        _same_paper(paper, tables.get(EXPERIMENT, {}).get("paper", paper.name), "run", folder,
                    " ([experiment] paper)")
        return paper

    folder = path.parent if path.name == RUN_TABLE else path
    folder, _, tables, rows = read_run(path, this_paper)
    return rows, paper.config_from_tables(tables), str(folder)


def _sweep_table(paper, folder: Path, opened=None) -> pd.DataFrame:
    """The readings of every finished run of the store in `folder`; `opened`: the store as
    already read (with its ``manifest`` and ``table``), so it is not read twice."""
    from .sweep.store import META_COLUMNS, check_sweep_table, load_sweep

    if opened is not None:
        manifest = opened.manifest
    else:
        manifest = json.loads((folder / "sweep.json").read_text(encoding="utf-8")) if (
            folder / "sweep.json").is_file() else {}
    _same_paper(paper, manifest.get("paper", paper.name), "sweep", folder)
    table = opened.table if opened is not None else check_sweep_table(load_sweep(folder), folder)
    if "status" in table:
        table = table[table.status.isin(["ok", "diverged"])]
    labels = [c for c in manifest.get("labels", []) if c in table.columns]
    by = [c for c in (paper.batched.by if paper.batched is not None and manifest.get("point")
                      == "batched" else ()) if c in table.columns]
    schema = set(paper.trajectory_schema or ())
    known = {"point", "run_id", *by, *labels, *META_COLUMNS} | schema
    stored = [c for c in table.columns if c not in known]
    rows = []
    for key, g in table.groupby(["point", "run_id", *by], sort=False):
        head = g.iloc[0]
        point = {c: head[c] for c in labels}
        cfg = point_config(paper, manifest, point)
        run = str(key[1]) if not by else f"{key[1]}/" + "/".join(str(k) for k in key[2:])
        trajectory = g[[c for c in g.columns if c in schema]]
        kept_all = "step" in trajectory and len(trajectory) > 1
        values = ({c: head[c] for c in stored} if stored else
                  dict(paper.readings(trajectory, cfg)))
        if kept_all:
            recorded = trajectory["step"].to_numpy()
        else:
            train = cfg.train
            recorded = record_schedule(int(train.steps), int(train.n_records), train.record)
            end = _number(g["step"].max()) if "step" in g else math.nan
            if math.isfinite(end):
                recorded = recorded[recorded <= end]
        rows += [{"run": run, **point, **r} for r in _rows(paper, values, cfg, recorded)]
    return _table(rows, ["run", *labels])


def phase_table(paper, source, cfg=None) -> pd.DataFrame:
    """The phase readings of `source` by `paper` (a kernel ``Paper``), one row per run and
    reading (module docstring).

    **Arguments:**

    - `source`: a run folder (or its ``trajectory.csv``), a sweep store (its folder, or the
      store as read: with ``path``, ``manifest`` and ``table``), a trajectory table (a column
      ``run`` separates several runs), or a run's result (with ``trajectory`` and ``config``).
    - `cfg`: the config of a table (its readings that need one are missing without it).

    ``ValueError`` naming the field for a source that is none of these, or another paper's."""
    if isinstance(source, (str, Path)):
        path = Path(source)
        if (path / "results.parquet").is_file():
            return _sweep_table(paper, path)
        if not path.exists():
            raise ValueError(f"source: no such file or folder {str(path)!r}")
        trajectory, cfg, name = _open_run(paper, path)
        return _table([{"run": name, **r} for r in _one_run(paper, trajectory, cfg)], ["run"])
    if all(hasattr(source, a) for a in ("path", "manifest", "table")):
        return _sweep_table(paper, Path(source.path), source)
    if hasattr(source, "trajectory") and hasattr(source, "config"):
        cfg = source.config if cfg is None else cfg
        source = source.trajectory
    if not isinstance(source, pd.DataFrame):
        raise ValueError(f"source: a run folder, a sweep store, a trajectory table or a run's "
                         f"result (got {type(source).__name__})")
    if "step" not in source:
        raise ValueError("source: the table has no column 'step' (one row per recorded step)")
    if "run" in source and source["run"].nunique() > 1:
        return _table([{"run": key, **r} for key, g in source.groupby("run", sort=True)
                       for r in _one_run(paper, g.drop(columns=["run"]), cfg)], ["run"])
    run = source["run"].iloc[0] if "run" in source and len(source) else ""
    table = source.drop(columns=["run"]) if "run" in source else source
    return _table([{"run": run, **r} for r in _one_run(paper, table, cfg)], ["run"])


def paper_phase_readings(package: str) -> Callable[..., pd.DataFrame]:
    """The function ``phase_readings(source, cfg=None)`` of the paper whose package is
    `package` (``<...>.<paper name>``; the paper taken from the registry at each call): one
    call, the same in every paper."""

    def phase_readings(source, cfg=None) -> pd.DataFrame:
        """The phase readings of a run folder, a sweep store, a trajectory table (with its
        `cfg`; several runs when it has a column ``run``) or a run's result: one row per run
        and reading, with ``step``, ``resolution``, ``censored`` and ``reason``
        ([`phase_table`][theorylab.core.readings.phase_table]; the readings' definitions:
        the docstring of the paper's ``phases`` module). Example:
        ``phase_readings("runs/fig4").set_index("reading").value["t_I"]``."""
        return phase_table(get_paper(package.rpartition(".")[2]), source, cfg)

    phase_readings.__module__ = f"{package}.phases"
    return phase_readings
