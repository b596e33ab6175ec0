"""Every command ends a signal and a full disk the same way: one line, no traceback, what was
kept, and the exit status 130 (SIGINT), 143 (SIGTERM) or 1 (a full disk).

The faults are injected where the command's work runs (a claim, a figure, a measurement, a
plot, a run's row, a sweep's point file), in this process: the signal is a real one sent to
this process, handled by the commands' shared handler (``theorylab.core.faults``).
"""

from __future__ import annotations

import errno
import os
import signal
import sys
import time
from pathlib import Path

import pytest

import theorylab.commands.check as check_mod
from theorylab.commands import main
from theorylab.core import faults
from theorylab.core.sweep import SweepInterrupted

SIGNALS = [signal.SIGINT, signal.SIGTERM]


def _signal_self(sig):
    def work(*_a, **_k):
        os.kill(os.getpid(), sig)
        time.sleep(30)  # interrupted by the handler long before
        raise AssertionError("the signal was not handled")
    return work


def _disk_full(*_a, **_k):
    raise OSError(errno.ENOSPC, "No space left on device", "/full/disk/file")


def _one_line(capsys) -> str:
    err = capsys.readouterr().err
    assert "Traceback" not in err, err
    lines = [line for line in err.splitlines() if line.strip()]
    assert len(lines) == 1, err
    return lines[0]


@pytest.fixture(autouse=True)
def _handlers_restored():
    before = (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM))
    yield
    assert (signal.getsignal(signal.SIGINT), signal.getsignal(signal.SIGTERM)) == before


class _FakeClaim:
    """A claim of no paper: its check is the fault injected."""

    paper, id, key, label, kind, title = "probe", "c", "probe/c", "FOUND", "sanity check", "c"
    devices = ("cpu",)

    def __init__(self, check):
        self.check = check


@pytest.mark.parametrize("sig", SIGNALS)
def test_check_stops_at_once_and_keeps_what_it_wrote(tmp_path, capsys, monkeypatch, sig):
    ran = []

    def second(quick, **_k):
        ran.append("second")

    claims = {"probe/a": _FakeClaim(_signal_self(sig)), "probe/b": _FakeClaim(second)}
    monkeypatch.setattr(check_mod, "all_claims", lambda: claims)
    monkeypatch.setattr(check_mod, "resolve_claims", lambda *a, **k: list(claims))
    assert main(["check", "--out", str(tmp_path / "out"), "--no-figures"]) == 128 + sig
    line = _one_line(capsys)
    assert line.startswith(f"check: interrupted by {signal.Signals(sig).name}; "), line
    assert ran == []  # the other claims do not go on
    assert not list((tmp_path / "out").rglob("summary.*"))


def test_an_interrupted_sweep_inside_a_claim_stops_the_whole_check(tmp_path, capsys,
                                                                    monkeypatch):
    def claim(quick, **_k):
        raise SweepInterrupted("interrupted", [], {})

    claims = {"probe/a": _FakeClaim(claim), "probe/b": _FakeClaim(lambda quick, **_k: None)}
    monkeypatch.setattr(check_mod, "all_claims", lambda: claims)
    with pytest.raises(KeyboardInterrupt):  # never an `error` row: the interrupt goes up
        check_mod.run_checks(None, out=None)


@pytest.mark.parametrize("sig", SIGNALS)
def test_figures_bench_and_plot_stop_in_one_line(tmp_path, capsys, monkeypatch, sig):
    import theorylab.commands.figures as figures_main
    import theorylab.commands.plot as plot
    import theorylab.huang2024.bench.cases as hbench

    monkeypatch.setattr(figures_main, "run_figures", _signal_self(sig))
    assert main(["figures", "--quick", "--out", str(tmp_path / "f")]) == 128 + sig
    assert _one_line(capsys).startswith(f"figures: interrupted by {signal.Signals(sig).name}")

    rows = iter([{"P": 16, "numpy_s": 1.0, "torch_s": 1.0, "autograd_s": 1.0,
                  "torch/autograd": 1.0, "torch_vs_numpy": 0.0}])
    monkeypatch.setattr(hbench, "bench_exact",
                        lambda *a, **k: next(rows, None) or _signal_self(sig)())
    assert main(["bench", "--paper", "huang2024", "--sizes", "16", "16"]) == 128 + sig
    err = capsys.readouterr().err
    assert "Traceback" not in err and err.count("\n") == 1, err
    assert err.startswith(f"bench: interrupted by {signal.Signals(sig).name}; kept: the rows "
                          "of P = 16 (printed above; no CSV written)"), err

    run = tmp_path / "r"
    run.mkdir()
    (run / "trajectory.csv").write_text("step,loss\n0,1\n1,0.5\n")
    monkeypatch.setattr(plot, "plot_run", _signal_self(sig))
    assert main(["plot", str(run)]) == 128 + sig
    assert _one_line(capsys).startswith(f"plot: interrupted by {signal.Signals(sig).name}; "
                                        "nothing written")


def _toml(tmp_path: Path, steps: int = 200) -> Path:
    cfg = tmp_path / "c.toml"
    cfg.write_text(f"[data]\nD = 4\nC = 2\nd = 20\n[train]\nsteps = {steps}\nrecord = \"all\"\n")
    return cfg


def test_a_full_disk_during_a_run_says_what_was_kept_and_how_to_resume(tmp_path, capsys,
                                                                        monkeypatch):
    from theorylab.core.trainer import RunFolder

    real, n = RunFolder.append_row, {"rows": 0}

    def append(self, row):
        n["rows"] += 1
        if n["rows"] > 5:
            _disk_full()
        real(self, row)

    monkeypatch.setattr(RunFolder, "append_row", append)
    out = tmp_path / "r"
    assert main(["run", str(_toml(tmp_path)), "--out", str(out), "--no-progress"]) == 1
    line = _one_line(capsys)
    assert line.startswith("error: disk full: No space left on device ('/full/disk/file'); "
                           f"kept: 5 rows to step 4 and a checkpoint at step 0 in {out}; resume "
                           f"with: {sys.executable} -m theorylab run "), line
    monkeypatch.setattr(RunFolder, "append_row", real)  # space freed: the resume completes
    assert main(["run", str(_toml(tmp_path)), "--out", str(out), "--resume",
                 "--no-progress"]) == 0


def test_a_full_disk_during_a_sweep_keeps_the_finished_points(tmp_path, capsys, monkeypatch):
    from theorylab.core.sweep.store import Store

    real, n = Store.write, {"points": 0}

    def write(self, point, table):
        n["points"] += 1
        if n["points"] > 1:
            _disk_full()
        real(self, point, table)

    monkeypatch.setattr(Store, "write", write)
    spec = tmp_path / "s.toml"
    spec.write_text("[base_config.data]\nD = 4\nC = 2\nd = 20\n[base_config.train]\nsteps = 10\n"
                    "[sweep]\naxes = {\"data.q\" = [0.1, 0.2, 0.3]}\n")
    out = tmp_path / "store"
    assert main(["sweep", str(spec), "--out", str(out), "--workers", "0", "--no-progress"]) == 1
    line = _one_line(capsys)
    assert line.startswith("error: disk full: ") and (
        f"kept: 1 finished point file(s) in {out}; resume with: ") in line, line


@pytest.mark.parametrize("command", ["check", "figures", "plot", "config"])
def test_a_full_disk_in_the_other_commands_is_one_line(tmp_path, capsys, monkeypatch, command):
    import theorylab.commands.figures as figures_main
    import theorylab.core.atomic_io as atomic_io

    if command == "check":
        monkeypatch.setattr(check_mod, "all_claims", lambda: {"probe/a": _FakeClaim(_disk_full)})
        monkeypatch.setattr(check_mod, "resolve_claims", lambda *a, **k: ["probe/a"])
        argv = ["check", "--out", str(tmp_path / "o"), "--no-figures"]
    elif command == "figures":
        monkeypatch.setattr(figures_main, "run_figures", _disk_full)
        argv = ["figures", "--quick", "--out", str(tmp_path / "o")]
    elif command == "plot":
        (tmp_path / "r").mkdir()
        (tmp_path / "r" / "trajectory.csv").write_text("step,loss\n0,1\n1,0.5\n")
        monkeypatch.setattr(atomic_io, "atomic_write_bytes", _disk_full)
        argv = ["plot", str(tmp_path / "r")]
    else:
        monkeypatch.setattr(atomic_io, "atomic_write_bytes", _disk_full)
        argv = ["config", "--out", str(tmp_path / "c.md")]
    assert main(argv) == 1
    assert _one_line(capsys).startswith("error: disk full: No space left on device")


def test_the_handler_is_the_same_for_every_command():
    import importlib

    from theorylab.commands import COMMANDS

    for name, (module, _) in COMMANDS.items():
        fn = importlib.import_module(module).main
        assert getattr(fn, "__wrapped__", None) is not None, f"{name}: main is not wrapped"
    assert faults.stop_code() in (130, 143)


def test_an_interrupt_during_a_librarys_import_waits_for_its_end():
    """A signal in the middle of a C extension's import (torch's) is noted and raised once the
    import is done: an interrupted initialisation can make the process abort at its exit."""
    done = []
    with faults.stop_signals():
        with pytest.raises(KeyboardInterrupt):
            with faults.deferred_signals():
                os.kill(os.getpid(), signal.SIGTERM)
                time.sleep(0.2)  # the handler would have run by now: it is deferred
                done.append("the import finished")
        assert done == ["the import finished"] and faults.stop_code() == 143
