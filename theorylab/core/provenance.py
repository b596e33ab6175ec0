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

__all__ = ["REPO_ROOT", "COMMITTED", "default_out", "git_commit", "provenance",
           "provenance_line", "refuse_committed"]

REPO_ROOT = Path(__file__).resolve().parents[2]
"""The folder holding the ``theorylab`` package (the repository root in a checkout)."""

COMMITTED = {"figures": "figures", "results": "docs/results"}
"""Committed output folder of each command's results, relative to [`REPO_ROOT`][]."""

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


def refuse_committed(out: str | os.PathLike, kind: str, why: str) -> None:
    """Raise a one-line ``ValueError("--out: ...")`` when `out` is the committed folder of
    `kind` (or inside it) in this checkout; `why` names the setting that makes the run
    non-standard (``"--quick"``)."""
    committed = (REPO_ROOT / COMMITTED[kind]).resolve()
    target = Path(out).resolve()
    if target == committed or committed in target.parents:
        raise ValueError(f"--out: {out} holds the committed {kind} of full runs with default "
                         f"settings; a {why} run writes elsewhere (by default under runs/)")
