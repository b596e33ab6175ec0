"""What a paper subpackage hands to the entry points: one [`Paper`][] object.

``python -m theorylab.run``, ``python -m theorylab.check`` and ``python -m theorylab.figures``
know the papers through ``theorylab.papers.PAPERS`` (one line per paper) and reach each paper
only through its `Paper`: how to build a run configuration from TOML tables, how to run it,
its claims and its figures. The kernel defines the shape; it never imports a paper.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

__all__ = ["Paper"]


@dataclass(frozen=True)
class Paper:
    """One paper of the toolkit.

    **Arguments:**

    - `name`: short name, also the subpackage (``theorylab.<name>``), the value of
      ``[experiment] paper`` in run configs, the prefix of claim ids (``<name>/thm4.1``) and
      the folder of its results pages (``docs/results/<name>/``).
    - `title`: the citation, e.g. ``"Jelassi, Sander & Li (2022), Vision Transformers provably
      learn spatial structure"``.
    - `config_from_tables`: ``{section: {field: value}}`` (a parsed TOML file) → the paper's
      validated run configuration (``ValueError`` naming the field otherwise).
    - `override`: ``(config, {"device": ..., "dtype": ..., "backend": ..., "steps": ...})`` →
      the configuration with the command line's overrides applied (only the given keys).
    - `run`: ``(config, out=Path, resume=bool, progress=bool | None)`` → a result with
      ``summary() -> str`` and ``trajectory`` (a table); raises the kernel's
      ``DivergenceError`` when a run diverges.
    - `load_claims`: → ``{id: Claim}`` in the paper's order (imported on first use).
    - `load_figures`: imports the paper's figure modules (they register their figures).
    - `notes`: the project page with the paper notes (``docs/papers/<name>.md``).
    - `config_doc`: → the markdown reference of the paper's config sections, one table per
      section (``core.configdoc``), for ``docs/config.md``; ``None``: not documented there.
    """

    name: str
    title: str
    config_from_tables: Callable[[Mapping[str, Any]], Any]
    override: Callable[[Any, Mapping[str, Any]], Any]
    run: Callable[..., Any]
    load_claims: Callable[[], Mapping[str, Any]]
    load_figures: Callable[[], None]
    notes: str = ""
    config_doc: Callable[[], str] | None = None

    def __post_init__(self) -> None:
        if not self.name.isidentifier() or self.name != self.name.lower():
            raise ValueError(f"paper name must be a lower-case identifier (got {self.name!r})")

    def notes_path(self) -> Path:
        return Path(self.notes or f"docs/papers/{self.name}.md")
