"""What an output folder is, and which folders and files a command may write.

Every folder a command writes carries a marker, ``.theorylab.json``: its kind (``run``,
``sweep``, ``cache``, ``figures``, ``results``, ``suite``, ``tensorboard``) and, for a run, its
paper. [`claim_folder`][]
refuses to write into a folder of another kind, or into another paper's run (one line
``out: ...``), and writes the marker of a new folder. A folder written before markers existed
is recognised by its files (a run by its ``config.toml`` header, a sweep by ``sweep.json``, a
point cache by ``points/``, figures by ``manifest.json``, results by ``<paper>/summary.md``).

This module is the output gate: the only way a command claims a folder or writes a single
output file.

- **A folder** is claimed ([`claim_folder`][]) only when it is new, empty, already a folder of
  the command's kind (or a compatible one), or with ``--force``; a folder of another kind,
  another paper's run and a committed folder other than the command's own are refused even with
  ``--force``.
- **A single output file** (a plot, a phase table, a netCDF export, a benchmark CSV, a page) is
  checked by [`check_output_file`][] before anything is computed: its suffix, its name, its
  folder (existing and writable), the committed folders (any spelling), the own files of a
  theorylab folder (a run's ``trajectory.csv``, a store's ``results.parquet``: never replaced,
  even with ``--force``), and an existing file is replaced only when it carries the command's
  ownership mark or with ``--force``. The mark is structured: a field of the file's own format
  (a PNG text chunk, a netCDF attribute, a CSV column) or a sidecar ``.<name>.theorylab.json``
  holding the writing command and the file's SHA-256 ([`write_output`][] writes it); never a
  search for a text in the file.
- **Writing** goes through [`write_output`][]: atomic, and a full disk or a folder it may not
  write ends the command in one line naming the user's path (never a temporary file; exit 1,
  [`theorylab.core.faults`][]).

The committed folders (``figures/``, ``docs/results/``, ``docs/performance/``) are refused by
[`theorylab.core.provenance.refuse_committed`][] and
[`theorylab.core.provenance.refuse_foreign_committed`][], by any spelling.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from . import atomic_io
from .config import check_choice, check_path, loads_toml
from .faults import DISK_FULL

__all__ = ["KINDS", "MARKER", "OWN_FILES", "FolderKind", "check_new_file", "check_out_folder",
           "check_output_file", "claim_folder", "folder_kind", "is_empty_folder", "make_folder",
           "marked_by", "sidecar_path", "write_marker", "write_output"]

#: The marker file of a folder written by theorylab.
MARKER = ".theorylab.json"
#: The kinds of folders.
KINDS = ("run", "sweep", "cache", "figures", "results", "suite", "tensorboard")
#: Kinds that may be written by a command of another kind of this table (a sweep store is a
#: point cache too, and a point cache may become a sweep store).
_COMPATIBLE = {("cache", "sweep"), ("sweep", "cache")}
#: The first line of a run folder's ``config.toml`` (both papers write it).
RUN_CONFIG_HEADER = "# theorylab resolved configuration"

_WHAT = {"run": "run folder", "sweep": "sweep store", "cache": "point cache",
         "figures": "figures folder", "results": "results folder", "suite": "GPU-suite folder",
         "tensorboard": "TensorBoard log folder"}
#: The files of each kind of folder that belong to the folder itself: never replaced by a
#: single-file output (even with ``--force``): a phase table over a run's ``trajectory.csv``
#: would lose the run.
OWN_FILES = {
    "run": ("config.toml", "trajectory.csv", "checkpoint.npz", "final_state.npz",
            ".theorylab.lock"),
    "sweep": ("sweep.json", "sweep.lock", "results.parquet", "points"),
    "cache": ("points", "sweep.json", "sweep.lock", "results.parquet"),
    "figures": ("manifest.json",),
    "results": (),
    "suite": ("summary.md", "suite.csv", "logs"),
    "tensorboard": (),
}
#: The name of a point file of a store (its run id, 20 hex digits).
_POINT_FILE = re.compile(r"^[0-9a-f]{20}\.parquet$")
#: The name of an entry of a cache's subfolder (a hex key, theorylab.core.safecache's .npz).
_CACHE_ENTRY = re.compile(r"^[0-9a-f]{16,64}\.npz$")
#: The suffix of an output file's sidecar (``.<name>.theorylab.json``).
SIDECAR = ".theorylab.json"


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


def config_paper(config: Path | str) -> str | None:
    """The ``[experiment] paper`` of a run's ``config.toml`` (its path, or its text); None
    when it names none or cannot be read."""
    try:
        text = config.read_text(encoding="utf-8") if isinstance(config, Path) else config
        exp = loads_toml(text).get("experiment")
    except (OSError, TypeError, ValueError):  # a decoding error is a ValueError
        return None
    paper = exp.get("paper") if isinstance(exp, dict) else None
    return paper if isinstance(paper, str) else None


def folder_kind(folder: str | os.PathLike) -> FolderKind | None:
    """The kind of ``folder``: from its marker, else from its files; None for a folder that
    theorylab did not write (or an absent one)."""
    root = Path(folder)
    if not root.is_dir():
        return None
    info = _json_object(root / MARKER)
    if info is not None and info.get("kind") in KINDS:
        paper = info.get("paper")
        return FolderKind(info["kind"], paper if isinstance(paper, str) else None)
    config = root / "config.toml"
    if config.is_file() and _first_line(config).startswith(RUN_CONFIG_HEADER):
        return FolderKind("run", config_paper(config), marked=False)
    if _json_with(root / "sweep.json", "fingerprint"):
        return FolderKind("sweep", marked=False)
    if _point_folder(root / "points") or _entry_folders(root):
        return FolderKind("cache", marked=False)
    if _json_with(root / "manifest.json", "figures"):
        return FolderKind("figures", marked=False)
    if (_first_line(root / "summary.md").startswith("# GPU suite")
            and (root / "suite.csv").is_file()):
        return FolderKind("suite", marked=False)
    try:
        subs = [p for p in root.iterdir() if p.is_dir()]
    except OSError:
        subs = []
    if any(_first_line(p / "summary.md").startswith("# Claim checks") for p in subs):
        return FolderKind("results", marked=False)
    return None


def _json_object(path: Path, max_bytes: int = 64 << 20) -> dict | None:
    """The JSON object in the file ``path`` (at most ``max_bytes``), or None: no such file,
    too large, unreadable, or not a JSON object."""
    try:
        if not path.is_file() or path.stat().st_size > max_bytes:
            return None
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return info if isinstance(info, dict) else None


def _json_with(path: Path, key: str) -> bool:
    """Whether ``path`` is a JSON object holding ``key`` (an older folder's own file)."""
    info = _json_object(path)
    return info is not None and key in info


def _point_folder(points: Path, pattern: re.Pattern = _POINT_FILE) -> bool:
    """Whether ``points`` is an older point cache's folder: a folder holding point files
    (named by their run id; ``pattern``) and nothing else but the temporaries of their
    writes."""
    try:
        with os.scandir(points) as entries:
            names = [e.name for e in entries]
    except OSError:
        return False
    files = [n for n in names if not (n.startswith(".") and n.endswith(".tmp"))]
    return bool(files) and all(pattern.match(n) for n in files)


def _entry_folders(root: Path) -> bool:
    """Whether ``root`` is an older cache of trained results: nothing but subfolders of
    cache entries (hex-named ``.npz`` files) and a point folder."""
    try:
        with os.scandir(root) as entries:
            subs = [e for e in entries if not e.name.startswith(".theorylab.")]
    except OSError:
        return False
    return bool(subs) and all(
        e.is_dir() and (_point_folder(Path(e.path)) if e.name == "points"
                        else _point_folder(Path(e.path), _CACHE_ENTRY)) for e in subs)


def is_empty_folder(folder: str | os.PathLike) -> bool:
    """Whether ``folder`` holds nothing (but, at most, theorylab's marker and lock,
    ``.theorylab.*``)."""
    try:
        with os.scandir(folder) as entries:
            return all(e.name.startswith(".theorylab.") for e in entries)
    except OSError:
        return False


def write_marker(folder: str | os.PathLike, kind: str, paper: str | None = None) -> None:
    """Write ``folder``'s marker (when it is absent or says something else)."""
    check_choice("kind", kind, KINDS)
    info = {"kind": kind, **({"paper": paper} if paper else {}), "written_by": "theorylab"}
    path = Path(folder) / MARKER
    text = json.dumps(info, sort_keys=True) + "\n"
    try:
        if path.read_text(encoding="utf-8") == text:
            return
    except (OSError, UnicodeDecodeError):
        pass
    try:
        atomic_io.atomic_write_text(path, text)
    except OSError as e:  # a full disk: the folder, not its marker, is the user's path
        raise OSError(e.errno, e.strerror, str(folder)) from None


def check_out_folder(out: str | Path, create: bool = False, field: str = "out") -> Path:
    """``out`` as a usable output folder, or ``ValueError("<field>: ...")`` naming what is
    wrong: an empty name, an existing file, a path below a file, or a folder that cannot be
    written. Nothing is created unless ``create`` (so a command refused later leaves no empty
    folder)."""
    if out is None or isinstance(out, str) and out.strip() == "":
        raise ValueError(f"{field}: must name a folder (got an empty path)")
    path = check_path(out, field)
    try:
        for parent in [path, *path.parents]:
            if parent.exists() and not parent.is_dir():
                what = "is a file" if parent == path else f"is below the file {parent}"
                raise ValueError(f"{field}: {path} {what}, not a folder")
        existing = next(p for p in [path, *path.parents, Path(".")] if p.exists())
    except OSError as e:  # a name too long, a loop of symbolic links, ...
        raise ValueError(f"{field}: cannot use the folder {path} ({e.strerror})") from None
    if not os.access(existing, os.W_OK | os.X_OK):
        where = "" if existing == path else f" (its parent {existing} is not writable)"
        raise ValueError(f"{field}: the folder {path} is not writable{where}")
    if create:
        make_folder(path, field)
    return path


def make_folder(path: Path, field: str = "out", shown: str | None = None) -> None:
    """Create the folder ``path`` with its parents: a full disk ends as the ``OSError`` it is
    (exit 1), any other failure as ``ValueError("<field>: cannot create the folder <shown>
    ...")`` (``shown``: how the message writes the path; default as it is)."""
    try:
        path.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        if e.errno in DISK_FULL:
            raise OSError(e.errno, e.strerror, str(path)) from None
        raise ValueError(f"{field}: cannot create the folder {shown or path} ({e.strerror})"
                         ) from None


def claim_folder(folder: str | os.PathLike, kind: str, *, paper: str | None = None,
                 field: str = "out", create: bool = True, force: bool = False
                 ) -> FolderKind | None:
    """Refuse ``folder`` (``ValueError("<field>: ...")``) when it is a committed folder other
    than the one of ``kind`` (``figures``, ``results``), a folder of another kind, another
    paper's run, or a folder that theorylab did not write and that is not empty (unless
    ``force``); else (with ``create``) create it and write its marker. Returns what the folder
    was before (None: new, or not a theorylab folder)."""
    from .provenance import COMMITTED, refuse_foreign_committed

    root = check_out_folder(folder, field=field)
    refuse_foreign_committed(root, kind if kind in COMMITTED else None,
                             what=f"theorylab ({FolderKind(kind).describe()})", field=field)
    found = folder_kind(root)
    if found is None and root.is_dir() and not force and not is_empty_folder(root):
        raise ValueError(f"{field}: {root} is a folder that theorylab did not write and that is "
                         "not empty; refusing to write into it (choose a new or empty folder, "
                         "or pass --force; nothing was written)")
    if found is not None:
        same = found.kind == kind or (found.kind, kind) in _COMPATIBLE
        if not same:
            raise ValueError(f"{field}: {root} is {found.describe()}, not "
                             f"{FolderKind(kind).describe()}; choose another folder (nothing "
                             "was written)")
        if kind == "run" and paper and found.paper and found.paper != paper:
            raise ValueError(f"{field}: {root} holds a {found.paper} run; a {paper} run "
                             "would replace it: choose another folder, or delete that run "
                             f"first (nothing was written)")
    if create:
        make_folder(root, field)
        keep = found.kind if found is not None and found.kind != kind else kind
        write_marker(root, keep, paper if keep == "run" else None)
    return found


#: The longest file name most file systems take (bytes).
_NAME_MAX = 255


def check_output_file(path: str | os.PathLike, suffix: str | tuple[str, ...], *, command: str,
                      ours: Callable[[Path], bool] | None = None, force: bool = False,
                      field: str = "out", committed: str | None = None,
                      create_parent: bool = False) -> Path:
    """``path`` as the single output file of `command` (``"theorylab plot"``), checked before
    anything is computed: a non-empty name ending in `suffix` (``".png"``, or one of a tuple)
    that a file system takes, not a folder, in an existing (with `create_parent`: creatable)
    writable folder, outside the committed folders (any spelling; `committed`: the kind of
    the one this run may write, e.g. ``"performance"``), not an own file of a theorylab folder
    ([`OWN_FILES`][], even with `force`); an existing file is replaced only when ``ours(path)``
    (the format's own mark), when its sidecar says `command` wrote it ([`marked_by`][]), or
    with `force`. Otherwise ``ValueError("<field>: ...")``."""
    from .provenance import refuse_foreign_committed

    suffixes = (suffix,) if isinstance(suffix, str) else tuple(suffix)
    if not isinstance(path, (str, os.PathLike)) or str(path).strip() == "":
        raise ValueError(f"{field}: must name a {suffixes[0]} file (got {str(path)!r})")
    p = check_path(path, field)
    if p.suffix.lower() not in suffixes:
        raise ValueError(f"{field}: must be a {' or '.join(suffixes)} file (got {str(p)!r})")
    if len(os.fsencode(p.name)) + len(f".{SIDECAR}.12345678.tmp") > _NAME_MAX:
        raise ValueError(f"{field}: the file name is too long ({len(os.fsencode(p.name))} "
                         f"bytes; at most {_NAME_MAX - len(f'.{SIDECAR}.12345678.tmp')}) "
                         f"(got {_short(p.name)})")
    try:
        if p.is_dir():
            raise ValueError(f"{field}: is a folder, not a {suffixes[0]} file (got {str(p)!r})")
        parent = p.parent
        missing = not parent.is_dir()
    except OSError as e:
        raise ValueError(f"{field}: cannot use {_short(str(p))} ({e.strerror})") from None
    if missing and not create_parent:
        raise ValueError(f"{field}: no such folder {str(p.parent)!r}")
    refuse_foreign_committed(p, committed, what=command, field=field)
    found = folder_kind(parent)
    if found is not None and (p.name in OWN_FILES.get(found.kind, ()) or p.name == MARKER):
        raise ValueError(f"{field}: {p} is the {p.name} of {found.describe()} in {parent}; "
                         "refusing to replace it, even with --force (choose another file; "
                         "nothing was written)")
    if missing:
        make_folder(parent, field, repr(str(parent)))
    _probe(parent, field)

    def owned(q: Path) -> bool:
        return (ours is not None and ours(q)) or marked_by(q, command)

    return check_new_file(p, ours=owned, force=force, field=field,
                          what=f"{suffixes[0]} file")


def _probe(folder: Path, field: str) -> None:
    """Refuse a folder that takes no new file, by making one (a permission test alone passes
    for root on a read-only mount)."""
    import tempfile

    why = None if os.access(folder, os.W_OK | os.X_OK) else "not writable"
    if why is None:
        try:
            with tempfile.NamedTemporaryFile(dir=folder, prefix=".theorylab-probe-",
                                             suffix=".tmp"):
                pass
        except OSError as e:
            why = e.strerror or str(e)
    if why is not None:
        raise ValueError(f"{field}: cannot write in the folder {str(folder)!r} ({why}; nothing "
                         "was written)")


def _short(text: str, n: int = 60) -> str:
    return repr(text if len(text) <= n else text[:n - 1] + "…")


def sidecar_path(path: str | os.PathLike) -> Path:
    """The sidecar of an output file: ``.<name>.theorylab.json`` beside it."""
    p = Path(path)
    return p.with_name(f".{p.name}{SIDECAR}")


def _digest(path: Path) -> str | None:
    h = hashlib.sha256()
    try:
        with open(path, "rb") as f:
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
    except OSError:
        return None
    return h.hexdigest()


def marked_by(path: str | os.PathLike, command: str) -> bool:
    """Whether the sidecar of ``path`` says that ``command`` wrote it and the file is still the
    one it wrote (its SHA-256): a file edited since, or renamed onto, is not ours."""
    p = Path(path)
    info = _json_object(sidecar_path(p), max_bytes=4096) or {}
    return (info.get("written_by") == command and isinstance(info.get("sha256"), str)
            and info["sha256"] == _digest(p))


def write_output(path: str | os.PathLike, data: bytes | str, *, command: str,
                 mark: bool = True) -> Path:
    """Write one checked output file ([`check_output_file`][]) atomically and, with ``mark``
    (a format without a mark of its own), its sidecar naming ``command`` and the SHA-256 of
    ``data``. An ``OSError`` (a full disk, a folder it may not write) names ``path``, never a
    temporary file."""
    p = Path(path)
    raw = data.encode() if isinstance(data, str) else bytes(data)
    try:
        if mark:  # the sidecar first: a failed write leaves a file that is not ours, never
            # a user's file that looks ours
            info = {"written_by": command, "sha256": hashlib.sha256(raw).hexdigest()}
            atomic_io.atomic_write_text(sidecar_path(p),
                                        json.dumps(info, sort_keys=True) + "\n")
        atomic_io.atomic_write_bytes(p, raw)
    except OSError as e:
        raise OSError(e.errno, e.strerror, str(p)) from None
    return p


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
