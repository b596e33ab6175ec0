"""Questions asked of runs and sweeps of either paper, answered from their files or from a
config: the phase readings, a reading's law along an axis, gradient flow beside gradient
descent, the cost of a run before it starts, and export to xarray / netCDF.

- [`phase_readings`][]: the paper's one reading of the phase times and end values of a run
  folder, a trajectory table or every run of a sweep (``theorylab phases``).
- [`scan`][]: a config run along an axis and seeds, as a sweep; [`power_law`][],
  [`log_law`][], [`linear_law`][]: a reading fitted against an axis;
  [`sweep_values`][], [`reading_points`][], [`seed_interval`][]: a reading of every run of a
  sweep, and per setting its mean and seed interval (what ``theorylab plot SWEEP --reading``
  draws).
- [`gd_and_flow`][], [`flow_gap`][]: gradient descent beside its gradient flow.
- [`estimate`][]: steps, seconds and memory of a run before it starts.
- [`to_dataset`][], [`export`][]: runs or a sweep as an xarray dataset / a netCDF file.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from theorylab.core.paper import Paper
from theorylab.papers import DEFAULT_PAPER, PAPERS

from .runs import (
    RunFiles,
    SweepFiles,
    _paper_of_path,
    open_run,
    open_source,
    paper_of_config,
    sweep_progress,
    sweep_table,
)

__all__ = ["estimate", "export", "flow_gap", "gd_and_flow", "linear_law", "log_law",
           "phase_readings", "power_law", "reading_points", "scan", "seed_interval",
           "sweep_values", "to_dataset"]


# -- phase readings ------------------------------------------------------------------------
def phase_readings(source, cfg=None, *, paper: Paper | str | None = None) -> pd.DataFrame:
    """The paper's phase readings (one name and one definition each, those of the claims and
    figures) of a run, a trajectory table or every run of a sweep, for either paper: the same
    call and the same table as ``theorylab.<paper>.phases.phase_readings``, the paper found
    from the source (its ``config.toml``, the store's ``sweep.json``, the config's class).

    **Arguments:**

    - `source`: a run folder (or its ``trajectory.csv``), a sweep store (its folder or
      [`open_sweep`][theorylab.analysis.runs.open_sweep]'s result), a trajectory table (one
      run, or several with a column ``run``), or the result of a run (with a ``trajectory``
      and a ``config``).
    - `cfg`: the run's config, for a table (some readings need it: jelassi2022's t_PA margin
      and t_III target, huang2024's C and γ for t_II and Δ).
    - `paper`: the paper (or its name) of a table without `cfg` (default jelassi2022).

    **Returns:** one row per run and reading ([`theorylab.core.readings`][]): ``run`` (the
    folder, the ``run`` key or the sweep point's ``run_id``) and a sweep's axes, ``reading``,
    ``value``, ``step`` (the recorded step it is taken at), ``resolution`` (the steps since
    the record before: the reading is exact to it), ``censored`` (at the run's last recorded
    step, or not reached by it) and ``reason`` (why a missing reading is missing: not reached,
    a phase the run does not have, a config it needs). One value per run and reading:
    ``table.pivot(index="run", columns="reading", values="value")``; definitions:
    docs/reproducing.md, "Phase readings".
    """
    from theorylab.core.readings import phase_table

    if isinstance(paper, str):
        paper = PAPERS[paper]
    if isinstance(source, SweepFiles):
        return phase_table(source.paper, source)
    if isinstance(source, (str, Path)):
        path = Path(source)
        folder = path.parent if path.name == "trajectory.csv" else path
        if (not (folder / "results.parquet").is_file() and (folder / "config.toml").is_file()
                and (folder / "trajectory.csv").is_file()):
            run = open_run(path)  # read once; refuses rows that are not one run's of its paper
            paper, source, cfg = run.paper, run.trajectory.assign(run=str(run.path)), run.config
        else:
            paper = _paper_of_path(path)
    elif paper is None:
        config = getattr(source, "config", None) if cfg is None else cfg
        paper = paper_of_config(config) if config is not None else PAPERS[DEFAULT_PAPER]
    return phase_table(paper, source, cfg)


def scan(config, axes: Mapping[str, Sequence], *, seeds: Sequence[int] | None = None,
         mode: str = "zip", store: str | Path | None = None, workers: int = 0,
         keep: str = "final") -> pd.DataFrame:
    """Run `config` along `axes` (dotted fields → values; ``mode`` "zip" or "product") and
    `seeds` as a sweep, and return one row per run: the axes, ``train.seed``, the phase
    readings and the last recorded row (``keep = "final"``; ``"trajectory"``: every row).

    `store`: the sweep store (cached: a second call computes only new points; default a
    temporary folder); `workers`: 0 runs in this process, N on a Dask ``LocalCluster``.
    Example (huang2024): ``scan(cfg, {"data.P": [64, 128, 256]}, seeds=[0, 1, 2])``."""
    from theorylab.core.sweep import run_sweep_spec

    paper = paper_of_config(config)
    spec = {"base_config": {"experiment": {"paper": paper.name}, **config.to_dict()},
            "sweep": {"axes": {k: list(v) for k, v in axes.items()}, "mode": mode,
                      "keep": keep, **({"seeds": list(seeds)} if seeds is not None else {})}}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(store) if store is not None else Path(tmp) / "store"
        table = run_sweep_spec(spec, out, workers=workers, progress=False,
                               say=lambda text: None)
    failed = table[table.status == "failed"] if "status" in table else table.iloc[:0]
    if len(failed):
        raise ValueError(f"scan: {len(failed)} points failed: {failed.message.iloc[0]}")
    return table.reset_index(drop=True)


def _fit(table: pd.DataFrame, x: str, y: str, log_y: bool, log_x: bool = True
         ) -> dict[str, float]:
    from scipy import stats

    xs = table[x].to_numpy(dtype=float)
    ys = table[y].to_numpy(dtype=float)
    keep = (np.isfinite(xs) & np.isfinite(ys) & ((xs > 0) if log_x else True)
            & ((ys != 0) if log_y else True))
    if keep.sum() < 3:
        raise ValueError(f"{y}: fewer than 3 finite{', nonzero' if log_y else ''} readings "
                         f"against {x} (got {int(keep.sum())})")
    signs = np.sign(ys[keep])
    fit = stats.linregress(np.log(xs[keep]) if log_x else xs[keep],
                           np.log(np.abs(ys[keep])) if log_y else ys[keep])
    n = int(keep.sum())
    half = float(stats.t.ppf(0.975, n - 2)) * float(fit.stderr)
    return {"slope": float(fit.slope), "slope_se": float(fit.stderr),
            "slope_lo": float(fit.slope) - half, "slope_hi": float(fit.slope) + half,
            "intercept": float(fit.intercept), "n": n,
            "sign": float(signs[0]) if np.all(signs == signs[0]) else 0.0}


def power_law(table: pd.DataFrame, x: str, y: str) -> dict[str, float]:
    """Least squares of ln|y| against ln x over the rows of `table` where both are finite
    (|y|: a reading may be negative): ``slope`` (the exponent), its standard error
    ``slope_se`` and 95 % interval ``slope_lo``–``slope_hi`` (Student t with n − 2 degrees of
    freedom), ``intercept``, ``n`` rows, ``sign`` of y (+1, −1, or 0 when mixed)."""
    return _fit(table, x, y, log_y=True)


def log_law(table: pd.DataFrame, x: str, y: str) -> dict[str, float]:
    """Least squares of y against ln x (y = intercept + slope·ln x) over the rows where both
    are finite: for a reading that grows like a logarithm, e.g. Φ_glob(t_I) ≈ −(Δ/2) ln P
    (slope −Δ/2). The same keys as [`power_law`][]."""
    return _fit(table, x, y, log_y=False)


def linear_law(table: pd.DataFrame, x: str, y: str) -> dict[str, float]:
    """Least squares of y against x (y = intercept + slope·x) over the rows where both are
    finite. The same keys as [`power_law`][]."""
    return _fit(table, x, y, log_y=False, log_x=False)


# -- a reading along a sweep axis -----------------------------------------------------------
def sweep_values(source: str | Path, value: str) -> tuple[pd.DataFrame, list[str], dict]:
    """One row per finished run of a sweep store (or a sweep table): its axes (seeds
    included), ``value`` (the paper's phase reading `value` when it is one, from
    [`phase_readings`][], so a phase the run did not have is missing, never a step; otherwise
    the column `value` at the run's last recorded step), ``reason`` (why it is missing: the
    reading's reason, or "not recorded") and ``censored``. Also the axes and the manifest.
    ``ValueError`` naming the field when `value` is neither."""
    df, axes, manifest = sweep_table(source)
    df = finished_points(df, source)
    paper = PAPERS.get(manifest.get("paper")) if isinstance(manifest.get("paper"), str) \
        else None
    path = Path(source)
    if (path.is_dir() and paper is not None and paper.phase_readings is not None
            and value in (paper.reading_times or {})):
        tidy = phase_readings(path)
        tidy = tidy[tidy["reading"] == value]
        heads = df.drop_duplicates("run_id")[["run_id", *axes]]
        rows = tidy[["run", "value", "reason", "censored"]].merge(
            heads, left_on="run", right_on="run_id", how="inner")
        if len(rows) < len(tidy):  # batched points: their runs are "run_id/seed"
            rows = tidy[[c for c in tidy.columns if c in axes or c in (
                "run", "value", "reason", "censored")]]
        return _keyed(rows, axes), [a for a in axes if a in rows.columns], manifest
    numeric = numeric_columns(df)
    if value not in numeric:
        known = sorted((paper.reading_times or {}) if paper is not None else [])
        raise ValueError(f"reading: not a phase reading of the sweep's paper nor a numeric "
                         f"column of its table (got {value!r}); readings: "
                         f"{', '.join(known) or '(none)'}")
    if "step" in df.columns and "run_id" in df.columns:
        df = df[df["step"] == df.groupby("run_id")["step"].transform("max")]
    rows = df[[*axes, value]].rename(columns={value: "value"})
    rows["reason"] = np.where(rows["value"].isna(), "not recorded", "")
    rows["censored"] = False
    return _keyed(rows, axes), axes, manifest


def finished_points(df: pd.DataFrame, source) -> pd.DataFrame:
    """The rows of the finished points of the sweep table `df` of `source` (``status`` ok, when
    the table has a status); ``ValueError`` when there are none."""
    if "status" in df.columns:
        df = df[df["status"] == "ok"]
    if len(df) == 0:
        raise ValueError(f"sweep: {source} has no finished points to plot")
    return df


def numeric_columns(df: pd.DataFrame) -> list[str]:
    """The numeric columns of `df`, booleans left out."""
    return [c for c in df.columns if pd.api.types.is_numeric_dtype(df[c])
            and not pd.api.types.is_bool_dtype(df[c])]


def _keyed(rows: pd.DataFrame, axes: Sequence[str]) -> pd.DataFrame:
    """`rows` with every list-valued axis as its text (a group key)."""
    rows = rows.reset_index(drop=True)
    return rows.assign(**{a: rows[a].map(hashable) for a in axes
                          if a in rows.columns and rows[a].dtype == object})


def hashable(value):
    """An axis value as a group key: a list or array (a list-valued axis) as its text."""
    if isinstance(value, (list, tuple, np.ndarray)):
        return str(list(np.asarray(value).tolist()))
    return value


def seed_interval(values) -> tuple[float, float, float, str]:
    """``(mean, low, high, kind)`` of one setting's values over its seeds (NaN left out): the
    95 % Student-t interval of the mean for three or more, the min–max for two, the value
    alone for one (kind ``"t95"``, ``"minmax"``, ``"one"``; ``"none"``: no finite value)."""
    from scipy import stats

    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if v.size == 0:
        return math.nan, math.nan, math.nan, "none"
    mean = float(v.mean())
    if v.size == 1:
        return mean, mean, mean, "one"
    if v.size == 2:
        return mean, float(v.min()), float(v.max()), "minmax"
    half = float(stats.t.ppf(0.975, v.size - 1)) * float(v.std(ddof=1)) / math.sqrt(v.size)
    return mean, mean - half, mean + half, "t95"


def reading_points(rows: pd.DataFrame, x: str, by: Sequence[str] = ()) -> pd.DataFrame:
    """One row per setting (a value of `x` and of the `by` axes) of [`sweep_values`][]'s
    `rows`, over its other runs (its seeds): ``n`` runs, ``finite`` with a value, ``mean``,
    ``low``, ``high`` and ``kind`` ([`seed_interval`][]), ``missing`` (the most common reason
    of the runs without a value, "" when every run has one)."""
    out = []
    for key, g in rows.groupby([*by, x], sort=True, dropna=False):
        key = key if isinstance(key, tuple) else (key,)
        mean, lo, hi, kind = seed_interval(g["value"])
        reasons = g.loc[g["value"].isna(), "reason"].astype(str)
        reasons = reasons[reasons != ""]
        out.append({**dict(zip([*by, x], key)), "n": len(g),
                    "finite": int(np.isfinite(g["value"].to_numpy(dtype=float)).sum()),
                    "mean": mean, "low": lo, "high": hi, "kind": kind,
                    "missing": reasons.mode().iloc[0] if len(reasons) else ""})
    return pd.DataFrame(out)


# -- gradient flow beside gradient descent --------------------------------------------------
def _time_step(paper: Paper, cfg) -> float:
    if paper.time_step is None:
        raise ValueError(f"paper: {paper.name} has no gradient-flow clock (Paper.time_step)")
    return float(paper.time_step(cfg.resolved() if hasattr(cfg, "resolved") else cfg))


def gd_and_flow(config, *, out: str | Path | None = None, progress: bool = False
                ) -> pd.DataFrame:
    """Gradient descent and the gradient flow of `config` (same engine, same start, same
    recorded steps), one table: the trajectory columns, ``dynamics`` ("gd" or "flow") and
    ``time`` = η·step. With `out`, the two run folders are ``out/gd`` and ``out/flow``
    (``theorylab export out/gd out/flow`` puts them side by side in one netCDF file)."""
    paper = paper_of_config(config)
    eta = _time_step(paper, config)
    parts = []
    for mode in ("gd", "flow"):
        cfg = config.replace(train={"mode": mode})
        res = paper.run(cfg, out=None if out is None else Path(out) / mode, resume=False,
                        progress=progress)
        t = res.trajectory.copy()
        t.insert(0, "dynamics", mode)
        t.insert(2, "time", t.step.to_numpy(dtype=float) * eta)
        parts.append(t)
    return pd.concat(parts, ignore_index=True)


def flow_gap(config, steps_per_unit: Sequence[float], *, horizon: float,
             columns: Sequence[str]) -> tuple[pd.DataFrame, dict[str, float]]:
    """The GD-to-flow gap on a ladder of step sizes: for each η = 1/k (k in `steps_per_unit`,
    times the config's own ratio of learning rates), GD with horizon/η steps and the flow to
    the same time `horizon`, compared at the recorded times (every tenth of the horizon); the
    gap is the largest |GD − flow| over `columns` and those times.

    **Returns:** ``(table, fit)``: one row per η (``eta``, ``steps``, ``gap``), and the
    least-squares slope of ln gap against ln η (``slope``, ``slope_se``; Euler's order: 1).
    The config's step-size fields are set by the paper's `Paper.time_step` convention: every
    learning rate scaled by the same factor."""
    from scipy import stats

    paper = paper_of_config(config)
    eta0 = _time_step(paper, config)
    rows = []
    for k in steps_per_unit:
        eta = 1.0 / float(k)
        steps = int(round(horizon / eta))
        cfg = _scale_rates(config, eta / eta0).replace(
            train={"steps": steps, "record": "linear", "n_records": 11})
        both = gd_and_flow(cfg)
        gd = both[both.dynamics == "gd"][list(columns)].to_numpy(dtype=float)
        fl = both[both.dynamics == "flow"][list(columns)].to_numpy(dtype=float)
        rows.append({"eta": eta, "steps": steps, "gap": float(np.max(np.abs(gd - fl)))})
    table = pd.DataFrame(rows)
    fit = stats.linregress(np.log(table.eta), np.log(table.gap))
    return table, {"slope": float(fit.slope), "slope_se": float(fit.stderr)}


def _scale_rates(cfg, factor: float):
    """`cfg` with every learning-rate field of ``[train]`` (``lr``, ``lr_v``, ``lr_A``)
    multiplied by `factor`."""
    train = cfg.resolved().train if hasattr(cfg, "resolved") else cfg.train
    rates = {k: getattr(train, k) * factor for k in ("lr", "lr_v", "lr_A")
             if isinstance(getattr(train, k, None), (int, float))}
    return cfg.replace(train=rates)


# -- cost -------------------------------------------------------------------------------------
def estimate(config):
    """What a run of `config` will take on this machine: an
    [`Estimate`][theorylab.core.cost.Estimate] (steps, seconds, memory; ``print`` it), from
    the paper's cost model and a second or two of measurement (what ``theorylab run
    --dry-run`` prints)."""
    from theorylab.core.cost import estimate as measure

    paper = paper_of_config(config)
    if paper.cost is None:
        raise ValueError(f"paper: {paper.name} has no cost model (Paper.cost)")
    return measure(paper.cost(config))


# -- export -----------------------------------------------------------------------------------
def _provenance() -> dict[str, str]:
    import datetime
    import socket

    from theorylab.core import __version__
    from theorylab.core.sweep.runner import git_revision

    return {"theorylab_version": __version__, "git_rev": git_revision(),
            "host": socket.gethostname(),
            "exported": datetime.datetime.now(datetime.timezone.utc).isoformat(
                timespec="seconds")}


def to_dataset(*sources):
    """An ``xarray.Dataset`` of one or more run folders (dimensions ``run`` × ``step``; one
    run: ``step`` alone) or of one sweep store (``run`` = each run of the sweep).

    Every numeric column is a variable; ``time`` = η·step is a coordinate (the gradient
    flow's clock); a run's ``dynamics`` ("gd" or "flow": its ``train.mode``), folder, engine
    and phase readings are coordinates along
    ``run`` (attributes for one run); the attributes hold the paper, the config (TOML text;
    one per run as ``config_<run>`` when several), the sweep spec (JSON), the theorylab
    version, git revision, host and export time. A run still going is exported as far as it
    is written."""
    from theorylab.core.export import runs_dataset

    if not sources:
        raise ValueError("source: give at least one run folder or sweep store")
    opened = [open_source(s) for s in sources]
    if any(isinstance(o, SweepFiles) for o in opened):
        if len(opened) > 1:
            raise ValueError("source: a sweep store is exported alone")
        return _sweep_dataset(opened[0])
    names = _run_names(opened)
    keys = [None] if len(opened) == 1 else names  # one run: a dataset over step alone
    attrs = {"paper": ", ".join(sorted({o.paper.name for o in opened})), **_provenance()}
    run_attrs, clocks = {}, {}
    for key, name, run in zip(keys, names, opened):
        readings = run.paper.readings(run.trajectory, run.config) \
            if run.paper.phase_readings is not None and len(run.trajectory) else {}
        run_attrs[key] = {"folder": str(run.path),
                           "dynamics": str(getattr(run.config.train, "mode", "gd")),
                           **_run_record(run),
                           **{k: v for k, v in readings.items()
                              if isinstance(v, (bool, int, float, np.number))}}
        if run.paper.time_step is not None:
            clocks[key] = _time_step(run.paper, run.config)
        attrs["config" if key is None else f"config_{name}"] = run.config_text
    tables = {key: run.trajectory for key, run in zip(keys, opened)}
    return runs_dataset(tables, attrs=attrs, clocks=clocks, run_attrs=run_attrs)


def _run_record(run: RunFiles) -> dict[str, str]:
    """A run's own provenance (``provenance.json``, written when it started: ``run_started``,
    ``run_commit``, ``run_version``, ``run_host``) and whether it is finished: ``partial`` is
    ``"no"``, or ``"yes: last recorded step S of N"`` for a run still going or stopped
    (no ``final_state.npz``)."""
    out: dict[str, str] = {}
    path = run.path / "provenance.json"
    if path.is_file():
        try:
            record = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            record = {}
        if isinstance(record, dict):
            out = {f"run_{k}": str(record[k]) for k in ("started", "commit", "version", "host")
                   if k in record}
            if record.get("resumed"):
                out["run_resumed"] = str(len(record["resumed"]))
    else:
        out["run_started"] = "unknown (no provenance.json: a run made before runs recorded it)"
    if (run.path / "final_state.npz").is_file():
        out["partial"] = "no"
    else:
        steps = run.trajectory["step"] if "step" in run.trajectory else []
        last = int(steps.iloc[-1]) if len(steps) else 0
        out["partial"] = (f"yes: last recorded step {last} of "
                          f"{getattr(run.config.train, 'steps', '?')}")
    return out


def _run_names(runs: Sequence[RunFiles]) -> list[str]:
    names = [r.path.name for r in runs]
    if len(set(names)) < len(names):
        names = [str(r.path) for r in runs]
    return names


def _sweep_dataset(sweep: SweepFiles):
    from theorylab.core.export import runs_dataset

    table = sweep.table
    if "status" in table:
        table = table[table.status != "pending"]
    by = [c for c in (sweep.paper.batched.by if sweep.paper.batched is not None else ())
          if c in table.columns and sweep.manifest.get("point") == "batched"]
    if "step" not in table.columns:
        raise ValueError("sweep: its table has no step column (nothing was run)")
    schema = set(sweep.paper.trajectory_schema or ())
    labels = [c for c in table.columns if c not in schema and c not in ("run_id", *by)]
    tables = {}
    for key, g in table.groupby(["run_id", *by], sort=False):
        key = key if isinstance(key, tuple) else (key,)
        name = "/".join(str(k) for k in key)
        tables[name] = g.drop(columns=["run_id", *by])
    done, total = sweep_progress(sweep)
    attrs = {"paper": sweep.paper.name, "store": str(sweep.path),
             "partial": "no" if done == total else
             f"yes: {done} of {total} points finished (the others are left out)",
             "spec": {k: sweep.manifest.get(k) for k in ("base", "axes", "seeds", "mode",
                                                         "keep", "point")},
             **_provenance()}
    return runs_dataset(tables, attrs=attrs, labels=labels)


def export(*sources, out: str | Path, force: bool = False) -> Path:
    """[`to_dataset`][] of `sources` written to `out` (a ``.nc`` file, netCDF-3 through
    scipy, atomically; an existing file that theorylab did not write only with `force`).
    Returns the path."""
    from theorylab.core.export import write_netcdf

    return write_netcdf(to_dataset(*sources), out, force=force)

