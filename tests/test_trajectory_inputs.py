"""What is not one run's rows is refused by every command that reads a run folder (phases,
export, plot) in one line, exit 2: a header without rows, repeated or reversed steps, another
paper's rows under a config, and a sweep table without its own columns."""

from __future__ import annotations

import shutil

import pandas as pd
import pytest

from theorylab.commands import main

H24 = ('[experiment]\npaper = "huang2024"\n[data]\nP = 16\nC1 = 8\nC = 2\n'
       '[train]\nsteps = 10\n')
J22 = "[data]\nD = 4\nC = 2\nd = 20\n[train]\nsteps = 10\n"


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    for name, text in (("h", H24), ("j", J22)):
        (root / f"{name}.toml").write_text(text)
        assert main(["run", str(root / f"{name}.toml"), "--out", str(root / name),
                     "--no-progress"]) == 0
    return root


def _variant(runs, tmp_path, how: str):
    out = tmp_path / how
    shutil.copytree(runs / "h", out)
    csv = out / "trajectory.csv"
    lines = csv.read_text().splitlines(keepends=True)
    if how == "header-only":
        csv.write_text(lines[0])
        return out, "has no recorded rows yet (a header only)"
    if how == "repeated":
        csv.write_text("".join(lines[:4] + lines[3:4] + lines[4:]))
        return out, "do not increase (row 4: step 2 repeats step 2)"
    if how == "reversed":
        csv.write_text(lines[0] + "".join(reversed(lines[1:])))
        return out, "do not increase (row 2: step 9 comes after step 10)"
    shutil.copy(runs / "j" / "config.toml", out / "config.toml")  # another paper's config
    return out, "are a huang2024 trajectory, but its config.toml is a jelassi2022 config"


CASES = [(c, h) for c in ("phases", "export", "plot")
         for h in ("header-only", "repeated", "reversed", "other-paper")
         if (c, h) != ("plot", "other-paper")]  # plot reads the rows alone, not the config


@pytest.mark.parametrize("command, how", CASES)
def test_what_is_not_one_runs_rows_is_refused(runs, tmp_path, capsys, command, how):
    folder, says = _variant(runs, tmp_path, how)
    argv = {"phases": ["phases", str(folder)],
            "export": ["export", str(folder), "--out", str(tmp_path / "x.nc")],
            "plot": ["plot", str(folder), "--out", str(tmp_path / "x.png")]}[command]
    capsys.readouterr()
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: run: ") and says in err[0], err
    assert not (tmp_path / "x.nc").exists() and not (tmp_path / "x.png").exists()


def test_a_sweep_table_without_its_columns_is_refused(tmp_path, capsys):
    store = tmp_path / "s"
    store.mkdir()
    pd.DataFrame({"run_id": ["a"], "status": ["ok"], "loss": [1.0]}).to_parquet(
        store / "results.parquet")
    assert main(["phases", str(store)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: sweep: {store / 'results.parquet'} is not a sweep table (no column "
                   "'point')"], err


def test_a_run_given_twice_to_export_is_named(runs, tmp_path, capsys):
    h = runs / "h"
    assert main(["export", str(h), f"{runs}/./h", "--out", str(tmp_path / "x.nc")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"error: source: {runs}/./h is given twice (as {h} too); give each run "
                   "folder once"], err
    assert not (tmp_path / "x.nc").exists()
