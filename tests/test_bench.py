"""Smoke tests of the step-speed benchmark (theorylab.bench) and CPU/CUDA agreement (issue 6)."""

from __future__ import annotations

import numpy as np
import pytest

from theorylab import bench

#: float32 trajectories on CUDA vs float64 over 5 steps (relative, max-norm of each state);
#: float32 on CPU gives ~8e-5 on the learned change of A (~1e-4 in size) and ~1e-6 on v,
#: so 1e-3 leaves room for other reduction orders.
F32_RTOL = 1e-3
F64_RTOL = 1e-10


def test_time_call_counts_repeats():
    calls = []
    times = bench.time_call(lambda: calls.append(1), warmup=2, repeats=3)
    assert len(times) == 3 and len(calls) == 5 and all(t >= 0 for t in times)


def test_work_counts():
    N, D, d = 10, 4, 3
    assert bench.step_bytes(N, D, d, 8) == 2 * N * D * d * 8
    assert bench.step_flops(N, D, d, 3) == 4 * N * D * d + 6 * N * D * D + 32 * N * D


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_bench_empirical_smoke(backend):
    row = bench.bench_empirical(8, 8, 200, backend=backend, repeats=2, max_seconds=2.0)
    assert row["grad_rel_err"] < 1e-10  # the autograd baseline and the engine agree
    for key in ("step_ms", "autograd_ms", "GB/s", "GFLOP/s", "speedup_vs_autograd", "peak_mem_MB"):
        assert np.isfinite(row[key]) and row[key] > 0, key


def test_measure_peaks_and_device_name():
    peaks = bench.measure_peaks("cpu", "float64", n_bytes=1e6, n_matmul=64, repeats=2)
    assert peaks["copy_GBs"] > 0 and peaks["matmul_GFLOPs"] > 0
    assert isinstance(bench.device_name("cpu"), str) and bench.device_name("cpu")


def _trajectory(device: str, dtype: str, steps: int = 5):
    """(A_t − A_0, v_t) for t = 1..steps of empirical GD, as float64 numpy arrays."""
    cfg = bench.empirical_config(16, 32, 512, backend="torch", device=device, dtype=dtype,
                                 offdiag0=0.1, alpha0=0.3)
    engine = bench.make_empirical_engine(cfg)
    params = engine.initial_params()
    A0, _ = engine.state(params)
    out = []
    for step in range(steps):
        ev = engine.evaluate(params, step, need_grad=True, record=False)
        params = engine.apply(params, ev.grads)
        A, v = engine.state(params)
        out.append((A - A0, v))  # the learned change of A (its diagonal 0), and v
    return out


def _rel(a, b) -> float:
    return float(np.max(np.abs(a - b)) / np.max(np.abs(b)))


def test_float32_cpu_tolerance_is_honest():
    """The float32 tolerance used on CUDA holds on CPU (where it is ~8e-5)."""
    for (A32, v32), (A64, v64) in zip(_trajectory("cpu", "float32"), _trajectory("cpu", "float64")):
        assert _rel(A32, A64) < F32_RTOL and _rel(v32, v64) < F32_RTOL


@pytest.mark.gpu
def test_cuda_trajectories_match_cpu():
    cpu64 = _trajectory("cpu", "float64")
    cuda64 = _trajectory("cuda", "float64")
    cuda32 = _trajectory("cuda", "float32")
    for (Ac, vc), (Ag, vg), (A32, v32) in zip(cpu64, cuda64, cuda32):
        assert _rel(Ag, Ac) < F64_RTOL and _rel(vg, vc) < F64_RTOL
        assert _rel(A32, Ac) < F32_RTOL and _rel(v32, vc) < F32_RTOL
