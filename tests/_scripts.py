"""Load a file that is not a package module (a benchmark script, the site's hook) as a module,
for tests that call its functions."""

from __future__ import annotations

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def load_script(relative: str, name: str):
    """The module of the file at `relative` (from the repository root), named `name`."""
    spec = importlib.util.spec_from_file_location(name, ROOT / relative)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod
