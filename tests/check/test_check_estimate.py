"""``theorylab check`` and ``theorylab figures`` say what their parts took in their last run
before a run of more than a minute (the summaries' and the manifest's recorded runtimes: CPU
seconds where recorded, else wall seconds), with the wall time at the load now, so a long run
is announced and a short one is not."""

from __future__ import annotations

import json

import pandas as pd

from theorylab.commands.check import _say_recorded_time, recorded_seconds
from theorylab.commands.figures import _say_estimate
from theorylab.commands.figures import recorded_seconds as figure_seconds
from theorylab.core.provenance import COMMITTED, REPO_ROOT


def test_recorded_seconds_are_the_committed_runtimes():
    table = pd.read_csv(REPO_ROOT / COMMITTED["results"] / "jelassi2022" / "summary.csv")
    ids = list(table.claim[:3])
    seconds, found, clock = recorded_seconds(ids + ["jelassi2022/no-such-claim"])
    assert found == 3
    want = table.cpu_s[:3] if "cpu_s" in table.columns else table.runtime_s[:3]
    assert abs(seconds - float(want.sum())) < 1e-9
    assert clock == ("cpu" if "cpu_s" in table.columns else "wall")


def test_cpu_seconds_are_taken_where_recorded(tmp_path):
    (tmp_path / "p").mkdir()
    pd.DataFrame({"claim": ["p/a", "p/b"], "runtime_s": [100.0, 50.0],
                  "cpu_s": [40.0, 20.0]}).to_csv(tmp_path / "p" / "summary.csv", index=False)
    assert recorded_seconds(["p/a", "p/b"], tmp_path) == (60.0, 2, "cpu")
    pd.DataFrame({"claim": ["p/a", "p/b"], "runtime_s": [100.0, 50.0],
                  "cpu_s": [40.0, None]}).to_csv(tmp_path / "p" / "summary.csv", index=False)
    assert recorded_seconds(["p/a", "p/b"], tmp_path) == (90.0, 2, "wall")


def _starting_cost(monkeypatch, seconds: float = 2.0) -> None:
    """The command's own CPU time so far, as a fresh command has it (this test process has
    spent far more)."""
    monkeypatch.setattr("theorylab.core.cost.cpu_seconds", lambda: seconds)


def test_a_long_run_is_announced_and_a_short_one_not(capsys, tmp_path, monkeypatch):
    _starting_cost(monkeypatch)
    table = pd.read_csv(REPO_ROOT / COMMITTED["results"] / "jelassi2022" / "summary.csv")
    ids = list(table.claim)
    _say_recorded_time(ids, tmp_path / "new")  # a full run into a new folder: the committed
    out = capsys.readouterr().out
    assert table.runtime_s.sum() > 60  # the committed full run took minutes
    assert out.startswith("estimate: about ") and f"for {len(ids)} claims" in out
    assert "of CPU time (" in out and "wall" in out and "load average" in out
    _say_recorded_time(["jelassi2022/no-such-claim"])
    _say_recorded_time(ids, tmp_path / "new", quick=True)  # no quick run recorded there
    assert capsys.readouterr().out == ""


def test_figures_estimate_from_the_manifest_of_the_same_kind_of_run(tmp_path, capsys,
                                                                   monkeypatch):
    _starting_cost(monkeypatch)
    manifest = {"figures": {"a": {"quick": False, "runtime_s": 90.0, "cpu_s": 70.0},
                            "b": {"quick": False, "runtime_s": 30.0},
                            "c": {"quick": True, "runtime_s": 5.0, "cpu_s": 4.0}}}
    assert figure_seconds(["a"], manifest, False) == (70.0, 1, "cpu")
    assert figure_seconds(["a", "b", "c"], manifest, False) == (100.0, 2, "wall")
    assert figure_seconds(["a", "c"], manifest, True) == (4.0, 1, "cpu")
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    _say_estimate(["a", "c"], tmp_path, False)
    out = capsys.readouterr().out.splitlines()
    assert out[0].startswith("estimate: about ") and "for 2 figures" in out[0]
    assert "CPU time of the last run of 1 figure" in out[1] and "1 of the 2 figures" in out[1]
    assert "about 1 min 12 s of CPU time" in out[0]  # 70 s recorded and 2 s spent starting
    _say_estimate(["c"], tmp_path, True)  # 4 s: short, nothing said
    assert capsys.readouterr().out == ""
