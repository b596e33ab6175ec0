"""The GPU suite (``theorylab bench --gpu-suite``): its runner (time limits, failed parts, the
summary), its folder checks, and the whole suite at CPU sizes on this machine (what CI runs;
the GPU parts need CUDA and the suite says so)."""

from __future__ import annotations

import sys

import pandas as pd
import pytest

from theorylab.commands import bench as bench_cli
from theorylab.core.benchsuite import SuitePart, check_suite_out, run_suite
from theorylab.papers import PAPERS


def _part(key, code, budget=60.0, out=None):
    """A part that runs ``code`` in a fresh interpreter (``OUT``: its CSV path)."""
    return SuitePart(key, f"part {key}", budget,
                     [sys.executable, "-c", code.replace("OUT", repr(str(out / f"{key}.csv")))],
                     summary=lambda t: [f"{len(t)} rows here"])


def test_runner_keeps_going_after_a_failed_and_a_stopped_part(tmp_path):
    write = "import pandas as pd; pd.DataFrame({'device': ['cpu'], 'x': [1.0]}).to_csv(OUT)"
    parts = [_part("ok", write, out=tmp_path),
             _part("fails", "raise SystemExit('broken part')", out=tmp_path),
             _part("hangs", "import time; time.sleep(60)", budget=5.0, out=tmp_path),
             _part("after", write, out=tmp_path)]
    rows = run_suite(parts, tmp_path, header=["# test suite"], total_s=60.0, log=lambda s: None)
    status = {r["part"]: r["status"] for r in rows}
    assert status == {"ok": "ok", "fails": "failed", "hangs": "timed out", "after": "ok"}
    assert [r["rows"] for r in rows] == [1, 0, 0, 1]
    fails = next(r for r in rows if r["part"] == "fails")
    assert "broken part" in fails["note"]
    hangs = next(r for r in rows if r["part"] == "hangs")
    assert hangs["seconds"] < 30  # stopped at its limit, not at the end of its sleep
    summary = (tmp_path / "summary.md").read_text()
    assert summary.startswith("# test suite") and "| hangs | timed out |" in summary
    assert "1 rows here" in summary
    assert (tmp_path / "logs" / "fails.log").read_text().strip().endswith("broken part")
    table = pd.read_csv(tmp_path / "suite.csv")
    assert list(table["part"]) == ["ok", "fails", "hangs", "after"]


def test_runner_skips_parts_once_the_total_is_spent(tmp_path):
    parts = [_part("slow", "import time; time.sleep(60)", budget=60.0, out=tmp_path),
             _part("next", "pass", out=tmp_path)]
    rows = run_suite(parts, tmp_path, header=["#"], total_s=6.0, log=lambda s: None)
    assert [r["status"] for r in rows] == ["timed out", "skipped"]


def test_suite_folder_takes_a_new_empty_or_previous_suite_folder(tmp_path):
    from theorylab.core.folders import MARKER, folder_kind

    assert check_suite_out(tmp_path / "new").is_dir()
    assert folder_kind(tmp_path / "new").kind == "suite"  # marked
    assert check_suite_out(tmp_path / "new") == tmp_path / "new"
    prev = tmp_path / "prev"  # a suite's folder written before markers existed
    prev.mkdir()
    (prev / "summary.md").write_text("# GPU suite\n")
    (prev / "suite.csv").write_text("part,status\n")
    (prev / "jelassi2022-targets.csv").write_text("device\ncpu\n")
    assert check_suite_out(prev) == prev and (prev / MARKER).is_file()
    mine = tmp_path / "mine"  # a user's folder, even one holding a summary.md
    mine.mkdir()
    (mine / "summary.md").write_text("mine")
    with pytest.raises(ValueError, match="^--out: .* theorylab did not write and that is not "
                                         "empty"):
        check_suite_out(mine)
    assert (mine / "summary.md").read_text() == "mine" and not (mine / MARKER).exists()
    assert check_suite_out(mine, force=True) == mine
    with pytest.raises(ValueError, match="^--out: the GPU suite writes a folder"):
        check_suite_out(mine / "summary.md")
    with pytest.raises(ValueError, match="^--out: .* is a huang2024 run folder"):
        run = tmp_path / "run"
        run.mkdir()
        (run / MARKER).write_text('{"kind": "run", "paper": "huang2024"}')
        check_suite_out(run)


@pytest.mark.parametrize("argv, start", [
    (["--gpu-suite"], "error: --out: the GPU suite needs a folder"),
    (["--gpu-suite", "--out", "x", "--targets"], "error: --targets: not taken with --gpu-suite"),
    (["--gpu-suite", "--out", "x", "--suite-seconds", "0"], "error: --suite-seconds: must be"),
    (["--gpu-suite", "--out", "x", "--device", "tpu"], "error: --device: must be cpu, cuda"),
])
def test_bad_suite_flags_end_in_one_line(argv, start, capsys, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert bench_cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(start) and err.count("\n") == 1, err
    assert not (tmp_path / "x").exists()


def test_every_paper_contributes_parts():
    cases = bench_cli._cases()
    for name in PAPERS:
        assert any(key.startswith(f"{name}-") for key in cases), name
    assert "jelassi2022-targets" in cases and "huang2024-exact" in cases


def test_gpu_suite_at_cpu_sizes(tmp_path, capsys):
    """The whole suite on this CPU: every part runs (the GPU-marked tests skip), each writes
    its table with the device named, and the summary says the GPU parts need CUDA."""
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present: the suite runs its GPU sizes there")
    out = tmp_path / "suite"
    code = bench_cli.main(["--gpu-suite", "--device", "cpu", "--out", str(out),
                           "--repeats", "1", "--max-seconds", "2"])
    printed = capsys.readouterr().out
    assert printed.startswith(bench_cli.NO_CUDA)
    table = pd.read_csv(out / "suite.csv")
    assert code == 0, table.to_string()
    assert set(table["status"]) == {"ok"}
    keys = list(table["part"])
    assert keys[0] == "gpu-tests" and set(bench_cli._cases()) <= set(keys)
    for key in keys:
        part = pd.read_csv(out / f"{key}.csv")
        assert len(part) > 0 and part["device"].str.startswith("cpu").all(), key
    tests = pd.read_csv(out / "gpu-tests.csv")
    assert (tests["outcome"] == "skipped").all() and len(tests) > 10
    summary = (out / "summary.md").read_text()
    assert bench_cli.NO_CUDA in summary and "| huang2024-laplace | ok |" in summary
    targets = pd.read_csv(out / "jelassi2022-targets.csv")
    assert set(targets["target"]) == {"T1", "T2", "T3", "T4"}
    assert targets["met"].isna().all()  # GPU targets at CPU sizes are never judged
