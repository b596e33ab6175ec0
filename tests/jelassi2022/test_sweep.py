"""Batched sweeps: every run of a batch equals its own unbatched run."""

import dataclasses

import numpy as np
import pytest

from tests._backends import assert_close
from theorylab import get_backend, run_experiment, run_sweep
from theorylab.jelassi2022.sweep import SWEEP_SCHEMA

from ._helpers import small_config

COLS = ["loss", "error", "tie_mass", "loss_se", "error_se", "train_loss", "alpha", "beta",
        "cos_v_wstar", "gamma", "rho", "sym_dev", "own_set_mass"]


def _cfg(**kw):
    base = dict(D=6, C=2, d=5, engine="empirical", n_train=300, n_test=200, steps=6, lr_v=0.5,
                init_v="gaussian", v0_scale=0.3, offdiag0_std=0.1, record="all")
    return small_config(**{**base, **kw})


def _single(cfg, seed, lr_v, lr_A):
    t = dataclasses.replace(cfg.train, seed=seed, lr_v=lr_v, lr_A=lr_A)
    return run_experiment(dataclasses.replace(cfg, train=t)).trajectory


@pytest.mark.parametrize("backend", ["numpy", "torch"])
@pytest.mark.parametrize("seeds", [[0], [0, 3]])
def test_each_run_of_a_sweep_equals_its_unbatched_run(backend, seeds):
    cfg = _cfg(backend=backend, chunk_size=128)  # 3 chunks: the batched chunk sums add up too
    df = run_sweep(cfg, seeds=seeds, lr_v=[0.5, 0.2], lr_A=[0.5, 1.0])
    assert list(df.columns) == list(SWEEP_SCHEMA)
    assert df.dtypes.astype(str).to_dict() == SWEEP_SCHEMA
    assert df["run"].nunique() == 4 * len(seeds) and len(df) == 4 * len(seeds) * 7
    for (seed, lr_v, lr_A), g in df.groupby(["seed", "lr_v", "lr_A"]):
        ref = _single(cfg, int(seed), lr_v, lr_A)
        np.testing.assert_array_equal(g["step"], ref["step"])
        # float64, a few steps; loss_se has a cancellation (E ℓ² − (E ℓ)²), hence atol
        np.testing.assert_allclose(g[COLS], ref[COLS], rtol=1e-12, atol=1e-14)
        assert (g["patch_association"].to_numpy() == ref["patch_association"].to_numpy()).all()
    assert df.groupby("run")["alpha"].last().nunique() == 4 * len(seeds)  # the runs differ


def test_sweep_defaults_tie_lr_A_to_lr_v():
    from theorylab import DataConfig, ExperimentConfig, ModelConfig, TrainConfig

    cfg = ExperimentConfig(
        data=DataConfig(D=6, C=2, partition="random", d=5, q=0.4),
        model=ModelConfig(activation="cubic", diag=0.7),
        train=TrainConfig(engine="empirical", n_train=100, n_test=50, steps=3, lr_v=0.5),
    )
    df = run_sweep(cfg, lr_v=[0.5, 0.1])
    assert (df["lr_A"] == df["lr_v"]).all()
    with pytest.raises(ValueError, match="^seeds"):
        run_sweep(cfg, seeds=[1, 1])
    with pytest.raises(ValueError, match="^train.engine"):
        run_sweep(dataclasses.replace(cfg, train=TrainConfig()))


def test_sweep_float32_close_to_float64():
    """float32 (torch CPU) within the float32 tolerance of ``tests._backends.TOL`` (1e-4
    relative) of float64 over a short run."""
    a = run_sweep(_cfg(backend="torch"), seeds=[0, 1])
    b = run_sweep(_cfg(backend="torch", dtype="float32"), seeds=[0, 1])
    cols = ["loss", "train_loss", "alpha", "gamma", "rho"]
    assert_close(b[cols], a[cols], "float32")


@pytest.mark.gpu
def test_cuda_sweep_equals_cpu():
    """CUDA and CPU batched sweeps agree in float64 to 1e-10 relative."""
    cfg = _cfg(backend="torch", steps=20, record="log", n_records=8)
    cpu = run_sweep(cfg, seeds=[0, 5], lr_v=[0.5, 0.1])
    gpu = run_sweep(cfg, seeds=[0, 5], lr_v=[0.5, 0.1], xp=get_backend("torch", "float64", "cuda"))
    np.testing.assert_allclose(gpu[COLS], cpu[COLS], rtol=1e-10, atol=1e-13)


@pytest.mark.gpu
def test_cuda_float32_sweep_close_to_float64():
    """float32 on CUDA within the float32 tolerance of ``tests._backends.TOL`` of float64 over
    20 steps."""
    cfg = _cfg(backend="torch", steps=20, record="log", n_records=8)
    a = run_sweep(cfg, seeds=[0, 5], xp=get_backend("torch", "float64", "cuda"))
    b = run_sweep(cfg, seeds=[0, 5], xp=get_backend("torch", "float32", "cuda"))
    cols = ["loss", "train_loss", "alpha", "gamma", "rho"]
    assert_close(b[cols], a[cols], "float32")
