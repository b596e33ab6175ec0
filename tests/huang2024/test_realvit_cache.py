"""The store of trained real-image arms (``--cache DIR``): nothing in it can run code, and an
entry that is not this arm's (damaged, foreign, a stand-in result under the real key) or a
write that fails costs one line and a recomputation, never a traceback or a lost result."""

from __future__ import annotations

import errno
import os
import pickle
from dataclasses import replace

import numpy as np
import pandas as pd
import pytest

from theorylab.huang2024 import realvit as rv


class _Planted:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _arm_run(seconds: float = 1.25) -> rv.ArmRun:
    table = pd.DataFrame({"seed": [0, 0], "model": ["mae", "mae"], "layer": [0, 1],
                          "head": [-1, -1], "nmi": [0.1, 0.2]})
    traj = pd.DataFrame({"seed": [0], "model": ["mae"], "step": [5], "nmi": [0.15]})
    curves = pd.DataFrame({"seed": [0], "model": ["mae"], "step": [2], "loss": [0.5]})
    levels = pd.DataFrame({"seed": [0], "mae_mean_predictor": [0.3], "cl_chance": [4.1]})
    maps = {(0, "mae"): np.full((1, 2, 1, 4, 4), 0.25)}
    return rv.ArmRun(table, traj, curves, levels, maps, seconds)


OTHER = replace(rv.QUICK, steps=rv.QUICK.steps + 1)


def _cache_lines(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith("cache:")]


def _put(store, cfg=rv.QUICK, stand_in=False):
    store.put(cfg, "mae", stand_in, "cpu", _arm_run(),
              "digits-28" if stand_in else "fashion-mnist")


def test_an_entry_reads_back_the_whole_arm(tmp_path):
    store = rv.ArmStore(tmp_path)
    assert store.get(rv.QUICK, "mae", False, "cpu") is None  # nothing yet: a plain miss
    _put(store)
    a, b = _arm_run(), store.get(rv.QUICK, "mae", False, "cpu")
    for name in ("table", "trajectory", "curves", "levels"):
        pd.testing.assert_frame_equal(getattr(a, name), getattr(b, name))
    assert a.maps.keys() == b.maps.keys() and b.seconds == 1.25
    np.testing.assert_array_equal(a.maps[(0, "mae")], b.maps[(0, "mae")])
    assert len(list((tmp_path / "realvit").glob("*.npz"))) == 1


def test_the_key_follows_the_arm_the_stand_in_and_the_source(tmp_path, monkeypatch):
    base = rv.run_key(rv.QUICK, "mae")
    assert base == rv.run_key(rv.QUICK, "mae")
    assert rv.run_key(OTHER, "mae") != base
    assert rv.run_key(rv.QUICK, "mae", stand_in=True) != base
    assert rv.run_key(rv.QUICK, "cl") != base
    # MAE's mask ratio is not a setting of the CL arm: its key does not move
    assert rv.run_key(replace(rv.QUICK, mask_ratio=0.5), "cl") == rv.run_key(rv.QUICK, "cl")
    mod = tmp_path / "h24_key_probe.py"
    mod.write_text("X = 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setattr(rv, "_SOURCE_MODULES", (*rv._SOURCE_MODULES, "h24_key_probe"))
    k1 = rv.run_key(rv.QUICK, "mae")
    mod.write_text("X = 2\n")  # a changed line of code computing the arm changes the key
    assert rv.run_key(rv.QUICK, "mae") != k1 != base


@pytest.mark.parametrize("where", ["key", "old pickle name"])
def test_a_planted_malicious_pickle_runs_nothing(tmp_path, capsys, where):
    marker = tmp_path / "PWNED"
    store = rv.ArmStore(tmp_path)
    path = store.path(rv.QUICK, "mae")
    if where == "old pickle name":
        path = path.with_suffix(".pkl")
    path.parent.mkdir(parents=True)
    path.write_bytes(pickle.dumps(_Planted(str(marker))))
    assert store.get(rv.QUICK, "mae", False, "cpu") is None
    assert not marker.exists()  # the pickle's code never ran
    lines = _cache_lines(capsys)
    assert len(lines) == (1 if where == "key" else 0), lines
    assert all("recomputed" in line and "allow_pickle" not in line for line in lines)


@pytest.mark.parametrize("damage", ["truncated", "text", "foreign entry", "stand-in renamed"])
def test_a_bad_entry_is_a_miss_with_one_line(tmp_path, capsys, damage):
    store = rv.ArmStore(tmp_path)
    path = store.path(rv.QUICK, "mae")
    if damage == "stand-in renamed":  # the digits arm under the Fashion-MNIST key
        _put(store, stand_in=True)
        store.path(rv.QUICK, "mae", stand_in=True).rename(path)
    elif damage == "foreign entry":  # another setting's arm under this key
        _put(store, OTHER)
        store.path(OTHER, "mae").rename(path)
    else:
        _put(store)
        path.write_bytes(path.read_bytes()[:300] if damage == "truncated" else b"not an npz")
    capsys.readouterr()
    assert store.get(rv.QUICK, "mae", False, "cpu") is None
    lines = _cache_lines(capsys)
    assert len(lines) == 1 and lines[0].endswith("recomputed"), lines
    _put(store)  # the recomputed arm replaces it and is read back
    assert store.get(rv.QUICK, "mae", False, "cpu") is not None


@pytest.mark.parametrize("fault", ["realvit is a file", "key is a folder", "disk full"])
def test_a_write_that_fails_is_one_line(tmp_path, capsys, monkeypatch, fault):
    store = rv.ArmStore(tmp_path)
    if fault == "realvit is a file":
        (tmp_path / "realvit").write_text("")
    elif fault == "key is a folder":
        store.path(rv.QUICK, "mae").mkdir(parents=True)
    else:
        def full(*_a, **_k):
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(rv, "write_entry", full)
    _put(store)
    lines = _cache_lines(capsys)
    assert len(lines) == 1 and "the result is used but not kept" in lines[0], lines


def test_an_arm_is_trained_once_per_store(tmp_path, monkeypatch):
    calls = []

    def train(cfg, arm, data, progress=None):
        calls.append(arm)
        return _arm_run()

    monkeypatch.setattr(rv, "train_arm", train)
    data = rv.RealViTData(None, None, None, "probe", "fashion-mnist")
    store = rv.ArmStore(tmp_path)
    rv.clear_memo()
    run, fresh = rv._arm(rv.QUICK, "mae", data, False, "cpu", store)
    assert fresh and calls == ["mae"]
    rv.clear_memo()  # a new process: the store answers
    again, fresh = rv._arm(rv.QUICK, "mae", data, False, "cpu", store)
    assert not fresh and calls == ["mae"]
    pd.testing.assert_frame_equal(run.table, again.table)
    rv.clear_memo()
