"""The sweep store kept as a database would keep it, and sweeps that never hang: one writer at
a time, point files checked against their run, duplicate points refused, a table that follows
its point files, specs that only add points, a damaged ``sweep.json``, interrupts, schedulers
without workers, the cap on ``--workers`` and a large dry run."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

from theorylab.commands.sweep import main as sweep_main
from theorylab.core.locks import lock_held
from theorylab.core.sweep import (
    PROVENANCE_COLUMNS,
    Store,
    SweepStoppedError,
    execute,
    load_sweep,
    run_sweep_spec,
    spec_from_dict,
)
from theorylab.core.sweep import runner as runner_mod
from theorylab.core.sweep import spec as spec_mod
from theorylab.core.sweep.store import read_point_file

ROOT = Path(__file__).resolve().parents[2]
BASE = {"data": {"D": 4, "C": 2, "d": 20}, "train": {"steps": 30, "n_records": 8}}


def _spec(qs=(0.1, 0.2), **sweep):
    return {"base_config": BASE, "sweep": {"axes": {"data.q": list(qs)}, "seeds": [0], **sweep}}


def _quiet(*_):
    pass


def _results(table: pd.DataFrame) -> pd.DataFrame:
    # provenance (runtime, host, git revision) legitimately differs between two runs
    return table.drop(columns=list(PROVENANCE_COLUMNS)).reset_index(drop=True)


def _toml(path: Path, qs, steps=30, seeds=(0,)) -> Path:
    path.write_text(
        "[base_config.data]\nD = 4\nC = 2\nd = 20\n"
        f"[base_config.train]\nsteps = {steps}\nn_records = 8\n"
        f"[sweep]\naxes = {{\"data.q\" = {list(qs)}}}\nseeds = {list(seeds)}\n")
    return path


def _cli(argv, capsys) -> tuple[int, str, str]:
    rc = sweep_main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


# -- point files ------------------------------------------------------------------------------

def test_point_files_carry_run_id_and_config_hash(tmp_path):
    spec = spec_from_dict(_spec())
    run_sweep_spec(spec, tmp_path, workers=0, progress=False, say=_quiet)
    for p in spec.points():
        _, rid, chash = read_point_file(tmp_path / "points" / f"{p.run_id}.parquet")
        assert (rid, chash) == (p.run_id, p.config_hash)
        assert len(chash) == 64 and chash.startswith(p.run_id)


def test_a_renamed_point_file_is_recomputed_and_reported(tmp_path):
    spec = spec_from_dict(_spec())
    clean = run_sweep_spec(spec, tmp_path, workers=0, progress=False, say=_quiet)
    a, b = (tmp_path / "points" / f"{p.run_id}.parquet" for p in spec.points())
    b.write_bytes(a.read_bytes())  # another run's file under b's run id
    said = []
    table = run_sweep_spec(spec, tmp_path, workers=0, progress=False, say=said.append)
    assert any(f"{b} holds run {spec.points()[0].run_id}" in s and "recomputed" in s
               for s in said), said
    assert any("1 of 2 points cached, 1 to compute" in s for s in said), said
    pd.testing.assert_frame_equal(_results(table), _results(clean))
    # a file without the metadata (written by hand) is no cache hit either
    pd.read_parquet(a).to_parquet(a)
    said.clear()
    run_sweep_spec(spec, tmp_path, workers=0, progress=False, say=said.append)
    assert any("carries no run id or config hash" in s for s in said), said


# -- duplicate points ---------------------------------------------------------------------------

@pytest.mark.parametrize("sweep, message", [
    ({"axes": {"data.q": [0.1, 0.2, 0.1]}},
     "sweep.axes.data.q: values must be distinct (got 0.1 twice"),
    ({"axes": {"data.q": [0.1, 0.1], "data.d": [20, 20]}, "mode": "zip"},
     "sweep.axes: the points data.q = 0.1, data.d = 20 and data.q = 0.1, data.d = 20 are one "
     "run"),
    # 20 and 20.0 are one value of an integer field: one run, refused like duplicate seeds
    ({"axes": {"data.d": [20, 20.0]}}, "sweep.axes: the points data.d = 20 and data.d = 20.0"),
])
def test_duplicate_points_are_refused(sweep, message):
    with pytest.raises(ValueError) as e:
        spec_from_dict({"base_config": BASE, "sweep": sweep})
    assert str(e.value).startswith(message), str(e.value)


def test_zip_may_repeat_a_value_of_one_axis():
    spec = spec_from_dict({"base_config": BASE, "sweep": {
        "axes": {"data.q": [0.1, 0.1], "data.d": [20, 30]}, "mode": "zip"}})
    assert len({p.run_id for p in spec.points()}) == 2


# -- the table follows the point files ---------------------------------------------------------

def test_load_sweep_shows_a_deleted_point_as_pending(tmp_path):
    spec = spec_from_dict(_spec())
    table = run_sweep_spec(spec, tmp_path, workers=0, progress=False, say=_quiet)
    assert load_sweep(tmp_path).equals(table)  # untouched store: the table as written
    gone = spec.points()[1].run_id
    (tmp_path / "points" / f"{gone}.parquet").unlink()
    now = load_sweep(tmp_path)
    assert list(now.status) == ["ok", "pending"]
    assert list(now["data.q"]) == [0.1, 0.2] and list(now.run_id) == list(table.run_id)
    # another run's file under its name is not the point either
    first = tmp_path / "points" / f"{spec.points()[0].run_id}.parquet"
    (tmp_path / "points" / f"{gone}.parquet").write_bytes(first.read_bytes())
    assert list(load_sweep(tmp_path).status) == ["ok", "pending"]


# -- a spec that only adds points ---------------------------------------------------------------

def test_a_spec_that_adds_points_extends_the_store(tmp_path):
    small = run_sweep_spec(_spec((0.1, 0.2)), tmp_path, workers=0, progress=False, say=_quiet)
    said = []
    big = run_sweep_spec(_spec((0.1, 0.2, 0.3)), tmp_path, workers=0, progress=False,
                         say=said.append)
    assert any("extends the store" in s and "2 points are kept, 1 added" in s for s in said)
    assert any("2 of 3 points cached, 1 to compute" in s for s in said), said
    pd.testing.assert_frame_equal(_results(big.iloc[:2]), _results(small))
    # a changed base config is another sweep: refused without --new-store
    other = {**_spec((0.1, 0.2, 0.3)),
             "base_config": {**BASE, "train": {**BASE["train"], "steps": 31}}}
    with pytest.raises(ValueError, match="holds another sweep"):
        run_sweep_spec(other, tmp_path, workers=0, progress=False, say=_quiet)
    # dropping a point is not an extension either
    with pytest.raises(ValueError, match="holds another sweep"):
        run_sweep_spec(_spec((0.1, 0.3)), tmp_path, workers=0, progress=False, say=_quiet)


# -- a damaged sweep.json -----------------------------------------------------------------------

@pytest.mark.parametrize("text", ['{"fingerprint": "ab', "[1, 2]", "\udcff"])
def test_damaged_sweep_json_is_one_line_naming_it(tmp_path, capsys, text):
    spec = _toml(tmp_path / "s.toml", [0.1])
    out = tmp_path / "store"
    assert _cli([spec, "--out", out, "--workers", "0", "--no-progress"], capsys)[0] == 0
    (out / "sweep.json").write_bytes(text.encode("utf-8", "surrogateescape"))
    rc, _, err = _cli([spec, "--out", out, "--workers", "0", "--no-progress"], capsys)
    assert rc == 2 and err.count("\n") == 1, err
    assert err.startswith(f"error: out: {out / 'sweep.json'} is "), err
    with pytest.raises(ValueError, match="sweep.json is"):
        load_sweep(out)
    # --new-store discards it
    assert _cli([spec, "--out", out, "--workers", "0", "--no-progress", "--new-store"],
                capsys)[0] == 0


# -- one writer at a time -----------------------------------------------------------------------

_HOLDER = """
import fcntl, json, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
os.write(fd, json.dumps({"pid": os.getpid(), "host": sys.argv[2],
                         "started": "2026-01-01T00:00:00+00:00",
                         "command": "python -m theorylab sweep other.toml --out x"}).encode())
print("held", flush=True)
time.sleep(60)
"""


def test_a_store_in_use_is_refused_naming_the_writer(tmp_path, capsys):
    spec = _toml(tmp_path / "s.toml", [0.1])
    out = tmp_path / "store"
    from theorylab.core.folders import claim_folder

    claim_folder(out, "sweep")  # as the other sweep did before it took the lock
    other = subprocess.Popen([sys.executable, "-c", _HOLDER, str(out / "sweep.lock"),
                              socket.gethostname()], stdout=subprocess.PIPE, text=True)
    try:
        assert other.stdout.readline() == "held\n"  # another process holds the kernel lock
        rc, _, err = _cli([spec, "--out", out, "--workers", "0", "--no-progress"], capsys)
    finally:
        other.kill()
        other.wait()
        other.stdout.close()
    assert rc == 2 and err.count("\n") == 1, err
    assert (f"error: out: {out} is in use by another sweep: pid {other.pid} on host "
            f"{socket.gethostname()}, started 2026-01-01T00:00:00+00:00 (python -m "
            f"theorylab sweep other.toml --out x)") in err, err
    assert not (out / "points").exists()  # nothing written
    # its process gone (killed: no chance to clean up), the kernel dropped its lock: the lock
    # file left behind, holder text and all, blocks nothing and needs no takeover
    assert (out / "sweep.lock").read_text()
    rc, _, err = _cli([spec, "--out", out, "--workers", "0", "--no-progress"], capsys)
    assert rc == 0 and not err, err
    assert not lock_held(out / "sweep.lock")


def test_an_empty_lock_file_left_by_a_full_disk_blocks_nothing(tmp_path):
    out = tmp_path / "store"
    from theorylab.core.folders import claim_folder

    claim_folder(out, "sweep")  # the sweep claimed its store, then took the lock
    (out / "sweep.lock").write_text("")  # the holder's text could not be written
    run_sweep_spec(_spec((0.3,)), out, workers=0, progress=False, say=_quiet)
    assert len(load_sweep(out)) > 0


def test_two_sweeps_at_once_the_second_is_refused(tmp_path):
    out = tmp_path / "store"
    with Store(out).lock(say=_quiet):  # a first sweep holds the store
        with pytest.raises(ValueError, match=f"in use by another sweep: pid {os.getpid()}"):
            run_sweep_spec(_spec((0.3,)), out, workers=0, progress=False, say=_quiet)
    assert not lock_held(out / "sweep.lock")


# -- interrupts ---------------------------------------------------------------------------------

def _wait_for_points(folder: Path, n: int, proc, limit=120.0) -> None:
    t0 = time.monotonic()
    while time.monotonic() - t0 < limit and proc.poll() is None:
        if len(list((folder / "points").glob("*.parquet"))) >= n:
            return
        time.sleep(0.1)
    raise AssertionError(f"no {n} point files in {folder} ({proc.poll()})")


def _interrupt(tmp_path, signum, workers) -> tuple[int, str, Path, Path]:
    # points of about a second each (600 steps); signalled once the first is stored
    spec = _toml(tmp_path / "s.toml", [0.1, 0.2, 0.3, 0.4, 0.5, 0.6], steps=600)
    out = tmp_path / "store"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-m", "theorylab", "sweep", str(spec), "--out",
                             str(out), "--workers", str(workers), "--no-progress"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env,
                            cwd=ROOT)
    try:
        _wait_for_points(out, 1, proc)
        proc.send_signal(signum)
        _, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    return proc.returncode, err, spec, out


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_in_process_lists_the_unfinished_points_and_resumes(tmp_path, signum):
    rc, err, spec, out = _interrupt(tmp_path, signum, 0)
    assert rc == 128 + signum, err  # 130 for SIGINT, 143 for SIGTERM
    assert "Traceback" not in err, err
    assert err.startswith("interrupted; "), err
    done = len(list((out / "points").glob("*.parquet")))
    assert f"{done} of 6 points done and kept, {6 - done} unfinished: " in err, err
    assert f"Resume with: {sys.executable} -m theorylab sweep {spec} --out {out}" in err, err
    assert not lock_held(out / "sweep.lock")
    assert list(load_sweep(out).status).count("pending") == 6 - done


def test_interrupt_with_workers_is_quiet_and_resumes(tmp_path):
    rc, err, spec, out = _interrupt(tmp_path, signal.SIGINT, 1)
    assert rc == 130, err
    assert "Resume with: " in err and "--workers 1" in err, err
    # Dask's own log lines (INFO, "killed by signal 9", worker shutdown) stay quiet
    assert "distributed." not in err and "INFO" not in err and "killed" not in err, err
    assert "Traceback" not in err, err


# -- schedulers without workers ------------------------------------------------------------------

def test_a_scheduler_without_workers_is_an_error_within_the_timeout(tmp_path, capsys):
    from dask.distributed import LocalCluster

    spec = _toml(tmp_path / "s.toml", [0.1])
    with LocalCluster(n_workers=0, processes=False, dashboard_address=":0") as cluster:
        t0 = time.monotonic()
        rc, _, err = _cli([spec, "--out", tmp_path / "o", "--scheduler",
                           cluster.scheduler_address, "--worker-timeout", "1",
                           "--no-progress"], capsys)
    assert rc == 2 and err.count("\n") == 1, err
    assert err.startswith(f"error: workers: no Dask worker joined the scheduler "
                          f"{cluster.scheduler_address} within 1 s (--worker-timeout)"), err
    assert time.monotonic() - t0 < 60  # not the hang it would be without the timeout


def test_a_sweep_whose_workers_all_died_stops(tmp_path):
    from dask.distributed import Client, LocalCluster

    points = spec_from_dict(_spec((0.1, 0.2, 0.3), seeds=[0, 1])).points()
    store = Store(tmp_path)
    with LocalCluster(n_workers=1, processes=False, threads_per_worker=1,
                      dashboard_address=":0") as cluster, Client(cluster) as client:
        client.wait_for_workers(1)
        client.retire_workers(close_workers=True)  # the only worker is gone
        with pytest.raises(SweepStoppedError) as e:
            execute(points, store, client=client, worker_timeout=1, progress=False,
                    say=_quiet)
    assert not e.value.interrupted and "no Dask worker for 1 s" in str(e.value)
    assert {p.run_id for p in e.value.unfinished} | set(e.value.results) == \
        {p.run_id for p in points}
    assert len(e.value.unfinished) == 6  # none could be computed


# -- --workers capped by the cores ---------------------------------------------------------------

class _FakeCluster:
    def __init__(self, n_workers, **_):
        self.n_workers = n_workers
        _FakeCluster.last = self

    def close(self):
        pass


class _FakeClient:
    dashboard_link = ""

    def __init__(self, cluster):
        pass

    def wait_for_workers(self, n, timeout=None):
        pass

    def close(self):
        pass


@pytest.mark.parametrize("asked, oversubscribe, started", [
    (500, False, "cores"), (500, True, 500), (None, False, "cores"), (1, False, 1)])
def test_workers_are_capped_by_the_usable_cores(monkeypatch, asked, oversubscribe, started):
    import dask.distributed

    monkeypatch.setattr(dask.distributed, "LocalCluster", _FakeCluster)
    monkeypatch.setattr(dask.distributed, "Client", _FakeClient)
    said = []
    with runner_mod.open_client(None, asked, oversubscribe=oversubscribe, say=said.append):
        pass
    cores = len(os.sched_getaffinity(0))
    assert _FakeCluster.last.n_workers == (cores if started == "cores" else started)
    capped = asked is not None and asked > cores and not oversubscribe
    assert any(f"--workers {asked} capped at the {cores} usable cores" in s
               for s in said) == capped


# -- large dry runs -----------------------------------------------------------------------------

def test_assembled_points_equal_fully_validated_ones(monkeypatch):
    d = {"base_config": BASE, "sweep": {"axes": {
        "data.q": [0.1, 0.2, 0.3], "data.d": [20, 30], "train.lr_v": [0.1, 0.2]},
        "seeds": [0, 1]}}
    full = spec_from_dict(d).points()
    monkeypatch.setattr(spec_mod, "FULL_VALIDATION_POINTS", 0)
    spec = spec_from_dict(d)
    fast = spec_mod._assembled_points(spec, spec_mod.get_paper(spec.paper))
    assert [(p.run_id, p.config_hash, p.labels) for p in fast] == \
        [(p.run_id, p.config_hash, p.labels) for p in full]
    assert [p.payload for p in fast] == [p.payload for p in full]  # lr_A follows lr_v


def test_a_large_dry_run_prints_its_count_first(tmp_path, capsys):
    qs = [round(0.1 + 0.0001 * i, 6) for i in range(300)]
    spec = tmp_path / "s.toml"
    spec.write_text("[base_config.data]\nD = 4\nC = 2\n[base_config.train]\nsteps = 30\n"
                    f"[sweep]\naxes = {{\"data.q\" = {qs}, \"data.d\" = [20, 30, 40, 50]}}\n"
                    "seeds = [0, 1, 2, 3, 4]\n")
    rc, out, _ = _cli([spec, "--out", tmp_path / "o", "--dry-run"], capsys)
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == "6000 points (product of data.q, data.d, train.seed; point type run)"
    assert lines[1] == "6000 in this shard, 0 with a point file (checked when the sweep runs)"
