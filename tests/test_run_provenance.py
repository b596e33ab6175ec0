"""A run records how it was made when it starts (``provenance.json``), a resume adds its own
record, and an export carries the run's record and says whether the run was finished."""

from __future__ import annotations

import json

import xarray as xr

from theorylab.commands import main

RUN = ('[data]\nD = 4\nC = 2\nd = 20\nq = 0.3\n[train]\nengine = "population"\nsteps = 6\n'
       'lr_v = 0.1\n')


def _run(tmp_path, *extra):
    cfg = tmp_path / "run.toml"
    cfg.write_text(RUN)
    out = tmp_path / "r"
    assert main(["run", str(cfg), "--out", str(out), "--no-progress", *extra]) == 0
    return cfg, out


def test_a_run_records_its_start_and_a_resume_adds_its_own(tmp_path):
    cfg, out = _run(tmp_path, "--steps", "3")
    first = json.loads((out / "provenance.json").read_text())
    assert {"started", "version", "commit", "host", "python", "lib_numpy"} <= set(first)
    assert "resumed" not in first
    assert main(["run", str(cfg), "--out", str(out), "--no-progress", "--resume"]) == 0
    again = json.loads((out / "provenance.json").read_text())
    assert again["started"] == first["started"]  # the start's record is kept
    assert len(again["resumed"]) == 1 and again["resumed"][0]["from_step"] >= 0


def test_export_carries_the_runs_record_and_flags_an_unfinished_run(tmp_path, capsys):
    _cfg, out = _run(tmp_path)
    nc = tmp_path / "done.nc"
    assert main(["export", str(out), "--out", str(nc)]) == 0
    with xr.open_dataset(nc) as ds:
        started = json.loads((out / "provenance.json").read_text())["started"]
        assert ds.attrs["run_started"] == started and ds.attrs["partial"] == "no"
    (out / "final_state.npz").unlink()  # as a run still going, or stopped, leaves it
    part = tmp_path / "part.nc"
    assert main(["export", str(out), "--out", str(part)]) == 0
    with xr.open_dataset(part) as ds:
        assert ds.attrs["partial"].startswith("yes: last recorded step ")
        assert ds.attrs["partial"].endswith(" of 6")
