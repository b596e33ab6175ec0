"""Questions asked of runs and sweeps of either paper, answered from their files or from a
config: the phase readings, gradient flow beside gradient descent, the cost of a run before it
starts, and export to xarray / netCDF. The commands ``theorylab phases``, ``theorylab export``
and ``theorylab run --dry-run`` / ``--flow`` are these functions on the command line.

- [`open_run`][], [`open_sweep`][]: a run folder (``theorylab run``'s output: ``config.toml``
  and ``trajectory.csv``, read as far as it is written, so a run still going can be read) or a
  sweep store (``results.parquet``), with its paper and config.
- [`phase_readings`][]: the paper's one reading of the phase times and end values
  (``Paper.phase_readings``: jelassi2022 ``t_I``, ``t_II``, ``t_PA``, ``t_III``; huang2024
  ``t_I``, ``phi_glob_end_I``, ``t_II``, ``T_star`` and the values at T*; docs/reproducing.md)
  of a run folder, a trajectory table or every run of a sweep.
- [`scan`][]: a config run along an axis (or several, zipped) and seeds, as a sweep, one row
  per run with its phase readings; [`power_law`][] fits a reading against an axis on log-log
  axes, [`log_law`][] against the logarithm of an axis ("how does Φ_glob(t_I) scale with
  P?").
- [`gd_and_flow`][]: gradient descent and the gradient flow of one config, one table with a
  column ``dynamics`` and the continuous time; [`flow_gap`][] the GD-to-flow gap on a ladder
  of step sizes with its order in η.
- [`estimate`][]: steps, seconds on this machine and memory of a run before it starts.
- [`to_dataset`][], [`export`][]: runs (several side by side, e.g. GD and flow) or a sweep as
  an xarray dataset / a netCDF file, with the config and provenance as attributes.
"""

from __future__ import annotations

import json
import math
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from theorylab.core.config import paper_of, read_toml
from theorylab.core.paper import Paper
from theorylab.core.trajectory import read_trajectory
from theorylab.papers import DEFAULT_PAPER, PAPERS

__all__ = ["RunFiles", "SweepFiles", "estimate", "export", "flow_gap", "gd_and_flow",
           "log_law", "open_run", "open_source", "open_sweep", "paper_of_config",
           "phase_readings", "power_law", "scan", "to_dataset"]


@dataclass
class RunFiles:
    """A run folder as read: its `paper`, `config`, `trajectory` (the whole rows written so
    far), `path`, and the config's TOML text."""

    paper: Paper
    config: Any
    trajectory: pd.DataFrame
    path: Path | None
    config_text: str = ""


@dataclass
class SweepFiles:
    """A sweep store as read: its `paper`, `manifest` (the spec) and `table`."""

    paper: Paper
    manifest: dict
    table: pd.DataFrame
    path: Path


def paper_of_config(cfg) -> Paper:
    """The registered paper whose config class `cfg` is (``ValueError`` otherwise)."""
    package = type(cfg).__module__.rsplit(".", 1)[0]
    for paper in PAPERS.values():
        if paper.config_from_tables.__module__.rsplit(".", 1)[0] == package:
            return paper
    raise ValueError(f"config: not the config of a registered paper (got "
                     f"{type(cfg).__name__} of {type(cfg).__module__})")


def open_run(path: str | Path) -> RunFiles:
    """A run folder (or its ``trajectory.csv``): the paper named by its ``config.toml``, the
    config and the rows written so far. ``ValueError`` naming the field otherwise."""
    path = Path(path)
    folder = path.parent if path.name == "trajectory.csv" else path
    csv, toml = folder / "trajectory.csv", folder / "config.toml"
    if not csv.is_file():
        raise ValueError(f"run: no trajectory.csv in {str(folder)!r} (a folder written by "
                         f"theorylab run)")
    if not toml.is_file():
        raise ValueError(f"run: no config.toml in {str(folder)!r}")
    tables = read_toml(toml)
    paper = PAPERS[paper_of(tables, tuple(PAPERS), DEFAULT_PAPER)]
    cfg = paper.config_from_tables(tables)
    trajectory = read_trajectory(csv, paper.trajectory_schema)
    _same_paper(csv, trajectory, paper)
    return RunFiles(paper, cfg, trajectory, folder,
                    toml.read_text(encoding="utf-8"))


def _same_paper(csv: Path, trajectory: pd.DataFrame, paper: Paper) -> None:
    """Refuse rows of another paper's run under this config (their columns match another
    paper's trajectory better than the config's paper's)."""
    cols = set(trajectory.columns)

    def shared(p: Paper) -> int:
        return len(cols & set(p.trajectory_schema or ()))

    best = max(PAPERS.values(), key=shared)
    if best is not paper and shared(best) > shared(paper):
        raise ValueError(f"run: the rows of {csv} are a {best.name} trajectory, but its "
                         f"config.toml is a {paper.name} config; not one run")


def open_sweep(path: str | Path) -> SweepFiles:
    """A sweep store: its paper (from ``sweep.json``), the spec and the table."""
    from theorylab.core.sweep import load_sweep

    path = Path(path)
    manifest = json.loads((path / "sweep.json").read_text()) if (path / "sweep.json"
                                                                  ).is_file() else {}
    table = load_sweep(path)
    missing = [c for c in ("point", "run_id", "status") if c not in table.columns]
    if missing:
        raise ValueError(f"sweep: {path / 'results.parquet'} is not a sweep table (no column "
                         f"{', '.join(map(repr, missing))})")
    name = manifest.get("paper", DEFAULT_PAPER)
    if name not in PAPERS:
        raise ValueError(f"sweep: the store's paper {name!r} is not registered "
                         f"(known: {list(PAPERS)})")
    return SweepFiles(PAPERS[name], manifest, table, path)


def open_source(path: str | Path) -> RunFiles | SweepFiles:
    """[`open_run`][] or [`open_sweep`][], whichever `path` is."""
    path = Path(path)
    if (path / "results.parquet").is_file():
        return open_sweep(path)
    if path.is_dir() and not (path / "trajectory.csv").is_file():
        raise ValueError(f"source: {str(path)!r} is neither a run folder (trajectory.csv) nor "
                         "a sweep store (results.parquet)")
    if not path.exists():
        raise ValueError(f"source: no such file or folder {str(path)!r}")
    return open_run(path)


# -- phase readings ------------------------------------------------------------------------
def _readings_hook(paper: Paper):
    if paper.phase_readings is None:
        raise ValueError(f"paper: {paper.name} has no phase readings (Paper.phase_readings)")
    return paper.phase_readings


def _point_config(paper: Paper, manifest: Mapping, labels: Mapping[str, Any]):
    from theorylab.core.sweep.spec import set_dotted

    tables = json.loads(json.dumps(manifest.get("base", {})))
    for key, value in labels.items():
        if "." in key and value is not None and not (isinstance(value, float)
                                                     and math.isnan(value)):
            set_dotted(tables, key, value.item() if hasattr(value, "item") else value)
    return paper.config_from_tables(tables)


def _sweep_readings(sweep: SweepFiles) -> pd.DataFrame:
    """One row per run of a sweep: its labels and its phase readings (the stored columns;
    computed from the kept trajectories where a store has none)."""
    from theorylab.core.sweep.store import META_COLUMNS

    table, paper = sweep.table, sweep.paper
    labels = [c for c in sweep.manifest.get("labels", []) if c in table.columns]
    by = list(paper.batched.by) if paper.batched is not None and sweep.manifest.get(
        "point") == "batched" else []
    by = [c for c in by if c in table.columns]
    keys = ["point", "run_id", *by]
    schema = set(paper.trajectory_schema or ())
    known = set(keys) | set(labels) | set(META_COLUMNS) | schema
    reading_cols = [c for c in table.columns if c not in known]
    ok = table[table.status.isin(["ok", "diverged"])] if "status" in table else table
    if reading_cols:
        out = ok.groupby(keys, sort=False).tail(1)[[*keys, *labels, *reading_cols, "status"]]
        return out.reset_index(drop=True)
    hook = _readings_hook(paper)
    rows = []
    for key, g in ok.groupby(keys, sort=False):
        head = g.iloc[0]
        cfg = _point_config(paper, sweep.manifest, {c: head[c] for c in labels})
        rows.append({**dict(zip(keys, key)), **{c: head[c] for c in labels},
                     **hook(g.drop(columns=[c for c in g.columns if c not in schema]), cfg)})
    return pd.DataFrame(rows)


def phase_readings(source, *, paper: Paper | str | None = None, config=None) -> pd.DataFrame:
    """The paper's phase readings (one name and one definition each, those of the claims and
    figures) of a run, a trajectory table or every run of a sweep.

    **Arguments:**

    - `source`: a run folder (or its ``trajectory.csv``), a sweep store, a trajectory table
      (``pd.DataFrame``, one run), or the result of ``theorylab.run_experiment`` (with a
      ``trajectory`` and a ``config``).
    - `paper`: the paper (or its name) of a table (default: from the config or the folder).
    - `config`: the run's config, for a table (some readings need it: jelassi2022's t_PA
      margin and t_III target, huang2024's C and γ for t_II and Δ).

    **Returns:** a table, one row per run: for a run its readings (and ``source``), for a
    sweep ``point``, ``run_id``, the axes and the readings. A reading the run did not reach is
    NaN; see docs/reproducing.md for the definitions.
    """
    if isinstance(paper, str):
        paper = PAPERS[paper]
    if isinstance(source, (str, Path)):
        opened = open_source(source)
        if isinstance(opened, SweepFiles):
            return _sweep_readings(opened)
        values = _readings_hook(opened.paper)(opened.trajectory, opened.config)
        return pd.DataFrame([{"source": str(opened.path), **values}])
    if hasattr(source, "trajectory") and hasattr(source, "config"):
        config = source.config if config is None else config
        source = source.trajectory
    if not isinstance(source, pd.DataFrame):
        raise ValueError(f"source: a run folder, a sweep store or a table (got "
                         f"{type(source).__name__})")
    if paper is None:
        paper = paper_of_config(config) if config is not None else PAPERS[DEFAULT_PAPER]
    return pd.DataFrame([_readings_hook(paper)(source, config)])


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


def _fit(table: pd.DataFrame, x: str, y: str, log_y: bool) -> dict[str, float]:
    from scipy import stats

    xs = table[x].to_numpy(dtype=float)
    ys = table[y].to_numpy(dtype=float)
    keep = np.isfinite(xs) & np.isfinite(ys) & (xs > 0) & ((ys != 0) if log_y else True)
    if keep.sum() < 3:
        raise ValueError(f"{y}: fewer than 3 finite{', nonzero' if log_y else ''} readings "
                         f"against {x} (got {int(keep.sum())})")
    signs = np.sign(ys[keep])
    fit = stats.linregress(np.log(xs[keep]), np.log(np.abs(ys[keep])) if log_y else ys[keep])
    return {"slope": float(fit.slope), "slope_se": float(fit.stderr),
            "intercept": float(fit.intercept), "n": int(keep.sum()),
            "sign": float(signs[0]) if np.all(signs == signs[0]) else 0.0}


def power_law(table: pd.DataFrame, x: str, y: str) -> dict[str, float]:
    """Least squares of ln|y| against ln x over the rows of `table` where both are finite
    (|y|: a reading may be negative): ``slope`` (the exponent), its standard error
    ``slope_se``, ``intercept``, ``n`` rows, ``sign`` of y (+1, −1, or 0 when mixed)."""
    return _fit(table, x, y, log_y=True)


def log_law(table: pd.DataFrame, x: str, y: str) -> dict[str, float]:
    """Least squares of y against ln x (y = intercept + slope·ln x) over the rows where both
    are finite: for a reading that grows like a logarithm, e.g. Φ_glob(t_I) ≈ −(Δ/2) ln P
    (slope −Δ/2). The same keys as [`power_law`][]."""
    return _fit(table, x, y, log_y=False)


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
    attrs = {"paper": ", ".join(sorted({o.paper.name for o in opened})), **_provenance()}
    run_attrs, clocks = {}, {}
    for name, run in zip(names, opened):
        readings = _readings_hook(run.paper)(run.trajectory, run.config) \
            if run.paper.phase_readings is not None and len(run.trajectory) else {}
        run_attrs[name] = {"folder": str(run.path),
                           "dynamics": str(getattr(run.config.train, "mode", "gd")),
                           **{k: v for k, v in readings.items()
                              if isinstance(v, (bool, int, float, np.number))}}
        if run.paper.time_step is not None:
            clocks[name] = _time_step(run.paper, run.config)
        attrs["config" if len(opened) == 1 else f"config_{name}"] = run.config_text
    if len(opened) == 1:
        tables, run_attrs, clocks = ({None: opened[0].trajectory},
                                     {None: run_attrs[names[0]]},
                                     {None: clocks[names[0]]} if clocks else {})
    else:
        tables = {n: o.trajectory for n, o in zip(names, opened)}
    return runs_dataset(tables, attrs=attrs, clocks=clocks, run_attrs=run_attrs)


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
    attrs = {"paper": sweep.paper.name, "store": str(sweep.path),
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
