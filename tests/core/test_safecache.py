"""theorylab.core.safecache: cache entries that cannot run code, keyed and checked when read."""

from __future__ import annotations

import os
import pickle
import zipfile

import numpy as np
import pandas as pd
import pytest

from theorylab.core.safecache import FORMAT, load_error, read_entry, write_entry

KEY = {"what": "probe", "config": {"n": 3}, "data": {"name": "fashion-mnist"}}


class _Planted:
    """A pickle that, when loaded, creates a marker file: the proof that code ran."""

    def __init__(self, marker: str) -> None:
        self.marker = marker

    def __reduce__(self):
        return (os.system, (f"touch {self.marker}",))


def _entry(path):
    table = pd.DataFrame({"seed": [0, 1], "model": ["mae", "cl"], "nmi": [0.5, np.nan],
                          "ok": [True, False]})
    write_entry(path, KEY, arrays={"maps/0/mae": np.arange(6.0).reshape(2, 3),
                                   "names": np.array(["a", "b"])},
                tables={"table": table}, meta={"description": "probe", "seconds": 1.5})
    return table


def test_an_entry_reads_back_equal(tmp_path):
    table = _entry(tmp_path / "e.npz")
    entry, why = read_entry(tmp_path / "e.npz", KEY)
    assert why == "" and entry is not None
    np.testing.assert_array_equal(entry.arrays["maps/0/mae"], np.arange(6.0).reshape(2, 3))
    assert list(entry.arrays["names"]) == ["a", "b"]
    pd.testing.assert_frame_equal(entry.tables["table"], table)
    assert entry.meta == {"description": "probe", "seconds": 1.5}
    assert read_entry(tmp_path / "absent.npz", KEY) == (None, "")  # a plain miss says nothing


def test_another_key_is_a_miss_naming_what_differs(tmp_path):
    _entry(tmp_path / "e.npz")
    entry, why = read_entry(tmp_path / "e.npz", {**KEY, "data": {"name": "digits-28"}})
    assert entry is None and "another computation's entry (differs in data)" in why


@pytest.mark.parametrize("content", ["pickle-file", "pickle-in-npz", "truncated", "text",
                                     "foreign-npz", "folder"])
def test_nothing_in_a_bad_entry_runs_and_it_is_a_miss(tmp_path, content):
    path, marker = tmp_path / "e.npz", tmp_path / "PWNED"
    if content == "pickle-file":  # a pickle whose loading calls os.system
        path.write_bytes(pickle.dumps(_Planted(str(marker))))
    elif content == "pickle-in-npz":  # a valid header, the payload an object array
        _entry(path)
        with zipfile.ZipFile(path, "a") as z:
            z.writestr("a/evil.npy", _object_npy(_Planted(str(marker))))
    elif content == "truncated":
        _entry(path)
        path.write_bytes(path.read_bytes()[:200])
    elif content == "text":
        path.write_text("plain text under the key\n")
    elif content == "foreign-npz":
        np.savez(path, x=np.zeros(3))
    else:
        path.mkdir()
    entry, why = read_entry(path, KEY)
    assert entry is None and why, why
    assert not marker.exists()  # no code ran
    assert "\n" not in why and "allow_pickle" not in why and "unsafe" not in why


def _object_npy(obj) -> bytes:
    import io

    buf = io.BytesIO()
    np.save(buf, np.array([obj], dtype=object), allow_pickle=True)
    return buf.getvalue()


def test_object_arrays_are_refused_on_write(tmp_path):
    with pytest.raises(ValueError, match="numbers, booleans and text only"):
        write_entry(tmp_path / "e.npz", KEY, arrays={"x": np.array([object()])})
    assert not (tmp_path / "e.npz").exists()


def test_another_format_is_a_miss(tmp_path):
    import json

    header = json.dumps({"format": "other/9", "key": KEY}).encode()
    np.savez(tmp_path / "e.npz", __header__=np.frombuffer(header, dtype=np.uint8))
    entry, why = read_entry(tmp_path / "e.npz", KEY)
    assert entry is None and f"not {FORMAT!r}" in why


def test_load_errors_never_relay_advice_to_unpickle():
    err = ValueError("This file contains pickled (object) data. If you trust the file you can "
                     "load it unsafely using the `allow_pickle=` keyword argument")
    assert load_error(err) == ("it is not npz data (a pickle, text or another format: theorylab "
                               "never unpickles)")
