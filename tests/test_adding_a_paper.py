"""A paper the package has never seen: the worked example of docs/adding-a-paper.md (gradient
descent on a one-parameter logistic model with a closed-form population risk), defined only by
that page's code, registered with ``theorylab.papers.register`` and run through ``run``,
``check``, ``figures``, ``sweep`` and ``plot``; no module of the package may name it.
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path

import pandas as pd
import pytest

from theorylab import papers
from theorylab.commands import main as theorylab
from theorylab.core.figures import list_figures

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "docs" / "adding-a-paper.md"
FENCE = re.compile(r"^```python[ \t]*\n(?P<code>.*?)^```", re.M | re.S)


def guide_paper() -> dict:
    """The namespace of the guide's blocks that define the paper (the block that registers it
    and runs the commands is the guide's own demonstration, left out here)."""
    ns: dict = {"__name__": "logistic1d_guide"}
    for code in FENCE.findall(GUIDE.read_text(encoding="utf-8")):
        if "papers.register(" not in code:
            exec(compile(code, str(GUIDE), "exec", dont_inherit=True), ns)
    return ns


@pytest.fixture
def toy(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ns = guide_paper()
    papers.register(ns["PAPER"])
    try:
        yield ns
    finally:
        papers.unregister("logistic1d")
    assert "logistic1d" not in papers.PAPERS
    assert not [s for s in list_figures() if s.paper == "logistic1d"]


def test_no_module_of_the_package_names_the_paper():
    hits = [p for p in (ROOT / "theorylab").rglob("*.py") if "logistic1d" in p.read_text()]
    assert not hits, f"package modules that know the example paper: {hits}"


def test_the_toy_paper_runs_through_every_command(toy, tmp_path, capsys):
    name = toy["NAME"]
    # run: a config of the new paper, through the kernel's training loop
    Path("one.toml").write_text(f'[experiment]\npaper = "{name}"\n[data]\nq = 0.2\n'
                                '[train]\nsteps = 80\n')
    assert theorylab(["run", "one.toml", "--out", "one", "--no-progress"]) == 0
    traj = pd.read_csv("one/trajectory.csv")
    w_star = math.log(0.8 / 0.2)
    # exact arithmetic: after 80 steps the gap is ~ 1.4 * 0.84^80 ~ 1e-6 (contraction factor
    # 1 - lr q (1 - q) = 0.84); the recorded gap is |w - w*| to rounding (1e-12)
    assert traj["step"].iloc[-1] == 80 and traj["gap"].iloc[-1] < 1e-5
    assert abs(traj["w"].iloc[-1] - w_star) == pytest.approx(traj["gap"].iloc[-1], abs=1e-12)
    assert (Path("one") / "config.toml").read_text().count(f'paper = "{name}"') == 1
    # its bad input is refused like any paper's: one line naming the field, exit 2
    Path("bad.toml").write_text(f'[experiment]\npaper = "{name}"\n[data]\nq = 0.7\n')
    capsys.readouterr()
    assert theorylab(["run", "bad.toml", "--out", "bad"]) == 2
    assert capsys.readouterr().err.startswith("error: data.q: must be <= 0.5")
    # check: its claim is listed and judged
    assert theorylab(["check", "--list"]) == 0
    assert f"{name}/rate" in capsys.readouterr().out
    assert theorylab(["check", "--only", name, "--out", "results", "--no-figures"]) == 0
    summary = pd.read_csv(f"results/{name}/summary.csv")
    assert list(summary["claim"]) == [f"{name}/rate"] and summary["verdict"][0] == "agrees"
    assert Path(f"results/{name}/rate.md").is_file()
    # figures: its figure renders by paper name
    assert theorylab(["figures", "--only", name, "--out", "figs", "--quick"]) == 0
    assert Path(f"figs/{name}-gap.png").stat().st_size > 0
    # sweep: points of the new paper, in this process; plot: its phase diagram
    Path("spec.toml").write_text(
        f'[base_config.experiment]\npaper = "{name}"\n[base_config.train]\nsteps = 100\n'
        '[sweep]\naxes = {"data.q" = [0.1, 0.3], "train.lr" = [0.5, 2.0, 40.0]}\n')
    assert theorylab(["sweep", "spec.toml", "--out", "sw", "--workers", "0",
                      "--no-progress"]) == 0
    table = pd.read_parquet("sw/results.parquet")
    assert len(table) == 6 and set(table["status"]) == {"ok"}
    # lr = 40 is past the stable step size 2 / R''(w*) = 2 / (q (1 - q)) (22 at q = 0.1, 9.5 at
    # q = 0.3): GD oscillates about w* without reaching it; at lr = 2 the gap contracts by
    # 1 - 2 q (1 - q) <= 0.82 per step, ~ 1e-8 after 100 steps
    far = table[table["train.lr"] == 40.0]["gap"]
    near = table[table["train.lr"] == 2.0]["gap"]
    assert (far > 1e-2).all() and (near < 1e-6).all()
    assert theorylab(["plot", "sw", "--value", "gap"]) == 0
    assert Path("sw/phase_diagram.png").stat().st_size > 0


def test_register_refuses_what_it_cannot_take():
    ns = guide_paper()
    with pytest.raises(ValueError, match="must be a theorylab.core.paper.Paper"):
        papers.register("logistic1d")
    import dataclasses

    clash = dataclasses.replace(ns["PAPER"], name="jelassi2022")
    with pytest.raises(ValueError, match="is a paper of theorylab"):
        papers.register(clash)
    with pytest.raises(ValueError, match="cannot be removed"):
        papers.unregister("huang2024")
    with pytest.raises(ValueError, match="marked default, and so is 'jelassi2022'"):
        papers.register(dataclasses.replace(ns["PAPER"], default=True))
    with pytest.raises(ValueError, match="no paper registered"):
        papers.unregister("logistic1d")
    papers.register(ns["PAPER"])
    try:
        papers.register(ns["PAPER"])  # the same object again: harmless
        other = dataclasses.replace(ns["PAPER"], title="another")
        with pytest.raises(ValueError, match="another paper is registered"):
            papers.register(other)
        assert papers.register(other, replace=True) is papers.PAPERS["logistic1d"]
    finally:
        papers.unregister("logistic1d")


def _installed() -> list[str]:
    """The papers the installed entry points declare, besides this package's own."""
    return [n for n in papers.load_entry_points() if n not in papers.BUILT_IN]


def test_this_package_declares_its_papers_as_entry_points():
    """Its own papers come from ``[project.entry-points."theorylab.papers"]`` like any
    installed package's: the installed metadata lists them, and loading them again registers
    nothing new (read over every distribution on the path: a stale ``*.egg-info`` of an older
    install in the checkout must not hide them)."""
    from theorylab.core.registry import group_entry_points

    declared = {ep.name: ep.value for ep in group_entry_points()}
    assert {n: declared.get(n) for n in papers.BUILT_IN} == {
        n: f"theorylab.{n}:PAPER" for n in ("jelassi2022", "huang2024")}
    before = dict(papers.PAPERS)
    assert set(papers.load_entry_points()) == set(papers.BUILT_IN)
    assert papers.PAPERS == before


def test_an_installed_entry_point_registers_its_paper(tmp_path, monkeypatch, capsys):
    """A package declaring ``[project.entry-points."theorylab.papers"]``: a distribution's
    metadata on ``sys.path`` with that group, pointing at a module that builds the paper."""
    pkg = tmp_path / "toy_paper_pkg.py"
    code = "\n\n".join(c for c in FENCE.findall(GUIDE.read_text(encoding="utf-8"))
                       if "papers.register(" not in c)
    pkg.write_text(code, encoding="utf-8")
    meta = tmp_path / "toy_paper_pkg-0.1.dist-info"
    meta.mkdir()
    (meta / "METADATA").write_text("Metadata-Version: 2.1\nName: toy-paper-pkg\nVersion: 0.1\n")
    (meta / "entry_points.txt").write_text(
        "[theorylab.papers]\nlogistic1d = toy_paper_pkg:PAPER\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    try:
        assert _installed() == ["logistic1d"]
        assert papers.PAPERS["logistic1d"].title.startswith("A one-parameter logistic")
        assert _installed() == ["logistic1d"]  # loading twice is harmless
    finally:
        papers.unregister("logistic1d")
        sys.modules.pop("toy_paper_pkg", None)
    # a broken entry point is left out with a warning naming it
    (meta / "entry_points.txt").write_text("[theorylab.papers]\nbroken = no_such_module:PAPER\n")
    assert _installed() == []
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "entry point 'broken' (no_such_module:PAPER) not " \
        "loaded (ModuleNotFoundError: " in err, err
