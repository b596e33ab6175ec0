"""Sweeps on Dask: spec validation, dry run, cache hits, changed-spec refusal, a
failed and an interrupted sweep resumed on an in-process LocalCluster equal point for point to
an uninterrupted one, and a scheduler started separately and reached by address."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd
import pytest

import theorylab
from theorylab.commands.sweep import main as sweep_main
from theorylab.core.sweep import (
    PROVENANCE_COLUMNS,
    call_point,
    load_sweep,
    run_points,
    run_sweep_spec,
    spec_from_dict,
)

BASE = {"data": {"D": 4, "C": 2, "d": 20}, "train": {"steps": 30, "n_records": 8}}


def _spec(**sweep):
    return {"base_config": BASE, "sweep": {"axes": {"data.q": [0.1, 0.2, 0.3]},
                                           "seeds": [0, 1], **sweep}}


def _quiet(*_):
    pass


def _results(table: pd.DataFrame) -> pd.DataFrame:
    # provenance (runtime, host, git revision) legitimately differs between two runs
    return table.drop(columns=list(PROVENANCE_COLUMNS)).reset_index(drop=True)


@pytest.mark.parametrize("sweep, message", [
    ({"axes": {"data.qq": [0.1]}}, "sweep.axes: unknown field 'data.qq'"),
    ({"axes": {"q": [0.1]}}, "sweep.axes: 'q' must be 'section.field'"),
    ({"axes": {"data.q": []}}, "sweep.axes.data.q: must not be empty"),
    ({"axes": {"data.q": 0.1}}, "sweep.axes.data.q: must be a list"),
    ({"axes": {"data.q": [0.1, 0.2], "data.d": [20]}, "mode": "zip"},
     "sweep.mode: 'zip' needs axes of one length"),
    ({"axes": {"data.q": [0.1]}, "mode": "grid"}, "sweep.mode: must be one of"),
    ({"axes": {"data.q": [0.1]}, "keep": "last"}, "sweep.keep: must be one of"),
    ({"axes": {"data.q": [0.1]}, "keep": ["alpha", "nope"]}, "sweep.keep: unknown column 'nope'"),
    ({"axes": {"data.q": [0.1]}, "seeds": [1, 1]}, "sweep.seeds: must be distinct"),
    ({"axes": {"data.q": [0.1]}, "seeds": [-1]}, "sweep.seeds: must be integers >= 0"),
    ({"axes": {"data.q": [0.1, 7.0]}}, "sweep.axes: the point data.q = 7.0 is not a valid"),
    ({"axes": {"data.q": [0.1]}, "point": "batched"},
     "sweep.point: 'batched' needs train.engine = 'empirical'"),
    ({"axes": {"data.q": [0.1]}, "colour": 1}, "sweep.colour: unknown field"),
])
def test_spec_validation(sweep, message):
    with pytest.raises(ValueError) as e:
        spec_from_dict({"base_config": BASE, "sweep": sweep})
    assert str(e.value).startswith(message), str(e.value)


def test_zip_product_and_run_ids():
    prod = spec_from_dict(_spec()).points()
    assert len(prod) == 6 and len({p.run_id for p in prod}) == 6
    z = spec_from_dict({"base_config": BASE, "sweep": {
        "axes": {"data.q": [0.1, 0.2], "data.d": [20, 30]}, "mode": "zip"}}).points()
    assert [(p.labels["data.q"], p.labels["data.d"]) for p in z] == [(0.1, 20), (0.2, 30)]
    # the id is a hash of the resolved config: the same point spelled differently is one id
    again = spec_from_dict({"base_config": {**BASE, "train": {**BASE["train"], "seed": 0}},
                            "sweep": {"axes": {"data.q": [0.1]}}}).points()
    assert again[0].run_id == prod[0].run_id


def test_dry_run_cache_hit_and_changed_spec(tmp_path, capsys):
    out = tmp_path / "store"
    dry = run_sweep_spec(_spec(), out, workers=0, dry_run=True, say=_quiet)
    assert len(dry) == 6 and not dry.cached.any()
    first = run_sweep_spec(_spec(), out, workers=0, say=_quiet)
    assert (first.status == "ok").all() and len(first) == 6  # keep = "final": one row a point
    assert set(first.columns) >= {"data.q", "train.seed", "status", *PROVENANCE_COLUMNS}
    assert first.git_rev.iloc[0] == "" or len(first.git_rev.iloc[0]) == 40
    assert theorylab.load_sweep(out).equals(first)
    assert run_sweep_spec(_spec(), out, workers=0, dry_run=True, say=_quiet).cached.all()
    said = []
    t0 = time.perf_counter()
    second = run_sweep_spec(_spec(), out, workers=0, say=said.append)
    assert any("6 of 6 points cached, 0 to compute" in s for s in said)
    assert second.equals(first)  # nothing recomputed: even the runtimes are the stored ones
    assert time.perf_counter() - t0 < 5  # a rerun of cached points only reads 6 small files
    changed = _spec(axes={"data.q": [0.1, 0.25]})
    with pytest.raises(ValueError, match=r"out: the store .* holds another sweep"):
        run_sweep_spec(changed, out, workers=0, say=_quiet)
    assert sweep_main([str(_write_spec(tmp_path, changed)), "--out", str(out), "--workers",
                       "0", "--no-progress"]) == 2
    assert capsys.readouterr().err.startswith("error: out: the store")
    new = run_sweep_spec(changed, out, workers=0, new_store=True, say=_quiet)
    assert len(new) == 4 and len(list((out / "points").glob("*.parquet"))) == 4


def _write_spec(folder: Path, spec: dict) -> Path:
    import json

    lines = ["[base_config.data]", *[f"{k} = {v}" for k, v in spec["base_config"]["data"].items()],
             "[base_config.train]",
             *[f"{k} = {v}" for k, v in spec["base_config"]["train"].items()], "[sweep]"]
    lines += [f"{k} = {json.dumps(v).replace(': ', ' = ')}" if k != "axes" else
              "axes = {" + ", ".join(f'"{a}" = {json.dumps(x)}' for a, x in v.items()) + "}"
              for k, v in spec["sweep"].items()]
    path = folder / "spec.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def test_cli_dry_run_and_shard(tmp_path, capsys):
    path = _write_spec(tmp_path, _spec())
    out = tmp_path / "s"
    assert sweep_main([str(path), "--out", str(out), "--dry-run"]) == 0
    assert "6 points (product of data.q, train.seed; point type run)" in capsys.readouterr().out
    assert sweep_main([str(path), "--out", str(out), "--workers", "0", "--shard", "2/2",
                       "--no-progress"]) == 0
    table = load_sweep(out)
    assert table.status.tolist() == ["pending", "ok"] * 3  # shard 2/2: the odd points
    with pytest.raises(SystemExit) as e:
        sweep_main([str(path), "--out", str(out), "--shard", "3/2"])
    assert e.value.code == 2
    assert capsys.readouterr().err.strip().startswith("error: --shard: needs 1 <= i <= n")


FAIL_ENV = "THEORYLAB_TEST_SWEEP_FAIL"


def square_table(x: float) -> pd.DataFrame:
    """A "call" point of the tests: fails on purpose when ``$THEORYLAB_TEST_SWEEP_FAIL == x``."""
    if os.environ.get(FAIL_ENV) == repr(x):
        raise RuntimeError(f"failing on purpose at x = {x}")
    return pd.DataFrame({"x": [x], "x2": [x * x]})


def test_failed_and_interrupted_sweep_resumes_on_local_cluster(tmp_path, monkeypatch):
    pytest.importorskip("dask.distributed")
    from dask.distributed import Client

    spec = _spec(keep="trajectory")
    serial = run_sweep_spec(spec, tmp_path / "serial", workers=0, say=_quiet)
    with Client(processes=False, n_workers=1, threads_per_worker=2,
                dashboard_address=":0") as client:
        # interrupted part-way: only the first shard of three got done
        part = run_sweep_spec(spec, tmp_path / "dask", client=client, shard="1/3", say=_quiet)
        assert (part.status == "pending").sum() == 4 and (part.status == "ok").any()
        said = []
        full = run_sweep_spec(spec, tmp_path / "dask", client=client, say=said.append)
        assert any("2 of 6 points cached, 4 to compute" in s for s in said)
        pd.testing.assert_frame_equal(_results(full), _results(serial))

        # a point failing on purpose does not stop the others; a rerun computes only it
        module = square_table.__module__
        points = [call_point(f"{module}:square_table", x=x) for x in (0.5, 1.5, 2.5)]
        monkeypatch.setenv(FAIL_ENV, repr(1.5))
        with pytest.raises(RuntimeError, match="1 sweep point.* failing on purpose"):
            run_points(points, cache=tmp_path / "calls", client=client, say=_quiet)
        monkeypatch.delenv(FAIL_ENV)
        said = []
        tables = run_points(points, cache=tmp_path / "calls", client=client, say=said.append)
    assert said == ["sweep: 2 of 3 points cached, 1 to compute"]
    assert [float(t.x2.iloc[0]) for t in tables] == [0.25, 2.25, 6.25]


def test_scheduler_by_address(tmp_path):
    pytest.importorskip("dask.distributed")
    dask = shutil.which("dask", path=str(Path(sys.executable).parent))
    if dask is None:
        pytest.skip("the dask command is not installed")
    env = {**os.environ, "PYTHONPATH": str(Path(theorylab.__file__).parents[1])}
    sched_file = tmp_path / "scheduler.json"
    procs = [subprocess.Popen([dask, "scheduler", "--host", "127.0.0.1", "--port", "0",
                               "--dashboard-address", ":0", "--scheduler-file",
                               str(sched_file)], env=env, stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL)]
    try:
        t0 = time.time()
        while not sched_file.exists() and time.time() - t0 < 30:
            time.sleep(0.2)
        if not sched_file.exists():
            pytest.skip("dask scheduler did not start within 30 s")
        import json

        address = json.loads(sched_file.read_text())["address"]
        procs.append(subprocess.Popen([dask, "worker", address, "--nthreads", "1",
                                       "--nworkers", "1", "--no-nanny"], env=env,
                                      stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
        from dask.distributed import Client

        with Client(address, timeout=30) as client:
            try:
                client.wait_for_workers(1, timeout=30)
            except TimeoutError:
                pytest.skip("dask worker did not start within 30 s")
        spec = _spec(axes={"data.q": [0.1, 0.3]})
        said = []
        table = run_sweep_spec(spec, tmp_path / "addr", scheduler=address, say=said.append)
        serial = run_sweep_spec(spec, tmp_path / "serial", workers=0, say=_quiet)
        pd.testing.assert_frame_equal(_results(table), _results(serial))
        assert any(s.startswith("Dask dashboard:") for s in said)
    finally:
        for p in reversed(procs):
            p.terminate()
            try:
                p.wait(timeout=10)
            except subprocess.TimeoutExpired:
                p.kill()


def test_batched_point_equals_run_points():
    # one batched point (seeds x lr_v in one computation) = one "run" point per (seed, lr_v)
    base = {"data": {"D": 4, "C": 2, "d": 20, "q": 0.3},
            "train": {"engine": "empirical", "steps": 20, "n_train": 200, "n_test": 200,
                      "n_records": 5}}
    sweep = {"axes": {"train.lr_v": [0.1, 0.2]}, "seeds": [0, 3], "keep": "final"}
    batched = run_points(spec_from_dict({"base_config": base, "sweep": {
        **sweep, "point": "batched"}}).points(), say=_quiet)[0]
    runs = run_points(spec_from_dict({"base_config": base, "sweep": sweep}).points(),
                      say=_quiet)
    assert len(batched) == 4
    got = batched.sort_values(["lr_v", "seed"]).loss.to_numpy()
    want = [t.loss.iloc[0] for t in runs]  # runs are in the order lr_v, then seed
    # the batched engine sums in another order than the single-run one: float64 round-off
    assert max(abs(g - w) for g, w in zip(got, want)) < 1e-12


def test_use_executor_shares_a_cache_between_callers(tmp_path):
    from theorylab.core.sweep import use_executor

    points = [call_point(f"{square_table.__module__}:square_table", x=x) for x in (1.0, 2.0)]
    with use_executor(cache=tmp_path / "cache"):
        first = run_points(points, say=_quiet)  # e.g. a figure
        said = []
        again = run_points(points[::-1], say=said.append)  # e.g. a claim check, same points
    assert said == ["sweep: 2 of 2 points cached, 0 to compute"]
    assert again[0].equals(first[1]) and again[1].equals(first[0])
    # outside the block: in this process, no store
    assert run_points(points[:1], say=said.append)[0].x2.iloc[0] == 1.0 and len(said) == 1


def test_check_and_figures_flags_refuse_bad_values(tmp_path, capsys):
    from theorylab.commands.check import main as check_main
    from theorylab.commands.figures import main as figures_main

    (tmp_path / "file").write_text("")
    assert check_main(["--only", "huang2024/thm4.1", "--out", str(tmp_path / "o"),
                       "--cache", str(tmp_path / "file")]) == 2
    assert capsys.readouterr().err.startswith("error: --cache: ")
    for main in (check_main, figures_main):
        with pytest.raises(SystemExit) as e:
            main(["--workers", "-1"])
        assert e.value.code == 2
        assert capsys.readouterr().err.startswith("error: --workers: must be an integer >= 0")


def test_slurm_without_dask_jobqueue_is_a_clear_error(tmp_path, capsys, monkeypatch):
    pytest.importorskip("dask.distributed")
    monkeypatch.setitem(sys.modules, "dask_jobqueue", None)  # as if it were not installed
    path = _write_spec(tmp_path, _spec())
    assert sweep_main([str(path), "--out", str(tmp_path / "s"), "--slurm", "2"]) == 2
    assert capsys.readouterr().err.startswith("error: slurm: dask-jobqueue is not installed")


def test_example_specs_are_valid(tmp_path):
    # every spec in examples/sweeps/ is read, validated and expanded (nothing is computed)
    folder = Path(__file__).resolve().parents[2] / "examples" / "sweeps"
    specs = sorted(folder.glob("*.toml"))
    assert specs
    for path in specs:
        table = run_sweep_spec(path, tmp_path / path.stem, dry_run=True, say=_quiet)
        assert len(table) > 0 and not table.cached.any()


def test_example_specs_cover_both_papers_and_their_seeds_change_the_runs(tmp_path):
    # an example spec with several seeds must get different runs from them (an exact engine,
    # which draws nothing at random, gives one run several times): the first point of each
    # such spec runs 3 steps per seed and the seeds' final rows must not all be equal
    import tomllib

    folder = Path(__file__).resolve().parents[2] / "examples" / "sweeps"
    papers = set()
    for path in sorted(folder.glob("*.toml")):
        raw = tomllib.loads(path.read_text())
        base = raw.get("base_config", {})
        papers.add(base.get("experiment", {}).get("paper", "jelassi2022"))
        if len(raw["sweep"].get("seeds", [])) < 2:
            continue
        first = {axis: values[:1] for axis, values in raw["sweep"]["axes"].items()}
        small = {"base_config": {**base, "train": {**base.get("train", {}), "steps": 3}},
                 "sweep": {**raw["sweep"], "axes": first, "keep": "final"}}
        table = run_sweep_spec(small, tmp_path / path.stem, workers=0, say=_quiet)
        labels = {"point", "run_id", "status", "message", *PROVENANCE_COLUMNS}
        results = table.drop(columns=[c for c in table.columns if c in labels or "seed" in c])
        assert len(results.drop_duplicates()) > 1, f"{path.name}: its seeds give one run"
    assert papers == {"jelassi2022", "huang2024"}


@pytest.mark.slow
def test_killed_sweep_resumes_with_only_the_missing_points(tmp_path):
    # a real kill (SIGKILL of the command mid-sweep), then the same command again
    spec = {"base_config": {"data": {"D": 10, "C": 2, "d": 100},
                            "train": {"steps": 400, "n_records": 10}},
            "sweep": {"axes": {"data.q": [0.1, 0.15, 0.2, 0.25, 0.3, 0.35]}}}
    path = _write_spec(tmp_path, spec)
    out = tmp_path / "killed"
    env = {**os.environ, "PYTHONPATH": str(Path(theorylab.__file__).parents[1])}
    cmd = [sys.executable, "-m", "theorylab", "sweep", str(path), "--out", str(out), "--workers",
           "0", "--no-progress"]
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    t0 = time.time()
    while time.time() - t0 < 60 and len(list((out / "points").glob("*.parquet"))
                                        if (out / "points").is_dir() else []) < 2:
        time.sleep(0.02)
    proc.kill()
    proc.wait(timeout=10)
    done = len(list((out / "points").glob("*.parquet")))
    if not 1 <= done < 6:
        pytest.skip(f"could not kill the sweep part-way ({done} of 6 points were done)")
    said = []
    resumed = run_sweep_spec(spec, out, workers=0, say=said.append)
    assert any(f"{done} of 6 points cached, {6 - done} to compute" in s for s in said)
    fresh = run_sweep_spec(spec, tmp_path / "fresh", workers=0, say=_quiet)
    pd.testing.assert_frame_equal(_results(resumed), _results(fresh))
    assert not list((out / "points").glob(".*.tmp"))  # the killed write left nothing behind
