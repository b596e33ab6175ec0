"""What an output folder is, and which folders and files a command may write.

Every folder a command writes carries a marker, ``.theorylab.json``: its kind (``run``,
``sweep``, ``cache``, ``figures``, ``results``) and, for a run, its paper. [`claim_folder`][]
refuses to write into a folder of another kind, or into another paper's run (one line
``out: ...``), and writes the marker of a new folder. A folder written before markers existed
is recognised by its files (a run by its ``config.toml`` header, a sweep by ``sweep.json``, a
point cache by ``points/``, figures by ``manifest.json``, results by ``<paper>/summary.md``).

[`check_new_file`][] guards a single output file (a plot, a page): an existing file that the
command did not write is never replaced without ``--force``.

The committed folders (``figures/``, ``docs/results/``, ``docs/performance/``) are refused by
[`theorylab.core.provenance.refuse_committed`][] and
[`theorylab.core.provenance.refuse_foreign_committed`][], by any spelling.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import tomllib

from . import atomic_io

__all__ = ["KINDS", "MARKER", "FolderKind", "check_new_file", "check_output_file", "claim_folder",
           "folder_kind", "write_marker"]

#: The marker file of a folder written by theorylab.
MARKER = ".theorylab.json"
#: The kinds of folders.
KINDS = ("run", "sweep", "cache", "figures", "results")
#: Kinds that may be written by a command of another kind of this table (a sweep store is a
#: point cache too, and a point cache may become a sweep store).
_COMPATIBLE = {("cache", "sweep"), ("sweep", "cache")}
#: The first line of a run folder's ``config.toml`` (both papers write it).
RUN_CONFIG_HEADER = "# theorylab resolved configuration"

_WHAT = {"run": "run folder", "sweep": "sweep store", "cache": "point cache",
         "figures": "figures folder", "results": "results folder"}


@dataclass(frozen=True)
class FolderKind:
    """What a folder is: ``kind`` (one of [`KINDS`][]), ``paper`` (a run's paper, else
    ``None``) and whether a marker said so (``marked``) or its files (an older folder)."""

    kind: str
    paper: str | None = None
    marked: bool = True

    def describe(self) -> str:
        what = _WHAT.get(self.kind, self.kind)
        return f"a {self.paper} {what}" if self.paper else f"a {what}"


def _first_line(path: Path) -> str:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return f.readline()
    except OSError:
        return ""


def _run_paper(config: Path) -> str | None:
    try:
        tables = tomllib.loads(config.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return None
    exp = tables.get("experiment")
    paper = exp.get("paper") if isinstance(exp, dict) else None
    return paper if isinstance(paper, str) else None


def folder_kind(folder: str | os.PathLike) -> FolderKind | None:
    """The kind of ``folder``: from its marker, else from its files; None for a folder that
    theorylab did not write (or an absent one)."""
    root = Path(folder)
    if not root.is_dir():
        return None
    marker = root / MARKER
    if marker.is_file():
        try:
            info = json.loads(marker.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            info = None
        if isinstance(info, dict) and info.get("kind") in KINDS:
            paper = info.get("paper")
            return FolderKind(info["kind"], paper if isinstance(paper, str) else None)
    config = root / "config.toml"
    if config.is_file() and _first_line(config).startswith(RUN_CONFIG_HEADER):
        return FolderKind("run", _run_paper(config), marked=False)
    if (root / "sweep.json").is_file():
        return FolderKind("sweep", marked=False)
    if (root / "points").is_dir():
        return FolderKind("cache", marked=False)
    if (root / "manifest.json").is_file():
        return FolderKind("figures", marked=False)
    try:
        subs = [p for p in root.iterdir() if p.is_dir()]
    except OSError:
        subs = []
    if any(_first_line(p / "summary.md").startswith("# Claim checks") for p in subs):
        return FolderKind("results", marked=False)
    return None


def write_marker(folder: str | os.PathLike, kind: str, paper: str | None = None) -> None:
    """Write ``folder``'s marker (when it is absent or says something else)."""
    if kind not in KINDS:
        raise ValueError(f"kind: must be one of {list(KINDS)} (got {kind!r})")
    info = {"kind": kind, **({"paper": paper} if paper else {}), "written_by": "theorylab"}
    path = Path(folder) / MARKER
    text = json.dumps(info, sort_keys=True) + "\n"
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except (OSError, UnicodeDecodeError):
        pass
    atomic_io.atomic_write_text(path, text)


def claim_folder(folder: str | os.PathLike, kind: str, *, paper: str | None = None,
                 field: str = "out", create: bool = True) -> FolderKind | None:
    """Refuse ``folder`` when it is a folder of another kind or another paper's run
    (``ValueError("<field>: ...")``), else (with ``create``) create it and write its marker.
    Returns what the folder was before (None: new, or not a theorylab folder)."""
    root = Path(folder)
    found = folder_kind(root)
    if found is not None:
        same = found.kind == kind or (found.kind, kind) in _COMPATIBLE
        if not same:
            raise ValueError(f"{field}: {root} is {found.describe()}, not {_article(kind)}; "
                             "choose another folder (nothing was written)")
        if kind == "run" and paper and found.paper and found.paper != paper:
            raise ValueError(f"{field}: {root} holds a {found.paper} run; a {paper} run "
                             "would replace it: choose another folder, or delete that run "
                             f"first (nothing was written)")
    if create:
        try:
            root.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise ValueError(f"{field}: cannot create the folder {root} ({e.strerror})"
                             ) from None
        keep = found.kind if found is not None and found.kind != kind else kind
        write_marker(root, keep, paper if keep == "run" else None)
    return found


def _article(kind: str) -> str:
    what = _WHAT.get(kind, kind)
    return f"a {what}"


def check_output_file(path: str | os.PathLike, suffix: str, *, command: str,
                      ours: Callable[[Path], bool], force: bool = False,
                      field: str = "out") -> Path:
    """``path`` as the single output file of `command` (``"theorylab plot"``): it must end in
    `suffix` (``".png"``), not be a folder, sit in an existing folder and lie outside the
    committed folders (any spelling), and an existing file is replaced only when ``ours(path)``
    or with `force` ([`check_new_file`][]); otherwise ``ValueError("<field>: ...")``."""
    from .provenance import refuse_foreign_committed

    p = Path(path)
    if p.suffix.lower() != suffix:
        raise ValueError(f"{field}: must be a {suffix} file (got {str(p)!r})")
    if p.is_dir():
        raise ValueError(f"{field}: is a folder, not a {suffix} file (got {str(p)!r})")
    if not p.parent.is_dir():
        raise ValueError(f"{field}: no such folder {str(p.parent)!r}")
    refuse_foreign_committed(p, None, what=command, field=field)
    return check_new_file(p, ours=ours, force=force, field=field, what=f"{suffix} file")


def check_new_file(path: str | os.PathLike, *, ours: Callable[[Path], bool],
                   force: bool = False, field: str = "out", what: str = "file") -> Path:
    """``path`` as a file this command may write: a new file, or an existing one that
    ``ours(path)`` recognises as written by this command; anything else is refused
    (``ValueError("<field>: ... refusing to overwrite ...")``) unless ``force``."""
    p = Path(path)
    if p.is_dir():
        raise ValueError(f"{field}: {p} is a folder, not a {what}")
    if p.exists() or p.is_symlink():
        if not force and not ours(p):
            raise ValueError(f"{field}: {p} exists and was not written by theorylab; refusing "
                             "to overwrite it (choose another file, or pass --force)")
    return p
