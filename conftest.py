"""Shared pytest set-up: GPU tests skip cleanly without CUDA; hypothesis profiles."""

from __future__ import annotations

import pytest


def _cuda() -> bool:
    try:
        import torch

        return torch.cuda.is_available()
    except Exception:  # pragma: no cover - torch is a dependency
        return False


def pytest_collection_modifyitems(config, items):
    if _cuda():
        return
    skip = pytest.mark.skip(reason="needs CUDA (torch.cuda.is_available() is False)")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


# --- hypothesis profiles (issue 3; theorylab/testing/profiles.py) ---------------------------------
try:  # pragma: no cover - hypothesis is a test dependency
    from theorylab.testing import register_profiles as _register_hypothesis_profiles
except ImportError:  # hypothesis not installed: the property tests are not collected either
    pass
else:
    _register_hypothesis_profiles()
# --- end hypothesis profiles ---------------------------------------------------------------------
