"""The exact population engines on the torch backend against numpy: loss, gradients, attention
masses and short trajectories; the plain-autograd baseline of the benchmark against the engine;
the up-front refusals of the torch path; the benchmark's command line.

Tolerance: 1e-12 absolute throughout (the float64 entry of ``tests._backends.TOL``). Both sides
run the same code on two array backends (or, for the benchmark's baseline, through autograd), so
they differ by rounding only: a few units of 1e-16 relative to the size of the value. The
largest values here are the loss with ``loss_norm = "none"`` at P = 100 (18.8: a sum over the
masked queries); measured: ≤ 1.1e-14 absolute (6e-16 relative) on single evaluations, ≤ 4.4e-16
on the six-step trajectories (values ≤ 16), ≤ 2.2e-16 for the autograd baseline. 1e-12 leaves
two orders of magnitude for other CPUs' and GPUs' summation orders; a wrong term, weight or
index changes results at 1e-3 or more.
"""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests._backends import TOL as TOLERANCE
from tests.huang2024.test_engines import symmetric_state
from theorylab.huang2024 import config_from_dict, run_experiment
from theorylab.huang2024.bench import AutogradExactLoss, bench_exact
from theorylab.huang2024.engines import ExactEngine, LaplaceEngine, make_engine

TOL = TOLERANCE["float64"].atol  # see the module docstring
VALUES = {"z_law": "values", "z_values": [0.5, 1.0, 1.5], "z_probs": [0.2, 0.5, 0.3]}


def cfg_of(P=6, C1=4, C=2, K=1, mask="bernoulli", mask_keys=True, loss_norm="P",
           engine="population-exact", backend="numpy", device="cpu", **train):
    return config_from_dict({
        "data": {"P": P, "K": K, "C1": C1, "C": C, **VALUES},
        "model": {"mask": mask, "gamma": 0.4, "mask_keys": mask_keys, "loss_norm": loss_norm},
        "train": {"engine": engine, "backend": backend, "device": device, **train}})


def assert_same(a, b, tol=TOL):
    assert abs(a.loss - b.loss) < tol
    assert np.abs(a.grads["Phi"] - b.grads["Phi"]).max() < tol
    assert np.abs(a.grads["Ups"] - b.grads["Ups"]).max() < tol
    assert a.attn.keys() == b.attn.keys()
    for key, v in a.attn.items():
        assert (math.isnan(v) and math.isnan(b.attn[key])) or abs(v - b.attn[key]) < tol, key


# (P, C1, C): Δ = 2κ_s − κ_c − 1 > 0 for (8, 6, 2) and (100, 80, 20), < 0 for (6, 2, 2) and
# (100, 50, 50); K = 2 puts several atoms in an area
CASES = [
    dict(P=8, C1=6, C=2, K=1, mask="bernoulli", mask_keys=True, loss_norm="P"),
    dict(P=8, C1=6, C=2, K=1, mask="bernoulli", mask_keys=False, loss_norm="mask"),
    dict(P=6, C1=2, C=2, K=2, mask="bernoulli", mask_keys=True, loss_norm="none"),
    dict(P=6, C1=2, C=2, K=2, mask="fixed", mask_keys=False, loss_norm="P"),
    dict(P=8, C1=6, C=2, K=1, mask="fixed", mask_keys=True, loss_norm="mask"),
    dict(P=100, C1=80, C=20, K=1, mask="bernoulli", mask_keys=True, loss_norm="P"),
    dict(P=100, C1=50, C=50, K=1, mask="bernoulli", mask_keys=False, loss_norm="none"),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c.values())))
def test_torch_exact_equals_numpy_on_random_symmetric_states(case):
    cn, ct = cfg_of(**case), cfg_of(**case, backend="torch")
    assert (cn.data.delta > 0) == (case["C1"] ** 2 > case["C"] * case["P"])  # the Δ sign
    s = cn.data.make_structure()
    en, et = ExactEngine(cn, s), ExactEngine(ct, s)
    for seed in range(2 if case["P"] < 50 else 1):
        params = symmetric_state(s, seed)
        assert_same(en.evaluate(params, 0, need_grad=True, record=True),
                    et.evaluate(params, 0, need_grad=True, record=True))


def test_torch_exact_chunks_queries_without_changing_the_sum(monkeypatch):
    """Several chunks per atom (a chunk of one query) give the same sums as one chunk, on
    both backends."""
    from theorylab.huang2024.engines import _exact

    cn, ct = cfg_of(P=8, C1=4, C=2, K=2), cfg_of(P=8, C1=4, C=2, K=2, backend="torch")
    s = cn.data.make_structure()
    params = symmetric_state(s, 3)
    ref = ExactEngine(cn, s).evaluate(params, 0, need_grad=True, record=True)
    monkeypatch.setattr(_exact, "chunk_elements", lambda device: 1)
    for cfg in (cn, ct):
        engine = ExactEngine(cfg, s)
        assert engine.exchangeable_sum.chunk == 1
        assert_same(ref, engine.evaluate(params, 0, need_grad=True, record=True))


def _trajectory(P, C1, C, engine, backend, device="cpu", **model):
    cfg = config_from_dict({
        "data": {"P": P, "C1": C1, "C": C, "z_law": "values", "z_values": [0.5, 1.5]},
        "model": {"mask": "bernoulli", "gamma": 0.5, **model},
        "train": {"engine": engine, "backend": backend, "device": device, "steps": 6,
                  "lr": 2.0 * P, "record": "all"}})
    return run_experiment(cfg).trajectory


TRAJ = [  # (P, C1, C, engine, model): Δ > 0 for (16, 12, 2), (64, 48, 8), else Δ < 0
    (16, 12, 2, "population-exact", {"mask_keys": True, "loss_norm": "P"}),
    (16, 4, 4, "population-exact", {"mask_keys": False, "loss_norm": "mask"}),
    (64, 48, 8, "population-laplace", {"mask_keys": True, "loss_norm": "none"}),
    (64, 16, 16, "population-laplace", {"mask_keys": False, "loss_norm": "P"}),
]


def _same_trajectories(a, b):
    cols = [c for c in a.columns if c not in ("step", "engine")]
    assert len(a) == 7 and list(a.columns) == list(b.columns)
    assert np.abs(np.diff(a["loss"].to_numpy())).max() > 1e-6  # the state moves
    x, y = a[cols].to_numpy(float), b[cols].to_numpy(float)
    assert np.array_equal(np.isnan(x), np.isnan(y))
    assert np.nanmax(np.abs(x - y)) < TOL


@pytest.mark.parametrize("P, C1, C, engine, model", TRAJ, ids=[f"{t[3]}-{t[0]}-{t[1]}-{t[2]}"
                                                              for t in TRAJ])
def test_torch_cpu_trajectories_equal_numpy(P, C1, C, engine, model):
    _same_trajectories(_trajectory(P, C1, C, engine, "numpy", **model),
                       _trajectory(P, C1, C, engine, "torch", **model))


@pytest.mark.gpu
@pytest.mark.parametrize("P, C1, C, engine, model", TRAJ, ids=[f"{t[3]}-{t[0]}-{t[1]}-{t[2]}"
                                                              for t in TRAJ])
def test_cuda_trajectories_equal_numpy(P, C1, C, engine, model):
    # float64 on the GPU: the same sums in other orders (rounding only)
    _same_trajectories(_trajectory(P, C1, C, engine, "numpy", **model),
                       _trajectory(P, C1, C, engine, "torch", "cuda", **model))


@pytest.mark.gpu
@pytest.mark.parametrize("case", CASES, ids=lambda c: "-".join(map(str, c.values())))
def test_cuda_exact_equals_numpy(case):
    cn, ct = cfg_of(**case), cfg_of(**case, backend="torch", device="cuda")
    s = cn.data.make_structure()
    params = symmetric_state(s, 0)
    assert_same(ExactEngine(cn, s).evaluate(params, 0, need_grad=True, record=True),
                ExactEngine(ct, s).evaluate(params, 0, need_grad=True, record=True))


@pytest.mark.gpu
def test_cuda_laplace_equals_numpy():
    kw = dict(P=16, C1=8, C=4, K=2, engine="population-laplace")
    cn, ct = cfg_of(**kw), cfg_of(**kw, backend="torch", device="cuda")
    s = cn.data.make_structure()
    params = symmetric_state(s, 1)
    assert_same(LaplaceEngine(cn, s).evaluate(params, 0, need_grad=True, record=True),
                LaplaceEngine(ct, s).evaluate(params, 0, need_grad=True, record=True))


@pytest.mark.parametrize("case", CASES[:5], ids=lambda c: "-".join(map(str, c.values())))
def test_autograd_baseline_equals_the_engine(case):
    """The benchmark's plain torch-autograd loss: same loss and gradients as the engine."""
    cfg = cfg_of(**case)
    s = cfg.data.make_structure()
    engine = ExactEngine(cfg, s)
    base = AutogradExactLoss(engine)
    params = symmetric_state(s, 4)
    ev = engine.evaluate(params, 0, need_grad=True, record=False)
    loss, gPhi, gUps = base.loss_grad(params)
    assert abs(loss - ev.loss) < TOL
    assert np.abs(gPhi - ev.grads["Phi"]).max() < TOL
    assert np.abs(gUps - ev.grads["Ups"]).max() < TOL


def test_bench_row_names_times_ratios_and_agreement():
    row = bench_exact(8, repeats=1, max_seconds=1.0)  # speed is reported, never asserted
    for key in ("numpy_s", "torch_s", "autograd_s", "numpy/autograd", "torch/autograd"):
        assert row[key] > 0
    assert row["torch_vs_numpy"] < TOL and row["autograd_vs_numpy"] < TOL


def test_bench_cli_runs_and_checks_sizes(capsys):
    from theorylab.commands.bench import main

    assert main(["--paper", "huang2024", "--sizes", "8", "--repeats", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("# device: ") and "paper: huang2024" in out
    assert "torch/autograd" in out
    assert main(["--paper", "huang2024", "--sizes", "5"]) == 2
    # the engine's own validator: a global area of P − 4 must hold the local area of 4
    assert capsys.readouterr().err.startswith("error: --sizes: P=5: data.C: local areas must "
                                              "not exceed the global area")
    assert main(["--sizes", "8"]) == 2
    assert capsys.readouterr().err.startswith("error: --sizes: not taken by --paper jelassi2022")
    assert main(["--paper", "huang2024", "--targets"]) == 2
    assert capsys.readouterr().err.startswith("error: --paper: huang2024 times the exact")


def test_the_sum_tables_count_and_what_does_not_fit_is_refused(monkeypatch):
    """The tables and working arrays of the sum count on either backend (one code path, one
    estimate): a size whose estimate exceeds the free memory is refused before anything is
    built, and one just under it is accepted."""
    from theorylab.core import resources as core_resources
    from theorylab.huang2024.engines import exact_sum_bytes, memory_estimate

    cn, ct = cfg_of(P=36, C1=24, C=6), cfg_of(P=36, C1=24, C=6, backend="torch")
    s = cn.data.make_structure()
    need_np, _ = memory_estimate(cn, s)
    need_t, _ = memory_estimate(ct, s)
    assert need_t == need_np > exact_sum_bytes(cn, s) > 0
    for cfg in (cn, ct):
        monkeypatch.setattr(core_resources, "host_free_bytes",
                            lambda: 1.01 * need_np / core_resources.MEMORY_SHARE)
        make_engine(cfg, s)  # fits
        monkeypatch.setattr(core_resources, "host_free_bytes",
                            lambda: 0.99 * need_np / core_resources.MEMORY_SHARE)
        with pytest.raises(ValueError, match=r"^train.engine: population-exact .* needs about"):
            make_engine(cfg, s)


@pytest.mark.gpu
def test_cuda_path_refuses_what_the_device_cannot_hold(monkeypatch):
    from theorylab.core.backend import TorchBackend

    monkeypatch.setattr(TorchBackend, "free_bytes", lambda self: 1 << 20)
    with pytest.raises(ValueError, match=r"^train.device: population-exact on cuda"):
        make_engine(cfg_of(P=36, C1=24, C=6, backend="torch", device="cuda"))


def test_config_accepts_torch_for_the_exact_engines():
    for engine in ("population-exact", "population-laplace"):
        assert cfg_of(engine=engine, backend="torch").train.backend == "torch"


def test_reduced_bench_row_agrees_across_backends():
    from theorylab.huang2024.bench import bench_reduced

    row = bench_reduced(64, repeats=1, max_seconds=1.0, steps=3)  # speed reported, not asserted
    assert row["numpy_s"] > 0 and row["engine_s"] > 0
    assert row["torch_vs_numpy"] < TOL
