"""Ctrl-C during a check whose grids run on a local Dask cluster (``--workers 2``): the command
ends within seconds, exit 130, with its one line and nothing else (no worker's heartbeat
traceback from a scheduler already closed, no wait on workers that do not answer)."""

from __future__ import annotations

import signal
import subprocess
import sys
import time

import pytest


@pytest.mark.slow
@pytest.mark.parametrize("after_s", [1.0, 3.0])
def test_ctrl_c_with_dask_workers_ends_in_one_line(tmp_path, after_s):
    proc = subprocess.Popen([sys.executable, "-m", "theorylab", "check", "--only",
                             "huang2024/thm4.2", "--quick", "--workers", "2", "--no-figures",
                             "--out", str(tmp_path / "o")], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    assert proc.stdout.readline().startswith("Dask dashboard: ")  # the cluster is up
    time.sleep(after_s)
    proc.send_signal(signal.SIGINT)
    t0 = time.monotonic()
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130, err
    assert time.monotonic() - t0 < 30  # the client and cluster close within their timeouts
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("check: interrupted by SIGINT; "), err
