"""Building blocks of every paper's configuration: field validators, TOML in and out.

A paper's config is a frozen dataclass per TOML section whose ``__post_init__`` validates each
field with the checks below, so that every bad value raises a one-line ``ValueError`` that
starts with the field's name (``data.C: must divide D=10 (got C=3)``), never a traceback from
deep inside numpy. Every run-config file may carry ``[experiment] paper = "<name>"``, the paper
whose engines run it; [`paper_of`][] reads it (missing: the default paper).
"""

from __future__ import annotations

import math
import numbers
import os
import re
from collections.abc import Mapping
from dataclasses import fields, replace
from pathlib import Path
from typing import Any

import tomllib

__all__ = [
    "EXPERIMENT",
    "MAX_TOML_BYTES",
    "MAX_TOML_DEPTH",
    "MAX_TOML_TEXT",
    "check_bool",
    "check_choice",
    "check_fields",
    "check_float",
    "check_int",
    "check_keys",
    "check_path",
    "check_run_steps",
    "apply_sets",
    "frozen_set",
    "paper_of",
    "SectionedConfig",
    "replace_sections",
    "sections_from_tables",
    "sections_to_dict",
    "read_toml",
    "loads_toml",
    "toml_depth",
    "section_from_dict",
    "tables_to_toml",
    "toml_value",
]

#: The TOML section naming the paper a run config belongs to.
EXPERIMENT = "experiment"


# -- field validators ----------------------------------------------------------------------------
def _why(why: str | None) -> str:
    return f"{why}; " if why else ""


def check_int(
    name: str, value: Any, lo: int | None = None, hi: int | None = None, why: str | None = None
) -> int:
    """``value`` as an ``int`` in ``[lo, hi]`` (an integral float such as ``1e3`` is accepted);
    ``why`` is the reason of the bounds, printed before the offending value."""
    raw = value
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        else:
            raise ValueError(f"{name}: must be an integer (got {value!r})")
    return _within(name, int(value), lo, hi, False, why, raw if isinstance(raw, float) else None)


def check_float(
    name: str,
    value: Any,
    lo: float | None = None,
    hi: float | None = None,
    lo_open: bool = False,
    why: str | None = None,
) -> float:
    """``value`` as a finite ``float`` in ``[lo, hi]`` (``(lo, hi]`` with ``lo_open``); ``why``
    is the reason of the bounds, printed before the offending value."""
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise ValueError(f"{name}: must be a number (got {value!r})")
    try:
        value = float(value)
    except OverflowError:
        raise ValueError(f"{name}: must be finite (got an integer too large for a float)") from None
    if not math.isfinite(value):
        raise ValueError(f"{name}: must be finite (got {value})")
    return _within(name, value, lo, hi, lo_open, why)


def _within(name: str, value, lo, hi, lo_open: bool, why: str | None, shown: Any = None):
    """``value`` when it lies in ``[lo, hi]`` (``(lo, hi]`` with ``lo_open``), else the
    ``ValueError`` of the field ``name``, with ``why`` and the value as given (``shown``)."""
    shown = value if shown is None else shown
    if lo is not None and (value < lo or (lo_open and value == lo)):
        raise ValueError(f"{name}: must be {'>' if lo_open else '>='} {lo} ({_why(why)}got "
                         f"{shown})")
    if hi is not None and value > hi:
        raise ValueError(f"{name}: must be <= {hi} ({_why(why)}got {shown})")
    return value


def check_choice(name: str, value: Any, allowed: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in allowed:
        raise ValueError(f"{name}: must be one of {list(allowed)} (got {value!r})")
    return value


def check_bool(name: str, value: Any) -> bool:
    if not isinstance(value, bool):
        raise ValueError(f"{name}: must be true or false (got {value!r})")
    return value


def check_run_steps(steps: int) -> None:
    """Refuse a run of fewer than one step, ``ValueError`` naming ``train.steps``: a config may
    hold ``steps = 0`` as a setting for its engine alone (stepped by hand, or read at the
    start), but a run of it would record one row and no dynamics."""
    if steps < 1:
        raise ValueError(f"train.steps: a run takes at least 1 step (got {steps})")


#: ``train.backend``: the kernel's array backends, numpy (CPU) or torch (CPU, CUDA).
BACKENDS = ("numpy", "torch")
#: ``train.mode``: gradient descent, or the gradient flow of the same engine.
MODES = ("gd", "flow")


def check_placement(train, dtypes: tuple[str, ...]) -> None:
    """Where and in what precision a ``[train]`` section computes: ``backend`` (one of
    [`BACKENDS`][]), ``device`` (``cpu``, ``cuda`` or ``cuda:N``; numpy on ``cpu`` only) and
    ``dtype`` (one of `dtypes`); ``ValueError`` naming the field otherwise."""
    check_choice("train.backend", train.backend, BACKENDS)
    dev = train.device
    if not isinstance(dev, str) or not re.fullmatch(r"cpu|cuda(:[0-9]+)?", dev):
        raise ValueError(f"train.device: must be 'cpu', 'cuda' or 'cuda:N' (got {dev!r})")
    if train.backend == "numpy" and dev != "cpu":
        raise ValueError(f"train.device: backend 'numpy' runs on 'cpu' only (got {dev!r})")
    check_choice("train.dtype", train.dtype, dtypes)


def frozen_set(obj, name, value):
    object.__setattr__(obj, name, value)


def check_fields(obj, section: str, check, names: tuple[str, ...], *, optional: bool = False,
                 **bounds) -> None:
    """Validate each field ``names`` of the frozen section ``obj`` with ``check(
    "section.name", value, **bounds)`` and store what it returns (``optional``: a field that
    is None stays None)."""
    for name in names:
        if not optional or getattr(obj, name) is not None:
            frozen_set(obj, name, check(f"{section}.{name}", getattr(obj, name), **bounds))


# -- sections and files -----------------------------------------------------------------------
def check_keys(cls, section: str, table: Mapping[str, Any]) -> None:
    """Raise ``ValueError`` naming ``section.key`` for a key that is not a field of ``cls``."""
    names = {f.name for f in fields(cls)}
    for key in table:
        if key not in names:
            raise ValueError(f"{section}.{key}: unknown field (allowed: {sorted(names)})")


def section_from_dict(cls, section: str, table: Mapping[str, Any]):
    """``cls(**table)`` after checking that ``table`` is a table of known fields."""
    if not isinstance(table, Mapping):
        raise ValueError(f"{section}: must be a table (got {table!r})")
    check_keys(cls, section, table)
    return cls(**dict(table))


def sections_from_tables(tables: Mapping[str, Any], classes: Mapping[str, type], paper: str,
                         required: Mapping[str, str] | None = None) -> dict[str, Any]:
    """``{section: classes[section](**table)}`` from the tables of a run-config file of
    ``paper``: unknown sections, a config of another paper, a missing required section (with
    the hint ``required[name]``) and every bad field raise a one-line ``ValueError``."""
    if not isinstance(tables, Mapping):
        raise ValueError(f"config: must be a table (got {tables!r})")
    allowed = [*classes, EXPERIMENT]
    for key in tables:
        if key not in allowed:
            raise ValueError(f"{key}: unknown section (allowed: {', '.join(allowed)})")
    paper_of(tables, (paper,), paper)  # a config of another paper is refused here
    for name, hint in (required or {}).items():
        if name not in tables:
            raise ValueError(f"{name}: the section is required ({hint})")
    return {name: section_from_dict(cls, name, tables.get(name, {}))
            for name, cls in classes.items()}


def replace_sections(cfg, sections: Mapping[str, Mapping[str, Any]]):
    """A copy of the frozen config ``cfg`` (a dataclass whose fields are its sections) with
    the given fields of each section changed, e.g. ``{"train": {"steps": 10}}``."""
    names = [f.name for f in fields(cfg)]
    unknown = [k for k in sections if k not in names]
    if unknown:
        raise ValueError(f"{unknown[0]}: unknown section (allowed: {', '.join(names)})")
    new = {}
    for name in names:
        sec = getattr(cfg, name)
        changes = dict(sections.get(name, {}))
        check_keys(type(sec), name, changes)
        new[name] = replace(sec, **changes)
    return type(cfg)(**new)


def sections_to_dict(cfg) -> dict[str, dict[str, Any]]:
    """``{section: {field: value}}`` of a config, leaving out the fields that are None."""
    out = {}
    for f in fields(cfg):
        sec = getattr(cfg, f.name)
        out[f.name] = {g.name: getattr(sec, g.name) for g in fields(sec)
                       if getattr(sec, g.name) is not None}
    return out


class SectionedConfig:
    """Base of a paper's frozen run config, a dataclass whose fields are its sections (each a
    frozen dataclass of its own): tables given for a section become that section's class,
    ``replace`` copies with fields changed and ``to_dict`` gives the TOML tables back."""

    def _check_sections(self) -> None:
        """Call first in ``__post_init__``: a table becomes its section's class (validated
        there); anything else that is not of the section's class is refused by name."""
        for f in fields(self):
            cls, value = _section_class(self, f), getattr(self, f.name)
            if isinstance(value, Mapping):
                frozen_set(self, f.name, section_from_dict(cls, f.name, value))
            elif not isinstance(value, cls):
                raise ValueError(f"{f.name}: must be a {cls.__name__} or a table "
                                 f"(got {value!r})")

    def replace(self, **sections: Mapping[str, Any]):
        """Copy with some fields changed, e.g. ``cfg.replace(train={"steps": 10})``."""
        return replace_sections(self, sections)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """``{section: {field: value}}``, leaving out the fields that are None."""
        return sections_to_dict(self)


def _section_class(cfg, f) -> type:
    """The class of section field ``f`` of ``cfg``: its default's type (every section field
    has a default factory)."""
    return type(f.default_factory())


def read_toml(path: str | Path) -> dict[str, Any]:
    """The tables of a TOML file (UTF-8 text, a byte-order mark allowed); unreadable, non-UTF-8
    or invalid files raise ``ValueError`` naming it."""
    path = check_path(path, "config")
    try:
        raw = path.read_bytes()
    except OSError as e:
        raise ValueError(f"config: cannot read {path}: {e.strerror}") from None
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ValueError(
            f"config: {path} is not UTF-8 text ({e.reason}: byte 0x{raw[e.start]:02x} at "
            f"offset {e.start})"
        ) from None
    text = text.removeprefix("\ufeff")  # a byte-order mark (Windows editors) is not TOML
    return loads_toml(text, what=f"config: {path}")


def check_path(value: Any, field: str) -> Path:
    """``value`` as a ``Path``: a text or ``os.PathLike`` without a NUL character, else
    ``ValueError("<field>: ...")``."""
    if not isinstance(value, (str, os.PathLike)):
        raise ValueError(f"{field}: must be a path (got {type(value).__name__} {value!r:.60})")
    if "\0" in str(value):
        raise ValueError(f"{field}: a path cannot hold a NUL character (got {str(value)!r})")
    return Path(value)


#: The largest TOML text read (bytes): a run config or a sweep spec is a few kB.
MAX_TOML_BYTES = 1 << 20
#: The deepest nesting of arrays and inline tables read (a config nests two or three deep).
MAX_TOML_DEPTH = 32
#: The longest text value read (characters): a name, a choice or a path.
MAX_TOML_TEXT = 1024


def toml_depth(text: str) -> int:
    """The deepest nesting of ``[``/``{`` in a TOML text, outside strings and comments (a
    scan, no parse: it bounds the text before the recursive parser sees it)."""
    depth = deepest = i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c == "#":
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c in "\"'":
            triple = text.startswith(c * 3, i)
            end = c * 3 if triple else c
            i += len(end)
            while i < n:
                if c == '"' and text[i] == "\\":
                    i += 2
                    continue
                if text.startswith(end, i):
                    i += len(end)
                    if triple:  # a closing run of up to two more quotes belongs to the text
                        while i < n and text[i] == c:
                            i += 1
                    break
                if not triple and text[i] == "\n":
                    break
                i += 1
            continue
        elif c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth = max(depth - 1, 0)
        i += 1
    return deepest


def loads_toml(text: str, *, what: str = "config") -> dict[str, Any]:
    """The tables of a TOML text, bounded before it is parsed: at most [`MAX_TOML_BYTES`][],
    nested at most [`MAX_TOML_DEPTH`][] deep, no text value longer than [`MAX_TOML_TEXT`][];
    anything else (and invalid TOML) is ``ValueError("<what> ...")``; ``what`` names the
    file (``"config: run.toml"``)."""
    size = len(text.encode("utf-8", "surrogatepass"))
    if size > MAX_TOML_BYTES:
        raise ValueError(f"{what} is {size} bytes; a config or spec is at most "
                         f"{MAX_TOML_BYTES} bytes")
    depth = toml_depth(text)
    if depth > MAX_TOML_DEPTH:
        raise ValueError(f"{what} nests arrays or tables {depth} deep (at most "
                         f"{MAX_TOML_DEPTH})")
    try:
        tables = tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise ValueError(f"{what} is not valid TOML: {e}") from None
    except RecursionError:  # a nesting the scan did not see (it counts every bracket)
        raise ValueError(f"{what} nests too deep to read") from None
    long = _long_text(tables, "")
    if long is not None:
        key, value = long
        raise ValueError(f"{key}: a text of {len(value)} characters (at most {MAX_TOML_TEXT}; "
                         f"got {value[:40]!r}...)")
    return tables


def apply_sets(tables: Mapping[str, Any], items: list[str] | tuple[str, ...] | None,
               *, flag: str = "--set") -> dict[str, Any]:
    """``tables`` with each ``SECTION.KEY=VALUE`` of ``items`` set (the command line's
    ``--set``), a copy: VALUE is read as a TOML value (``0.05``, ``true``, ``[[0, 1], [2, 3]]``,
    ``"text"``), and a bare word that is not one (``population``) as text. Only a key of a
    section (one dot) can be set, never ``[experiment] paper``; whether the key exists and its
    value is allowed is the config's own validation, as for a file. A malformed item is
    ``ValueError("--set: ...")``."""
    import copy

    out = copy.deepcopy(dict(tables))
    for item in items or ():
        key, eq, text = item.partition("=")
        key = key.strip()
        section, dot, name = key.partition(".")
        if not eq or not dot or not section or not name or "." in name:
            raise ValueError(f"{flag}: {item!r} is not SECTION.KEY=VALUE (e.g. train.lr=0.05)")
        if section == EXPERIMENT:
            raise ValueError(f"{flag}: {key} is not a config key to set (the paper is the "
                             "config file's)")
        try:
            value = loads_toml(f"v = {text.strip()}", what=f"{flag} {key}")["v"]
        except ValueError:
            if not text.strip() or any(c in text for c in "[]{}\"\n="):
                raise ValueError(f"{flag}: {key}: {text!r} is not a TOML value") from None
            value = text.strip()  # a bare word: text
        if not isinstance(out.get(section, {}), dict):
            raise ValueError(f"{flag}: {section} is not a section of the config")
        out.setdefault(section, {})[name] = value
    return out


def _long_text(value: Any, key: str) -> tuple[str, str] | None:
    """The first text value longer than [`MAX_TOML_TEXT`][] and its dotted key, or None."""
    if isinstance(value, str):
        return (key or "value", value) if len(value) > MAX_TOML_TEXT else None
    if isinstance(value, dict):
        items = [(f"{key}.{k}" if key else str(k), v) for k, v in value.items()]
    elif isinstance(value, list):
        items = [(key, v) for v in value]
    else:
        return None
    for k, v in items:
        found = _long_text(v, k)
        if found is not None:
            return found
    return None


def train_overrides(cfg, options: Mapping[str, Any]):
    """``cfg`` with the command line's ``--device/--dtype/--backend/--steps`` (the keys of
    `options` that are not None) as ``[train]`` changes: the ``override`` of every paper's
    `Paper`. A CUDA device (``cuda``, ``cuda:N``) without ``--backend`` selects the torch
    backend (the only one that runs there)."""
    train = {k: v for k, v in options.items() if v is not None}
    if str(train.get("device", "cpu")).startswith("cuda") and "backend" not in train:
        train["backend"] = "torch"
    return cfg.replace(train=train) if train else cfg


def paper_of(tables: Mapping[str, Any], known: tuple[str, ...], default: str) -> str:
    """The paper named by ``[experiment] paper`` (``default`` when absent), one of ``known``."""
    exp = tables.get(EXPERIMENT, {}) if isinstance(tables, Mapping) else {}
    if not isinstance(exp, Mapping):
        raise ValueError(f"{EXPERIMENT}: must be a table (got {exp!r})")
    for key in exp:
        if key != "paper":
            raise ValueError(f"{EXPERIMENT}.{key}: unknown field (allowed: ['paper'])")
    name = exp.get("paper", default)
    if not isinstance(name, str) or name not in known:
        raise ValueError(f"{EXPERIMENT}.paper: unknown paper {name!r} (known: {list(known)})")
    return name


def toml_value(v: Any) -> str:
    """One TOML value (bool, int, float including nan/inf, str, list)."""
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else ("nan" if v != v else ("inf" if v > 0 else "-inf"))
    if isinstance(v, str):
        return '"' + v.replace("\\", "\\\\").replace('"', '\\"') + '"'
    if isinstance(v, (list, tuple)):
        return "[" + ", ".join(toml_value(x) for x in v) + "]"
    raise TypeError(f"cannot write {v!r} as TOML")  # pragma: no cover - configs hold only these


def tables_to_toml(tables: Mapping[str, Mapping[str, Any]], header: str = "") -> str:
    """TOML text of ``{section: {key: value}}`` with ``header`` as comment lines on top."""
    lines = [f"# {line}" for line in header.splitlines()] if header else []
    for name, table in tables.items():
        if lines:
            lines.append("")
        lines.append(f"[{name}]")
        lines.extend(f"{k} = {toml_value(v)}" for k, v in table.items())
    return "\n".join(lines) + "\n"
