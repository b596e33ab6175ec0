"""The store of real-image runs (``--cache DIR``): nothing in it can run code, and an entry
that is not this run's (damaged, foreign, a stand-in under the real key) or a write that
fails costs one line and a recomputation, never a traceback or a lost result."""

from __future__ import annotations

import errno
import os
import pickle

import numpy as np
import pandas as pd
import pytest

from theorylab.huang2024 import realvit as rv


class _Planted:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _result(cfg, data="fashion-mnist"):
    table = pd.DataFrame({"seed": [0, 0], "model": ["mae", "cl"], "layer": [0, 0],
                          "head": [-1, -1], "nmi": [0.1, 0.2]})
    curves = pd.DataFrame({"seed": [0], "model": ["mae"], "epoch": [1], "step": [2],
                           "loss": [0.5]})
    maps = {(0, "mae"): np.full((1, 2, 1, 4, 4), 0.25), (0, "cl"): np.eye(4)[None, None, None]}
    return rv.RealViTResult(table, curves, maps, {0: np.zeros((2, 1, 28, 28))}, cfg,
                            "probe data", 1.25, data)


@pytest.fixture
def computed(monkeypatch):
    calls = []

    def fake(cfg, *, stand_in=False, **kw):
        calls.append(stand_in)
        return _result(cfg, "digits-28" if stand_in else "fashion-mnist")

    monkeypatch.setattr(rv, "run_realvit", fake)
    return calls


def _path(folder, stand_in=False):
    return folder / "realvit" / f"{rv.run_key(rv.QUICK, stand_in)}.npz"


def _cache_lines(capsys) -> list[str]:
    return [line for line in capsys.readouterr().err.splitlines() if line.startswith("cache:")]


def test_an_entry_reads_back_the_whole_result(tmp_path, computed):
    a = rv.stored_realvit(rv.QUICK, tmp_path)
    b = rv.stored_realvit(rv.QUICK, tmp_path)
    assert computed == [False]
    pd.testing.assert_frame_equal(a.table, b.table)
    pd.testing.assert_frame_equal(a.curves, b.curves)
    assert a.maps.keys() == b.maps.keys()
    for k in a.maps:
        np.testing.assert_array_equal(a.maps[k], b.maps[k])
    np.testing.assert_array_equal(a.images[0], b.images[0])
    assert (b.description, b.seconds, b.data, b.config) == ("probe data", 1.25,
                                                           "fashion-mnist", rv.QUICK)


@pytest.mark.parametrize("where", ["key", "old pickle name"])
def test_a_planted_malicious_pickle_runs_nothing(tmp_path, computed, capsys, where):
    marker = tmp_path / "PWNED"
    path = _path(tmp_path)
    if where == "old pickle name":
        path = path.with_suffix(".pkl")
    path.parent.mkdir(parents=True)
    path.write_bytes(pickle.dumps(_Planted(str(marker))))
    res = rv.stored_realvit(rv.QUICK, tmp_path)
    assert not marker.exists()  # the pickle's code never ran
    assert computed == [False] and res.data == "fashion-mnist"
    lines = _cache_lines(capsys)
    assert len(lines) == (1 if where == "key" else 0), lines
    assert all("recomputed" in line and "allow_pickle" not in line for line in lines)


@pytest.mark.parametrize("damage", ["truncated", "text", "foreign entry", "stand-in renamed"])
def test_a_bad_entry_is_recomputed_with_one_line(tmp_path, computed, capsys, damage):
    path = _path(tmp_path)
    if damage == "stand-in renamed":  # the digits result under the Fashion-MNIST key
        rv.stored_realvit(rv.QUICK, tmp_path, stand_in=True)
        _path(tmp_path, stand_in=True).rename(path)
    elif damage == "foreign entry":  # another setting's entry under this key
        other = _other_config()
        rv.stored_realvit(other, tmp_path)
        (tmp_path / "realvit" / f"{rv.run_key(other)}.npz").rename(path)
    else:
        rv.stored_realvit(rv.QUICK, tmp_path)
        path.write_bytes(path.read_bytes()[:300] if damage == "truncated" else b"not an npz")
    capsys.readouterr()
    computed.clear()
    res = rv.stored_realvit(rv.QUICK, tmp_path)
    assert computed == [False] and res.data == "fashion-mnist"  # recomputed on the real data
    lines = _cache_lines(capsys)
    assert len(lines) == 1 and lines[0].endswith("recomputed"), lines
    assert rv.stored_realvit(rv.QUICK, tmp_path).data == "fashion-mnist"  # and now kept
    assert computed == [False]


def _other_config():
    from dataclasses import replace

    return replace(rv.QUICK, epochs=3)


@pytest.mark.parametrize("fault", ["realvit is a file", "key is a folder", "disk full"])
def test_a_write_that_fails_keeps_the_computed_result(tmp_path, computed, capsys, monkeypatch,
                                                       fault):
    if fault == "realvit is a file":
        (tmp_path / "realvit").write_text("")
    elif fault == "key is a folder":
        _path(tmp_path).mkdir(parents=True)
    else:
        def full(*_a, **_k):
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(rv, "write_entry", full)
    res = rv.stored_realvit(rv.QUICK, tmp_path)
    assert computed == [False] and res.description == "probe data"  # the result is used
    lines = _cache_lines(capsys)
    assert any("the result is used but not kept" in line for line in lines), lines
    assert len(lines) <= 2  # at most: the unusable entry, then the failed write
