"""Shared pytest set-up: GPU tests skip cleanly without CUDA, tests marked ``fashion_mnist``
without the Fashion-MNIST files (``$THEORYLAB_FASHION_MNIST_DIR`` or Debian's
``dataset-fashion-mnist``); hypothesis profiles."""

from __future__ import annotations

import pytest


def _cuda() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:  # pragma: no cover - torch is a dependency
        return False


def pytest_collection_modifyitems(config, items):
    from theorylab.vision.imagedata import (
        FASHION_MNIST_MISSING,
        default_fashion_mnist_dir,
        fashion_mnist_available,
    )

    skips = {}
    if not _cuda():
        skips["gpu"] = pytest.mark.skip(reason="needs CUDA (torch.cuda.is_available() is False)")
    if not fashion_mnist_available():
        skips["fashion_mnist"] = pytest.mark.skip(
            reason=f"{FASHION_MNIST_MISSING}; no files in {default_fashion_mnist_dir()}")
    for item in items:
        for marker, skip in skips.items():
            if marker in item.keywords:
                item.add_marker(skip)


# --- hypothesis profiles (theorylab/testing/profiles.py) -----------------------------------------
try:  # pragma: no cover - hypothesis is a test dependency
    from theorylab.testing import register_profiles as _register_hypothesis_profiles
except ImportError:  # hypothesis not installed: the property tests are not collected either
    pass
else:
    _register_hypothesis_profiles()
# --- end hypothesis profiles ---------------------------------------------------------------------


@pytest.fixture
def no_fashion_mnist(tmp_path_factory, monkeypatch):
    """A machine without the Fashion-MNIST files: ``$THEORYLAB_FASHION_MNIST_DIR`` points at an
    empty folder, and the real-image store's memo of images and runs is emptied (before and
    after, so no other test sees the stand-in data either)."""
    from theorylab.vision.store import clear_memo

    monkeypatch.setenv("THEORYLAB_FASHION_MNIST_DIR", str(tmp_path_factory.mktemp("no-data")))
    clear_memo()
    yield
    clear_memo()


# --- one quick render of every figure, shared ------------------------------------------------
@pytest.fixture(scope="session")
def quick_cache(tmp_path_factory):
    """The session's store of computed points (``--cache``): the quick render of the figures
    fills it, the quick run of the claims reuses the points they share."""
    return tmp_path_factory.mktemp("quick-cache")


@pytest.fixture(scope="session")
def quick_figures(tmp_path_factory, quick_cache):
    """``python -m theorylab figures --quick --cache QUICK_CACHE`` once per test session, in a
    fresh interpreter: ``(out folder, manifest entries by id, the finished process)``. The CLI
    smoke test and each paper's figure tests read the same render instead of drawing the
    figures again."""
    import json
    import subprocess
    import sys

    out = tmp_path_factory.mktemp("quick-figures")
    r = subprocess.run([sys.executable, "-m", "theorylab", "figures", "--quick", "--out",
                        str(out), "--cache", str(quick_cache)], capture_output=True, text=True,
                       timeout=600)
    try:
        manifest = json.loads((out / "manifest.json").read_text())
    except (OSError, ValueError):
        manifest = {}
    return out, manifest.get("figures", manifest), r
