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
import re
import subprocess
from pathlib import Path

from theorylab.core import __version__

__all__ = ["REPO_ROOT", "CODE_LINE", "COMMITTED", "PROVENANCE_COLUMNS", "code_changed",
           "code_line", "committed_folder",
           "default_out", "git_commit", "provenance", "provenance_line", "refuse_committed",
           "run_provenance",
           "refuse_foreign_committed", "source_digest", "source_files"]

#: What a computed row records of how it was made (every sweep point's rows): not results.
PROVENANCE_COLUMNS = ("runtime_s", "host", "device", "dtype", "version", "git_rev")

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


def run_provenance(root: str | os.PathLike = REPO_ROOT) -> dict[str, str]:
    """How a run is made, taken when it starts (a run folder's ``provenance.json``): the UTC
    start time, theorylab's version, the git commit of `root` ([`git_commit`][]), the host, the
    Python and the versions of the libraries the engines use."""
    import platform
    import socket
    import sys
    from importlib import metadata

    libraries = {}
    for name in ("numpy", "scipy", "torch", "pandas", "numba"):
        try:
            libraries[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            libraries[name] = "not installed"
    now = _dt.datetime.now(_dt.timezone.utc)
    return {"started": now.isoformat(timespec="seconds"), "version": __version__,
            "commit": git_commit(root), "host": socket.gethostname(),
            "python": sys.version.split()[0], "platform": platform.platform(),
            **{f"lib_{k}": v for k, v in libraries.items()}}


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


#: The page line that records the code of a result: ``- **Code:** `<digest>` (sha256 of a, b)``.
CODE_LINE = re.compile(r"^- \*\*Code:\*\* `(?P<digest>[0-9a-f]+)` \(sha256 of (?P<files>[^)]*)\)")


def source_files(functions, root: str | os.PathLike = REPO_ROOT) -> list[str]:
    """The source files (relative to `root`, sorted) of the modules defining `functions` and of
    the modules of the same package that those modules import directly (``from ..setups import
    x``, ``from theorylab.<paper>.data import y``; a subpackage with the modules its
    ``__init__`` imports from itself): the code a claim's result comes from.
    Modules outside `root` (numpy, ...) and the kernel's own modules are left out."""
    import ast
    import importlib.util
    import sys

    root = Path(root).resolve()
    files: set[Path] = set()
    for fn in functions:
        module = sys.modules.get(getattr(fn, "__module__", "") or "")
        path = getattr(module, "__file__", None)
        if not path:
            continue
        path = Path(path).resolve()
        files.add(path)
        package = module.__name__.split(".")
        top = ".".join(package[:2])  # theorylab.<paper>
        base = package if path.name == "__init__.py" else package[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if not isinstance(node, ast.ImportFrom):
                continue
            mod = importlib.util.resolve_name("." * node.level + (node.module or ""),
                                              ".".join(base))
            for name in (mod, *(f"{mod}.{a.name}" for a in node.names)):
                if not (name == top or name.startswith(top + ".")) or name.startswith(
                        "theorylab.core"):
                    continue
                try:
                    spec = importlib.util.find_spec(name)
                except (ImportError, ValueError):
                    continue
                if spec is not None and spec.origin and spec.origin.endswith(".py"):
                    files.add(Path(spec.origin).resolve())
                    if name != top and spec.origin.endswith("__init__.py"):
                        files.update(_package_modules(Path(spec.origin), spec.name))
    return sorted(p.relative_to(root).as_posix() for p in files if root in p.parents)


def _package_modules(init: Path, package: str) -> set[Path]:
    """The modules that a subpackage's ``__init__.py`` imports from itself (``from .mae import
    x``): the code its re-exported names come from."""
    import ast
    import importlib.util

    out = set()
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.ImportFrom) and node.level == 1 and node.module:
            spec = importlib.util.find_spec(f"{package}.{node.module}")
            if spec is not None and spec.origin and spec.origin.endswith(".py"):
                out.add(Path(spec.origin).resolve())
    return out


def source_digest(files, root: str | os.PathLike = REPO_ROOT) -> str:
    """The first 16 hex digits of the sha256 over `files` (paths relative to `root`; each
    name, then its bytes); a missing file counts as the text ``missing``."""
    import hashlib

    h = hashlib.sha256()
    for name in sorted(files):
        path = Path(root) / name
        h.update(name.encode() + b"\0")
        h.update(path.read_bytes() if path.is_file() else b"missing")
        h.update(b"\0")
    return h.hexdigest()[:16]


def code_line(functions, root: str | os.PathLike = REPO_ROOT) -> str:
    """The page line recording the code of a result ([`CODE_LINE`][]), from
    [`source_files`][] of `functions`."""
    files = source_files(functions, root)
    return f"- **Code:** `{source_digest(files, root)}` (sha256 of {', '.join(files)})"


def code_changed(line: str, root: str | os.PathLike = REPO_ROOT) -> list[str] | None:
    """For a page line written by [`code_line`][]: the recorded files when their digest now
    differs (the code changed after the run), ``[]`` when it is the same, None when `line` is
    not such a line."""
    m = CODE_LINE.match(line.strip())
    if not m:
        return None
    files = [f.strip() for f in m["files"].split(",") if f.strip()]
    return [] if source_digest(files, root) == m["digest"] else files
