"""Sweep specs: a base run config (either paper) plus axes, seeds, a mode and what to keep.

A spec file (TOML)::

    base = "examples/quickstart.toml"      # optional: a run config, relative to the spec file
    [base_config.data]                      # optional: inline sections (override the file's)
    C = 2
    [sweep]
    axes = {"data.q" = [0.1, 0.2], "data.d" = [50, 100]}
    seeds = [0, 1]                          # train.seed values (default: the base's seed)
    mode = "product"                        # or "zip" (all axes the same length)
    keep = "final"                          # "final" | "trajectory" | ["alpha", "loss", ...]
    point = "run"                           # or "batched" (seeds x the paper's batched axis)

Every point is the base config with one value of each axis; its resolved config is validated
by the paper when the spec is read, so a bad point is refused before anything runs. A sweep of
more than [`MAX_POINTS`][] points is refused before any point is made; one of more than
[`FULL_VALIDATION_POINTS`][] points is validated by parts: the base and each axis
value once, fully; each point's config is then the validated one with its axis values (and the
fields they determine) written in, and a combination of valid values that the paper refuses
becomes a failed point when it runs. Axis values must be distinct, and two points that resolve
to one run (one ``run_id``) are refused.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from theorylab.core.config import apply_sets, check_choice, check_run_steps, paper_of, read_toml
from theorylab.core.registry import default_paper, get_paper, papers

__all__ = ["FULL_VALIDATION_POINTS", "KEEP_MODES", "MAX_POINTS", "MODES", "POINT_TYPES",
           "RESULT_SCHEMA_VERSION", "Point", "SweepSpec", "get_paper", "load_spec",
           "spec_from_dict"]

#: Bumped whenever the stored result of a point changes meaning or columns; it is part of every
#: ``run_id``, so results of an older schema are never taken for cache hits.
RESULT_SCHEMA_VERSION = 2  # 2: a run's phase readings (Paper.phase_readings) as columns
MODES = ("product", "zip")
KEEP_MODES = ("final", "trajectory")
POINT_TYPES = ("run", "batched")
#: Up to this many points, every point's config is resolved and validated by the paper (about
#: 1 ms each); beyond it, the base and each axis value are, and the points are assembled from
#: them (module docstring).
FULL_VALIDATION_POINTS = 2000
#: The most points a spec may have (its grid's size is checked before any point is made, in a
#: dry run too): 10^5 points are ~100 MB of configs and as many point files in one folder.
MAX_POINTS = 100_000


def batched_axis(paper_name: str) -> str:
    """The config field a "batched" point of ``paper_name`` batches with the seeds
    (``ValueError`` when the paper has no batched run)."""
    paper = get_paper(paper_name)
    if paper.batched is None:
        with_one = [n for n, p in papers().items() if p.batched is not None]
        raise ValueError(f"sweep.point: paper {paper_name!r} has no batched run (papers with "
                         f"one: {', '.join(with_one) or 'none'})")
    return paper.batched.axis


def _canon(obj: Any) -> Any:
    """JSON-able form with floats written exactly (repr) so that hashes are stable."""
    if isinstance(obj, Mapping):
        return {str(k): _canon(v) for k, v in sorted(obj.items(), key=lambda kv: str(kv[0]))}
    if isinstance(obj, (list, tuple)):
        return [_canon(v) for v in obj]
    if isinstance(obj, bool) or obj is None or isinstance(obj, (int, str)):
        return obj
    if isinstance(obj, float):
        return {"float": repr(obj)} if not math.isfinite(obj) else obj
    if hasattr(obj, "item"):  # numpy scalar
        return _canon(obj.item())
    return repr(obj)


def _digest(canon_payload: Mapping[str, Any]) -> str:
    text = json.dumps({"schema": RESULT_SCHEMA_VERSION, **canon_payload}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()


def run_id_of(payload: Mapping[str, Any]) -> str:
    """Deterministic id: sha256 of the canonical JSON of ``payload`` and the schema version
    (its first 20 hex digits; all 64 are the point's ``config_hash``)."""
    return _digest(_canon(payload))[:20]


@dataclass(frozen=True)
class Point:
    """One unit of work: ``kind`` ("run", "batched" or "call"), its ``payload`` (a resolved
    config and what to keep, or a function and its keyword arguments), the axis values that
    label it in the table (``labels``), and its ``run_id``."""

    kind: str
    payload: dict
    labels: dict = field(default_factory=dict)
    run_id: str = ""
    #: sha256 of the point's canonical payload (what it computes); stored in its point file.
    config_hash: str = ""

    @staticmethod
    def make(kind: str, payload: Mapping[str, Any], labels: Mapping[str, Any] | None = None):
        payload = dict(payload)
        digest = _digest(_canon({"kind": kind, **payload}))
        return Point(kind, payload, dict(labels or {}), digest[:20], digest)


def call_point(function: str, labels: Mapping[str, Any] | None = None, **kwargs) -> Point:
    """A point that calls ``function`` ("package.module:name", importable on the workers) with
    ``kwargs`` (JSON-able values); the function returns a pandas table."""
    if not isinstance(function, str) or ":" not in function:
        raise ValueError(f"function: must be 'package.module:name' (got {function!r})")
    return Point.make("call", {"function": function, "kwargs": dict(kwargs)},
                      labels if labels is not None else kwargs)


def set_dotted(tables: dict, key: str, value: Any) -> None:
    section, name = key.split(".", 1)
    tables.setdefault(section, {})[name] = value


def resolved_tables(paper, tables: Mapping[str, Any]) -> dict:
    """The paper's resolved config of ``tables`` as plain tables (every field written out)."""
    return _resolved_dict(paper, paper.config_from_tables(tables))


def _resolved_dict(paper, cfg) -> dict:
    """The tables of the config ``cfg`` of ``paper``, resolved (a paper's config may resolve
    its defaults: ``resolved()``), under ``[experiment] paper``."""
    cfg = cfg.resolved() if hasattr(cfg, "resolved") else cfg
    return {"experiment": {"paper": paper.name}, **cfg.to_dict()}


def run_point(paper, tables: Mapping[str, Any], keep, labels: Mapping[str, Any]) -> Point:
    """A "run" point: ``tables`` resolved by ``paper`` (a `Paper` or its name; ``ValueError``
    naming the field)."""
    if isinstance(paper, str):
        paper = get_paper(paper)
    config = resolved_tables(paper, tables)
    check_run_steps(config.get("train", {}).get("steps", 1))
    return Point.make("run", {"paper": paper.name, "config": config, "keep": keep}, labels)


@dataclass(frozen=True)
class SweepSpec:
    """A parsed, validated sweep spec (see the module docstring)."""

    paper: str
    base: dict
    axes: dict
    seeds: tuple | None
    mode: str
    keep: Any
    point: str
    source: str = ""

    def _grid_axes(self) -> list[str]:
        """The axes whose values make points of their own (a batched point takes the paper's
        batched axis whole)."""
        skip = batched_axis(self.paper) if self.point == "batched" else None
        return [n for n in self.axes if n != skip]

    def axis_names(self) -> list[str]:
        seeds = self.seeds is not None and self.point == "run"
        return self._grid_axes() + (["train.seed"] if seeds else [])

    def combos(self) -> list[dict]:
        """One ``{axis: value}`` per point (before batching)."""
        combos = _grid(self.axes, self.mode)
        if self.seeds is not None and self.point == "run":
            combos = [{**c, "train.seed": s} for c in combos for s in self.seeds]
        return combos

    def n_points(self) -> int:
        """How many points the spec has (without expanding them)."""
        lens = [len(self.axes[n]) for n in self._grid_axes()]
        n = (math.prod(lens) if self.mode == "product" else min(lens, default=1))
        if self.seeds is not None and self.point == "run":
            n *= len(self.seeds)
        return n

    def points(self) -> list[Point]:
        """The points of the sweep, in spec order (validated by the paper; computed once)."""
        cached = _POINTS.get(id(self))
        if cached is not None and cached[0] is self:
            return cached[1]
        paper = get_paper(self.paper)
        if self.point == "batched":
            out = _batched_points(self, paper)
        elif self.mode == "product" and self.n_points() > FULL_VALIDATION_POINTS:
            out = _assembled_points(self, paper)
        else:
            out = [_one_point(self, paper, combo) for combo in self.combos()]
        _refuse_duplicates(out)
        _POINTS.clear()  # keep one spec's points: a sweep of 10^5 points is ~100 MB
        _POINTS[id(self)] = (self, out)
        return out

    def fingerprint(self) -> str:
        """Hash of what the store's results depend on: the points' run ids in order."""
        return run_id_of({"points": [p.run_id for p in self.points()]})

    def base_hash(self) -> str:
        """Hash of everything but the axes: paper, base config, seeds aside, keep and point
        type. A store may be extended by a spec with the same base hash and more points."""
        return run_id_of({"paper": self.paper, "base": self.base, "keep": self.keep,
                          "point": self.point})


#: The last expanded spec and its points (a spec is immutable; ``points()`` is called by the
#: dry run, the fingerprint and the runner).
_POINTS: dict[int, tuple[SweepSpec, list[Point]]] = {}


def _grid(axes: Mapping[str, Sequence], mode: str) -> list[dict]:
    """One ``{axis: value}`` per combination of the values of ``axes``: every combination
    (mode "product") or the i-th values of all axes together ("zip")."""
    rows = itertools.product(*axes.values()) if mode == "product" else zip(*axes.values())
    return [dict(zip(axes, r)) for r in rows]


def _where(combo: Mapping[str, Any]) -> str:
    return ", ".join(f"{k} = {v!r}" for k, v in combo.items())


def _point_tables(base: Mapping[str, Any], combo: Mapping[str, Any]) -> dict:
    """A copy of the base tables with each ``section.field`` of ``combo`` set to its value."""
    tables = copy.deepcopy(dict(base))
    for k, v in combo.items():
        set_dotted(tables, k, v)
    return tables


def _one_point(spec: SweepSpec, paper, combo: Mapping[str, Any]) -> Point:
    try:
        return run_point(paper, _point_tables(spec.base, combo), spec.keep, combo)
    except ValueError as e:
        raise ValueError(
            f"sweep.axes: the point {_where(combo)} is not a valid config: {e}") from None


def _refuse_duplicates(points: Sequence[Point]) -> None:
    seen: dict[str, Point] = {}
    for p in points:
        if p.run_id in seen:
            raise ValueError(
                f"sweep.axes: the points {_where(seen[p.run_id].labels)} and "
                f"{_where(p.labels)} are one run (run id {p.run_id}); remove one of them")
        seen[p.run_id] = p


def _assembled_points(spec: SweepSpec, paper) -> list[Point]:
    """The points of a large "run" sweep of mode "product", assembled from one fully validated
    point per axis value (the first combination with that value): each point is the first
    point's resolved config with, for every axis, the fields its value changed. Exact when the
    fields an axis changes are changed by that axis only; otherwise (two axes determining one
    field) every point is validated in full."""
    axes = [*spec.axes.items(), *([("train.seed", list(spec.seeds))] if spec.seeds else [])]
    first = {a: values[0] for a, values in axes}
    p0 = _one_point(spec, paper, first)
    r0 = p0.payload["config"]
    flat0 = {(s, f): v for s, t in r0.items() for f, v in t.items()}
    deltas: list[list[dict]] = []
    owner: dict[tuple[str, str], str] = {}
    for axis, values in axes:
        deltas.append([])
        for v in values:
            r = _one_point(spec, paper, {**first, axis: v}).payload["config"]
            changed = {(s, f): x for s, t in r.items() for f, x in t.items()
                       if (s, f) not in flat0 or flat0[(s, f)] != x}
            for key in changed:
                if owner.setdefault(key, axis) != axis:  # two axes set one field
                    return [_one_point(spec, paper, c) for c in spec.combos()]
            deltas[-1].append({k: (x, _canon(x)) for k, x in changed.items()})
    # the canonical JSON of every point is the first point's with the owned fields' values
    # spliced in: one template, split at those fields
    slots = {key: f"@@theorylab-slot-{i}@@" for i, key in enumerate(owner)}
    canon0 = _canon({"kind": "run", **p0.payload})
    for (s, f), slot in slots.items():
        canon0["config"][s][f] = slot
    text = json.dumps({"schema": RESULT_SCHEMA_VERSION, **canon0}, sort_keys=True)
    pieces, order = [], []
    while slots:
        at, key = min((text.index(f'"{slot}"'), key) for key, slot in slots.items())
        pieces.append(text[:at])
        text = text[at + len(slots.pop(key)) + 2:]
        order.append(key)
    pieces.append(text)
    values0 = {key: json.dumps(_canon(flat0[key]), sort_keys=True) for key in order}
    where = {key: a for a, (axis, _) in enumerate(axes) for key in owner if owner[key] == axis}
    jsons = [[{k: json.dumps(cx, sort_keys=True) for k, (_, cx) in d.items()} for d in dl]
             for dl in deltas]
    names = [a for a, _ in axes]
    out = []
    for idx in itertools.product(*(range(len(v)) for _, v in axes)):
        cfg = {s: dict(t) for s, t in r0.items()}
        for a, i in enumerate(idx):
            for (s, f), (x, _) in deltas[a][i].items():
                cfg[s][f] = x
        parts = [pieces[0]]
        for n, key in enumerate(order):
            parts.append(jsons[where[key]][idx[where[key]]].get(key, values0[key]))
            parts.append(pieces[n + 1])
        digest = hashlib.sha256("".join(parts).encode()).hexdigest()
        combo = {n: axes[a][1][i] for a, (n, i) in enumerate(zip(names, idx))}
        out.append(Point("run", {"paper": paper.name, "config": cfg, "keep": spec.keep}, combo,
                         digest[:20], digest))
    return out


def _batched_points(spec: SweepSpec, paper) -> list[Point]:
    """One point per combination of the other axes; each batches the seeds and every value of
    the paper's batched axis ([`BatchedRun`][theorylab.core.paper.BatchedRun])."""
    axis = batched_axis(spec.paper)
    hook = paper.batched
    others = {k: v for k, v in spec.axes.items() if k != axis}
    if spec.mode == "zip" and axis in spec.axes and others:
        raise ValueError(f"sweep.mode: 'zip' cannot batch {axis} with other axes; use "
                         "'product'")
    section, name = axis.split(".", 1)
    out = []
    for combo in _grid(others, spec.mode):
        tables = _point_tables(spec.base, combo)
        try:
            cfg = resolved_tables(paper, tables)
        except ValueError as e:
            raise ValueError(f"sweep.axes: the point {combo} is not a valid config: {e}") from None
        if hook.prepare is not None:
            cfg = hook.prepare(tables, cfg)
        seeds = list(spec.seeds) if spec.seeds is not None else [cfg["train"]["seed"]]
        values = list(spec.axes.get(axis, [cfg[section][name]]))
        out.append(Point.make("batched", {"paper": spec.paper, "function": hook.function,
                                          "config": cfg, "seeds": seeds, name: values,
                                          "keep": spec.keep}, combo))
    return out


def _check_list(name: str, values) -> list:
    if isinstance(values, (str, bytes)) or not isinstance(values, Sequence):
        raise ValueError(f"{name}: must be a list of values (got {values!r})")
    if len(values) == 0:
        raise ValueError(f"{name}: must not be empty (got [])")
    return list(values)


def spec_from_dict(d: Mapping[str, Any], root: str | Path = ".", source: str = "",
                   sets: Sequence[str] | None = None) -> SweepSpec:
    """A validated [`SweepSpec`][] from the tables of a spec file (``root``: the folder that
    a relative ``base`` path is read from; ``sets``: ``SECTION.KEY=VALUE`` items set in the
    base config, [`apply_sets`][theorylab.core.config.apply_sets]). Bad input: ``ValueError``
    naming the field."""
    if not isinstance(d, Mapping):
        raise ValueError(f"spec: must be a table (got {d!r})")
    unknown = [k for k in d if k not in ("base", "base_config", "sweep")]
    if unknown:
        raise ValueError(f"{unknown[0]}: unknown key of a sweep spec (allowed: base, "
                         f"base_config, sweep)")
    base: dict = {}
    if "base" in d:
        if not isinstance(d["base"], str):
            raise ValueError(f"base: must be the path of a run config (got {d['base']!r})")
        path = Path(root) / d["base"]
        if not path.is_file():
            raise ValueError(f"base: no such file {path}")
        base = read_toml(path)
    inline = d.get("base_config", {})
    if not isinstance(inline, Mapping):
        raise ValueError(f"base_config: must be a table of config sections (got {inline!r})")
    for section, table in inline.items():
        if not isinstance(table, Mapping):
            raise ValueError(f"base_config.{section}: must be a table (got {table!r})")
        base.setdefault(section, {}).update(table)
    base = apply_sets(base, sets)
    paper = paper_of(base, tuple(papers()), default_paper())
    sweep = d.get("sweep")
    if not isinstance(sweep, Mapping):
        raise ValueError("sweep: the [sweep] table is required (axes, seeds, mode, keep)")
    allowed = ("axes", "seeds", "mode", "keep", "point")
    for k in sweep:
        if k not in allowed:
            raise ValueError(f"sweep.{k}: unknown field (allowed: {list(allowed)})")
    axes_in = sweep.get("axes", {})
    if not isinstance(axes_in, Mapping):
        raise ValueError(f"sweep.axes: must be a table {{\"section.field\" = [...]}} "
                         f"(got {axes_in!r})")
    known = _known_fields(get_paper(paper), base, axes_in)
    axes = {}
    for key, values in axes_in.items():
        if key.count(".") != 1 or key.startswith("experiment."):
            raise ValueError(f"sweep.axes: {key!r} must be 'section.field', e.g. 'data.q'")
        section, name = key.split(".")
        if section not in known or name not in known[section]:
            fields_ = sorted(f"{s}.{f}" for s, t in known.items() if s != "experiment"
                             for f in t)
            raise ValueError(f"sweep.axes: unknown field {key!r} of {paper} (known: "
                             f"{', '.join(fields_)})")
        axes[key] = _check_list(f"sweep.axes.{key}", values)
        keys = [json.dumps(_canon(v), sort_keys=True) for v in axes[key]]
        if sweep.get("mode", "product") == "product" and len(set(keys)) != len(keys):
            dup = next(v for i, v in enumerate(axes[key]) if keys.index(keys[i]) != i)
            raise ValueError(f"sweep.axes.{key}: values must be distinct (got {dup!r} twice)")
    mode = check_choice("sweep.mode", sweep.get("mode", "product"), MODES)
    if mode == "zip" and len({len(v) for v in axes.values()}) > 1:
        lens = {k: len(v) for k, v in axes.items()}
        raise ValueError(f"sweep.mode: 'zip' needs axes of one length (got {lens})")
    seeds = sweep.get("seeds")
    if seeds is not None:
        seeds = _check_list("sweep.seeds", seeds)
        for s in seeds:
            if isinstance(s, bool) or not isinstance(s, int) or s < 0:
                raise ValueError(f"sweep.seeds: must be integers >= 0 (got {s!r})")
        if len(set(seeds)) != len(seeds):
            raise ValueError(f"sweep.seeds: must be distinct (got {seeds})")
        if "train.seed" in axes:
            raise ValueError("sweep.seeds: give the seeds either here or as the axis "
                             "train.seed, not both")
        seeds = tuple(seeds)
    keep = sweep.get("keep", "final")
    if isinstance(keep, str):
        if keep not in KEEP_MODES:
            raise ValueError(f"sweep.keep: must be one of {list(KEEP_MODES)} or a list of "
                             f"columns (got {keep!r})")
    else:
        keep = _check_list("sweep.keep", keep)
        bad = [c for c in keep if not isinstance(c, str) or not c]
        if bad:
            raise ValueError(f"sweep.keep: columns must be names (got {bad[0]!r})")
        schema = get_paper(paper).trajectory_schema
        unknown = [c for c in keep if schema is not None and c not in schema]
        if unknown:
            raise ValueError(f"sweep.keep: unknown column {unknown[0]!r} of {paper}'s "
                             f"trajectory (known: {', '.join(schema)})")
    point = check_choice("sweep.point", sweep.get("point", "run"), POINT_TYPES)
    spec = SweepSpec(paper, base, axes, seeds, mode, keep, point, source)
    n = spec.n_points()  # the grid's size, from its axes' lengths: nothing expanded yet
    if n > MAX_POINTS:
        sizes = " × ".join(f"{len(v)} {k}" for k, v in axes.items())
        sizes += f" × {len(seeds)} seeds" if seeds is not None and point == "run" else ""
        raise ValueError(f"sweep.axes: {n} points ({sizes}; mode {mode!r}), more than "
                         f"{MAX_POINTS}; split the sweep into specs of fewer points")
    if n <= FULL_VALIDATION_POINTS:
        spec.points()  # every point validated now (a larger sweep: when it is expanded)
    return spec


def _known_fields(paper, base: dict, axes_in: Mapping[str, Any]) -> dict:
    """The fields an axis may name: the paper's resolved tables of the base (with each axis's
    first value applied when the base alone is not a complete config) and every documented
    field of its config sections (a field the resolved form leaves out, such as an input that
    determines others); ``ValueError("base: ...")`` when neither is a valid config."""
    import dataclasses

    firsts = {k: v[0] for k, v in axes_in.items()
              if (isinstance(k, str) and k.count(".") == 1 and isinstance(v, Sequence)
                  and not isinstance(v, str) and len(v))}
    errors = []
    for tables in (base, _point_tables(base, firsts)):
        try:
            cfg = paper.config_from_tables(tables)
            known = _resolved_dict(paper, cfg)
        except ValueError as e:
            errors.append(e)
            continue
        for f in dataclasses.fields(cfg):
            for g in dataclasses.fields(getattr(cfg, f.name)):
                known.setdefault(f.name, {}).setdefault(g.name, None)
        return known
    raise ValueError(f"base: not a valid {paper.name} config: {errors[0]}") from None


def load_spec(path: str | Path, sets: Sequence[str] | None = None) -> SweepSpec:
    """Read and validate a spec file (``ValueError`` naming the field), with ``sets`` set in
    its base config."""
    path = Path(path)
    if not path.is_file():
        raise ValueError(f"spec: no such file {path}")
    return spec_from_dict(read_toml(path), root=path.parent, source=str(path), sets=sets)
