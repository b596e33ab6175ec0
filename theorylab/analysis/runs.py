"""Opening what theorylab wrote: a run folder, a trajectory table, a sweep store (or a bare
sweep table), and a claim's stored tables. Every reader of a run folder in the package goes
through [`open_run`][] (and it through the kernel's
[`theorylab.core.trajectory.read_run`][]); every reader of a sweep table through
[`open_sweep`][] or [`sweep_table`][].

- [`open_run`][], [`open_sweep`][], [`open_source`][]: a run folder (``config.toml`` and
  ``trajectory.csv``, read as far as it is written, so a run still going can be read) or a
  sweep store (``results.parquet``), with its paper and config; [`sweep_progress`][] counts a
  store's finished points.
- [`sweep_table`][]: a store or a ``.parquet``/``.csv`` sweep table as the plots take it:
  the table, its axes and its manifest.
- [`load_claim`][]: a claim's stored tables (what ``theorylab check`` wrote) with the claim,
  to judge them again with other thresholds, another stored reading or a counterfactual,
  without rerunning (``theorylab check --rejudge``).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd

from theorylab.core.config import paper_of, read_toml
from theorylab.core.paper import Paper
from theorylab.core.trajectory import RUN_TABLE, read_run
from theorylab.papers import DEFAULT_PAPER, PAPERS

__all__ = ["DERIVED_TABLES", "RunFiles", "StoredClaim", "SweepFiles", "load_claim",
           "open_run", "open_source", "open_sweep", "paper_of_config", "sweep_progress",
           "sweep_table"]


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


def open_run(path: str | Path, *, strict: bool = True) -> RunFiles:
    """A run folder (or its ``trajectory.csv``): the paper named by its ``config.toml``, the
    config and the rows written so far ([`theorylab.core.trajectory.read_run`][], the one
    reader of a run folder). ``ValueError`` naming the field otherwise.

    `strict` False (what a plot needs): a folder without a readable ``config.toml`` of a
    registered paper is read all the same, its `paper` and `config` None."""
    def paper_for(tables):
        try:
            return PAPERS[paper_of(tables, tuple(PAPERS), DEFAULT_PAPER)]
        except (ValueError, KeyError, TypeError):
            if strict:
                raise
            return None

    try:
        folder, paper, tables, trajectory = read_run(path, paper_for, need_config=strict)
    except ValueError:
        if strict:
            raise
        folder, paper, tables, trajectory = read_run(path, None, need_config=False)
    cfg = None
    if paper is not None:
        try:
            cfg = paper.config_from_tables(tables)
        except (ValueError, KeyError, TypeError):
            if strict:
                raise
            paper = None
    if paper is not None:
        _same_paper(folder / RUN_TABLE, trajectory, paper)
    toml = folder / "config.toml"
    return RunFiles(paper, cfg, trajectory, folder,
                    toml.read_text(encoding="utf-8") if toml.is_file() else "")


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
    manifest = read_manifest(path)
    table = check_sweep_table(load_sweep(path), path)
    return SweepFiles(_store_paper(manifest), manifest, table, path)


def _store_paper(manifest: dict) -> Paper:
    """The registered paper a sweep store's manifest names (default: the default paper)."""
    name = manifest.get("paper", DEFAULT_PAPER)
    if name not in PAPERS:
        raise ValueError(f"sweep: the store's paper {name!r} is not registered "
                         f"(known: {list(PAPERS)})")
    return PAPERS[name]


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


def _paper_of_path(path: Path) -> Paper:
    """The paper of a run folder (its ``config.toml``) or of a sweep store (``sweep.json``)."""
    folder = path.parent if path.name == "trajectory.csv" else path
    if (folder / "results.parquet").is_file():
        return _store_paper(read_manifest(folder))
    if folder.is_dir() and not (folder / "trajectory.csv").is_file():
        raise ValueError(f"source: {str(path)!r} is neither a run folder (trajectory.csv) nor "
                         "a sweep store (results.parquet)")
    if not (folder / "config.toml").is_file():
        return PAPERS[DEFAULT_PAPER]  # the kernel's reading names what is missing
    return PAPERS[paper_of(read_toml(folder / "config.toml"), tuple(PAPERS), DEFAULT_PAPER)]



def text(value) -> str:
    """Text for a title or a message: a path's undecodable bytes (a name in another
    encoding) as U+FFFD."""
    return str(value).encode("utf-8", "surrogateescape").decode("utf-8", "replace")


def read_manifest(source: Path) -> dict:
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


def sweep_table(source: str | Path) -> tuple[pd.DataFrame, list[str], dict]:
    """A sweep store (or a ``.parquet``/``.csv`` sweep table) as the plots read it: the
    table, the spec's axes (from ``sweep.json``, ``train.seed`` last when it has seeds; a bare
    table's dotted columns, ``data.q``) and the manifest ({} for a bare table).
    ``ValueError("sweep: ...")`` otherwise."""
    source = Path(source)
    if not source.exists():
        raise ValueError(f"sweep: no such file or folder {str(source)!r}")
    axes: list[str] = []
    manifest: dict = {}
    if source.is_dir():
        table_path = source / "results.parquet"
        if not table_path.is_file():
            raise ValueError(f"sweep: no results.parquet in {str(source)!r} (a store written by "
                             "theorylab sweep)")
        manifest = read_manifest(source)
        axes = list(manifest.get("axes") or {})
    else:
        table_path = source
    if table_path.suffix not in (".parquet", ".csv"):
        raise ValueError(f"sweep: must be a sweep store, a .parquet or a .csv table (got "
                         f"{text(source)!r})")
    try:
        df = (pd.read_parquet(table_path) if table_path.suffix == ".parquet"
              else pd.read_csv(table_path))
    except Exception as e:  # pyarrow's and pandas' errors alike: a damaged or foreign file
        raise ValueError(f"sweep: {text(table_path)} is not a readable table "
                         f"({type(e).__name__})") from None
    if not axes:  # a bare table: its dotted columns are the axes ("data.q")
        axes = [c for c in df.columns if "." in str(c)]
    if manifest.get("seeds") is not None and "train.seed" not in axes:
        axes.append("train.seed")  # the seeds: an axis of the table, listed apart in the spec
    return df, [a for a in axes if a in df.columns], manifest


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
