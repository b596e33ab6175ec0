"""Where ``python -m theorylab check`` writes, what its pages record about the run, how it ends
without the Fashion-MNIST files, and that quick runs of both commands leave the committed
results alone."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys

import pandas as pd
import pytest

from theorylab.commands.check import main, run_checks
from theorylab.core.provenance import REPO_ROOT

FAST = "jelassi2022/thm3.2"  # under a second in a quick run, needs no data files
COMMITTED = ("figures", "docs/results")


def test_quick_run_writes_the_scratch_folder_and_records_the_run(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["--quick", "--only", FAST, "--no-figures"]) == 0
    out = tmp_path / "runs" / "quick" / "results" / "jelassi2022"
    page = (out / "thm3.2.md").read_text()
    run = [line for line in page.splitlines() if line.startswith("- **Run:**")]
    assert len(run) == 1 and run[0].startswith("- **Run:** quick run, commit `")
    assert "UTC, theorylab " in run[0]
    assert "Run: quick run, commit `" in (out / "summary.md").read_text()


def test_quick_run_into_the_committed_folder_is_refused(capsys):
    committed = REPO_ROOT / "docs" / "results"
    before = sorted((p, p.stat().st_mtime_ns) for p in committed.rglob("*"))
    for out in (committed, committed / "jelassi2022"):
        assert main(["--quick", "--only", FAST, "--out", str(out)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: --out:") and "committed results" in err
        assert len(err.splitlines()) == 1
    with pytest.raises(ValueError, match="^--out: .*committed results"):
        run_checks([FAST], quick=True, out=committed, figures=False)
    assert sorted((p, p.stat().st_mtime_ns) for p in committed.rglob("*")) == before


def test_claim_without_its_data_is_skipped_not_an_error(no_fashion_mnist, tmp_path, capsys):
    argv = ["--only", FAST, "huang2024/realvit-diversity", "--out", str(tmp_path),
            "--no-figures"]
    assert main(["--quick", *argv]) == 0
    out = capsys.readouterr()
    assert "Traceback" not in out.err
    lines = [line for line in out.out.splitlines() if line.startswith("skipped")]
    assert len(lines) == 1 and "huang2024/realvit-diversity" in lines[0]
    assert "apt-get install dataset-fashion-mnist" in lines[0]
    summary = pd.read_csv(tmp_path / "huang2024" / "summary.csv")
    row = summary.set_index("claim").loc["huang2024/realvit-diversity"]
    assert row.verdict == "skipped" and "dataset-fashion-mnist" in row.headline
    assert "skipped" in (tmp_path / "huang2024" / "summary.md").read_text()
    assert not (tmp_path / "huang2024" / "realvit-diversity.md").exists()
    assert pd.read_csv(tmp_path / "jelassi2022" / "summary.csv").verdict.tolist() == ["agrees"]


def _snapshot():
    status = subprocess.run(["git", "-C", str(REPO_ROOT), "status", "--porcelain", "--",
                             *COMMITTED], capture_output=True, text=True, check=True).stdout
    digests = {p: hashlib.sha256(p.read_bytes()).hexdigest()
               for folder in COMMITTED for p in sorted((REPO_ROOT / folder).rglob("*"))
               if p.is_file()}
    return status, digests


@pytest.mark.skipif(shutil.which("git") is None or not (REPO_ROOT / ".git").exists(),
                    reason="needs git and a git checkout")
def test_quick_smoke_leaves_the_committed_folders_untouched():
    """The quick runs of both commands, from the repository root with their default --out."""
    scratch = REPO_ROOT / "runs" / "quick"
    existed = scratch.exists()
    before = _snapshot()
    env = {**os.environ, "PYTHONPATH": str(REPO_ROOT)}
    try:
        for cmd in (["theorylab", "check", "--quick", "--only", FAST],
                    ["theorylab", "figures", "--quick", "--only", "jelassi2022-fig1b"]):
            r = subprocess.run([sys.executable, "-m", *cmd], cwd=REPO_ROOT, env=env,
                               capture_output=True, text=True, timeout=300)
            assert r.returncode == 0, r.stderr[-2000:]
        assert (scratch / "results" / "jelassi2022" / "thm3.2.md").is_file()
        assert (scratch / "figures" / "jelassi2022-fig1b.png").is_file()
        assert _snapshot() == before
    finally:
        if not existed:
            shutil.rmtree(scratch, ignore_errors=True)
