"""How a result was made, and where results go by default.

The repository commits the results of *full* runs with default settings (``figures/`` and
``docs/results/``). [`default_out`][] sends every other run (``--quick``, another seed, another
device) to a scratch folder under ``runs/`` (git-ignored), and [`refuse_committed`][] refuses
such a run whose ``--out`` is a committed folder, so that committed results are only ever
written on purpose. [`provenance`][] is what the committed artefacts record: full or quick, the
git commit, the UTC date and theorylab's version.
"""

from __future__ import annotations

import datetime as _dt
import os
import subprocess
from pathlib import Path

from theorylab.core import __version__

__all__ = ["REPO_ROOT", "COMMITTED", "committed_folder", "default_out", "git_commit",
           "provenance", "provenance_line", "refuse_committed", "refuse_foreign_committed"]

REPO_ROOT = Path(__file__).resolve().parents[2]
"""The folder holding the ``theorylab`` package (the repository root in a checkout)."""

COMMITTED = {"figures": "figures", "results": "docs/results", "performance": "docs/performance"}
"""Committed output folder of each command's results, relative to [`REPO_ROOT`][]: the figures
of ``theorylab figures``, the pages of ``theorylab check`` and the benchmark tables of
``theorylab bench``, each written only by a full run made on purpose."""

SCRATCH = "runs/{mode}/{kind}"
"""Default output folder of a non-standard run, relative to the current folder: ``mode`` is
``quick`` for ``--quick`` and ``custom`` for other non-default settings."""


def git_commit(root: str | os.PathLike = REPO_ROOT) -> str:
    """Short hash of the commit checked out at `root`, with ``+dirty`` when tracked or
    untracked (not ignored) files differ from it, not counting the committed output folders
    [`COMMITTED`][] (a full run rewrites them, so they do not say which code made a result);
    ``"unknown"`` when `root` is not in a git work tree or git cannot be run."""
    def git(*args: str) -> str:
        return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True,
                              timeout=30, check=True).stdout.strip()

    try:
        head = git("rev-parse", "--short", "HEAD")
        dirty = git("status", "--porcelain", "--", ".",
                    *(f":(exclude){folder}" for folder in COMMITTED.values()))
    except (OSError, subprocess.SubprocessError):
        return "unknown"
    return head + ("+dirty" if dirty else "") if head else "unknown"


def provenance(quick: bool, root: str | os.PathLike = REPO_ROOT) -> dict[str, str]:
    """``{"run": "full"|"quick", "commit": git_commit(root), "date": "YYYY-MM-DD HH:MM UTC",
    "version": theorylab's version}``, taken once at the start of a run."""
    now = _dt.datetime.now(_dt.timezone.utc)
    return {"run": "quick" if quick else "full", "commit": git_commit(root),
            "date": now.strftime("%Y-%m-%d %H:%M UTC"), "version": __version__}


def provenance_line(prov: dict[str, str]) -> str:
    """One line for a results page: ``full run, commit `abc1234`, 2026-01-02 03:04 UTC,
    theorylab 0.1.0``."""
    return (f"{prov['run']} run, commit `{prov['commit']}`, {prov['date']}, "
            f"theorylab {prov['version']}")


def default_out(kind: str, *, quick: bool, custom: bool = False) -> str:
    """The default ``--out`` of a command writing `kind` (``"figures"`` or ``"results"``): the
    committed folder for a full run with default settings, ``runs/quick/<kind>`` for a `quick`
    run, ``runs/custom/<kind>`` for a full run with a `custom` (non-default) setting."""
    if quick or custom:
        return SCRATCH.format(mode="quick" if quick else "custom", kind=kind)
    return COMMITTED[kind]


def committed_folder(out: str | os.PathLike) -> str | None:
    """The kind (a key of [`COMMITTED`][]) of the committed folder that `out` is or lies in, in
    this checkout, by any spelling (relative or absolute, through symbolic links or ``..``);
    None elsewhere."""
    try:
        target = Path(out).resolve()
    except (OSError, RuntimeError, ValueError):  # a loop of links, a NUL: not ours to judge
        return None
    for kind, folder in COMMITTED.items():
        committed = (REPO_ROOT / folder).resolve()
        if target == committed or committed in target.parents:
            return kind
    return None


def refuse_committed(out: str | os.PathLike, kind: str, why: str, *,
                     field: str = "--out") -> None:
    """Raise a one-line ``ValueError("<field>: ...")`` when `out` is a committed folder (or
    inside one) in this checkout, by any spelling; `kind` is the kind the command writes and
    `why` names the setting that makes the run non-standard (``"--quick"``)."""
    found = committed_folder(out)
    if found == kind:
        raise ValueError(f"{field}: {out} holds the committed {kind} of full runs with default "
                         f"settings; a {why} run writes elsewhere (by default under runs/)")
    if found is not None:
        raise ValueError(f"{field}: {out} is inside the committed {COMMITTED[found]}/ (written "
                         f"only by full {found} runs); a {why} run writes elsewhere (by default "
                         f"under runs/)")


def refuse_foreign_committed(out: str | os.PathLike, kind: str | None, *, what: str,
                             field: str = "--out") -> None:
    """Raise a one-line ``ValueError("<field>: ...")`` when `out` is, or lies in, a committed
    folder other than the one of `kind` (None: any committed folder), by any spelling: `what`
    (``"theorylab run"``) never writes there."""
    found = committed_folder(out)
    if found is not None and found != kind:
        raise ValueError(f"{field}: {out} is inside the committed {COMMITTED[found]}/ (written "
                         f"only by full {found} runs); {what} writes elsewhere")
