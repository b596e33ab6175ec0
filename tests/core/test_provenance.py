"""How results record their making and where runs write by default (theorylab.core.provenance)."""

from __future__ import annotations

import re
import shutil
import subprocess

import pytest

from theorylab.core import __version__
from theorylab.core.provenance import (
    REPO_ROOT,
    default_out,
    git_commit,
    provenance,
    provenance_line,
    refuse_committed,
)

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def _git(root, *args):
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True)


@needs_git
def test_git_commit_clean_dirty_and_outside_git(tmp_path):
    repo = tmp_path / "repo"
    repo.mkdir()
    _git(repo, "init", "-q")
    (repo / "a.txt").write_text("1\n")
    _git(repo, "add", "a.txt")
    _git(repo, "-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "one")
    head = subprocess.run(["git", "-C", str(repo), "rev-parse", "--short", "HEAD"],
                          capture_output=True, text=True, check=True).stdout.strip()
    assert git_commit(repo) == head
    # a full run rewrites the committed output folders: that alone does not make it dirty
    (repo / "docs" / "results").mkdir(parents=True)
    (repo / "docs" / "results" / "x.md").write_text("new\n")
    (repo / "figures").mkdir()
    (repo / "figures" / "manifest.json").write_text("{}\n")
    assert git_commit(repo) == head
    (repo / "a.txt").write_text("2\n")
    assert git_commit(repo) == head + "+dirty"
    outside = tmp_path / "plain"
    outside.mkdir()
    assert git_commit(outside) == "unknown"


def test_git_commit_without_git(tmp_path, monkeypatch):
    monkeypatch.setenv("PATH", str(tmp_path))  # no git executable on the PATH
    assert git_commit(REPO_ROOT) == "unknown"


def test_provenance_fields():
    made = provenance(quick=True)
    assert made["run"] == "quick" and provenance(quick=False)["run"] == "full"
    assert made["version"] == __version__
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", made["date"])
    assert re.fullmatch(r"[0-9a-f]{4,40}(\+dirty)?|unknown", made["commit"])
    line = provenance_line(made)
    assert line.startswith("quick run, commit `") and made["date"] in line


def test_default_out_and_refusal(tmp_path):
    assert default_out("figures", quick=False) == "figures"
    assert default_out("results", quick=False) == "docs/results"
    assert default_out("figures", quick=True) == "runs/quick/figures"
    assert default_out("results", quick=True) == "runs/quick/results"
    assert default_out("figures", quick=False, custom=True) == "runs/custom/figures"
    for out in (REPO_ROOT / "docs" / "results", REPO_ROOT / "docs" / "results" / "huang2024"):
        with pytest.raises(ValueError, match=r"^--out: .*committed results"):
            refuse_committed(out, "results", "--quick")
    with pytest.raises(ValueError, match=r"^--out: .*committed figures.*--seed run"):
        refuse_committed(REPO_ROOT / "figures", "figures", "--seed")
    refuse_committed(tmp_path, "figures", "--quick")  # anywhere else is fine
    refuse_committed(REPO_ROOT / "runs" / "quick" / "figures", "figures", "--quick")
