"""The kernel's cost estimate on an engine that is not a paper's: timing, the scaling from a
smaller config, the printed lines, and the guard of long derived computations."""

import time
from pathlib import Path

import numpy as np
import pytest

from theorylab.core.cost import (
    CostModel,
    Estimate,
    announce,
    estimate,
    format_seconds,
    time_engine,
)
from theorylab.core.engine import Engine


class Sum(Engine):
    """A step that sums n numbers: its cost grows with n."""

    name = "toy-sum"

    def __init__(self, n: int) -> None:
        self.x = np.ones(n)
        self.built = True

    def initial_params(self):
        return {"w": np.zeros(1)}

    def evaluate(self, params, step, *, need_grad, record):
        s = float(self.x.sum())
        return type("Ev", (), {"loss": s, "grads": {"w": np.ones(1)} if need_grad else None})()

    def apply(self, params, grads):
        return {"w": params["w"] - grads["w"]}

    def record(self, params, step, ev):
        return {"loss": ev.loss}


def _model(n: int, smaller=None, steps=100, flow=False) -> CostModel:
    return CostModel(engine=f"sum of {n}", steps=steps, records=10, work=float(n),
                     memory=8.0 * n, build=lambda: Sum(n), smaller=smaller, flow=flow)


def test_time_engine_times_build_steps_and_records():
    t = time_engine(lambda: Sum(1000), budget_s=0.05)
    assert t.build >= 0 and t.warm >= 0 and t.step > 0 and t.record >= 0 and 1 <= t.n <= 10
    assert t.clock == "cpu" and t.parallel >= 1.0  # no GPU here: this process's CPU time


def test_estimate_scales_a_smaller_config_by_the_work(monkeypatch):
    import theorylab.core.cost as cost

    timed = []

    def fake_time_engine(build, budget_s):  # (build, warm, step, record, steps timed)
        timed.append(build())
        return cost.Timing(0.5, 2.0, 0.01, 0.001, 7)

    monkeypatch.setattr(cost, "time_engine", fake_time_engine)
    small = _model(10_000)
    direct = estimate(small)
    assert (direct.setup_s, direct.step_s, direct.record_s) == (2.5, 0.01, 0.001)
    assert direct.timed == "timed: 7 steps of this config"
    big = estimate(_model(10_000_000, smaller=lambda: small))
    assert len(timed[-1].x) == 10_000  # the smaller config was built and timed
    assert "smaller config" in big.timed and "1e+03×" in big.timed
    # build, step and record scale with the work; the first step's warm-up does not
    assert big.setup_s == pytest.approx(0.5 * 1000 + 2.0)
    assert (big.step_s, big.record_s) == pytest.approx((10.0, 1.0))
    assert big.memory == 8e7 and big.steps == 100 and big.warm_s == 2.0
    assert big.seconds == pytest.approx(big.setup_s + 100 * 10.0 + 10 * 1.0)


def test_the_estimate_says_steps_seconds_memory_and_machine():
    est = Estimate(engine="toy", steps=78_000, records=200, setup_s=2.0, step_s=0.1,
                   record_s=0.01, memory=2.5e9, timed="timed: 5 steps of this config",
                   machine="2 usable CPUs")
    text = str(est)
    assert "78000 steps" in text and "2 h 10 min" in text and "2.5 GB" in text
    assert "2 usable CPUs" in text and "not known" not in text
    flow = Estimate(**{**est.__dict__, "flow": True})
    assert "not known before it runs" in str(flow)


@pytest.mark.parametrize("seconds, text", [(3e-4, "300 µs"), (0.25, "250 ms"), (12.0, "12 s"),
                                           (200.0, "3 min 20 s"), (7800.0, "2 h 10 min"),
                                           (3e5, "3.47 days"), (float("nan"), "unknown")])
def test_format_seconds(seconds, text):
    assert format_seconds(seconds) == text


def test_announce_says_long_work_and_refuses_beyond_its_limit():
    said = []
    announce("derived", 2.0, say=said.append)
    assert said == []  # a few seconds: nothing to say
    announce("derived", 90.0, limit_s=600, say=said.append)
    assert said and said[0].startswith("derived: about 1 min 30 s on this machine")
    with pytest.raises(ValueError, match=r"derived: would take about 2 h 0 min .*allow_long"):
        announce("derived", 7200.0, limit_s=600, hint="pass allow_long=True", say=said.append)
    announce("derived", 7200.0, limit_s=600, allow_long=True, say=said.append)
    assert said[-1].startswith("derived: about 2 h 0 min")


def test_progress_says_a_long_loop_once_and_a_short_one_never(monkeypatch):
    import theorylab.core.cost as cost
    from theorylab.core.cost import Progress

    clock = iter(np.arange(0.0, 100.0, 1.0))  # one second per call of the clock
    monkeypatch.setattr(cost.time, "perf_counter", lambda: next(clock))
    said = []
    p = Progress("loop", 1000, after_s=2.0, say_over_s=10.0, say=said.append)
    for _ in range(5):
        p.tick()
    assert len(said) == 1 and said[0].startswith("loop: 2 of at most 1000 iterations in 2 s")
    assert "at most 16 min 40 s in all" in said[0]
    short = []
    with Progress("quick", 3, after_s=2.0, say_over_s=10.0, say=short.append) as q:
        for _ in range(3):
            q.tick()
    assert short == []


def test_the_cpu_estimate_of_a_run_holds_on_a_busy_machine():
    """The estimate is in this process's CPU time, which other jobs on a shared machine do not
    inflate: a Monte Carlo MAE run of the second paper (P = 256, 60 steps, about 3 s of CPU)
    takes within ×1.5 of its estimate (steps dominate; the band leaves room for cache
    contention under load, which moves CPU time by up to about 30 %)."""
    from pathlib import Path

    from theorylab.core.config import read_toml
    from theorylab.papers import PAPERS

    tables = read_toml(Path(__file__).resolve().parents[2] / "examples"
                       / "huang2024_mae_delta_pos.toml")
    tables["train"]["steps"] = 60
    paper = PAPERS["huang2024"]
    cfg = paper.config_from_tables(tables)
    est = estimate(paper.cost(cfg))
    assert est.clock == "cpu"
    low, high = est.wall_range
    assert 0 < low <= high and low <= est.seconds
    c0 = time.process_time()
    paper.run(cfg, out=None, resume=False, progress=False)
    measured = time.process_time() - c0
    assert 1 / 1.5 <= measured / est.seconds <= 1.5, (measured, str(est))


_PEAK_PROBE = """
import json, sys
from pathlib import Path
from theorylab.core.config import read_toml
from theorylab.core.cost import estimate
from theorylab.papers import PAPERS
tables = read_toml(Path(sys.argv[1]))
tables["train"]["steps"] = 5
paper = PAPERS["huang2024"]
cfg = paper.config_from_tables(tables)
est = estimate(paper.cost(cfg))
paper.run(cfg, out=None, resume=False, progress=False)
with open("/proc/self/status") as fh:
    peak = next(int(l.split()[1]) * 1024 for l in fh if l.startswith("VmHWM:"))
print(json.dumps({"estimate": est.total_memory, "peak": peak}))
"""


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="needs Linux's /proc")
def test_the_memory_estimate_covers_the_process():
    """The printed memory is the whole process's (what it holds already and the engine's
    estimate): within ×2 of the peak resident memory of a fresh process that estimates and
    runs a Monte Carlo MAE run (×2: the engines' estimates are upper estimates of their
    arrays, and the interpreter's transient peaks while importing come on top)."""
    import json
    import subprocess
    import sys

    root = Path(__file__).resolve().parents[2]
    done = subprocess.run([sys.executable, "-c", _PEAK_PROBE,
                           str(root / "examples" / "huang2024_mae_delta_pos.toml")],
                          capture_output=True, text=True, timeout=300, cwd=root)
    assert done.returncode == 0, done.stderr
    r = json.loads(done.stdout.strip().splitlines()[-1])
    assert 1 / 2 <= r["estimate"] / r["peak"] <= 2, r


def test_wall_range_spreads_the_cpu_time_over_workers_and_the_load(monkeypatch):
    """Alone: the CPU time over the workers that get a core; at the load now: the other jobs
    of the load average (this process counted once) share the cores with the workers."""
    import os

    from theorylab.core import cost

    monkeypatch.setattr(cost, "usable_cores", lambda: 2)
    monkeypatch.setattr(os, "getloadavg", lambda: (3.0, 3.0, 3.0))
    assert cost.wall_range(100.0) == (100.0, 150.0)  # 3 jobs on 2 cores
    assert cost.wall_range(100.0, workers=2) == (50.0, 100.0)  # 4 jobs on 2 cores
    assert cost.wall_range(100.0, workers=4) == (50.0, 75.0)  # more workers than cores
    monkeypatch.setattr(os, "getloadavg", lambda: (0.5, 0.5, 0.5))
    assert cost.wall_range(100.0) == (100.0, 100.0)  # an idle machine: no range
    assert "wall alone" in cost.format_wall(100.0, 100.0)
    assert "at the load now" in cost.format_wall(100.0, 150.0)


def test_the_cpu_estimate_of_a_sweep_holds():
    """A sweep's estimate (the sum of its points' CPU estimates) against the CPU time the
    sweep takes in this process: three points of the second paper's exact engine (about 1 s
    of CPU), after a one-point sweep that pays what a process pays once (the store's Parquet
    library, first calls). Within ×2: the per-point builds, readings and the store's writes
    are small beside the steps, and CPU time moves by up to about 30 % under load (cache
    contention)."""
    import tempfile

    from theorylab.core.sweep import estimate_points, run_sweep_spec, spec_from_dict

    def spec(C1):
        return spec_from_dict({
            "base_config": {"experiment": {"paper": "huang2024"},
                            "data": {"P": 8, "C": 2, "z_law": "values", "z_values": [0.5, 1.5]},
                            "model": {"mask_keys": True, "loss_norm": "P"},
                            "train": {"engine": "population-exact", "lr": 8.0, "steps": 300,
                                      "n_records": 10}},
            "sweep": {"axes": {"data.C1": C1}, "keep": "final"}})

    with tempfile.TemporaryDirectory() as d:
        run_sweep_spec(spec([4]), Path(d) / "warm", workers=0, progress=False,
                       say=lambda s: None)
        grid = spec([2, 4, 6])
        est = estimate_points(grid.points())
        assert est.timed == 3 and est.seconds > 0
        c0 = time.process_time()
        run_sweep_spec(grid, Path(d) / "s", workers=0, progress=False, say=lambda s: None)
        measured = time.process_time() - c0
    assert 1 / 2 <= measured / est.seconds <= 2, (measured, est)
