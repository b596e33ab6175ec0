"""Shared helpers of the documentation-site tests: build the site with ``mkdocs build --strict``
(in a subprocess, so that the build's own warnings cannot trip pytest's warning filters)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def require_docs_extra() -> None:
    """Skip unless the ``docs`` extra (mkdocs, mkdocs-material, mkdocstrings[python]) is
    importable."""
    for module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python"):
        if importlib.util.find_spec(module) is None:
            pytest.skip(f"{module} not installed (pip install -e '.[docs]')")


def mkdocs_build(config: Path, site_dir: Path) -> subprocess.CompletedProcess:
    """``mkdocs build --strict -f config -d site_dir`` from the repository root."""
    env = {**os.environ, "NO_MKDOCS_2_WARNING": "1",
           "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")])}
    return subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "-f", str(config),
         "-d", str(site_dir)],
        cwd=ROOT, env=env, capture_output=True, text=True, timeout=300)


def site_config() -> dict:
    """The repository's ``mkdocs.yml`` as a dict, its griffe extensions' file paths made
    absolute (so that a copy of the configuration in a temporary folder still finds them)."""
    import yaml  # a dependency of mkdocs

    cfg = yaml.safe_load((ROOT / "mkdocs.yml").read_text())
    for plugin in cfg.get("plugins", []):
        if isinstance(plugin, dict) and "mkdocstrings" in plugin:
            options = plugin["mkdocstrings"]["handlers"]["python"].get("options", {})
            options["extensions"] = [
                str(ROOT / e) if isinstance(e, str) and ".py" in e else e
                for e in options.get("extensions", [])]
    return cfg
