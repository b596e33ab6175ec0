"""Memory: automatic chunk sizes, streamed data, Monte Carlo sampling on the device."""

import numpy as np
import pytest

from theorylab import TrainConfig, get_backend, run_experiment, run_sweep
from theorylab.jelassi2022.engines import BruteForceEngine, EmpiricalEngine, MonteCarloEngine
from theorylab.jelassi2022.engines._base import auto_chunk_size

from ._helpers import parts, small_config

COLS = ["loss", "error", "train_loss", "alpha", "beta", "gamma", "rho", "own_set_mass"]


def _cfg(**kw):
    base = dict(D=6, C=2, d=5, engine="empirical", n_train=300, n_test=200, steps=5, lr_v=0.5,
                init_v="gaussian", v0_scale=0.3, offdiag0_std=0.1, record="all")
    return small_config(**{**base, **kw})


def test_config_chunk_size_auto_and_stream():
    assert TrainConfig(chunk_size="auto").chunk_size == 0
    assert TrainConfig().chunk_size == 0 and TrainConfig().stream == "auto"  # auto by default
    with pytest.raises(ValueError, match="^train.chunk_size"):
        TrainConfig(chunk_size=-1)
    with pytest.raises(ValueError, match="^train.stream"):
        TrainConfig(stream="yes")


def test_free_bytes_and_auto_chunk():
    for xp in (get_backend("numpy"), get_backend("torch")):
        assert xp.free_bytes() > 0
    assert auto_chunk_size(1000, 10, 10**6) == 50
    assert auto_chunk_size(10**12, 10, 77) == 77 and auto_chunk_size(0, 10, 77) == 1


def test_auto_chunk_is_cache_sized_on_cpu_and_changes_nothing():
    """chunk_size = 0 on a CPU: at most CPU_CHUNK_BYTES of working set per chunk; the
    trajectory equals the one-chunk run up to rounding of the chunk sums."""
    from theorylab.jelassi2022.engines._base import CPU_CHUNK_BYTES

    cfg = small_config(D=64, C=4, q=0.3, engine="empirical", n_train=8000, n_test=500,
                       steps=5, record="all", lr_A=2.0)
    eng = EmpiricalEngine(cfg, get_backend(), *parts(cfg))
    # 10 length-D float64 vectors per sample: 3276 rows per chunk, 3 chunks
    assert eng.chunk == CPU_CHUNK_BYTES // (10 * 64 * 8) < 8000
    one = run_experiment(cfg.replace(train={"chunk_size": 8000})).trajectory
    auto = run_experiment(cfg).trajectory
    # the same float64 sums over 8000 samples in two orders: 1e-12 relative is ~10⁴ ulps
    for col in ("loss", "train_loss", "alpha", "gamma", "rho"):
        np.testing.assert_allclose(auto[col], one[col], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("backend", ["numpy", "torch"])
def test_streamed_and_auto_chunked_runs_equal_the_plain_run(backend):
    ref = run_experiment(_cfg(backend=backend)).trajectory
    streamed = _cfg(backend=backend, stream=True, chunk_size=64)
    p, w = parts(streamed)
    eng = EmpiricalEngine(streamed, get_backend(backend), p, w)
    assert eng.streamed and eng.chunk == 64
    for cfg in (streamed, _cfg(backend=backend, chunk_size="auto")):
        got = run_experiment(cfg).trajectory
        np.testing.assert_allclose(got[COLS], ref[COLS], rtol=1e-12, atol=1e-15)


def test_streamed_sweep_equals_resident_sweep():
    a = run_sweep(_cfg(backend="torch"), seeds=[0, 2], lr_v=[0.5, 0.1])
    b = run_sweep(_cfg(backend="torch", stream=True, chunk_size=70), seeds=[0, 2], lr_v=[0.5, 0.1])
    np.testing.assert_allclose(b[COLS], a[COLS], rtol=1e-12, atol=1e-15)


@pytest.mark.parametrize("resample", [True, False])
def test_torch_monte_carlo_within_four_standard_errors(resample):
    """Draws on the torch device (its own generator): estimates within 4 s.e. of the exact value."""
    cfg = small_config(D=8, C=2, q=0.5, init_v="aligned", alpha0=0.8, mc_samples=40_000,
                       mc_resample=resample, seed=1, backend="torch", chunk_size="auto")
    p, w = parts(cfg)
    brute = BruteForceEngine(cfg, get_backend(), p, w)
    mc = MonteCarloEngine(cfg, get_backend("torch"), p, w)
    A = cfg.diag * np.eye(8) + 0.3 * np.random.default_rng(0).standard_normal((8, 8))
    exact = brute.evaluate({"A": A, "alpha": 0.8}, 0, need_grad=False, record=True)
    params = {"A": mc.xp.asarray(A), "v": 0.8 * w}
    est = [mc.evaluate(params, s, need_grad=True, record=True) for s in (3, 4)]
    for e in est:
        assert abs(e.loss - exact.loss) < 4 * e.loss_se
        assert abs(e.error - exact.error) < 4 * e.error_se
    assert (est[0].loss == est[1].loss) == (not resample)  # fixed samples are the same draws


@pytest.mark.gpu
def test_cuda_streamed_run_equals_cpu():
    """Streaming from pinned host memory on CUDA: float64 trajectories equal CPU to 1e-10."""
    cpu = run_experiment(_cfg(backend="torch")).trajectory
    gpu = run_experiment(_cfg(backend="torch", device="cuda", stream=True, chunk_size=64))
    np.testing.assert_allclose(gpu.trajectory[COLS], cpu[COLS], rtol=1e-10, atol=1e-13)


@pytest.mark.gpu
def test_cuda_monte_carlo_and_exchangeable():
    """Monte Carlo draws on the GPU (within 4 s.e.) and the exchangeable engine on the GPU
    (equal to CPU to 1e-10)."""
    cfg = small_config(D=8, C=2, q=0.5, alpha0=0.8, mc_samples=200_000, seed=1,
                       backend="torch", device="cuda", method="montecarlo", chunk_size="auto")
    p, w = parts(cfg)
    brute = BruteForceEngine(cfg, get_backend(), p, w)
    mc = MonteCarloEngine(cfg, get_backend("torch", device="cuda"), p, w)
    A = cfg.diag * np.eye(8) + 0.3 * np.random.default_rng(0).standard_normal((8, 8))
    exact = brute.evaluate({"A": A, "alpha": 0.8}, 0, need_grad=False, record=True)
    e = mc.evaluate({"A": mc.xp.asarray(A), "v": 0.8 * w}, 0, need_grad=True, record=True)
    assert abs(e.loss - exact.loss) < 4 * e.loss_se
    runs = [run_experiment(small_config(D=12, C=3, q=0.4, method="exchangeable", steps=20,
                                        lr_v=0.5, alpha0=0.5, record="all", backend="torch",
                                        device=dev)).trajectory for dev in ("cpu", "cuda")]
    cols = ["loss", "error", "alpha", "gamma", "rho"]
    np.testing.assert_allclose(runs[1][cols], runs[0][cols], rtol=1e-10, atol=1e-13)
