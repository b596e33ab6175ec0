"""A live log of a run's recorded rows in TensorBoard's event format (``--tensorboard DIR``).

Within a [`live_log`][] block, every run of the kernel's loops ([`train`][theorylab.core.
trainer.train] and [`flow`][theorylab.core.flow.flow]) writes each row it records, at the same
steps and with the same values as its ``trajectory.csv``, as scalars of an event file in the
block's folder, so that ``tensorboard --logdir DIR`` follows the run while it runs. Each
number column of the row (the trajectory's schema: ``float64``, ``int64``, ``bool`` as 0/1) is
one tag named like the column, at the row's ``step``; a text column (``engine``) and an
undefined value (NaN, an empty CSV field) are left out. The values are stored as float64
tensors (TensorBoard's scalar summaries with double precision), so a value read back equals
the trajectory's exactly.

The folder goes through the output gate ([`theorylab.core.folders`][]): it is checked when the
block opens (new, empty, a live-log folder theorylab wrote, or another folder with
``force``; never a folder of another kind nor a committed one) and created, with its marker
(kind ``tensorboard``), when a run starts. A new run (or a resumed one) in a live-log folder
that theorylab wrote first removes the event files there and logs the rows it starts from,
so the folder always mirrors the run's trajectory; in a folder that theorylab did not write
(``force``) no file is removed. Writing needs the ``tensorboard`` package (the optional extra
``theorylab[tensorboard]``), imported only when a live log is asked for; without it the block
refuses to open (``ValueError("tensorboard: ...")``).
"""

from __future__ import annotations

import contextlib
import contextvars
import math
import numbers
import os
from collections.abc import Iterable, Iterator, Mapping
from pathlib import Path

import numpy as np

from .folders import claim_folder

__all__ = ["EVENT_FILE_PREFIX", "FLUSH_SECONDS", "KIND", "LiveLog", "check_apart", "check_folder",
           "for_run", "live_log", "writer_class"]

#: The kind of a live-log folder (its marker).
KIND = "tensorboard"
#: How event files start (TensorBoard's naming): the files a new run in our folder removes.
EVENT_FILE_PREFIX = "events.out.tfevents."
#: The longest time a recorded row waits in memory before it reaches the event file.
FLUSH_SECONDS = 2.0
#: The schema's column types that are logged (as float64).
_NUMBER_TYPES = ("float64", "int64", "bool")

#: The folder (and ``force``) of the enclosing [`live_log`][] block.
_ASKED: contextvars.ContextVar[tuple[Path, bool] | None] = contextvars.ContextVar(
    "theorylab_live_log", default=None)


def writer_class():
    """TensorBoard's ``SummaryWriter`` (through ``torch.utils.tensorboard``), or
    ``ValueError("tensorboard: ...")`` naming the extra to install."""
    try:
        from torch.utils.tensorboard import SummaryWriter
    except ImportError:
        raise ValueError("tensorboard: the live log needs the tensorboard package, which is not "
                         "installed; pip install 'theorylab[tensorboard]' (or pip install "
                         "tensorboard)") from None
    return SummaryWriter


def check_folder(folder: str | os.PathLike, *, force: bool = False,
                 field: str = "tensorboard") -> Path:
    """``folder`` as a live-log folder, checked by the output gate without writing anything:
    ``ValueError("<field>: ...")`` for a file, a folder of another kind, a committed folder, or
    a folder theorylab did not write that is not empty (unless ``force``)."""
    claim_folder(folder, KIND, field=field, create=False, force=force)
    return Path(folder)


def check_apart(folder: str | os.PathLike | None, out: str | os.PathLike | None,
                what: str) -> None:
    """Refuse a live-log `folder` that is the output folder `out` itself (``what``: ``"the
    run folder"``, ``"the store"``): ``ValueError("tensorboard: ...")``. A subfolder of it is
    fine (a log beside ``trajectory.csv``)."""
    if folder is None or out is None:
        return
    if Path(os.path.abspath(folder)) == Path(os.path.abspath(out)):
        raise ValueError(f"tensorboard: {folder} is {what} (--out); the live log needs its own "
                         f"folder, e.g. {Path(out) / 'tensorboard'}")


@contextlib.contextmanager
def live_log(folder: str | os.PathLike | None, *, force: bool = False) -> Iterator[None]:
    """Within the block, each run of the kernel's loops logs its recorded rows to ``folder``
    (None: no live log; the block does nothing). The tensorboard package and the folder are
    checked when the block opens ([`writer_class`][], [`check_folder`][]); the folder is created
    when a run starts."""
    if folder is None:
        yield
        return
    writer_class()
    path = check_folder(folder, force=force)
    token = _ASKED.set((path, force))
    try:
        yield
    finally:
        _ASKED.reset(token)


class LiveLog:
    """The event file of one run in ``folder`` (claimed and created here; the event files of
    an earlier run in a live-log folder theorylab wrote are removed first). ``schema``: the
    trajectory's columns and types; ``add`` logs a row."""

    def __init__(self, folder: Path, schema: Mapping[str, str], *, force: bool = False) -> None:
        writer = writer_class()
        found = claim_folder(folder, KIND, field="tensorboard", force=force)
        if found is not None and found.kind == KIND:
            for old in folder.iterdir():
                if old.name.startswith(EVENT_FILE_PREFIX) and old.is_file():
                    old.unlink(missing_ok=True)
        self.columns = [k for k, t in schema.items() if k != "step" and t in _NUMBER_TYPES]
        self.folder = folder
        self._writer = writer(log_dir=str(folder), flush_secs=FLUSH_SECONDS)

    def add(self, row: Mapping[str, object]) -> None:
        """Log the number columns of one recorded row at its step (undefined values left
        out)."""
        step = int(row["step"])
        for name in self.columns:
            value = row.get(name)
            if isinstance(value, (numbers.Real, np.bool_)):  # float, int, bool, numpy's too
                x = float(value)
                if math.isfinite(x):
                    self._writer.add_scalar(name, x, step, new_style=True,
                                            double_precision=True)

    def add_rows(self, rows: Iterable[Mapping[str, object]]) -> None:
        for row in rows:
            self.add(row)

    def close(self) -> None:
        self._writer.close()


@contextlib.contextmanager
def for_run(schema: Mapping[str, str]) -> Iterator[LiveLog | None]:
    """The [`LiveLog`][] of a run that starts now (None outside a [`live_log`][] block), closed
    (its rows written to disk) when the block ends."""
    asked = _ASKED.get()
    if asked is None:
        yield None
        return
    log = LiveLog(asked[0], schema, force=asked[1])
    try:
        yield log
    except BaseException:
        with contextlib.suppress(Exception):  # the run's own fault is the one to report
            log.close()
        raise
    log.close()
