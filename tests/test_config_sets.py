"""``--set SECTION.KEY=VALUE`` on ``theorylab run`` and ``theorylab sweep``: a config key set
from the command line, read as a TOML value and validated as the file is (one line naming the
field, exit 2)."""

from __future__ import annotations

import pytest
import tomllib

from theorylab.commands import main
from theorylab.core.config import apply_sets

RUN = ('[data]\nD = 4\nC = 2\nd = 20\nq = 0.3\n[train]\nengine = "population"\nsteps = 4\n'
       'lr_v = 0.1\n')
SPEC = ('[base_config.data]\nD = 4\nC = 2\nd = 20\n[base_config.train]\nsteps = 3\n'
        '[sweep]\naxes = {"data.q" = [0.2, 0.3]}\n')


def test_values_are_toml_and_bare_words_text():
    tables = {"train": {"lr_v": 0.1}, "data": {"D": 4}}
    out = apply_sets(tables, ["train.lr_v=0.05", "data.partition=[[0, 1], [2, 3]]",
                              "train.engine=population", "model.flag=true"])
    assert out["train"]["lr_v"] == 0.05 and tables["train"]["lr_v"] == 0.1  # a copy
    assert out["data"]["partition"] == [[0, 1], [2, 3]]
    assert out["train"]["engine"] == "population" and out["model"]["flag"] is True


@pytest.mark.parametrize("item, says", [
    ("lr=0.1", "is not SECTION.KEY=VALUE"),
    ("train.lr_v", "is not SECTION.KEY=VALUE"),
    ("train.a.b=1", "is not SECTION.KEY=VALUE"),
    ("experiment.paper=huang2024", "not a config key to set"),
    ("train.lr_v=[1, 2", "is not a TOML value"),
    ("train.lr_v=", "is not a TOML value"),
])
def test_malformed_items_are_refused(item, says):
    with pytest.raises(ValueError, match=says):
        apply_sets({}, [item])


def test_run_uses_the_set_value_and_keeps_it_in_the_folder(tmp_path, capsys):
    cfg = tmp_path / "run.toml"
    cfg.write_text(RUN)
    out = tmp_path / "r"
    assert main(["run", str(cfg), "--out", str(out), "--no-progress",
                 "--set", "train.lr_v=0.05", "--set", "train.steps=3"]) == 0
    written = tomllib.loads((out / "config.toml").read_text())
    assert written["train"]["lr_v"] == 0.05 and written["train"]["steps"] == 3


def test_run_refuses_an_unknown_key_or_a_bad_value_in_one_line(tmp_path, capsys):
    cfg = tmp_path / "run.toml"
    cfg.write_text(RUN)
    for item, field in (("train.no_such_key=1", "no_such_key"), ("train.lr_v=-1", "lr_v")):
        capsys.readouterr()
        assert main(["run", str(cfg), "--dry-run", "--set", item]) == 2
        err = capsys.readouterr().err.strip().splitlines()
        assert len(err) == 1 and err[0].startswith("error: ") and field in err[0], err


def test_sweep_sets_its_base_config(tmp_path, capsys):
    spec = tmp_path / "spec.toml"
    spec.write_text(SPEC)
    capsys.readouterr()
    assert main(["sweep", str(spec), "--out", str(tmp_path / "s"), "--dry-run",
                 "--set", "train.steps=0"]) == 2
    assert "train.steps" in capsys.readouterr().err
    assert main(["sweep", str(spec), "--out", str(tmp_path / "s2"), "--dry-run",
                 "--set", "train.lr_v=0.05"]) == 0
