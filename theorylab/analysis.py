"""Questions asked of runs and sweeps of either paper, answered from their files or from a
config: the phase readings, gradient flow beside gradient descent, the cost of a run before it
starts, and export to xarray / netCDF. The commands ``theorylab phases``, ``theorylab export``
and ``theorylab run --dry-run`` / ``--flow``, ``theorylab check --rejudge`` are these
functions on the command line.

- [`open_run`][], [`open_sweep`][]: a run folder (``theorylab run``'s output: ``config.toml``
  and ``trajectory.csv``, read as far as it is written, so a run still going can be read) or a
  sweep store (``results.parquet``), with its paper and config.
- [`phase_readings`][]: the paper's one reading of the phase times and end values
  (``Paper.phase_readings``: jelassi2022 ``t_I``, ``t_II``, ``t_PA``, ``t_III``; huang2024
  ``t_I``, ``phi_glob_end_I``, ``t_II``, ``T_star`` and the values at T*; docs/reproducing.md)
  of a run folder, a trajectory table or every run of a sweep, one row per run and reading
  with its recording resolution, a censored flag and why a missing one is missing: the same
  call and table as ``theorylab.jelassi2022.phases.phase_readings`` and
  ``theorylab.huang2024.phases.phase_readings``.
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
- [`load_claim`][]: a claim's stored tables (what ``theorylab check`` wrote) with the claim,
  to judge them again with other thresholds, another stored reading or a counterfactual,
  without rerunning (``theorylab check --rejudge``).
"""

from __future__ import annotations

import json
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

__all__ = ["DERIVED_TABLES", "RunFiles", "StoredClaim", "SweepFiles", "estimate", "export",
           "flow_gap", "gd_and_flow", "load_claim", "log_law", "open_run", "open_source",
           "open_sweep", "paper_of_config",
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
    from theorylab.core.sweep.store import check_sweep_table

    path = Path(path)
    manifest = json.loads((path / "sweep.json").read_text()) if (path / "sweep.json"
                                                                  ).is_file() else {}
    table = check_sweep_table(load_sweep(path), path)
    name = manifest.get("paper", DEFAULT_PAPER)
    if name not in PAPERS:
        raise ValueError(f"sweep: the store's paper {name!r} is not registered "
                         f"(known: {list(PAPERS)})")
    return SweepFiles(PAPERS[name], manifest, table, path)


def sweep_progress(sweep: SweepFiles) -> tuple[int, int]:
    """``(finished, total)`` points of a sweep store: a store whose sweep is still running or
    was stopped has points not run yet (status ``pending``), which readers leave out."""
    table = sweep.table
    heads = table.drop_duplicates("point") if "point" in table else table
    total = len(heads)
    pending = int((heads["status"] == "pending").sum()) if "status" in heads else 0
    return total - pending, total


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


def _paper_of_path(path: Path) -> Paper:
    """The paper of a run folder (its ``config.toml``) or of a sweep store (``sweep.json``)."""
    folder = path.parent if path.name == "trajectory.csv" else path
    if (folder / "results.parquet").is_file():
        manifest = folder / "sweep.json"
        name = json.loads(manifest.read_text()).get("paper", DEFAULT_PAPER) if \
            manifest.is_file() else DEFAULT_PAPER
        if name not in PAPERS:
            raise ValueError(f"sweep: the store's paper {name!r} is not registered "
                             f"(known: {list(PAPERS)})")
        return PAPERS[name]
    if folder.is_dir() and not (folder / "trajectory.csv").is_file():
        raise ValueError(f"source: {str(path)!r} is neither a run folder (trajectory.csv) nor "
                         "a sweep store (results.parquet)")
    if not (folder / "config.toml").is_file():
        return PAPERS[DEFAULT_PAPER]  # the kernel's reading names what is missing
    return PAPERS[paper_of(read_toml(folder / "config.toml"), tuple(PAPERS), DEFAULT_PAPER)]


def phase_readings(source, cfg=None, *, paper: Paper | str | None = None) -> pd.DataFrame:
    """The paper's phase readings (one name and one definition each, those of the claims and
    figures) of a run, a trajectory table or every run of a sweep, for either paper: the same
    call and the same table as ``theorylab.<paper>.phases.phase_readings``, the paper found
    from the source (its ``config.toml``, the store's ``sweep.json``, the config's class).

    **Arguments:**

    - `source`: a run folder (or its ``trajectory.csv``), a sweep store, a trajectory table
      (one run, or several with a column ``run``), or the result of a run (with a
      ``trajectory`` and a ``config``).
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
    if isinstance(source, (str, Path)):
        path = Path(source)
        paper = _paper_of_path(path)
        folder = path.parent if path.name == "trajectory.csv" else path
        if not (folder / "results.parquet").is_file() and (folder / "config.toml").is_file():
            run = open_run(path)  # read once; refuses rows that are not one run's of its paper
            source, cfg = run.trajectory.assign(run=str(run.path)), run.config
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
                           **_run_record(run),
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


# -- stored claim results ---------------------------------------------------------------------
#: The tables a check writes beside its measurement that are made from the verdict (not read
#: by the judge): ``<id>-<name>.csv`` with these names are not loaded as its tables.
DERIVED_TABLES = ("sensitivity", "counterfactuals", "resolution", "readings")


@dataclass
class StoredClaim:
    """A claim's result as a check wrote it, ready to be re-judged without rerunning.

    - `claim`: the claim (its declared thresholds, predictions, counterfactuals, variants).
    - `tables`: ``{"table": <id>.csv, "<name>": <id>-<name>.csv, ...}``: what its judge reads.
    - `folder`: where they were read (``<results>/<paper>``, or the folder of an alternative
      reading).
    - `readings`: the readings of its RECONSTRUCTED choices the tables were measured under.
    - `stored_verdict`: the verdict the check wrote for them ("" when it is not recorded).
    """

    claim: Any
    tables: dict[str, pd.DataFrame]
    folder: Path
    readings: dict[str, Any]
    stored_verdict: str = ""

    def judge(self, **values: float):
        """The verdict (a ``Verdict``: ``.verdict`` and ``.reasons``) of the stored tables with
        some declared thresholds or predictions replaced (``judge(REGIME_CUT=1.5)``; none: the
        declared values); an undeclared name is a ``ValueError`` listing the declared ones."""
        return self.claim.judged(self.tables, **values)

    def counterfactual(self, name: str):
        """The verdict under the declared counterfactual `name` (a wrong statement the check
        must reject: ``disagrees`` or ``partial`` means it is rejected)."""
        found = [c for c in self.claim.counterfactuals if c.name == name]
        if not found:
            raise ValueError(f"counterfactual: unknown (got {name!r}); declared: "
                             f"{[c.name for c in self.claim.counterfactuals]}")
        return self.judge(**found[0].values)


def _claim_of(paper_id: str):
    from theorylab.papers import paper_claims

    paper, _, cid = str(paper_id).partition("/")
    if paper not in PAPERS or not cid:
        raise ValueError(f"claim: must be PAPER/ID with PAPER one of {list(PAPERS)} (got "
                         f"{paper_id!r}; theorylab check --list lists them)")
    claims = paper_claims(PAPERS[paper])
    if cid not in claims:
        raise ValueError(f"claim: unknown claim {paper_id!r}; {paper} has {list(claims)}")
    return claims[cid], [c for c in claims if c.startswith(f"{cid}-")]


def _stored_verdict(path: Path, key: str, column: str, match: Mapping[str, str]) -> str:
    if not path.is_file():
        return ""
    table = pd.read_csv(path, dtype=str, keep_default_na=False)
    rows = table
    for col, value in match.items():
        if col not in rows:
            return ""
        rows = rows[rows[col] == value]
    return str(rows[column].iloc[0]) if len(rows) and column in rows else ""


def _read_table(path: Path) -> pd.DataFrame:
    """A stored table (a table with no columns was written as an empty file)."""
    try:
        return pd.read_csv(path)
    except pd.errors.EmptyDataError:
        return pd.DataFrame()


def load_claim(paper_id: str, results: str | Path | None = None, *,
               readings: Mapping[str, Any] | None = None) -> StoredClaim:
    """The stored tables of claim `paper_id` (``"jelassi2022/thm4.1"``) and the claim, to
    re-judge them without rerunning (``theorylab check --rejudge`` on the command line).

    **Arguments:**

    - `paper_id`: ``PAPER/ID`` as ``theorylab check --list`` prints it.
    - `results`: the folder a check wrote (``theorylab check --out``; default the committed
      ``docs/results`` of this checkout); the tables are ``<results>/<paper>/<id>.csv`` and
      ``<id>-<name>.csv``.
    - `readings`: ``{choice: value}`` of one RECONSTRUCTED choice read another way: the tables
      a full check wrote for that alternative (``<id>-readings/<choice>=<value>/``). Other
      combinations were never run: ``ValueError`` saying that they need a rerun.

    ``ValueError`` naming the field for an unknown claim, a folder without its tables or a
    reading that needs a rerun. Example: ``load_claim("huang2024/thm4.1").judge()``."""
    from theorylab.core.claims.report import reading_folder
    from theorylab.core.provenance import COMMITTED, REPO_ROOT

    claim, longer = _claim_of(paper_id)  # longer: ids whose files start like this one's
    base = Path(results) if results is not None else REPO_ROOT / COMMITTED["results"]
    folder = base / claim.paper
    rerun = f"theorylab check --only {claim.key}"
    if not (folder / f"{claim.id}.csv").is_file():
        raise ValueError(f"results: no stored tables of {claim.key} in {str(folder)!r} "
                         f"({claim.id}.csv); run {rerun} first")
    chosen = dict(claim.main_readings())
    where, stored = folder, _stored_verdict(folder / "summary.csv", claim.key, "verdict",
                                            {"claim": claim.key})
    away = {}
    for name, value in (readings or {}).items():
        variant = next((v for v in claim.variants if v.name == name), None)
        if variant is None:
            raise ValueError(f"reading: {claim.key} has no RECONSTRUCTED choice {name!r}; "
                             f"its choices: {[v.name for v in claim.variants]}")
        slug = reading_folder("", "", name, value).name
        known = {reading_folder("", "", name, r.value).name: r
                 for r in (variant.main, *variant.alternatives)}
        if slug not in known:
            raise ValueError(f"reading: {name} has no reading {value!r}; declared: "
                             f"{[r.value for r in (variant.main, *variant.alternatives)]}")
        chosen[name] = known[slug].value
        if known[slug] is not variant.main:
            away[name] = known[slug]
    if len(away) > 1:
        raise ValueError(f"reading: {sorted(away)} together were never run (a check runs one "
                         f"choice at a time around the main readings); that needs a rerun "
                         f"with those readings (in Python: claim.check(readings={{...}}))")
    if away:
        (name, alt), = away.items()
        where = reading_folder(folder, claim.id, name, alt.value)
        if not (where / "table.csv").is_file():
            raise ValueError(f"reading: {name}={alt.value!r} has no stored tables in "
                             f"{str(where)!r} (a quick check runs only the first alternative);"
                             f" it needs a rerun: {rerun}")
        tables = {p.stem: _read_table(p) for p in sorted(where.glob("*.csv"))}
        stored = _stored_verdict(folder / f"{claim.id}-readings.csv", claim.key, "verdict",
                                 {"choice": name, "value": str(alt.value)})
    else:
        tables = {"table": _read_table(folder / f"{claim.id}.csv")}
        for p in sorted(folder.glob(f"{claim.id}-*.csv")):
            name = p.stem[len(claim.id) + 1:]
            theirs = any(p.stem == o or p.stem.startswith(f"{o}-") for o in longer)
            if name not in DERIVED_TABLES and not theirs:
                tables[name] = _read_table(p)
    return StoredClaim(claim, tables, where, chosen, stored)
