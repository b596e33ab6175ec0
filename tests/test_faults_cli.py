"""Faults through the real command line (`python -m theorylab run`, in process or as a
subprocess for signals): each ends with its exit code, one `error: <field>: ...` line, and the
files it leaves behind checked."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from theorylab.commands.run import main

SMALL = """[data]
D = 6
C = 2
partition = "random"
d = 5
q = 0.4

[model]
activation = "cubic"
temperature = 1.0
value_scale = 1.0
diag = 0.7

[train]
engine = "population"
method = "{method}"
lr_v = 0.5
alpha0 = 0.5
steps = {steps}
record = "all"
offdiag0 = {offdiag0}
"""


def config(tmp_path, name="c.toml", method="brute", steps=40, offdiag0=0.0) -> Path:
    path = tmp_path / name
    path.write_text(SMALL.format(method=method, steps=steps, offdiag0=offdiag0))
    return path


def one_error_line(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


def run(*argv) -> int:
    return main([str(a) for a in argv] + ["--no-progress"])


# -- output folders --
def test_out_is_an_existing_file(tmp_path, capsys):
    (tmp_path / "f").write_text("x")
    assert run(config(tmp_path), "--out", tmp_path / "f") == 2
    assert one_error_line(capsys) == f"error: out: {tmp_path / 'f'} is a file, not a folder"
    assert (tmp_path / "f").read_text() == "x"


def test_out_below_a_file(tmp_path, capsys):
    (tmp_path / "f").write_text("x")
    assert run(config(tmp_path), "--out", tmp_path / "f" / "run") == 2
    assert one_error_line(capsys) == (f"error: out: {tmp_path / 'f' / 'run'} is below the file "
                                      f"{tmp_path / 'f'}, not a folder")


def test_out_empty(tmp_path, capsys):
    assert run(config(tmp_path), "--out", "") == 2
    assert one_error_line(capsys) == "error: out: must name a folder (got an empty path)"


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into read-only folders")
def test_out_read_only(tmp_path, capsys):
    ro = tmp_path / "ro"
    ro.mkdir(mode=0o555)
    assert run(config(tmp_path), "--out", ro) == 2
    assert one_error_line(capsys).startswith("error: out: the folder")


def test_files_follow_the_umask(tmp_path):
    old = os.umask(0o022)
    try:
        assert run(config(tmp_path, steps=3), "--out", tmp_path / "r") == 0
    finally:
        os.umask(old)
    for name in ("config.toml", "trajectory.csv", "checkpoint.npz", "final_state.npz"):
        assert stat.S_IMODE((tmp_path / "r" / name).stat().st_mode) == 0o644, name


def test_a_new_run_leaves_nothing_of_the_old_one(tmp_path):
    out = tmp_path / "r"
    assert run(config(tmp_path, steps=30), "--out", out) == 0
    killed = out / ".trajectory.csv.k8pj8d_8.tmp"  # the temporary of a killed atomic write
    killed.write_text("torn")
    os.utime(killed, (1, 1))  # old: not a write under way
    (out / ".draft.tmp").write_text("a file of the user's")
    # a new run in the same folder, killed before its end: simulated by a diverging config
    # (it stops with exit 3 after its first rows)
    bad = config(tmp_path, "bad.toml", steps=400).read_text().replace("lr_v = 0.5",
                                                                        "lr_v = 1e6")
    (tmp_path / "bad.toml").write_text(bad)
    assert run(tmp_path / "bad.toml", "--out", out) == 3
    assert not (out / "final_state.npz").exists()  # the old run's final state is gone
    assert [p.name for p in out.glob(".*.tmp")] == [".draft.tmp"]  # only the killed write's
    assert "lr_v = 1000000.0" in (out / "config.toml").read_text()


# -- resume --
@pytest.fixture
def finished(tmp_path):
    out = tmp_path / "r"
    assert run(config(tmp_path, steps=40), "--out", out) == 0
    return out


@pytest.mark.parametrize("damage", ["truncated", "empty", "garbage", "pickle"])
def test_resume_refuses_a_damaged_checkpoint(tmp_path, finished, capsys, damage):
    ckpt = finished / "checkpoint.npz"
    data = ckpt.read_bytes()
    if damage == "truncated":
        ckpt.write_bytes(data[: len(data) // 2])
    elif damage == "empty":
        ckpt.write_bytes(b"")
    elif damage == "garbage":
        ckpt.write_bytes(os.urandom(300))
    else:  # an object array: would need allow_pickle
        np.savez(ckpt, step=np.array(5), A=np.array([object()]), v=np.zeros(5))
    before = (finished / "trajectory.csv").read_bytes()
    assert run(config(tmp_path, steps=60), "--out", finished, "--resume") == 2
    line = one_error_line(capsys)
    assert line.startswith(f"error: resume: {ckpt} is not a readable checkpoint"), line
    assert "allow_pickle" not in line and "unsafe" not in line  # never advice to load it so
    assert (finished / "trajectory.csv").read_bytes() == before  # nothing half-written


def test_resume_refuses_a_foreign_checkpoint(tmp_path, finished, capsys):
    with np.load(finished / "checkpoint.npz") as z:
        identity, rows_to = z["run_identity"], z["rows_to"]
    np.savez(finished / "checkpoint.npz", step=np.array(5), A=np.zeros((4, 4)), v=np.zeros(5))
    assert run(config(tmp_path, steps=60), "--out", finished, "--resume") == 2
    assert "carries no run identity" in one_error_line(capsys)
    # this run's identity, another run's arrays
    np.savez(finished / "checkpoint.npz", step=np.array(5), A=np.zeros((4, 4)), v=np.zeros(5),
             run_identity=identity, rows_to=rows_to)
    assert run(config(tmp_path, steps=60), "--out", finished, "--resume") == 2
    line = one_error_line(capsys)
    assert "holds arrays" in line and "it belongs to another run" in line


def test_resume_refuses_fewer_steps_than_done(tmp_path, finished, capsys):
    assert run(config(tmp_path, steps=40), "--out", finished, "--steps", "10", "--resume") == 2
    assert one_error_line(capsys) == (f"error: resume: {finished} is already at step 40, beyond "
                                      "the requested 10 steps; ask for at least 40 steps")
    assert (finished / "final_state.npz").exists()  # the finished run is left as it was


def test_resume_drops_a_torn_last_row(tmp_path):
    full = tmp_path / "full"
    assert run(config(tmp_path, steps=40), "--out", full) == 0
    part = tmp_path / "part"
    assert run(config(tmp_path, steps=20), "--out", part) == 0
    text = (part / "trajectory.csv").read_text()
    (part / "trajectory.csv").write_text(text[:-25])  # the last row cut mid-line
    assert run(config(tmp_path, steps=40), "--out", part, "--resume") == 0
    pd.testing.assert_frame_equal(pd.read_csv(part / "trajectory.csv"),
                                  pd.read_csv(full / "trajectory.csv"))


def test_resume_with_large_attention_entries(tmp_path):
    """Exchangeable engine: the partition-symmetry check of the checkpoint is relative to the
    size of A (the absolute 1e-12 refused a valid run with entries ~1e5)."""
    out = tmp_path / "r"
    cfg = config(tmp_path, method="exchangeable", steps=10, offdiag0=12345.678)
    assert run(cfg, "--out", out) == 0
    assert run(config(tmp_path, method="exchangeable", steps=20, offdiag0=12345.678),
               "--out", out, "--resume") == 0
    assert pd.read_csv(out / "trajectory.csv").step.iloc[-1] == 20


# -- signals --
@pytest.mark.parametrize("sig", [signal.SIGINT, signal.SIGTERM])
def test_signal_stops_cleanly_and_names_the_resume_command(tmp_path, sig):
    cfg = config(tmp_path, steps=200000)
    out = tmp_path / "r"
    proc = subprocess.Popen([sys.executable, "-m", "theorylab", "run", str(cfg), "--out", str(out),
                             "--no-progress"], stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 60
    while not (out / "checkpoint.npz").exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    time.sleep(0.5)
    proc.send_signal(sig)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + sig, err  # 130 for SIGINT, 143 for SIGTERM
    # a run predicted longer than a minute prints its estimate first (stderr, lines of its own)
    lines = [line for line in err.strip().splitlines()
             if not line.startswith(("estimate: ", "  "))]
    assert len(lines) == 1 and lines[0].startswith("interrupted at step ")
    assert f"--out {out} --resume" in lines[0]
    step = int(lines[0].split()[3].rstrip(";"))
    with np.load(out / "checkpoint.npz") as z:
        assert int(z["step"]) == step
    # the resume command continues (a few more steps)
    assert run(cfg, "--out", out, "--resume", "--steps", str(step + 5)) == 0
    assert pd.read_csv(out / "trajectory.csv").step.iloc[-1] == step + 5


# -- sizes --------------------------------------------------------------------------------------
def test_memory_is_checked_before_anything_is_allocated(tmp_path, capsys, monkeypatch):
    """Brute force at D = 16 (76.5M configurations, ~13 GB) on a machine with 4 GB free: one
    line naming the field and what fits, before the enumeration starts, and no run folder."""
    from theorylab.core import resources

    monkeypatch.setattr(resources, "host_free_bytes", lambda: 4e9)
    cfg = tmp_path / "big.toml"
    cfg.write_text(SMALL.format(method="brute", steps=5, offdiag0=0.0).replace(
        "D = 6", "D = 16").replace("[train]", "[train]\nmax_configs = 1000000000"))
    t0 = time.perf_counter()
    assert run(cfg, "--out", tmp_path / "r") == 2
    assert time.perf_counter() - t0 < 5  # refused up front, not after allocating
    line = one_error_line(capsys)
    assert line.startswith("error: train.method: brute force (76527504 configurations of "
                           "D = 16 patches) needs about "), line
    assert "4 GB is free; use method = 'exchangeable'" in line
    cfg.write_text(SMALL.format(method="auto", steps=5, offdiag0=0.0).replace(
        'engine = "population"', 'engine = "empirical"\nn_train = 100000000').replace(
        "d = 5", "d = 1000"))
    assert run(cfg, "--out", tmp_path / "r") == 2
    assert one_error_line(capsys).startswith("error: train.n_train: the empirical engine")
    assert not (tmp_path / "r").exists()


def test_memory_estimate_bounds_the_measured_peak(tmp_path):
    """The brute-force estimate is an upper estimate of the engine's peak memory (measured in
    a fresh process with tracemalloc, which sees numpy's and Python's allocations), and not
    more than twice it (a useless bound would refuse runs that fit)."""
    code = """
import tracemalloc
from theorylab.jelassi2022 import DataConfig, ExperimentConfig, TrainConfig, make_wstar
from theorylab.jelassi2022.engines import BruteForceEngine, memory_estimate
from theorylab.core.backend import get_backend
cfg = ExperimentConfig(data=DataConfig(D=12, C=2, d=5, q=0.4),
                       train=TrainConfig(method="brute")).resolved()
part = cfg.data.make_partition()
w = make_wstar(cfg.data)
xp = get_backend("numpy")
tracemalloc.start()
BruteForceEngine(cfg, xp, part, w)
print(tracemalloc.get_traced_memory()[1], memory_estimate(cfg, part, "brute")[0])
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True).stdout.split()
    peak, estimate = float(out[0]), float(out[1])
    assert peak <= estimate <= 2 * peak, (peak, estimate)


@pytest.mark.parametrize("argv", [["config"], ["figures", "--list"]])
def test_a_closed_output_pipe_ends_quietly(argv):
    """``theorylab ... | head``: the reader of stdout gone before the command writes, the
    command stops with no traceback and the status of a tool stopped by SIGPIPE (141)."""
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    proc = subprocess.Popen([sys.executable, "-m", "theorylab", *argv], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, env=env)
    proc.stdout.close()  # before the interpreter has started: its first write breaks
    with proc.stderr:
        err = proc.stderr.read().decode()
    assert proc.wait(timeout=120) == 128 + signal.SIGPIPE and err == "", err
