"""``--slurm`` for real: a one-node SLURM cluster (tests/core/slurm_node.py) runs the worked
example of docs/sweeps.md (its spec and its command, read from the page), and its table equals
the same sweep run in this process. Skips with the reason where SLURM, munge or dask-jobqueue
are absent, or the tests do not run as root."""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from theorylab.core.sweep import PROVENANCE_COLUMNS, load_sweep, run_sweep_spec

from . import slurm_node

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "sweeps.md"


def _example() -> tuple[str, str, list[str]]:
    """The worked SLURM example of docs/sweeps.md: (spec file name, its TOML, the command)."""
    text = DOC.read_text()
    section = text[text.index("### A worked example on SLURM"):]
    name, spec = re.search(r"```toml\n# (\S+\.toml)\n(.*?)```", section, re.S).groups()
    command = next(line for line in re.search(r"```sh\n(.*?)```", section, re.S).group(1)
                   .splitlines() if "--slurm" in line)
    return name, spec, shlex.split(command.split("#")[0])


@pytest.fixture(scope="module")
def slurm(tmp_path_factory):
    pytest.importorskip("dask_jobqueue", reason="dask-jobqueue (the extra 'cluster') is "
                                                "not installed")
    try:
        env, stop = slurm_node.start(tmp_path_factory.mktemp("slurm"))
    except slurm_node.UnavailableError as e:
        pytest.skip(f"no one-node SLURM cluster: {e}")
    yield env
    stop()


def test_documented_slurm_example_equals_the_local_run(slurm, tmp_path):
    name, spec, command = _example()
    (tmp_path / name).write_text(spec)
    assert command[:4] == ["python", "-m", "theorylab", "sweep"] and "--slurm" in command
    out = tmp_path / command[command.index("--out") + 1]
    env = {**slurm, "PYTHONPATH": os.pathsep.join(filter(None, [str(ROOT),
                                                                os.environ.get("PYTHONPATH")]))}
    run = subprocess.run([sys.executable, *command[1:], "--no-progress"], cwd=tmp_path,
                         env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stdout + run.stderr
    # Dask's and dask-jobqueue's own log lines stay quiet
    assert "INFO" not in run.stderr and "distributed." not in run.stderr, run.stderr
    remote = load_sweep(out)
    local = run_sweep_spec(tmp_path / name, tmp_path / "local", workers=0, progress=False,
                           say=lambda *_: None)
    drop = list(PROVENANCE_COLUMNS)
    assert (remote.status == "ok").all() and len(remote) == len(local)
    assert remote.drop(columns=drop).equals(local.drop(columns=drop))
