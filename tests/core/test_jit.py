"""The numba kernels import and run where no cache folder is writable: a user (not root, who
ignores permissions) whose HOME and package folder are read-only, as on a shared cluster
environment. The child process imports theorylab from a read-only copy of the package, calls
the fused kernel once (its agreement with the plain pass is tests/jelassi2022/test_fused.py)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

pytest.importorskip("numba")

import theorylab  # noqa: E402

PACKAGE = Path(theorylab.__file__).resolve().parent
SETPRIV = shutil.which("setpriv")
DROP = [SETPRIV, "--reuid=nobody", "--regid=nogroup", "--clear-groups"] if SETPRIV else None

CHILD = """
import numpy as np
import theorylab
from theorylab.jelassi2022.activation import Activation
from theorylab.jelassi2022.engines import fused as fz
from theorylab.jelassi2022.model import PositionalAttentionModel, attention
assert theorylab.__file__.startswith({root!r}), theorylab.__file__
rng = np.random.default_rng(0)
X = rng.standard_normal((9, 5, 3))
y = rng.choice([-1.0, 1.0], size=9)
v = 0.3 * rng.standard_normal(3)
S = attention(rng.standard_normal((5, 5)), 1.0)
model = PositionalAttentionModel(Activation((0.0, 0.0, 0.0, 1.0)), 1.0, 5.0)
sums, dv, dS = fz.fused_grad_pass(X, y, v, S, model, 1e-12, 1.0 / 9)
assert all(np.isfinite(sums)) and np.isfinite(dv).all() and np.isfinite(dS).all()
print("kernel-ran", sums[0])
"""


def _as_nobody(cmd, env, cwd):
    return subprocess.run([*DROP, *cmd], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=300)


@pytest.fixture
def readonly_install():
    """A read-only copy of the package and a read-only HOME, readable by everyone, in a folder
    that the unprivileged user can reach (pytest's tmp_path is private to root)."""
    if DROP is None or os.geteuid() != 0:
        pytest.skip("needs root and setpriv to run a child as an unprivileged user")
    root = Path(tempfile.mkdtemp(prefix="theorylab-ro-"))
    try:
        shutil.copytree(PACKAGE, root / "theorylab",
                        ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        (root / "home").mkdir()
        for p in [root, *root.rglob("*")]:
            p.chmod(0o555 if p.is_dir() else 0o444)
        env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": str(root / "home"),
               "PYTHONPATH": str(root), "PYTHONDONTWRITEBYTECODE": "1"}
        probe = _as_nobody([sys.executable, "-c", "import numba, numpy"], env, str(root))
        if probe.returncode != 0:
            last = (probe.stderr.strip().splitlines() or ["no message"])[-1]
            pytest.skip(f"the unprivileged user cannot run this Python or import numba ({last})")
        yield root, env
    finally:
        for p in [root, *root.rglob("*")]:
            if p.is_dir():
                p.chmod(0o755)
        shutil.rmtree(root, ignore_errors=True)


def test_kernel_compiles_without_a_writable_cache(readonly_install):
    root, env = readonly_install
    r = _as_nobody([sys.executable, "-c", CHILD.format(root=str(root))], env, str(root))
    assert r.returncode == 0, r.stderr[-2000:]
    assert "kernel-ran" in r.stdout
    # nothing was written: no numba cache next to the source nor in HOME
    assert not list(root.rglob("*.nbi")) and not list((root / "home").iterdir())
