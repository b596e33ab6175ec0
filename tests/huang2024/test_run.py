"""Huang et al. (2025) runs through the kernel's loop and the command line."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from theorylab.commands.run import main
from theorylab.core.config import read_toml
from theorylab.huang2024 import TRAJECTORY_SCHEMA, config_from_dict, load_config, run_experiment
from theorylab.papers import DEFAULT_PAPER, PAPERS

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "huang2024_mae_delta_pos.toml"


def test_registered_after_jelassi2022():
    assert list(PAPERS)[0] == DEFAULT_PAPER == "jelassi2022"
    paper = PAPERS["huang2024"]
    assert list(paper.load_claims()) == ["thm4.1", "thm4.1-eps", "thm4.2", "thm4.2-laws",
                                        "phases-reduction", "lemma5.1", "lemma5.1-rates", "thm4.4",
                                        "thm4.4-plateau", "realvit-diversity"]
    assert paper.notes_path() == Path("docs/papers/huang2024.md")


def test_example_runs_from_the_command_line(tmp_path):
    cfg = load_config(EXAMPLE)
    assert cfg.data.P == 256 and cfg.delta > 0
    out = tmp_path / "run"
    assert main([str(EXAMPLE), "--out", str(out), "--steps", "3", "--no-progress"]) == 0
    tr = pd.read_csv(out / "trajectory.csv")
    assert list(tr.columns) == list(TRAJECTORY_SCHEMA) and tr.step.iloc[-1] == 3
    assert read_toml(out / "config.toml")["experiment"] == {"paper": "huang2024"}
    assert (out / "final_state.npz").exists()


def test_resume_continues_the_same_trajectory(tmp_path):
    cfg = config_from_dict({"data": {"P": 16, "C1": 8, "C": 4},
                            "train": {"engine": "population-montecarlo", "mc_samples": 32,
                                      "lr": 20.0, "steps": 6, "record": "all"}})
    full = run_experiment(cfg)
    out = tmp_path / "r"
    run_experiment(cfg.replace(train={"steps": 3}), out=out)
    resumed = run_experiment(cfg, out=out, resume=True)
    pd.testing.assert_frame_equal(resumed.trajectory, full.trajectory)
    with pytest.raises(ValueError, match="^resume: "):
        run_experiment(cfg.replace(train={"lr": 1.0}), out=out, resume=True)


def test_exact_run_records_excess_loss():
    cfg = config_from_dict({"data": {"P": 8, "C1": 4, "C": 2, "z_law": "values",
                                     "z_values": [0.5, 1.5]},
                            "train": {"engine": "population-exact", "lr": 50.0, "steps": 20}})
    tr = run_experiment(cfg).trajectory
    assert (tr.excess_loss > 0).all() and tr.loss.is_monotonic_decreasing
    assert tr.excess_loss.iloc[-1] < 0.5 * tr.excess_loss.iloc[0]


def test_mae_config_runs_to_T_star_by_default():
    """``setups.mae_config`` without ``steps`` takes ``max_steps``: the notes' §9 setting at
    P = 64 reaches T* (and t_I, t_II) well within it; ``steps=0`` is the setting alone."""
    from theorylab.huang2024.phases import read_phases
    from theorylab.huang2024.setups import mae_config, max_steps

    cfg = mae_config(64, 52, 3, engine="population-reduced")
    assert cfg.train.steps == max_steps(64, 3) > 0
    r = read_phases(run_experiment(cfg, progress=False).trajectory, cfg)
    assert 0 < r["t_I"] < r["t_II"] <= r["T_star"] < cfg.train.steps / 3, r
    assert mae_config(64, 52, 3, steps=0).train.steps == 0
    by_delta = mae_config(64, Delta=0.5, kappa_c=0.25)
    assert by_delta.train.steps == max_steps(64, by_delta.data.C)


@pytest.mark.parametrize("example", ["fig4_population.toml", EXAMPLE.name])
def test_a_run_of_zero_steps_is_refused_in_one_line(example, tmp_path, capsys):
    """A config of 0 steps is a setting, not a run: ``theorylab run`` refuses it (one line
    naming train.steps, exit 2, nothing written), as do the paper's run and a sweep of it."""
    from theorylab.core.sweep.spec import spec_from_dict

    path = EXAMPLE.parent / example
    out = tmp_path / "run"
    assert main([str(path), "--out", str(out), "--steps", "0", "--no-progress"]) == 2
    assert capsys.readouterr().err == "error: train.steps: a run takes at least 1 step (got 0)\n"
    assert not out.exists()
    assert main([str(path), "--steps", "0", "--dry-run"]) == 2
    assert capsys.readouterr().err.startswith("error: train.steps: ")
    tables = read_toml(path)
    paper = PAPERS[tables.get("experiment", {}).get("paper", DEFAULT_PAPER)]
    cfg = paper.config_from_tables(tables).replace(train={"steps": 0})
    with pytest.raises(ValueError, match=r"^train\.steps: a run takes at least 1 step"):
        paper.run(cfg, out=None, resume=False, progress=False)
    with pytest.raises(ValueError, match=r"train\.steps: a run takes at least 1 step"):
        spec_from_dict({"base": str(path), "base_config": {"train": {"steps": 0}},
                        "sweep": {"axes": {"train.seed": [0, 1]}}}).points()
