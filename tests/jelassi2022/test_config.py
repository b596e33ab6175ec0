import math

import pytest

from theorylab import DataConfig, ExperimentConfig, ModelConfig, TrainConfig, load_config
from theorylab.jelassi2022.config import config_from_dict, config_to_toml


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(D=10, C=3), "data.C"),
        (dict(D=10, C=2, q=1.5), "data.q"),
        (dict(D=10, C=2, q=-0.1), "data.q"),
        (dict(D=-4, C=2), "data.D"),
        (dict(D=10, C=2, d=0), "data.d"),
        (dict(D=10, C=10), "data.L"),
        (dict(D=10, L=3), "data.L"),
        (dict(D=10), "data.C"),
        (dict(D=10, C=2, partition="grid"), "data.D"),
        (dict(D=16, C=2, partition="grid"), "data.C"),
        (dict(D=4, partition=[[0, 1], [1, 2]]), "data.partition"),
        (dict(D=4, partition=[[0, 1], [2]]), "data.partition"),
        (dict(D=6, partition=[[0, 1], [2, 3]]), "data.partition"),
        (dict(D=10, C=2, sigma=-1.0), "data.sigma"),
        (dict(D=10, C=2, partition="hex"), "data.partition"),
        (dict(D=10.5, C=2), "data.D"),
    ],
)
def test_bad_data_config_names_the_field(kwargs, field):
    with pytest.raises(ValueError, match=f"^{field}:"):
        DataConfig(**kwargs)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(activation="relu"), "model.activation"),
        (dict(activation=[1.0]), "model.activation"),
        (dict(activation=["a", 2]), "model.activation"),
        (dict(temperature=0.0), "model.temperature"),
        (dict(value_scale=-1.0), "model.value_scale"),
        (dict(diag="big"), "model.diag"),
    ],
)
def test_bad_model_config_names_the_field(kwargs, field):
    with pytest.raises(ValueError, match=f"^{field}:"):
        ModelConfig(**kwargs)


@pytest.mark.parametrize(
    "kwargs, field",
    [
        (dict(engine="sgd"), "train.engine"),
        (dict(lr_v=-1.0), "train.lr_v"),
        (dict(steps=-1), "train.steps"),
        (dict(n_train=0), "train.n_train"),
        (dict(init_v="zeros"), "train.init_v"),
        (dict(record="sometimes"), "train.record"),
        (dict(dtype="float16"), "train.dtype"),
        (dict(device="tpu"), "train.device"),
        (dict(device="cuda"), "train.device"),  # numpy backend cannot run on CUDA
        (dict(engine="empirical", method="brute"), "train.method"),
        (dict(lr_v=float("nan")), "train.lr_v"),
    ],
)
def test_bad_train_config_names_the_field(kwargs, field):
    with pytest.raises(ValueError, match=f"^{field}:"):
        TrainConfig(**kwargs)


def test_unknown_keys_and_sections_are_named():
    with pytest.raises(ValueError, match=r"^data\.DD: unknown field"):
        config_from_dict({"data": {"D": 4, "C": 2, "DD": 3}})
    with pytest.raises(ValueError, match=r"^optim: unknown section"):
        config_from_dict({"optim": {}})


def test_defaults_resolve_from_the_paper():
    cfg = ExperimentConfig(data=DataConfig(D=10, C=2, d=64)).resolved()
    assert cfg.data.sigma == pytest.approx(1 / 8)  # σ = 1/√d, Assumption 2
    assert cfg.model.temperature == pytest.approx(8.0)  # √d in eq. (T)
    assert cfg.model.value_scale == 10.0  # D in eq. (T)
    assert cfg.model.diag == pytest.approx(math.log(math.log(64)))
    assert cfg.train.lr_A == cfg.train.lr_v


def test_toml_round_trip(tmp_path):
    cfg = ExperimentConfig(
        data=DataConfig(D=10, partition=[[0, 8], [1, 5], [2, 4], [3, 7], [6, 9]], d=20, q=0.3),
        model=ModelConfig(activation=[0.0, 0.03, 0.0, 0.0, 0.0, 1.0], diag=1.5),
        train=TrainConfig(engine="empirical", steps=7, mc_resample=False),
    ).resolved()
    p = tmp_path / "c.toml"
    p.write_text(config_to_toml(cfg, "header"))
    assert load_config(p) == cfg


def test_load_config_errors(tmp_path):
    with pytest.raises(ValueError, match="^config: cannot read"):
        load_config(tmp_path / "missing.toml")
    bad = tmp_path / "bad.toml"
    bad.write_text("[data\nD=")
    with pytest.raises(ValueError, match="^config: .* is not valid TOML"):
        load_config(bad)
