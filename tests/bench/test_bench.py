"""Smoke tests of the step-speed benchmarks (theorylab.core.bench, theorylab.jelassi2022.bench)
and CPU/CUDA agreement."""

from __future__ import annotations

import numpy as np
import pytest

from theorylab.commands import bench as bench_cli
from theorylab.core import bench as harness
from theorylab.core.jit import HAVE_NUMBA
from theorylab.jelassi2022 import bench

#: float32 trajectories on CUDA vs float64 over 5 steps (relative, max-norm of each state);
#: float32 on CPU gives ~8e-5 on the learned change of A (~1e-4 in size) and ~1e-6 on v,
#: so 1e-3 leaves room for other reduction orders.
F32_RTOL = 1e-3
F64_RTOL = 1e-10


def test_time_call_counts_repeats():
    calls = []
    times = harness.time_call(lambda: calls.append(1), warmup=2, repeats=3)
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
    peaks = harness.measure_peaks("cpu", "float64", n_bytes=1e6, n_matmul=64, repeats=2)
    assert peaks["copy_GBs"] > 0 and peaks["matmul_GFLOPs"] > 0
    assert isinstance(harness.device_name("cpu"), str) and harness.device_name("cpu")


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


# -- the speed targets (theorylab.jelassi2022.bench.targets) ------------------------------------
def test_target_sizes_per_device():
    from theorylab.jelassi2022.bench.targets import TARGETS, target_sizes

    gpu = target_sizes("cuda", "auto")
    assert [t.key for t, _ in gpu] == ["T1", "T2", "T3", "T4"]
    assert all(size == dict(t.size) and t.kind == "cuda" for t, size in gpu)
    cpu = target_sizes("cpu", "auto")
    keys = {t.key: (t, size) for t, size in cpu}
    assert sorted(keys) == ["T1", "T2", "T3", "T4", "T5", "T6", "T7"]
    # T2 and T5 on a CPU: the four CPU target sizes, each measured at its own size
    for key in ("T2", "T5"):
        sizes = [size for t, size in cpu if t.key == key]
        assert all(t.kind == "cpu" and t.dtype == "float64" for t, _ in cpu if t.key == key)
        assert sizes == [{"N": 10_000, "D": 10, "d": 100}, {"N": 20_000, "D": 16, "d": 256},
                         {"N": 4_000, "D": 64, "d": 64}, {"N": 10_000, "D": 64, "d": 64}]
    assert keys["T4"][1]["M"] < 1_000_000  # GPU targets at CPU sizes
    assert all(size == dict(t.size) for t, size in target_sizes("cpu", "target"))
    with pytest.raises(ValueError, match="size_mode"):
        target_sizes("cpu", "huge")
    t4 = next(t for t in TARGETS if t.key == "T4")
    assert t4.holds(0.05) and not t4.holds(0.2)
    t2_cpu = next(t for t in TARGETS if t.key == "T2" and t.kind == "cpu")
    assert t2_cpu.holds(2.5) and not t2_cpu.holds(1.5)


def test_run_targets_smoke(monkeypatch):
    """Every target runs end to end at tiny sizes; only rows at a target's own size on its own
    device kind are judged."""
    import argparse
    import dataclasses

    from theorylab.jelassi2022.bench import targets as bt

    tiny = {"T1": (("N", 64), ("D", 8), ("d", 8)), "T2": (("N", 64), ("D", 8), ("d", 8)),
            "T3": (("D", 8), ("C", 2)), "T4": (("D", 16), ("M", 500)),
            "T5": (("N", 64), ("D", 8), ("d", 8)), "T6": (("D", 8), ("C", 2), ("M", 500)),
            "T7": (("D", 8), ("C", 2))}
    monkeypatch.setattr(bt, "CPU_SIZES", tiny)
    # the CPU targets themselves at tiny sizes (one of each), so that the judged path runs too
    seen: set[str] = set()
    targets = []
    for t in bt.TARGETS:
        if t.kind == "cpu":
            if t.key in seen:
                continue
            seen.add(t.key)
            t = dataclasses.replace(t, size=tiny[t.key])
        targets.append(t)
    targets = tuple(targets)
    monkeypatch.setattr(bt, "TARGETS", targets)
    args = argparse.Namespace(device="cpu", dtypes=["float64"], targets_size="auto", repeats=1,
                              max_seconds=1.0, max_bytes=1e9)
    df = bt.run_targets(args)
    assert list(df.columns) == list(bt.TARGET_SCHEMA)
    assert sorted(df["target"]) == ["T1", "T2", "T3", "T4", "T5", "T6", "T7"]
    assert np.isfinite(df["measured"].astype(float)).all() and (df["measured"] > 0).all()
    judged = df[df["met"].notna()].set_index("target")
    assert sorted(judged.index) == ["T2", "T5", "T6", "T7"]  # the CPU targets
    for key, ok in (("T2", lambda m: m >= 2.0), ("T5", lambda m: m <= 2.0),
                    ("T6", lambda m: m <= 1.1), ("T7", lambda m: m <= 100.0)):
        assert judged.loc[key, "met"] == ok(judged.loc[key, "measured"])
    assert df.loc[df["target"] == "T4", "note"].str.contains("stated for a GPU").all()


def test_targets_cli_without_cuda_says_so(capsys):
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    assert bench_cli.main(["--targets", "--device", "cuda"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: --device: no CUDA device") and err.count("\n") == 1


def test_bench_sweep_smoke():
    row = bench.bench_sweep(2, 3, 8, 8, 100, repeats=1, max_seconds=1.0)
    assert (row["K"], row["R"]) == (2, 3)
    for key in ("batched_ms", "one_by_one_ms", "ms_per_run_step", "speedup"):
        assert np.isfinite(row[key]) and row[key] > 0, key
    assert row["ms_per_run_step"] == pytest.approx(row["batched_ms"] / 6)


def test_peak_bandwidth_prefers_the_nominal_gpu_value():
    assert harness.peak_bandwidth({"copy_GBs": 12.0, "matmul_GFLOPs": 1.0}) == (
        12.0, "measured copy rate")
    assert harness.peak_bandwidth({"copy_GBs": 12.0, "nominal_GBs": 3350.0})[0] == 3350.0
    assert harness.peak_bandwidth({"copy_GBs": 9.0, "nominal_GBs": float("nan")})[0] == 9.0


# -- interleaved timing, read-once bound, implementation choices -------------------------------
def test_interleaved_times_alternate_and_stop():
    order: list[str] = []
    times = harness.interleaved_times({"a": lambda: order.append("a"),
                                     "b": lambda: order.append("b")}, repeats=3)
    assert order == ["a", "b"] * 4  # one untimed call each, then 3 alternating rounds
    assert [len(v) for v in times.values()] == [3, 3]
    times = harness.interleaved_times({"a": lambda: None}, repeats=50, max_seconds=0.0)
    assert len(times["a"]) == 1  # stopped after the first round


def test_read_once_and_machine_line():
    # 10⁴·64·64 float64 values = 327.68 MB at 10 GB/s: 32.768 ms
    assert harness.read_once_seconds(10_000, 64, 64, 8, 10.0) == pytest.approx(0.032768, rel=1e-12)
    line = bench.machine_line("cpu")
    assert line.startswith("# device: ") and "primitive:" in line and "BLAS threads" in line
    assert "empirical pass:" in line and "numba" in line
    row = bench.bench_empirical(4, 8, 100, repeats=1, max_seconds=1.0, copy_gbs=10.0)
    assert row["x_read_once"] == pytest.approx(row["step_ms"] / row["read_once_ms"])
    # the attainable bound: autograd ÷ one BLAS read of X, and which pass the engine ran
    assert row["autograd_over_blas_read"] == pytest.approx(
        row["autograd_ms"] / row["blas_read_ms"])
    assert row["pass"] in ("fused", "two-pass", "two-pass (fused not eligible)")


def test_bench_choices_smoke():
    row = bench.bench_choices(100, 4, 8, repeats=1, max_seconds=1.0, threads=(1,),
                              copy_gbs=10.0)
    for key in ("einsum_t1_ms", "blas_t1_ms", "torch_t1_ms", "auto_t1_ms", "autograd_t1_ms",
                "speedup_vs_autograd_t1", "auto_t1_x_read_once", "blas_read_ms",
                "autograd_t1_over_blas_read"):
        assert np.isfinite(row[key]) and row[key] > 0
    if HAVE_NUMBA:
        assert np.isfinite(row["fused_t1_ms"]) and row["auto_pass"] in ("fused", "two-pass")


# -- the command line's checks, made before anything is measured --------------------------------
@pytest.mark.parametrize("argv, start", [
    (["--repeats", "0"], "error: --repeats: must be >= 1"),
    (["--device", "tpu"], "error: --device: must be cpu, cuda or cuda:N"),
    (["--max-bytes", "-5"], "error: --max-bytes: must be a number of bytes > 0"),
    (["--max-bytes", "nan"], "error: --max-bytes: must be a number of bytes > 0"),
    (["--max-seconds", "0"], "error: --max-seconds: must be a number > 0"),
    (["--targets", "--sweep"], "error: --sweep: one of --targets, --sweep, --choices"),
    (["--out", "table.txt"], "error: --out: must be a .csv file"),
])
def test_bad_flags_end_in_one_line_before_measuring(argv, start, capsys, monkeypatch):
    from theorylab.jelassi2022.bench import empirical

    monkeypatch.setattr(empirical, "run", lambda args: pytest.fail("measured"))
    assert bench_cli.main(argv) == 2
    err = capsys.readouterr().err
    assert err.startswith(start) and err.count("\n") == 1, err


def test_out_refuses_a_file_that_is_not_a_benchmark_csv(tmp_path, capsys, monkeypatch):
    from theorylab.jelassi2022.bench import empirical

    ran = []
    monkeypatch.setattr(empirical, "run", lambda args: ran.append(args.out))
    mine = tmp_path / "config.csv"
    mine.write_text("name,value\nq,0.2\n")
    assert bench_cli.main(["--out", str(mine)]) == 2
    assert "was not written by theorylab; refusing" in capsys.readouterr().err
    assert mine.read_text() == "name,value\nq,0.2\n" and not ran
    # a previous benchmark table (its header has the device column) is replaced
    old = tmp_path / "grid.csv"
    old.write_text("backend,device,dtype\ntorch,cpu,float64\n")
    assert bench_cli.main(["--out", str(old)]) == 0 and ran == [str(old)]
    # a new file in a new folder is fine
    assert bench_cli.main(["--out", str(tmp_path / "new" / "t.csv")]) == 0


def test_out_in_a_folder_that_takes_no_file_is_refused_first(tmp_path, capsys, monkeypatch):
    import os

    from theorylab.jelassi2022.bench import empirical

    if os.geteuid() == 0:
        pytest.skip("root writes into read-only folders")
    monkeypatch.setattr(empirical, "run", lambda args: pytest.fail("measured"))
    ro = tmp_path / "ro"
    ro.mkdir()
    ro.chmod(0o555)
    try:
        assert bench_cli.main(["--out", str(ro / "t.csv")]) == 2
    finally:
        ro.chmod(0o755)
    assert capsys.readouterr().err.startswith("error: --out: cannot write in")


def test_check_csv_out_tries_a_real_write(tmp_path, monkeypatch):
    """The writability check writes a file (a permission test alone passes for root on a
    read-only mount): a folder whose temporary file cannot be made is refused."""
    import tempfile

    def refuse(*args, **kwargs):
        raise PermissionError(13, "Permission denied")

    monkeypatch.setattr(tempfile, "NamedTemporaryFile", refuse)
    with pytest.raises(ValueError, match=r"^--out: cannot write in .*Permission denied"):
        harness.check_csv_out(tmp_path / "t.csv")
