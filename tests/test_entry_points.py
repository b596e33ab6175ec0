"""Every entry point dispatches by paper: ``[experiment] paper`` in run configs (default
jelassi2022, so the configs in examples/ run unchanged), ``--list``, and clean errors that
name the known papers."""

import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from theorylab.commands.run import main
from theorylab.core.config import read_toml
from theorylab.papers import DEFAULT_PAPER, PAPERS, get_paper

EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("*.toml"))
#: the examples written before the second paper: no [experiment] section
OLD_EXAMPLES = [p for p in EXAMPLES if not p.name.startswith("huang2024")]


def test_papers_registry():
    assert DEFAULT_PAPER == "jelassi2022" and list(PAPERS) == ["jelassi2022", "huang2024"]
    assert get_paper("jelassi2022").notes_path() == Path("docs/papers/jelassi2022.md")
    assert get_paper("jelassi2022").notes_path().name in {
        p.name for p in (Path(__file__).resolve().parents[1] / "docs" / "papers").glob("*.md")}
    with pytest.raises(ValueError, match=r"unknown paper 'nope' \(known: \['jelassi2022', "):
        get_paper("nope")


@pytest.mark.parametrize("example", EXAMPLES, ids=lambda p: p.name)
def test_every_example_runs(example, tmp_path):
    """The examples written before the second paper carry no [experiment] section and run as
    jelassi2022 configs; the written config.toml names the paper."""
    paper = read_toml(example).get("experiment", {}).get("paper")
    assert (paper is None) == (example in OLD_EXAMPLES)
    out = tmp_path / "run"
    assert main([str(example), "--out", str(out), "--steps", "2", "--no-progress"]) == 0
    assert pd.read_csv(out / "trajectory.csv").step.iloc[-1] == 2
    assert read_toml(out / "config.toml")["experiment"] == {"paper": paper or "jelassi2022"}


def test_explicit_paper_and_unknown_paper(tmp_path, capsys):
    src = (OLD_EXAMPLES[0]).read_text()
    ok = tmp_path / "ok.toml"
    ok.write_text('[experiment]\npaper = "jelassi2022"\n\n' + src)
    assert main([str(ok), "--out", str(tmp_path / "a"), "--steps", "1", "--no-progress"]) == 0
    bad = tmp_path / "bad.toml"
    bad.write_text('[experiment]\npaper = "huang2042"\n\n' + src)
    assert main([str(bad), "--out", str(tmp_path / "b"), "--steps", "1"]) == 2
    err = capsys.readouterr().err.strip()
    assert err == ("error: experiment.paper: unknown paper 'huang2042' "
                   "(known: ['jelassi2022', 'huang2024'])")


def test_run_list():
    r = subprocess.run([sys.executable, "-m", "theorylab", "run", "--list"], capture_output=True,
                       text=True)
    assert r.returncode == 0 and r.stdout.startswith("jelassi2022 (default): Jelassi")


def test_figures_only_accepts_a_paper(capsys):
    from theorylab.commands.figures import main as figures_main

    assert figures_main(["--list"]) == 0
    listed = capsys.readouterr().out.splitlines()
    assert listed and all("jelassi2022" in line or "huang2024" in line for line in listed)
    assert figures_main(["--only", "huang2042"]) == 2
    assert "error: --only: unknown figure id or paper (got 'huang2042')" in capsys.readouterr().err


def test_a_package_whose_entry_points_are_not_installed_says_so():
    """Run from a checkout that was never installed (no entry points written), the registry
    has no papers and says how to install them, in one line."""
    code = ("import importlib.metadata as m; m.distributions = lambda **k: iter(())\n"
            "from theorylab.core import registry\nprint(registry.papers(), repr(registry."
            "default_paper()))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0 and r.stdout.strip() == "{} ''"
    assert r.stderr.strip() == ("theorylab.papers: no paper of theorylab is installed (install "
                                "the package: pip install -e .)")
