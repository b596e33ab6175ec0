"""The sweep store under crashes and concurrent readers, tested the way databases test theirs:

- a sweep killed (SIGKILL: no handler, no clean-up) at random moments, many times over: after
  each kill the store opens, its lock is free, every point file is whole and equal to that
  point's undisturbed result, the table equals the finished points, and a resume completes to
  the undisturbed table;
- readers (``Store``, ``sweep --dry-run``, ``load_sweep``, cache look-ups) in a loop beside a
  running sweep: the sweep finishes, and its table equals an undisturbed run's.

The writers are forked from the test process (a fork starts in microseconds, where a new
interpreter takes a second or more), so they die at random points of their own work: in a
point, in a point file's write or rename, in the table's rebuild.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import time
import warnings

import pandas as pd
import pytest

from theorylab.core.locks import lock_held
from theorylab.core.sweep import (
    PROVENANCE_COLUMNS,
    Store,
    load_sweep,
    run_sweep_spec,
    spec_from_dict,
)
from theorylab.core.sweep.store import read_point_file

#: Points of about 0.1 s each (a 4-patch population run of 30 steps).
BASE = {"data": {"D": 4, "C": 2, "d": 20}, "train": {"steps": 30, "n_records": 8}}


def _spec(n_q: int, seeds=(0, 1, 2)) -> dict:
    return {"base_config": BASE,
            "sweep": {"axes": {"data.q": [round(0.02 * (i + 1), 4) for i in range(n_q)]},
                      "seeds": list(seeds)}}


def _quiet(*_):
    pass


def _plain(table: pd.DataFrame) -> pd.DataFrame:
    """A table without its provenance (runtime, host, revision differ between two runs)."""
    return table.drop(columns=[c for c in PROVENANCE_COLUMNS if c in table.columns]
                      ).reset_index(drop=True)


def _fork(target) -> int:
    """Run ``target()`` in a forked child that never returns into pytest."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork beside threads (3.12+)
        pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        code = 1
        try:
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            target()
            code = 0
        finally:
            os._exit(code)
    return pid


def _sweep(spec, out):
    return lambda: run_sweep_spec(spec, out, workers=0, progress=False, say=_quiet)


@pytest.fixture(scope="module")
def undisturbed(tmp_path_factory):
    out = tmp_path_factory.mktemp("clean") / "store"
    spec = _spec(20)
    table = run_sweep_spec(spec, out, workers=0, progress=False, say=_quiet)
    points = {p.run_id: p for p in spec_from_dict(spec).points()}
    per_point = {rid: _plain(t.drop(columns=["point", "run_id", "data.q", "train.seed"],
                                    errors="ignore"))
                 for rid, t in table.groupby("run_id", sort=False)}
    return spec, _plain(table), per_point, points


def _check_store(out, per_point, points) -> int:
    """The invariants after a kill; returns the number of finished points."""
    assert not lock_held(out / "sweep.lock")  # the kernel dropped the dead writer's lock
    Store(out)  # opens
    finished = 0
    for f in sorted((out / "points").glob("*.parquet")) if (out / "points").is_dir() else []:
        table, rid, chash = read_point_file(f)  # whole: never a torn point file
        assert rid == f.stem and chash == points[rid].config_hash
        pd.testing.assert_frame_equal(_plain(table), per_point[rid], check_dtype=False)
        finished += 1
    if (out / "results.parquet").is_file():
        table = load_sweep(out)
        done = table[table.status != "pending"]
        assert done.run_id.nunique() == finished  # the table is exactly the finished points
        for rid, rows in done.groupby("run_id"):
            got = _plain(rows.drop(columns=["point", "run_id", "data.q", "train.seed"]))
            pd.testing.assert_frame_equal(got, per_point[rid], check_dtype=False)
    return finished


@pytest.mark.parametrize("kills", [30])
def test_a_sweep_killed_at_random_points_keeps_a_sound_store(tmp_path, undisturbed, kills):
    spec, clean, per_point, points = undisturbed
    out = tmp_path / "store"
    rng = random.Random(20261126)
    progress = []
    for _ in range(kills):
        pid = _fork(_sweep(spec, out))
        time.sleep(rng.uniform(0.0, 0.35))
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        progress.append(_check_store(out, per_point, points))
    print("finished points after each kill:", progress)
    assert progress == sorted(progress)  # finished points are never lost
    table = run_sweep_spec(spec, out, workers=0, progress=False, say=_quiet)  # the resume
    pd.testing.assert_frame_equal(_plain(table), clean, check_dtype=False)
    pd.testing.assert_frame_equal(_plain(load_sweep(out)), clean, check_dtype=False)


def test_readers_beside_a_running_sweep_never_break_it(tmp_path, undisturbed):
    spec, clean, _per_point, points = undisturbed
    out = tmp_path / "store"
    pid = _fork(_sweep(spec, out))
    some = list(points.values())
    reads = 0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            break
        with contextlib.suppress(ValueError):  # a store not made yet, a table not yet written
            store = Store(out)
            store.cached(some[reads % len(some)])
            run_sweep_spec(spec, out, dry_run=True, say=_quiet)
            load_sweep(out)
        reads += 1
    else:  # pragma: no cover
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        raise AssertionError("the sweep did not finish")
    assert os.waitstatus_to_exitcode(status) == 0  # the writer finished, undisturbed
    assert reads > 20
    pd.testing.assert_frame_equal(_plain(load_sweep(out)), clean, check_dtype=False)


@pytest.mark.slow
def test_many_more_random_kills(tmp_path, undisturbed):
    test_a_sweep_killed_at_random_points_keeps_a_sound_store(tmp_path, undisturbed, 300)
