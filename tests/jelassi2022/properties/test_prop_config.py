"""Invalid configurations always raise a ``ValueError`` naming the field.

Convention of ``theorylab.jelassi2022.config`` (and STYLE.md): every invalid value raises a one-line
``ValueError`` whose message starts with the field's dotted name, e.g. ``data.C: ...``.
"""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from theorylab.jelassi2022.config import DataConfig, ModelConfig, TrainConfig, config_from_dict

BASE = {"data": {"D": 4, "C": 2, "d": 4}, "model": {}, "train": {}}
FIELDS = {
    "data": [f for f in DataConfig.__dataclass_fields__],
    "model": [f for f in ModelConfig.__dataclass_fields__],
    "train": [f for f in TrainConfig.__dataclass_fields__],
}

# values that are invalid for every field of the given kind (type or range errors)
_not_number = st.one_of(st.text(max_size=3), st.lists(st.integers(), max_size=2),
                        st.dictionaries(st.text(max_size=2), st.integers(), max_size=1),
                        st.booleans())
_bad_float = st.one_of(_not_number, st.just(math.nan), st.just(math.inf), st.just(-math.inf))
_bad_int = st.one_of(_bad_float, st.floats(0.1, 0.9).map(lambda x: x + 3))

INVALID = {
    ("data", "D"): st.one_of(_bad_int, st.integers(max_value=1)),
    ("data", "d"): st.one_of(_bad_int, st.integers(max_value=1)),
    ("data", "q"): st.one_of(_bad_float, st.floats(1.0, 1e6, exclude_min=True),
                             st.floats(-1e6, 0.0, exclude_max=True)),
    ("data", "sigma"): st.one_of(_bad_float, st.floats(-1e6, 0.0, exclude_max=True)),
    ("data", "seed"): st.one_of(_bad_int, st.integers(max_value=-1)),
    ("data", "partition"): st.one_of(st.text(max_size=3).filter(lambda s: s not in
                                                                ("grid", "random")),
                                     st.just([[0, 1], [1, 2]]), st.just([[0], [1, 2, 3]]),
                                     st.just([]), st.just(3)),
    ("model", "temperature"): st.one_of(_bad_float, st.floats(-1e6, 0.0)),
    ("model", "value_scale"): st.one_of(_bad_float, st.floats(-1e6, 0.0)),
    ("model", "diag"): st.one_of(st.text(max_size=3).filter(lambda s: s != "loglogd"),
                                 st.just(math.nan), st.just(math.inf)),
    ("model", "activation"): st.one_of(st.text(max_size=3).filter(
        lambda s: s not in ("cubic", "quintic")), st.just([1.0]), st.just([0.0, 0.0]),
        st.just([0.0, math.nan]), st.just(["a", "b"])),
    ("train", "lr_v"): st.one_of(_bad_float, st.floats(-1e6, 0.0, exclude_max=True)),
    ("train", "steps"): st.one_of(_bad_int, st.integers(max_value=-1)),
    ("train", "engine"): st.text(max_size=4),
    ("train", "method"): st.text(max_size=4).filter(lambda s: s != "auto"),
    ("train", "dtype"): st.text(max_size=4),
    ("train", "device"): st.one_of(st.text(max_size=4).filter(lambda s: s != "cpu"), st.just(0)),
    ("train", "tie_tol"): st.one_of(_bad_float, st.floats(1e-2, 1.0), st.floats(-1.0, -1e-9)),
    ("train", "mc_samples"): st.one_of(_bad_int, st.integers(max_value=1)),
    ("train", "mc_resample"): st.one_of(st.integers(), st.text(max_size=2), st.none()),
}


def _with(section, field, value):
    cfg = {k: dict(v) for k, v in BASE.items()}
    cfg[section][field] = value
    return cfg


@st.composite
def _invalid(draw):
    (section, field) = draw(st.sampled_from(sorted(INVALID)))
    return section, field, draw(INVALID[(section, field)])


@given(_invalid())
def test_invalid_values_raise_valueerror_naming_the_field(case):
    """STYLE.md / config.py contract: an invalid value raises ValueError starting with
    "section.field" (the data-model ranges are those of Definition 2.1 / Assumption 1:
    q ∈ [0, 1], σ ≥ 0, L ≥ 2 sets of equal size)."""
    section, field, value = case
    with pytest.raises(ValueError) as info:
        config_from_dict(_with(section, field, value)).resolved()
    assert str(info.value).startswith(f"{section}.{field}"), str(info.value)


_anything = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**6),
              st.floats(allow_nan=True, allow_infinity=True), st.text(max_size=4)),
    lambda children: st.lists(children, max_size=3) | st.dictionaries(st.text(max_size=2),
                                                                       children, max_size=2),
    max_leaves=6,
)


@st.composite
def _any_field(draw):
    section = draw(st.sampled_from(sorted(FIELDS)))
    field = draw(st.sampled_from(FIELDS[section] + ["bogus"]))
    return section, field, draw(_anything)


@given(_any_field())
def test_arbitrary_values_never_raise_another_exception(case):
    """Fuzzing every field with arbitrary TOML-like values: the config either builds or raises
    a ValueError whose message starts with the section name (never TypeError & co.)."""
    section, field, value = case
    try:
        config_from_dict(_with(section, field, value)).resolved()
    except ValueError as e:
        assert str(e).startswith(f"{section}."), str(e)


@pytest.mark.parametrize("section,field", [("data", "q"), ("train", "lr_v"),
                                           ("model", "temperature")])
def test_huge_integers_raise_valueerror(section, field):
    """Item 11: integers beyond float range (valid TOML) must be rejected with the field name."""
    with pytest.raises(ValueError, match=rf"^{section}\.{field}"):
        config_from_dict(_with(section, field, 10**400))


def test_non_integer_patch_indices_are_rejected():
    """Definition 2.1: the sets partition [D]; an index 0.5 is not a patch."""
    with pytest.raises(ValueError, match=r"^data\.partition"):
        config_from_dict(_with("data", "partition", [[0.5, 1], [2, 3]]))
