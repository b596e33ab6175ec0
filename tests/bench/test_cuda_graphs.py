"""benchmarks/cuda_graphs.py: the GD steps it captures are the exact engine's steps.

On a CPU the script times the eager steps only; what it must get right everywhere is that its
device-resident step (the autograd form of the exact population loss, updated in place) is the
`population-exact` engine's step, or the graph it would capture times something else. Both are
float64 sums of the same terms in different orders: 1e-13 absolute leaves room for rounding
over a few steps at losses of order 0.1 and fails on any missing term (order 1e-3 and up).
"""

from __future__ import annotations

import pandas as pd
import pytest

from tests._scripts import load_script


def _load():
    return load_script("benchmarks/cuda_graphs.py", "cuda_graphs_bench")


def test_eager_steps_are_the_engine_steps_on_cpu():
    row = _load().measure(8, "cpu", k=3, repeats=1)
    assert row["engine_vs_eager_max_abs"] < 1e-13
    assert row["eager_s_per_step"] > 0
    assert "graph_s_per_step" not in row and "need CUDA" in row["kernels_note"]


def test_script_writes_a_new_table_only(tmp_path):
    out = tmp_path / "graphs.csv"
    mod = _load()
    assert mod.main(["--device", "cpu", "--sizes", "8", "--k", "2", "--repeats", "1",
                     "--out", str(out)]) == 0
    assert out.read_text().startswith("# device: ")
    table = pd.read_csv(out, comment="#")
    assert list(table["P"]) == [8]
    with pytest.raises(FileExistsError):  # never replaces a file
        mod.main(["--device", "cpu", "--sizes", "8", "--k", "2", "--repeats", "1",
                  "--out", str(out)])
