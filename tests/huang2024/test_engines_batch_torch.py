"""The batch loss and the batch engines (brute force, Monte Carlo, empirical) on the torch
backend against numpy: one code path on two array backends (tolerance: the float64 entry of
``tests._backends.TOL``)."""

from __future__ import annotations

import numpy as np
import pytest

from tests._backends import assert_close
from theorylab.core.backend import get_backend
from theorylab.huang2024 import config_from_dict, mae_loss_grad, run_experiment
from theorylab.huang2024.data import sample_batch


@pytest.mark.parametrize("mask_keys, loss_norm, mask", [
    (True, "P", "bernoulli"), (False, "mask", "fixed"), (False, "none", "bernoulli")])
def test_torch_loss_and_gradient_equal_numpy(mask_keys, loss_norm, mask):
    cfg = config_from_dict({"data": {"P": 9, "K": 2, "C1": 5, "C": 2},
                            "model": {"mask": mask, "mask_keys": mask_keys,
                                      "loss_norm": loss_norm}})
    s = cfg.data.make_structure()
    rng = np.random.default_rng(0)
    b = sample_batch(rng, s, 50, law="uniform", L=0.5, U=1.5, values=None, probs=None,
                     mask_kind=mask, gamma=0.5, mask_size=cfg.mask_size)
    b.mask[0] = True  # a sample with every patch masked (an empty softmax without mask keys)
    Phi, Ups = rng.standard_normal((9, s.F)), rng.standard_normal((9, 9))
    a = mae_loss_grad(s, Phi, Ups, b, mask_keys=mask_keys, loss_norm=loss_norm)
    t = mae_loss_grad(s, Phi, Ups, b, mask_keys=mask_keys, loss_norm=loss_norm,
                      xp=get_backend("torch"))
    # the same float64 operations in another order: rounding only (measured ≤ 5e-16)
    for x, y in ((a.loss, t.loss), (a.grad_Phi, t.grad_Phi), (a.grad_Ups, t.grad_Ups),
                 (a.attn_own, t.attn_own), (a.attn_glob, t.attn_glob),
                 (a.attn_masked, t.attn_masked)):
        assert_close(y, x)


def _run(engine, backend, device="cpu"):
    cfg = config_from_dict({"data": {"P": 16, "C1": 8, "C": 4},
                            "train": {"engine": engine, "backend": backend, "device": device,
                                      "steps": 5, "lr": 20.0, "mc_samples": 64,
                                      "n_train": 64, "record": "all"}})
    return run_experiment(cfg).trajectory


@pytest.mark.parametrize("engine", ["population-montecarlo", "empirical"])
def test_torch_cpu_runs_equal_numpy_runs(engine):
    a, b = _run(engine, "numpy"), _run(engine, "torch")
    cols = [c for c in a.columns if c not in ("step", "engine")]
    # five GD steps amplify rounding differences only mildly (measured ~1e-15)
    assert_close(b[cols].to_numpy(), a[cols].to_numpy())


@pytest.mark.gpu
def test_torch_cuda_run_equals_numpy():
    a, b = _run("population-montecarlo", "numpy"), _run("population-montecarlo", "torch", "cuda")
    cols = [c for c in a.columns if c not in ("step", "engine")]
    # float64 on the GPU: different reduction orders, rounding only
    assert np.allclose(a[cols].to_numpy(), b[cols].to_numpy(), rtol=0, atol=1e-10,
                       equal_nan=True)
