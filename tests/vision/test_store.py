"""The real-image store (theorylab.vision.store): one memo and one ``--cache`` folder for the
networks both papers train on images; nothing in it can run code, and an entry that is not the
key's (damaged, foreign, a pickle) or a write that fails costs one line and a recomputation,
never a traceback or a lost result."""

from __future__ import annotations

import errno
import importlib
import os
import pickle
import sys

import numpy as np
import pandas as pd
import pytest

from theorylab.vision import store as vs

KEY = vs.run_key("probe", {"steps": 3}, stand_in=False, code="c0")
OTHER = vs.run_key("probe", {"steps": 4}, stand_in=False, code="c0")


class _Planted:
    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _encode(run):
    return {"a": run["a"]}, {"t": run["t"]}, {"seconds": run["seconds"]}


def _decode(entry):
    return {"a": entry.arrays["a"], "t": entry.tables["t"], "seconds": entry.meta["seconds"]}


def _run():
    return {"a": np.arange(6.0).reshape(2, 3), "t": pd.DataFrame({"x": [1, 2]}),
            "seconds": 1.25}


def _lines(capsys) -> list[str]:
    return [ln for ln in capsys.readouterr().err.splitlines() if ln.startswith("cache:")]


def _put(store, key=KEY):
    arrays, tables, meta = _encode(_run())
    store.put(key, arrays=arrays, tables=tables, meta=meta)


def test_the_key_follows_settings_data_and_code(tmp_path, monkeypatch):
    assert vs.key_name(KEY) == vs.key_name(dict(KEY)) != vs.key_name(OTHER)
    assert vs.key_name(vs.run_key("probe", {"steps": 3}, stand_in=False, code="c1")) \
        != vs.key_name(KEY)
    mod = tmp_path / "vision_key_probe.py"
    mod.write_text("def f():\n    return 1\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    probe = importlib.import_module("vision_key_probe")
    try:
        d1 = vs.code_digest([probe.f], root=tmp_path)
        mod.write_text("def f():\n    return 2\n")  # a changed line of code changes the digest
        assert vs.code_digest([probe.f], root=tmp_path) != d1
    finally:
        sys.modules.pop("vision_key_probe", None)


def test_a_run_is_computed_once_per_store(tmp_path):
    calls = []

    def compute():
        calls.append(1)
        return _run()

    store = vs.RunStore(tmp_path)
    vs.clear_memo()
    first, fresh = vs.remembered(KEY, compute, encode=_encode, decode=_decode, store=store)
    assert fresh and len(calls) == 1
    assert vs.remembered(KEY, compute, encode=_encode, decode=_decode)[1] is False  # the memo
    vs.clear_memo()  # a new process: the folder answers
    again, fresh = vs.remembered(KEY, compute, encode=_encode, decode=_decode, store=store)
    assert not fresh and len(calls) == 1 and again["seconds"] == 1.25
    np.testing.assert_array_equal(first["a"], again["a"])
    pd.testing.assert_frame_equal(first["t"], again["t"])
    assert len(list((tmp_path / vs.SUBFOLDER).glob("*.npz"))) == 1
    vs.clear_memo()


@pytest.mark.parametrize("where", ["key", "old pickle name"])
def test_a_planted_malicious_pickle_runs_nothing(tmp_path, capsys, where):
    marker = tmp_path / "PWNED"
    store = vs.RunStore(tmp_path)
    path = store.path(KEY)
    if where == "old pickle name":
        path = path.with_suffix(".pkl")
    path.parent.mkdir(parents=True)
    path.write_bytes(pickle.dumps(_Planted(str(marker))))
    assert store.get(KEY) is None
    assert not marker.exists()  # the pickle's code never ran
    lines = _lines(capsys)
    assert len(lines) == (1 if where == "key" else 0), lines
    assert all("recomputed" in ln and "allow_pickle" not in ln for ln in lines)


@pytest.mark.parametrize("damage", ["truncated", "text", "foreign entry", "undecodable"])
def test_a_bad_entry_is_a_miss_with_one_line(tmp_path, capsys, damage):
    store = vs.RunStore(tmp_path)
    path = store.path(KEY)
    if damage == "foreign entry":  # another setting's run under this key
        _put(store, OTHER)
        store.path(OTHER).rename(path)
    else:
        _put(store)
        if damage != "undecodable":
            path.write_bytes(path.read_bytes()[:300] if damage == "truncated" else b"not npz")
    capsys.readouterr()
    vs.clear_memo()

    def decode(entry):
        raise KeyError("t")

    run, fresh = vs.remembered(KEY, _run, encode=_encode, store=store,
                               decode=decode if damage == "undecodable" else _decode)
    assert fresh and run["seconds"] == 1.25
    lines = _lines(capsys)
    assert len(lines) == 1 and lines[0].endswith("recomputed"), lines
    assert store.get(KEY) is not None  # the recomputed run replaced it
    vs.clear_memo()


@pytest.mark.parametrize("fault", ["vision is a file", "key is a folder", "disk full"])
def test_a_write_that_fails_is_one_line(tmp_path, capsys, monkeypatch, fault):
    store = vs.RunStore(tmp_path)
    if fault == "vision is a file":
        (tmp_path / vs.SUBFOLDER).write_text("")
    elif fault == "key is a folder":
        store.path(KEY).mkdir(parents=True)
    else:
        def full(*_a, **_k):
            raise OSError(errno.ENOSPC, "No space left on device")

        monkeypatch.setattr(vs, "write_entry", full)
    _put(store)
    lines = _lines(capsys)
    assert len(lines) == 1 and "the result is used but not kept" in lines[0], lines
