"""``theorylab plot`` on hostile inputs: what a live or diverged run leaves, damaged tables, a
list-valued axis, names in another encoding, and outputs it must never replace (a user's file,
a committed figure) or cannot write."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from theorylab.commands import main
from theorylab.core.provenance import REPO_ROOT

ROWS = ("step,loss,alpha,loss_se\n0,1.0,0.0,0.1\n5,0.5,0.4,0.1\n10,0.2,0.9,0.1\n")


def _run(folder: Path, text: str = ROWS) -> Path:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "trajectory.csv").write_text(text)
    return folder


def _one_error(capsys) -> str:
    err = capsys.readouterr().err
    assert err.count("\n") == 1, err
    return err.strip()


def test_a_torn_last_line_is_left_out(tmp_path, capsys, monkeypatch):
    run = _run(tmp_path / "r", ROWS + "21,0.05,0.")  # the append of a live (or killed) run
    drawn = {}
    import theorylab.analysis.plots as plot

    real = plot._drawable

    def spy(values):
        drawn[values.name] = list(values)
        return real(values)

    monkeypatch.setattr(plot, "_drawable", spy)
    assert main(["plot", str(run)]) == 0
    assert drawn["loss"] == [1.0, 0.5, 0.2]  # not the torn row's 0.05 at step 21


def test_a_text_step_column_is_refused(tmp_path, capsys):
    run = _run(tmp_path / "r", "step,loss\ns0,1.0\ns1,0.5\n")
    assert main(["plot", str(run)]) == 2
    assert _one_error(capsys).startswith("error: run: the step column of ")


def test_a_diverged_runs_rows_are_drawn_without_the_overflowing_values(tmp_path, capsys):
    run = _run(tmp_path / "r", ROWS + "11,1e308,-1e308,1e308\n12,inf,nan,1\n")
    assert main(["plot", str(run)]) == 0
    assert (run / "trajectory.png").stat().st_size > 0


def test_a_users_png_is_never_replaced_without_force(tmp_path, capsys):
    run = _run(tmp_path / "r")
    photo = tmp_path / "photo.png"
    photo.write_bytes(b"\x89PNG\r\n\x1a\n" + b"the user's own picture")
    before = photo.read_bytes()
    assert main(["plot", str(run), "--out", str(photo)]) == 2
    assert "was not written by theorylab; refusing to overwrite" in _one_error(capsys)
    assert photo.read_bytes() == before
    assert main(["plot", str(run), "--out", str(photo), "--force"]) == 0
    assert photo.read_bytes() != before
    # a plot this command wrote is its own to replace
    assert main(["plot", str(run), "--out", str(photo)]) == 0


@pytest.mark.parametrize("spelling", ["plain", "absolute", "dotdot", "symlink"])
def test_a_committed_figure_is_refused_by_any_spelling(tmp_path, capsys, monkeypatch, spelling):
    run = _run(tmp_path / "r")
    target = REPO_ROOT / "figures" / "huang2024-fig2.png"
    monkeypatch.chdir(REPO_ROOT)
    out = {"plain": "figures/huang2024-fig2.png", "absolute": str(target),
           "dotdot": "docs/../figures/huang2024-fig2.png"}.get(spelling)
    if spelling == "symlink":
        (tmp_path / "link").symlink_to(REPO_ROOT / "figures")
        out = str(tmp_path / "link" / "huang2024-fig2.png")
    before = target.read_bytes() if target.exists() else None
    assert main(["plot", str(run), "--out", out, "--force"]) == 2
    assert "is inside the committed figures/" in _one_error(capsys)
    assert (target.read_bytes() if target.exists() else None) == before


def test_a_list_valued_axis_is_plotted(tmp_path, capsys):
    table = pd.DataFrame({"run_id": ["a", "b", "c", "d"], "point": [0, 1, 2, 3],
                          "data.z_values": [[0.5, 1.5], [0.5, 1.5], [1.0], [1.0]],
                          "data.P": [16, 25, 16, 25], "status": "ok",
                          "loss": [0.1, 0.2, 0.3, 0.4]})
    path = tmp_path / "t.parquet"
    table.to_parquet(path)
    assert main(["plot", str(path), "--x", "data.P", "--y", "data.z_values"]) == 0


@pytest.mark.parametrize("content", [b"PAR1 truncated", b"plain text\n"])
def test_a_damaged_parquet_names_the_field_and_file(tmp_path, capsys, content):
    path = tmp_path / "t.parquet"
    path.write_bytes(content)
    assert main(["plot", str(path)]) == 2
    assert _one_error(capsys).startswith(f"error: sweep: {path} is not a readable table (")


def test_a_folder_it_may_not_write_is_one_line(tmp_path, capsys, monkeypatch):
    import theorylab.core.atomic_io as atomic_io

    def denied(path, data):  # as a write into a folder taken away after the checks
        raise PermissionError(errno.EACCES, "Permission denied", f"{path}.ab12cd34.tmp")

    monkeypatch.setattr(atomic_io, "atomic_write_bytes", denied)
    run = _run(tmp_path / "r")
    assert main(["plot", str(run)]) == 1
    line = _one_error(capsys)
    assert line.startswith(f"error: out: Permission denied ('{run / 'trajectory.png'}')"), line
    assert ".tmp" not in line


def test_a_name_in_another_encoding(tmp_path, capsys):
    raw = os.fsencode(str(tmp_path)) + b"/r\xffun"
    _run(Path(os.fsdecode(raw)))
    assert main(["plot", os.fsdecode(raw)]) == 0
    assert "wrote " in capsys.readouterr().out


def test_plot_values_beyond_the_drawable_range_become_gaps():
    from theorylab.analysis.plots import _drawable

    v, n = _drawable(pd.Series([1.0, 1e308, -np.inf, np.nan, 2.0]))
    assert n == 2 and v.isna().tolist() == [False, True, True, True, False]
