"""The ``theorylab`` command (theorylab.commands) and ``theorylab plot``."""

from __future__ import annotations

import importlib
import os
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest

from theorylab.commands import COMMANDS, main
from theorylab.core.config import read_toml

ROOT = Path(__file__).resolve().parents[1]


def test_help_lists_every_command(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    names = {"run", "check", "figures", "sweep", "bench", "config", "plot", "phases", "export"}
    for name in names:
        assert f"\n  {name} " in out, name
    assert set(COMMANDS) == names


@pytest.mark.parametrize("command", list(COMMANDS))
def test_each_command_has_help_under_its_own_name(command, capsys):
    assert main([command, "--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: theorylab {command} ")
    # the module run directly has the same name
    module = importlib.import_module(COMMANDS[command][0])
    with pytest.raises(SystemExit) as stop:
        module.main(["--help"])
    assert stop.value.code == 0
    assert capsys.readouterr().out.startswith(f"usage: theorylab {command} ")


@pytest.mark.parametrize("command", list(COMMANDS))
def test_a_bad_flag_is_one_line_and_exit_2(command, capsys):
    assert main([command, "--no-such-flag"]) == 2
    captured = capsys.readouterr()
    assert captured.err.startswith("error: ") and captured.err.count("\n") == 1, captured.err


def test_an_unknown_or_missing_command(capsys):
    assert main(["trian"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: command: unknown (got 'trian')") and err.count("\n") == 1
    assert main([]) == 2
    assert capsys.readouterr().err.strip().splitlines()[-1].startswith("error: command: required")
    assert main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("theorylab ")


def test_exit_codes_are_the_modules(tmp_path, capsys):
    """An error of the command's own checks (not argparse) keeps its code: a config that does
    not exist is exit 2 through ``run`` as through ``python -m theorylab run``."""
    from theorylab.commands.run import main as run_main

    argv = [str(tmp_path / "missing.toml"), "--out", str(tmp_path / "o")]
    assert main(["run", *argv]) == 2 == run_main(argv)
    assert main(["config", "--check"]) in (0, 1)  # the page is up to date or not; no crash


def test_console_script_target_resolves():
    meta = read_toml(ROOT / "pyproject.toml")
    target = meta["project"]["scripts"]["theorylab"]
    module, attr = target.split(":")
    assert getattr(importlib.import_module(module), attr) is main


def test_python_dash_m_theorylab(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    done = subprocess.run([sys.executable, "-m", "theorylab", "sweep", "--help"], cwd=tmp_path,
                          env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0 and done.stdout.startswith("usage: theorylab sweep ")


# -- theorylab plot ------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("run")
    cfg = folder / "tiny.toml"
    cfg.write_text("[data]\nD = 4\nC = 2\n[train]\nsteps = 12\nn_records = 6\n")
    assert main(["run", str(cfg), "--out", str(folder / "out"), "--no-progress"]) == 0
    return folder / "out"


@pytest.fixture(scope="module")
def tiny_sweep(tmp_path_factory) -> Path:
    folder = tmp_path_factory.mktemp("sweep")
    spec = folder / "spec.toml"
    spec.write_text('[base_config.data]\nD = 4\nC = 2\n[base_config.train]\nsteps = 6\n'
                    'n_records = 3\n[sweep]\naxes = {"data.q" = [0.1, 0.3], '
                    '"data.d" = [10, 20]}\n')
    assert main(["sweep", str(spec), "--out", str(folder / "store"), "--workers", "0",
                 "--no-progress"]) == 0
    return folder / "store"


def test_plot_a_run(tiny_run, tmp_path, capsys):
    assert main(["plot", str(tiny_run)]) == 0
    png = tiny_run / "trajectory.png"
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert capsys.readouterr().out.strip() == f"wrote {png}"
    out = tmp_path / "two.png"
    assert main(["plot", str(tiny_run / "trajectory.csv"), "--out", str(out),
                 "--columns", "loss", "alpha"]) == 0
    assert out.stat().st_size > 0


def test_phase_table_takes_each_points_last_step():
    from theorylab.analysis.plots import phase_table

    table = pd.DataFrame({"run_id": ["a", "a", "b", "b", "c"], "data.q": [0.1, 0.1, 0.1, 0.1, 0.3],
                          "step": [0, 10, 0, 10, 10], "loss": [9.0, 1.0, 9.0, 3.0, 5.0]})
    grid = phase_table(table, ["data.q"], "loss")
    assert grid.to_dict() == {0.1: 2.0, 0.3: 5.0}  # the mean of 1 and 3; the step-0 rows left out


def test_plot_a_sweep(tiny_sweep, tmp_path):
    from theorylab.analysis.plots import plot_sweep

    assert main(["plot", str(tiny_sweep)]) == 0
    assert (tiny_sweep / "phase_diagram.png").read_bytes()[:4] == b"\x89PNG"
    # a bare table works too; one axis gives a line plot averaged over the other
    table = pd.read_parquet(tiny_sweep / "results.parquet")
    csv = tmp_path / "table.csv"
    table.to_csv(csv, index=False)
    written = plot_sweep(csv, x="data.q", y=None, value="loss")
    assert written == tmp_path / "table-phase_diagram.png" and written.stat().st_size > 0


@pytest.fixture(scope="module")
def delta_sweep(tmp_path_factory) -> Path:
    """The README's Δ sweep in small: huang2024, three global-area sizes, trajectories kept."""
    folder = tmp_path_factory.mktemp("delta")
    spec = folder / "spec.toml"
    spec.write_text('[base_config.experiment]\npaper = "huang2024"\n'
                    '[base_config.data]\nP = 16\nK = 1\nC = 2\nareas = "contiguous"\n'
                    '[base_config.train]\nengine = "population-laplace"\nz_nodes = 4\n'
                    'lr = 32.0\nsteps = 8\n'
                    '[sweep]\naxes = {"data.C1" = [4, 8, 12]}\n'
                    'keep = ["phi_glob_lq", "phi_own_lq", "attn_own_lq"]\n')
    assert main(["sweep", str(spec), "--out", str(folder / "store"), "--workers", "0",
                 "--no-progress"]) == 0
    return folder / "store"


def test_plot_the_readmes_delta_sweep_without_flags(delta_sweep, capsys):
    """A sweep that keeps trajectories plots with no --value: one line per point, each
    labelled with its C1 and the Δ it gives, the shared setting in the title."""
    import json

    from theorylab.analysis.labels import point_settings

    assert main(["plot", str(delta_sweep)]) == 0
    assert (delta_sweep / "phase_diagram.png").read_bytes()[:4] == b"\x89PNG"
    manifest = json.loads((delta_sweep / "sweep.json").read_text())
    points = pd.DataFrame({"data.C1": [4, 8, 12]})
    title, labels = point_settings(manifest, points, ["data.C1"])
    assert title.startswith("huang2024: MAE, P = 16") and "C1 =" not in title
    assert [lab.split(",")[0] for lab in labels.values()] == ["C1 = 4", "C1 = 8", "C1 = 12"]
    assert all("Δ = " in lab for lab in labels.values())
    assert main(["plot", str(delta_sweep), "--value", "phi_own_lq"]) == 0  # final values


def test_plot_a_zipped_ladder_draws_trajectories(tmp_path, monkeypatch):
    """Zipped axes (P with its step size) are one line of points: the default plot draws their
    kept trajectories, never a heat map over the two axes (a diagonal of cells)."""
    import theorylab.analysis.plots as plot

    spec = tmp_path / "spec.toml"
    spec.write_text('[base_config.experiment]\npaper = "huang2024"\n'
                    '[base_config.data]\nP = 16\nK = 1\nDelta = 0.5\nkappa_c = 0.25\n'
                    '[base_config.train]\nengine = "population-reduced"\nz_nodes = 4\n'
                    'lr = 32.0\nsteps = 6\n'
                    '[sweep]\naxes = {"data.P" = [16, 64], "train.lr" = [32.0, 128.0]}\n'
                    'mode = "zip"\nkeep = ["phi_glob_lq", "phi_own_lq"]\n')
    assert main(["sweep", str(spec), "--out", str(tmp_path / "s"), "--workers", "0",
                 "--no-progress"]) == 0
    drawn = []
    monkeypatch.setattr(plot, "_plot_sweep_trajectories",
                        lambda df, axes, *a, **k: drawn.append(axes) or tmp_path / "x.png")
    plot.plot_sweep(tmp_path / "s")
    assert drawn == [["data.P", "train.lr"]]


def test_plot_a_run_draws_its_phase_readings(tiny_run):
    """The paper's hooks: the setting in the title, the phase readings of the run (none for
    this 12-step run, which never leaves its plateau, but the hook runs)."""
    from theorylab.analysis import open_run

    opened = open_run(tiny_run, strict=False)
    paper, cfg = opened.paper, opened.config
    assert paper.name == "jelassi2022" and paper.describe(cfg).startswith("D = 4, C = 2")
    readings = paper.phase_readings(pd.read_csv(tiny_run / "trajectory.csv"), cfg)
    assert {"t_I", "t_II"} <= set(readings)


@pytest.mark.parametrize("args, start", [
    (["{tmp}/nothing"], "error: input: not a run folder"),
    (["{run}", "--value", "loss"], "error: --x/--y/--value/--reading/--log: for a sweep"),
    (["{run}", "--reading", "t_I", "--x", "step"], "error: --x/--y/--value/--reading/--log"),
    (["{sweep}", "--log"], "error: --log: only with --reading"),
    (["{sweep}", "--reading", "t_I"], "error: --x: --reading needs the sweep axis"),
    (["{sweep}", "--reading", "nope", "--x", "data.q"], "error: reading: not a phase reading"),
    (["{sweep}", "--reading", "loss", "--x", "data.nope"], "error: x: not an axis"),
    (["{sweep}", "--reading", "loss", "--x", "data.q", "--y", "data.d"],
     "error: --reading: drawn against --x alone"),
    (["{run}", "--columns", "nope"], "error: columns: not a numeric column"),
    (["{sweep}", "--value", "nope"], "error: value: not a numeric column"),
    (["{sweep}", "--x", "data.q", "--y", "data.q"], "error: y: must differ from x"),
    (["{sweep}", "--columns", "loss"], "error: --columns: for a run"),
    (["{run}", "--out", "{tmp}/mine.txt"], "error: out: must be a .png file"),
    (["{run}", "--out", "{tmp}/new.pdf"], "error: out: must be a .png file"),
    (["{run}", "--out", "{tmp}/no/such/dir/p.png"], "error: out: no such folder"),
])
def test_plot_refuses_bad_input_in_one_line(args, start, tiny_run, tiny_sweep, tmp_path,
                                            capsys):
    (tmp_path / "mine.txt").write_text("keep me")
    argv = [a.format(tmp=tmp_path, run=tiny_run, sweep=tiny_sweep) for a in args]
    assert main(["plot", *argv]) == 2
    err = capsys.readouterr().err
    assert err.startswith(start) and err.count("\n") == 1, err
    assert (tmp_path / "mine.txt").read_text() == "keep me"
