"""The run folder that every loop writes ([`train`][theorylab.core.trainer.train], [`flow`][
theorylab.core.flow.flow]): [`RunFolder`][], the start of a run in it ([`start_run`][]) and the
identity that ties a checkpoint to its run ([`run_identity`][]).

A run folder holds ``config.toml`` (the resolved configuration), ``provenance.json`` (commit,
version, host, libraries and start time, taken when the run starts), ``trajectory.csv`` (one
row per recorded step, appended as it is recorded: crash-safe at the row level, linear in the
number of rows), ``checkpoint.npz`` (the parameters at a recorded step, written at most every
[`CHECKPOINT_SECONDS`][] and at the end; resume recomputes the rows after it) and, once the run
is done, ``final_state.npz``; its marker ``.theorylab.json`` says it is a run folder and whose
paper's (from the configuration's ``[experiment] paper``), and ``.theorylab.lock`` is the
kernel lock (``flock``) that a run holds while it writes, so that a second run into the same
folder is refused instead of mixing its rows with the first one's. A run refuses a folder of
another kind (a sweep store, figures, results), another paper's run, a folder holding files
named like a run's that theorylab did not write, and the committed folders. A new run (no
resume) in an old run's folder of the same paper first removes the old run's files, so nothing
of it is left looking current; the lock holder removes the temporaries of its own killed
writes (never another file). A checkpoint carries the identity of its run (a hash of the
configuration without ``train.steps``) and the step of the last row recorded before it, and a
resume refuses a checkpoint that is another run's or that the rows do not reach. Faults end
with a ``ValueError`` naming what is wrong (``out: ...``, ``resume: ...``),
[`DivergenceError`][theorylab.core.trainer.DivergenceError] or [`Interrupted`][theorylab.core.
trainer.Interrupted] (the rows so far and a checkpoint are kept; resume continues).
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import json
import math
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from . import atomic_io, faults
from .config import loads_toml
from .engine import Engine
from .folders import check_out_folder, claim_folder, config_paper, folder_kind
from .locks import folder_lock

if TYPE_CHECKING:  # pandas is imported where a table is made (a run needs it, a config check not)
    import pandas as pd

__all__ = ["CHECKPOINT_SECONDS", "RunFolder", "check_out_folder", "empty_table", "run_folder",
           "run_identity", "same_config_except_steps", "start_run"]

#: A checkpoint is written at a recorded step when this many seconds have passed since the last
#: one (and always at the last step, before a divergence stop and on an interrupt). Writing one
#: at every recorded step made ``record = "all"`` runs spend most of their time in ``fsync``.
CHECKPOINT_SECONDS = 2.0

#: The files of a run folder; a new run removes those of an earlier run first.
RUN_FILES = ("config.toml", "trajectory.csv", "checkpoint.npz", "final_state.npz",
             "provenance.json")
#: The run folder's kernel lock, held while a run writes the folder.
LOCK_FILE = ".theorylab.lock"
#: Arrays of a checkpoint that are not the engine's parameters: the step, the run's identity
#: ([`run_identity`][]) and the step of the last row recorded before the checkpoint.
CHECKPOINT_META = ("step", "run_identity", "rows_to")


def run_identity(config_text: str) -> str:
    """The identity of a run: a SHA-256 of its configuration (TOML text) without
    ``train.steps`` (the one key a resume may change), in canonical form; a text that is not
    TOML counts as it is."""
    try:
        tables = loads_toml(config_text)
        train_t = tables.get("train")
        if isinstance(train_t, dict):
            train_t.pop("steps", None)
        canon = json.dumps(tables, sort_keys=True, default=str)
    except (TypeError, ValueError):
        canon = config_text
    return hashlib.sha256(canon.encode()).hexdigest()[:32]


def empty_table(schema: Mapping[str, str]) -> pd.DataFrame:
    """A table with no rows and the columns and dtypes of ``schema``."""
    import pandas as pd

    return pd.DataFrame({k: pd.Series(dtype=v) for k, v in schema.items()})


def _to_frame(rows: list[dict], schema: Mapping[str, str]) -> pd.DataFrame:
    import pandas as pd

    if not rows:
        return empty_table(schema)
    return pd.DataFrame(rows, columns=list(schema)).astype(dict(schema))


class RunFolder:
    """The run folder: ``config.toml``, ``trajectory.csv`` (rows appended as they are
    recorded), ``checkpoint.npz``, ``final_state.npz``; whole files are written atomically.
    ``paper``: the run's paper (a folder holding another paper's run is refused)."""

    def __init__(self, out: Path, schema: Mapping[str, str], paper: str | None = None) -> None:
        from .provenance import refuse_foreign_committed

        out = check_out_folder(out)
        refuse_foreign_committed(out, None, what="a run", field="out")
        for name in RUN_FILES:
            p = out / name
            if p.is_dir() or (p.exists() and not p.is_file()):
                raise ValueError(f"out: {p} is a folder (or not a plain file), where the run "
                                 f"writes its {name}; choose another --out, or move it away")
        found = folder_kind(out)
        if found is None:
            theirs = [n for n in RUN_FILES if (out / n).exists()]
            if theirs:
                raise ValueError(f"out: {out} holds {', '.join(theirs)}, not written by "
                                 f"theorylab run; refusing to overwrite (choose another --out)")
        claim_folder(out, "run", paper=paper)
        self.out, self.schema, self.paper = out, schema, paper

    @contextlib.contextmanager
    def locked(self):
        """Hold the folder's kernel lock for the block (``ValueError("out: ...")`` naming the
        run that holds it), removing the temporaries of this folder's killed writes."""
        with folder_lock(self.out / LOCK_FILE, what="run"):
            atomic_io.remove_stale_temporaries(self.out, RUN_FILES)
            yield

    def describe(self) -> str | None:
        """What the folder keeps now: ``"N rows to step S and a checkpoint at step C in OUT"``
        (for a fault's message)."""
        rows = self.read_rows_or_none() or []
        ckpt = self.out / "checkpoint.npz"
        at = ""
        if ckpt.is_file():
            try:
                with open(ckpt, "rb") as fh, np.load(fh, allow_pickle=False) as z:
                    at = f" and a checkpoint at step {int(z['step'])}"
            except Exception:  # a description, never a second fault
                at = ""
        last = f" to step {int(rows[-1]['step'])}" if rows else ""
        return f"{len(rows)} rows{last}{at} in {self.out}"

    @property
    def trajectory(self) -> Path:
        return self.out / "trajectory.csv"

    def clear(self, names: Iterable[str] = RUN_FILES) -> None:
        """Remove the files of an earlier run."""
        for name in names:
            (self.out / name).unlink(missing_ok=True)

    def write_config(self, text: str) -> None:
        atomic_io.atomic_write_text(self.out / "config.toml", text)

    def write_provenance(self, resumed_at: int | None = None) -> None:
        """``provenance.json``: how the run was made, taken when it starts
        ([`run_provenance`][theorylab.core.provenance.run_provenance]); a resume keeps the
        start's and adds its own, with the step it continues from, under ``resumed``."""
        from .provenance import run_provenance

        path = self.out / "provenance.json"
        now = run_provenance()
        record = now
        if resumed_at is not None and path.is_file():
            try:
                record = json.loads(path.read_text(encoding="utf-8"))
            except (OSError, ValueError):  # unreadable: this start is all that is known
                record = {**now, "note": "the start's record was unreadable at a resume"}
            if not isinstance(record, dict):
                record = dict(now)
            record.setdefault("resumed", []).append({**now, "from_step": int(resumed_at)})
        atomic_io.atomic_write_text(path, json.dumps(record, indent=1) + "\n")

    def write_rows(self, rows: list[dict]) -> None:
        """The whole trajectory, atomically (at the start, on resume and at the end)."""
        atomic_io.write_csv(self.trajectory, _to_frame(rows, self.schema))

    def append_row(self, row: dict) -> None:
        """One recorded row, appended and flushed (a killed process leaves whole rows, at
        worst a torn last line that resume drops)."""
        with open(self.trajectory, "a", newline="") as f:
            csv.writer(f, lineterminator="\n").writerow(
                _csv_field(row.get(k), dtype) for k, dtype in self.schema.items())
            f.flush()

    def checkpoint(self, step: int, arrays: Mapping[str, np.ndarray], *, identity: str = "",
                   rows_to: int = -1) -> None:
        """The parameters at ``step``, with the run's identity and the step of the last row
        recorded before them (-1: none)."""
        atomic_io.write_npz(self.out / "checkpoint.npz", step=np.array(step),
                            run_identity=np.array(identity), rows_to=np.array(rows_to),
                            **arrays)

    def final(self, arrays: Mapping[str, np.ndarray]) -> None:
        atomic_io.write_npz(self.out / "final_state.npz", **arrays)

    def read_rows(self) -> list[dict]:
        """The whole rows of ``trajectory.csv`` in order, up to the first torn or unreadable
        line (a killed append), which is dropped with everything after it."""
        import io

        import pandas as pd

        try:
            lines = self.trajectory.read_text(encoding="utf-8").splitlines(keepends=True)
        except UnicodeDecodeError as e:
            raise ValueError(f"resume: {self.trajectory} is not UTF-8 text ({e.reason} at offset "
                             f"{e.start}); run without --resume to start over") from None
        except OSError as e:
            raise ValueError(f"resume: cannot read {self.trajectory} ({e.strerror}); run "
                             "without --resume to start over") from None
        if not lines or lines[0].rstrip("\n").split(",") != list(self.schema):
            raise ValueError(f"resume: {self.trajectory} does not have the trajectory columns "
                             f"{list(self.schema)}; run without --resume to start over")
        body = lines[1:]
        if body and not body[-1].endswith("\n"):
            body = body[:-1]  # a torn last line: the append of a killed process
        try:  # the common case: every line whole, one parse
            frame = pd.read_csv(io.StringIO(lines[0] + "".join(body)))
            rows = frame.astype(dict(self.schema)).to_dict("records")
            if len(rows) == len(body) and _increasing(rows):
                return rows
        except (ValueError, TypeError, pd.errors.ParserError):
            pass
        rows = []  # line by line, up to the first line that does not parse
        for line in body:
            try:
                frame = pd.read_csv(io.StringIO(lines[0] + line))
                row = frame.astype(dict(self.schema)).to_dict("records")[0]
            except (ValueError, TypeError, IndexError, pd.errors.ParserError):
                break
            if len(frame) != 1 or not _increasing([*rows[-1:], row]):
                break
            rows.append(row)
        return rows

    def read_rows_or_none(self) -> list[dict] | None:
        """The rows of ``trajectory.csv``; None when there is no such file or it is unreadable."""
        if not self.trajectory.is_file():
            return None
        try:
            return self.read_rows()
        except ValueError:
            return None

    def load(self, engine: Engine, same_run: Callable[[Path], None], steps: int,
             schedule: Iterable[int] = ()):
        """(step, params, rows) of an earlier run in this folder, or None when there is none.

        ``same_run(config_path)`` raises ``ValueError`` when the saved configuration describes
        another run. A folder with trajectory rows but no checkpoint is refused too (resuming
        would start over and drop them). The checkpoint must be readable (without pickle),
        carry the run identity of the saved configuration ([`run_identity`][]), hold the
        engine's arrays with their shapes, be finite, at a step >= 0 and not beyond ``steps``,
        and the rows must reach the last row recorded before it (only the row of its own step
        may be missing, a torn last line: ``schedule`` says which steps are recorded);
        otherwise ``ValueError("resume: ...")`` says what is wrong."""
        ckpt = self.out / "checkpoint.npz"
        if not ckpt.exists():
            if self.read_rows_or_none():  # rows without their checkpoint: never start over here
                raise ValueError(f"resume: {self.out} has trajectory rows but no checkpoint.npz "
                                 "to continue from; run without --resume to start over")
            return None
        if not self.trajectory.exists():
            raise ValueError(f"resume: {self.out} has a checkpoint but no trajectory.csv; run "
                             "without --resume to start over")
        saved = self.out / "config.toml"
        if not saved.is_file():
            raise ValueError(f"resume: {saved} is missing (the configuration of the run to "
                             "continue); run without --resume to start over")
        try:
            same_run(saved)
        except ValueError as e:
            if str(e).startswith("resume: "):
                raise
            raise ValueError(f"resume: {saved} does not hold a valid configuration ({e}); run "
                             "without --resume to start over") from None
        expected = {k: np.shape(v) for k, v in
                    engine.params_to_arrays(engine.initial_params()).items()}
        try:
            with open(ckpt, "rb") as fh, np.load(fh, allow_pickle=False) as z:
                arrays = {k: np.array(z[k]) for k in z.files}
        except (OSError, ValueError, EOFError, zipfile.BadZipFile, KeyError) as e:
            from .safecache import load_error

            raise ValueError(f"resume: {ckpt} is not a readable checkpoint ({load_error(e)}); "
                             "delete it or run without --resume") from None
        step = arrays.pop("step", None)
        if step is None or np.shape(step) != () or not np.issubdtype(step.dtype, np.integer):
            raise ValueError(f"resume: {ckpt} has no integer step; delete it or run without "
                             "--resume")
        step = int(step)
        if step < 0:
            raise ValueError(f"resume: {ckpt} has a negative step (got {step}); delete it or run "
                             "without --resume")
        identity, rows_to = arrays.pop("run_identity", None), arrays.pop("rows_to", None)
        if (identity is None or identity.shape != () or identity.dtype.kind != "U"
                or rows_to is None or rows_to.shape != ()
                or not np.issubdtype(rows_to.dtype, np.integer)):
            raise ValueError(f"resume: {ckpt} carries no run identity (not written by this "
                             "version of theorylab run); run without --resume to start over")
        try:
            saved_identity = run_identity(saved.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError) as e:
            raise ValueError(f"resume: cannot read {saved} ({e}); run without --resume to "
                             "start over") from None
        if str(identity) != saved_identity:
            raise ValueError(f"resume: {ckpt} belongs to another run (its run identity "
                             f"{str(identity)[:12]} is not that of {saved}, {saved_identity[:12]}"
                             "); delete it or run without --resume")
        got = {k: np.shape(v) for k, v in arrays.items()}
        if got != expected:
            raise ValueError(f"resume: {ckpt} holds arrays {got}, this configuration needs "
                             f"{expected}; it belongs to another run")
        bad = [k for k, v in arrays.items() if not np.all(np.isfinite(v))]
        if bad:
            raise ValueError(f"resume: {ckpt} has non-finite values in {bad}")
        if step > steps:
            raise ValueError(f"resume: {self.out} is already at step {step}, beyond the "
                             f"requested {steps} steps; ask for at least {step} steps")
        rows = [r for r in self.read_rows() if r["step"] <= step]
        last = int(rows[-1]["step"]) if rows else -1
        # the row of the checkpoint's own step may be missing (a torn last line): the resume
        # records it again from the checkpoint's parameters; any earlier row cannot be redone
        redo = int(rows_to) == step and not any(last < s < step for s in schedule)
        if last != int(rows_to) and not redo:
            raise ValueError(f"resume: {ckpt} is at step {step} after rows to step "
                             f"{int(rows_to)}, but {self.trajectory} has rows to step {last} "
                             "before it: they are not one run's; delete the checkpoint or run "
                             "without --resume")
        params = engine.params_from_arrays(arrays)
        return step, params, rows


def same_config_except_steps(cfg, load_config: Callable[[Path], Any]) -> Callable[[Path], None]:
    """The usual resume check for [`train`][]'s ``same_run``: the config saved at ``path``
    (read with ``load_config``) must equal ``cfg`` except for ``train.steps``."""

    def check(path: Path) -> None:
        old, new = load_config(path).to_dict(), cfg.to_dict()
        old["train"].pop("steps", None), new["train"].pop("steps", None)
        if old != new:
            raise ValueError(f"resume: {path} differs from the requested configuration "
                             "(only train.steps may change on resume)")

    return check


@contextlib.contextmanager
def run_folder(out: str | Path | None, schema: Mapping[str, str], config_text: str
               ) -> Iterator[RunFolder | None]:
    """The [`RunFolder`][] a run writes (None when `out` is None), held locked for the run and
    described by the fault handler (what was kept, should the run be stopped)."""
    if out is None:
        yield None
        return
    folder = RunFolder(out, schema, config_paper(config_text))
    with folder.locked(), faults.keeping(folder.describe):
        yield folder


def start_run(engine: Engine, folder: RunFolder | None, *, steps: int, config_text: str,
              resume: bool, same_run: Callable[[Path], None] | None, params: Any,
              schedule: Iterable[int] = ()) -> tuple[int, Any, list[dict]]:
    """``(start step, params, rows so far)`` of a run in `folder` (None: no folder): from the
    folder's checkpoint when `resume` finds one ([`RunFolder.load`][]; `schedule` says which
    steps are recorded), else from `params` or the engine's start. The folder is made current:
    a fresh start removes an earlier run's files, a resumed run its final state (written again
    at the end); the config and the rows so far are written."""
    start, rows, loaded = 0, [], None
    if resume and folder is not None:
        loaded = folder.load(engine, same_run or (lambda path: None), steps, schedule)
        if loaded is not None:
            start, params, rows = loaded
    if params is None:
        params = engine.initial_params()
    if folder is not None:
        folder.clear(RUN_FILES if loaded is None else ("final_state.npz",))
        folder.write_config(config_text)
        folder.write_provenance(None if loaded is None else start)
        folder.write_rows(rows)
    return start, params, rows


def _csv_field(value, dtype: str) -> str:
    """One CSV field as ``DataFrame.to_csv(float_format="%.17g")`` writes it (empty = NaN);
    formatting a row by hand costs microseconds where a one-row DataFrame costs milliseconds."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if dtype == "float64":
        return "%.17g" % float(value)  # noqa: UP031  (the same format string as to_csv)
    if dtype == "bool":
        return "True" if bool(value) else "False"
    if dtype == "int64":
        return str(int(value))
    return str(value)


def _increasing(rows: list[dict]) -> bool:
    return all(a["step"] < b["step"] for a, b in zip(rows, rows[1:]))
