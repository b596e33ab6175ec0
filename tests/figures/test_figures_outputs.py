"""Where ``python -m theorylab figures`` writes, what its manifest records about the run, and
how it ends on a machine without the Fashion-MNIST files."""

from __future__ import annotations

import json
import re

from theorylab.commands.figures import main
from theorylab.core.provenance import REPO_ROOT

FAST = "jelassi2022-fig1b"  # a fraction of a second, needs no data files


def _entry(folder, fid=FAST):
    return json.loads((folder / "manifest.json").read_text())["figures"][fid]


def test_quick_and_custom_runs_write_scratch_folders(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    assert main(["--quick", "--only", FAST]) == 0
    e = _entry(tmp_path / "runs" / "quick" / "figures")
    assert e["quick"] is True and e["run"] == "quick"
    assert re.fullmatch(r"[0-9a-f]{4,40}(\+dirty)?|unknown", e["commit"])
    assert re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d UTC", e["date"]) and e["version"]
    assert main(["--only", FAST, "--seed", "1"]) == 0
    assert _entry(tmp_path / "runs" / "custom" / "figures")["seed"] == 1
    assert main(["--only", FAST]) == 0  # a full run with default settings: figures/
    assert _entry(tmp_path / "figures")["run"] == "full"


def test_quick_run_into_the_committed_folder_is_refused(capsys):
    committed = REPO_ROOT / "figures"
    before = {p.name: p.stat().st_mtime_ns for p in committed.iterdir()}
    for argv in (["--quick"], ["--seed", "3"]):
        assert main([*argv, "--only", FAST, "--out", str(committed)]) == 2
        err = capsys.readouterr().err.strip()
        assert err.startswith("error: --out:") and "committed figures" in err
        assert len(err.splitlines()) == 1
    assert {p.name: p.stat().st_mtime_ns for p in committed.iterdir()} == before


def test_figures_without_the_data_are_skipped_in_one_line(no_fashion_mnist, tmp_path, capsys):
    ids = [FAST, "jelassi2022-fig5", "jelassi2022-fig6"]
    assert main(["--only", *ids, "--out", str(tmp_path)]) == 0  # a full run: no stand-in
    out = capsys.readouterr().out
    lines = [line for line in out.splitlines() if line.startswith("skipped")]
    assert len(lines) == 1, out
    assert "apt-get install dataset-fashion-mnist" in lines[0]
    assert "jelassi2022-fig5" in lines[0] and "jelassi2022-fig6" in lines[0]
    manifest = json.loads((tmp_path / "manifest.json").read_text())["figures"]
    assert list(manifest) == [FAST]
    assert not list(tmp_path.glob("jelassi2022-fig[56]*"))


def test_quick_image_figure_uses_the_digits_without_the_data(no_fashion_mnist, tmp_path,
                                                              capsys):
    assert main(["--quick", "--only", "jelassi2022-fig6", "--out", str(tmp_path)]) == 0
    assert "skipped" not in capsys.readouterr().out
    e = _entry(tmp_path, "jelassi2022-fig6")
    assert "load_digits" in e["data_source"] and "dataset-fashion-mnist" in e["data_source"]
    assert "load_digits" in e["settings"]["data"]
    assert "digits upsampled to 28x28" in e["caption"]
    assert (tmp_path / "jelassi2022-fig6.png").stat().st_size > 1000
