"""Every bad input of the config and of the Python API ends in one line naming the field."""

from __future__ import annotations

import re

import pytest

from theorylab.jelassi2022.config import (
    LIMITS,
    DataConfig,
    ExperimentConfig,
    ModelConfig,
    TrainConfig,
    as_config,
    config_to_toml,
    load_config,
)
from theorylab.jelassi2022.sweep import run_sweep

from ._helpers import small_config

SECTION = {"data": DataConfig, "model": ModelConfig, "train": TrainConfig}


def _raises(prefix: str):
    """``pytest.raises`` for a one-line ``ValueError`` starting with ``prefix``."""
    return pytest.raises(ValueError, match="^" + re.escape(prefix) + r"[^\n]*$")


def _build(name: str, value):
    section, key = name.split(".")
    base = {"C": 2} if section == "data" else {}
    return SECTION[section](**{**base, key: value})


def test_the_documented_example_d_1e29():
    with _raises("data.D: must be <= 4096 (A is D×D; got 1e+29)"):
        DataConfig(D=1e29, C=2)
    with _raises("data.D: must be <= 4096 (A is D×D; got 10000)"):
        ExperimentConfig().replace(data={"D": 10_000})


@pytest.mark.parametrize("name", sorted(LIMITS))
def test_upper_limits_name_the_field_and_the_reason(name):
    lo, hi, why = LIMITS[name]
    big = hi * 10 if isinstance(hi, int) else 1e308
    with _raises(f"{name}: must be <= {hi} ({why}; got "):
        _build(name, big)
    with _raises(f"{name}: must be <= {hi} ({why}; got "):
        _build(name, hi + 1)
    assert getattr(_build(name, hi), name.split(".")[1]) == hi  # the limit itself is allowed
    if lo < 0:  # signed: the same bound below
        with _raises(f"{name}: must be >= {lo} ({why}; got -1e+308)"):
            _build(name, -1e308)


def test_softmax_logits_are_bounded():
    with _raises("train.offdiag0: must be <= 1000000.0 (A's entries are softmax logits"):
        TrainConfig(offdiag0=1e308)
    with _raises("train.offdiag0: must be finite (got nan)"):
        TrainConfig(offdiag0=float("nan"))
    with _raises("train.offdiag0_std: must be >= 0.0 ("):
        TrainConfig(offdiag0_std=-1.0)
    with _raises("model.diag: must be <= 1000000.0 ("):
        ModelConfig(diag=1e7)
    assert TrainConfig(offdiag0=-1e6, offdiag0_std=1e6).offdiag0 == -1e6


def test_lower_bounds_keep_their_own_message():
    with _raises("data.D: must be >= 2 (got 1)"):
        DataConfig(D=1, C=1)
    with _raises("train.n_records: must be >= 2 (got 1)"):
        TrainConfig(n_records=1)
    with _raises("train.steps: must be an integer (got 1.5)"):
        TrainConfig(steps=1.5)


def test_default_config_is_valid_and_round_trips(tmp_path):
    cfg = ExperimentConfig()
    assert (cfg.data.D, cfg.data.C, cfg.data.L) == (10, 2, 5)
    path = tmp_path / "c.toml"
    path.write_text(config_to_toml(cfg.resolved()))
    assert load_config(path) == cfg.resolved()
    assert ExperimentConfig(model=ModelConfig(diag=0.5)).data == DataConfig(C=2)
    with _raises("data.C: give C (patches per set) or L (number of sets)"):
        DataConfig()  # a section alone still needs C or L


def test_config_file_that_is_not_utf8(tmp_path):
    path = tmp_path / "latin1.toml"
    path.write_bytes("[data]\nD = 10 # café\n".encode("latin-1"))
    with _raises(f"config: {path} is not UTF-8 text (invalid continuation byte: byte 0xe9 at "
                 "offset 19)"):
        load_config(path)
    path.write_bytes(b"\xff\xfe[\x00")  # UTF-16
    with _raises(f"config: {path} is not UTF-8 text (invalid start byte: byte 0xff at offset 0)"):
        load_config(path)
    path.write_bytes(b"\xef\xbb\xbf[data]\nD = 4\nC = 2\n")  # UTF-8 with a byte-order mark
    assert load_config(path).data.D == 4


@pytest.mark.parametrize("obj,kind", [(None, "NoneType"), (3, "int"), ("a.toml", "str"),
                                      ([{"data": {}}], "list")])
def test_as_config_refuses_what_is_not_a_config(obj, kind):
    with _raises(f"config: must be an ExperimentConfig or a table of sections (got {kind})"):
        as_config(obj)


def test_as_config_accepts_a_config_or_its_tables():
    cfg = small_config()
    assert as_config(cfg) is cfg
    assert as_config(cfg.to_dict()) == cfg
    assert as_config({"data": {"C": 2}}) == ExperimentConfig()
    with _raises("train.steps: must be <= 1000000000 (a step is a full pass over the data; got "):
        as_config({"data": {"C": 2}, "train": {"steps": 10**12}})


_SWEEP = small_config(engine="empirical", n_train=20, n_test=10, steps=1)


@pytest.mark.parametrize("kwargs,message", [
    (dict(seeds=[1.5]), "seeds: must be integers (got 1.5)"),
    (dict(seeds=[0, 2.0]), "seeds: must be integers (got 2.0)"),
    (dict(seeds=[True]), "seeds: must be integers (got True)"),
    (dict(seeds=["1"]), "seeds: must be integers (got '1')"),
    (dict(seeds=[-1]), "seeds: must be >= 0 (got -1)"),
    (dict(seeds=[]), "seeds: must be a non-empty list (got [])"),
    (dict(seeds=3), "seeds: must be a list (got 3)"),
    (dict(seeds="01"), "seeds: must be a list (got '01')"),
    (dict(seeds=[4, 4]), "seeds: must be distinct (got [4, 4])"),
    (dict(lr_v=["0.1"]), "lr_v: must be a number (got '0.1')"),
    (dict(lr_v=[float("nan")]), "lr_v: must be finite (got nan)"),
    (dict(lr_v=[0.1, -0.5]), "lr_v: must be >= 0.0 (got -0.5)"),
    (dict(lr_v=[]), "lr_v: must be a non-empty list (got [])"),
    (dict(lr_v=0.1), "lr_v: must be a list (got 0.1)"),
    (dict(lr_A=[float("inf")]), "lr_A: must be finite (got inf)"),
    (dict(lr_A=[None]), "lr_A: must be a number (got None)"),
    (dict(lr_A=[]), "lr_A: must be a non-empty list (got [])"),
])
def test_run_sweep_arguments(kwargs, message):
    with _raises(message):
        run_sweep(_SWEEP, **kwargs)


def test_run_sweep_config_argument():
    with _raises("config: must be an ExperimentConfig or a table of sections (got NoneType)"):
        run_sweep(None)
    df = run_sweep(_SWEEP.to_dict(), seeds=[3], lr_v=[0.1, 1])  # a table of sections works
    assert sorted(df["lr_v"].unique()) == [0.1, 1.0] and set(df["seed"]) == {3}


@pytest.mark.parametrize("bad", [None, 3, "cfg.toml", [1]])
def test_run_experiment_refuses_what_is_not_a_config(bad):
    from theorylab import run_experiment

    with pytest.raises(ValueError, match=r"^config: must be an ExperimentConfig or a table"):
        run_experiment(bad)


def test_run_experiment_accepts_a_table():
    from theorylab import run_experiment

    res = run_experiment({"data": {"D": 6, "C": 2, "d": 5}, "train": {"steps": 2}})
    assert res.steps_done == 2 and len(res.trajectory) == 3
