"""The real-image arms in the shared store (theorylab.vision.store, ``--cache DIR``): an arm's
key follows the settings it reads, the data and the source that computes it; a stored arm reads
back whole; an arm is trained once per store. The store's faults (pickles, damaged or foreign
entries, failed writes) are tested in tests/vision/test_store.py."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pandas as pd

from theorylab.huang2024 import realvit as rv
from theorylab.vision.placed import PlacedImages
from theorylab.vision.store import RunStore, clear_memo, key_name


def _arm_run(seconds: float = 1.25) -> rv.ArmRun:
    table = pd.DataFrame({"seed": [0, 0], "model": ["mae", "mae"], "layer": [0, 1],
                          "head": [-1, -1], "nmi": [0.1, 0.2]})
    traj = pd.DataFrame({"seed": [0], "model": ["mae"], "step": [5], "nmi": [0.15]})
    curves = pd.DataFrame({"seed": [0], "model": ["mae"], "step": [2], "loss": [0.5]})
    levels = pd.DataFrame({"seed": [0], "mae_mean_predictor": [0.3], "cl_chance": [4.1]})
    maps = {(0, "mae"): np.full((1, 2, 1, 4, 4), 0.25)}
    return rv.ArmRun(table, traj, curves, levels, maps, seconds)


def _name(cfg=rv.QUICK, arm="mae", stand_in=False) -> str:
    return key_name(rv.store_key(cfg, arm, stand_in))


def test_the_key_follows_the_arm_the_stand_in_and_the_source(monkeypatch):
    base = _name()
    assert base == _name()
    assert _name(replace(rv.QUICK, steps=rv.QUICK.steps + 1)) != base
    assert _name(stand_in=True) != base
    assert _name(arm="cl") != base
    # MAE's mask ratio is not a setting of the CL arm: its key does not move
    assert _name(replace(rv.QUICK, mask_ratio=0.5), "cl") == _name(arm="cl")
    # the source of the modules computing the arm is digested, the vision room's included
    monkeypatch.setattr(rv, "code_digest", lambda fns: "|".join(
        sorted({f.__module__ for f in fns})))
    code = rv.store_key(rv.QUICK, "mae")["code"]
    for module in ("theorylab.huang2024.realvit", "theorylab.huang2024.diversity",
                   "theorylab.vision.attention_metrics", "theorylab.vision.imagedata"):
        assert module in code


def test_an_arm_reads_back_whole(tmp_path):
    clear_memo()
    store = RunStore(tmp_path)
    data = PlacedImages(None, None, None, "probe", "fashion-mnist")
    a = _arm_run()
    arrays, tables, meta = rv._encode(a)
    store.put(rv.store_key(rv.QUICK, "mae"), arrays=arrays, tables=tables, meta=meta)
    b, fresh = rv._arm(rv.QUICK, "mae", data, False, "cpu", store)
    assert not fresh
    for name in ("table", "trajectory", "curves", "levels"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name))
    assert a.maps.keys() == b.maps.keys() and b.seconds == 1.25
    np.testing.assert_array_equal(a.maps[(0, "mae")], b.maps[(0, "mae")])
    clear_memo()


def test_an_arm_is_trained_once_per_store(tmp_path, monkeypatch):
    calls = []

    def train(cfg, arm, data, progress=None):
        calls.append(arm)
        return _arm_run()

    monkeypatch.setattr(rv, "train_arm", train)
    data = PlacedImages(None, None, None, "probe", "fashion-mnist")
    store = RunStore(tmp_path)
    clear_memo()
    run, fresh = rv._arm(rv.QUICK, "mae", data, False, "cpu", store)
    assert fresh and calls == ["mae"]
    clear_memo()  # a new process: the store answers
    again, fresh = rv._arm(rv.QUICK, "mae", data, False, "cpu", store)
    assert not fresh and calls == ["mae"]
    pd.testing.assert_frame_equal(run.table, again.table)
    clear_memo()
