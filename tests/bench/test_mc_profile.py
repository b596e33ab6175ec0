"""benchmarks/mc_profile.py: the groups of one profiled Monte Carlo step add up to the profiled
total, every kernel lands in exactly one group, and the script writes new files only.

Run on the CPU at a toy size (D = 16, M = 200): the same code path as on a GPU, where the
profiler reports kernels instead of aten operators. Shares are ratios of the same sums, so
1e-12 is rounding only."""

from __future__ import annotations

import pandas as pd
import pytest

from tests._scripts import load_script


def _load():
    return load_script("benchmarks/mc_profile.py", "mc_profile_bench")


def test_groups_of_kernel_names():
    mod = _load()
    assert mod.group_of("void at::native::distribution_elementwise_grid_stride_kernel") == "draws"
    assert mod.group_of("sm80_xmma_gemm_f64f64_f64f64") == "matrix products"
    assert mod.group_of("aten::mm") == "matrix products"
    assert mod.group_of("void at::native::reduce_kernel<512, 1, ReduceOp sum>") == "reductions"
    assert mod.group_of("Memcpy HtoD (Pageable -> Device)") == "copies"
    assert mod.group_of("aten::sigmoid") == "elementwise"


def test_profile_tables_on_cpu(tmp_path):
    mod = _load()
    assert mod.main(["--out", str(tmp_path), "--D", "16", "--M", "200", "--dtype", "float64",
                     "--repeats", "1"]) == 0
    prof = pd.read_csv(tmp_path / "mc-profile.csv", comment="#")
    kern = pd.read_csv(tmp_path / "mc-kernels.csv", comment="#")
    assert (tmp_path / "mc-profile.csv").read_text().startswith("# device: ")
    groups = prof[~prof.group.str.startswith("(")]
    total = float(prof.loc[prof.group == "(profiled total)", "seconds"].iloc[0])
    assert groups.share.sum() == pytest.approx(1.0, abs=1e-12)
    assert kern.seconds.sum() == pytest.approx(total, rel=1e-12)
    assert set(kern.group) == set(groups.group)
    with pytest.raises(FileExistsError):  # never replaces a file
        mod.main(["--out", str(tmp_path), "--D", "16", "--M", "200", "--dtype", "float64"])
