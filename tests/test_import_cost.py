"""``import theorylab`` and a refused config stay cheap: the heavy libraries are imported by the
code that needs them, not on the way (benchmarks/import_time.py measures the times; tests never
assert a time). Each case runs in a fresh interpreter, since this test process has long
imported everything."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

HEAVY = ("torch", "numba", "dask", "distributed", "matplotlib", "seaborn", "pandas", "scipy",
         "sklearn", "sympy", "pyarrow")


def _child(code: str) -> dict:
    """Run ``code`` in a fresh interpreter; it ends by printing one JSON line."""
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


LOADED = (f"import json, sys; print(json.dumps({{'loaded': [m for m in {HEAVY!r} "
          "if m in sys.modules]}))")


def test_import_theorylab_loads_no_heavy_library():
    out = _child("import theorylab; " + LOADED)
    assert out["loaded"] == []


def test_reexported_names_still_resolve():
    out = _child("import theorylab; from theorylab import run_experiment, sweep, load_sweep, "
                 "get_backend, DataConfig; from theorylab import *; import json; "
                 "print(json.dumps({'all': len(theorylab.__all__), "
                 "'sweep': sweep.__name__, 'run': run_experiment.__module__, "
                 "'paper': theorylab.huang2024.PAPER.name}))")
    assert out == {"all": out["all"], "sweep": "run_sweep_spec",
                   "run": "theorylab.jelassi2022.trainer", "paper": "huang2024"}
    assert out["all"] > 10


def test_refused_config_imports_neither_torch_nor_numba(tmp_path):
    bad = tmp_path / "bad.toml"
    bad.write_text("[data]\nD = -1\n")
    code = ("import contextlib, io, json, sys\n"
            "from theorylab.commands import main\n"
            "err = io.StringIO()\n"
            "with contextlib.redirect_stderr(err):\n"
            f"    code = main(['run', {str(bad)!r}, '--out', {str(tmp_path / 'run')!r}])\n"
            "print(json.dumps({'code': code, 'err': err.getvalue(), "
            "'loaded': [m for m in ('torch', 'numba', 'dask', 'matplotlib', 'seaborn') "
            "if m in sys.modules]}))")
    out = _child(code)
    assert out["code"] == 2 and out["err"].startswith("error: data.D:"), out
    assert out["loaded"] == []


def test_threads_set_before_torch_apply_when_it_is_imported():
    pytest.importorskip("torch")
    out = _child("import json, sys\nfrom theorylab.core.threads import set_threads\n"
                 "set_threads(1)\nbefore = 'torch' in sys.modules\nimport torch\n"
                 "print(json.dumps({'before': before, 'n': torch.get_num_threads()}))")
    assert out == {"before": False, "n": 1}


def test_numba_kernel_compiles_on_first_call():
    pytest.importorskip("numba")
    out = _child(
        "import json, sys\nimport numpy as np\n"
        "from theorylab.jelassi2022.engines import fused as fz\n"
        "from theorylab.jelassi2022.activation import Activation\n"
        "from theorylab.jelassi2022.model import PositionalAttentionModel, attention\n"
        "before = 'numba' in sys.modules\n"
        "rng = np.random.default_rng(0)\n"
        "X = rng.standard_normal((9, 5, 3)); y = rng.choice([-1.0, 1.0], size=9)\n"
        "v = 0.3 * rng.standard_normal(3); S = attention(rng.standard_normal((5, 5)), 1.0)\n"
        "m = PositionalAttentionModel(Activation((0.0, 0.0, 0.0, 1.0)), 1.0, 5.0)\n"
        "fz.fused_grad_pass(X, y, v, S, m, 1e-12, 1.0 / 9)\n"
        "import numba\n"
        "print(json.dumps({'before': before, 'compiled': isinstance(fz._fused._dispatcher(), "
        "numba.core.registry.CPUDispatcher)}))")
    assert out == {"before": False, "compiled": True}
