"""What a paper subpackage hands to the commands and the kernel: one [`Paper`][] object.

The kernel and the ``theorylab`` commands know the papers through the registry
([`theorylab.core.registry`][]: entry points) and reach each paper only through its `Paper`:
how to build a run configuration from TOML tables, how to run it, its trajectory's columns,
its batched run (if any), its claims, its figures and its benchmarks. The kernel defines the
shape and calls these hooks; it never imports a paper and names none.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .config import train_overrides

__all__ = ["BatchedRun", "Paper"]


@dataclass(frozen=True)
class BatchedRun:
    """How a paper runs several seeds and several values of one config field as one batched
    computation: the sweep's ``point = "batched"`` (docs/sweeps.md).

    **Arguments:**

    - `function`: ``"package.module:name"`` of the batched run, importable in a Dask worker;
      called as ``function(config, seeds=[...], <field>=[...], progress=False)`` and returns a
      table with one row per (run, recorded step).
    - `axis`: the dotted config field whose values one point batches with the seeds, e.g.
      ``"train.lr"``; its last part (``<field>``) names the keyword argument.
    - `by`: the columns that identify one run in the table (``keep = "final"`` keeps the last
      row of each).
    - `prepare`: ``(tables, resolved) -> resolved``: checks that the point's config can be
      batched and adjusts its resolved tables (``tables``: the tables the spec wrote, before
      resolution); raises a one-line ``ValueError`` naming the field otherwise.
    """

    function: str
    axis: str
    by: tuple[str, ...] = ("run", "seed")
    prepare: Callable[[Mapping[str, Any], dict], dict] | None = None

    def __post_init__(self) -> None:
        if ":" not in self.function:
            raise ValueError(f"function: must be 'package.module:name' (got {self.function!r})")
        if self.axis.count(".") != 1:
            raise ValueError(f"axis: must be 'section.field' (got {self.axis!r})")

    @property
    def field(self) -> str:
        """The keyword argument of `function` that takes the axis values."""
        return self.axis.split(".", 1)[1]


@dataclass(frozen=True)
class Paper:
    """One paper of the toolkit.

    **Arguments:**

    - `name`: short name, also the subpackage (``theorylab.<name>``), the value of
      ``[experiment] paper`` in run configs, the prefix of claim ids (``<name>/thm4.1``) and
      the folder of its results pages (``docs/results/<name>/``).
    - `title`: the citation, e.g. ``"Doe & Roe (2030), A theory of something"``.
    - `config_from_tables`: ``{section: {field: value}}`` (a parsed TOML file) → the paper's
      validated run configuration (``ValueError`` naming the field otherwise).
    - `run`: ``(config, out=Path, resume=bool, progress=bool | None)`` → a result with
      ``summary() -> str`` and ``trajectory`` (a table); raises the kernel's
      ``DivergenceError`` when a run diverges.
    - `load_claims`: → ``{id: Claim}`` in the paper's order (imported on first use).
    - `load_figures`: imports the paper's figure modules (they register their figures).
    - `override`: ``(config, {"device": ..., "dtype": ..., "backend": ..., "steps": ...})`` →
      the configuration with the command line's overrides applied (only the given keys);
      default: [`train_overrides`][theorylab.core.config.train_overrides], the ``[train]``
      changes of a config with ``replace``.
    - `notes`: the project page with the paper notes (``docs/papers/<name>.md``).
    - `config_doc`: → the markdown reference of the paper's config sections, one table per
      section (``core.configdoc``), for ``docs/config.md``; ``None``: not documented there.
    - `trajectory_schema`: column → dtype of the trajectory table that `run` returns (a sweep
      checks ``keep`` columns against it); ``None``: not known up front.
    - `batched`: the paper's [`BatchedRun`][] (the sweep's batched points); ``None``: none.
    - `bench`: → the paper's [`PaperBench`][theorylab.core.bench.PaperBench] (imported on
      first use): what ``theorylab bench --paper <name>`` and the GPU suite time; ``None``:
      no benchmarks.
    - `phase_readings`: ``(trajectory, config or None) -> {name: value}``: the paper's one
      documented reading of the phase times and end values of one run (a table with the
      columns of `trajectory_schema`, rows in step order; a time is a step, NaN when the run
      did not reach it; an empty mapping where the table lacks the columns). ``theorylab
      phases``, the sweep tables' reading columns and ``theorylab.analysis.phase_readings``
      report it, ``theorylab plot`` marks its times (the entries named ``t_…``/``T_…``).
      ``None``: the paper has none.
    - `reading_times`: reading → the time reading it is taken at (a time: itself; an end
      value: its time; absent: a constant of the run), for the step, resolution and
      censoring of each reading in the tidy table ([`theorylab.core.readings`][]).
    - `missing_readings`: ``(readings, config or None) -> {reading: reason}``: the readings
      that did not happen in that run (a phase it does not have) or cannot be taken, and why.
    - `describe`: ``config -> str``: one line naming a run's setting (the sizes and the
      choices that change the dynamics), the title of ``theorylab plot``'s figures.
      ``None``: the title names the paper only.
    - `symbols`: config key, trajectory column or reading → its symbol on a plot's axes and
      titles (matplotlib mathtext: ``{"data.C1": "$C_1$", "t_I": "$t_{\\rm I}$"}``); a key
      without one is written as it is.
    - `cost`: ``config -> CostModel`` ([`theorylab.core.cost.CostModel`][]): the work of one
      step of the config's engine, its memory, how to build it, and a smaller config of the
      same engine to time when this one is too large to time directly; what ``theorylab run``
      and ``sweep`` estimate before they start (``--dry-run``). ``None``: no estimate.
    - `time_step`: ``config -> η``: the time one gradient-descent step of the config advances
      (the gradient flow's clock, t = η·step; the engines' ``time_step``); ``None``: unknown.
    - `default`: this paper takes the run configs that name no paper (no ``[experiment]
      paper``) and is listed first ([`theorylab.core.registry`][]); one paper at most.
    """

    name: str
    title: str
    config_from_tables: Callable[[Mapping[str, Any]], Any]
    run: Callable[..., Any]
    load_claims: Callable[[], Mapping[str, Any]]
    load_figures: Callable[[], None]
    override: Callable[[Any, Mapping[str, Any]], Any] = train_overrides
    notes: str = ""
    config_doc: Callable[[], str] | None = None
    trajectory_schema: Mapping[str, str] | None = None
    batched: BatchedRun | None = None
    bench: Callable[[], Any] | None = None
    phase_readings: Callable[[Any, Any], Mapping[str, Any]] | None = None
    reading_times: Mapping[str, str] | None = None
    missing_readings: Callable[[Mapping[str, Any], Any], Mapping[str, str]] | None = None
    describe: Callable[[Any], str] | None = None
    symbols: Mapping[str, str] | None = None
    cost: Callable[[Any], Any] | None = None
    time_step: Callable[[Any], float] | None = None
    default: bool = False

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or self.name != self.name.lower():
            raise ValueError(f"paper name must be a lower-case identifier (got {self.name!r})")

    def readings(self, trajectory, cfg=None) -> Mapping[str, Any]:
        """`phase_readings` of one run; ``ValueError`` naming the paper when it has none."""
        if self.phase_readings is None:
            raise ValueError(f"paper: {self.name} has no phase readings (Paper.phase_readings)")
        return self.phase_readings(trajectory, cfg)

    def notes_path(self) -> Path:
        return Path(self.notes or f"docs/papers/{self.name}.md")
