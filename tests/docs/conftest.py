"""The documentation site, built once per test session for test_site.py and
test_site_browser.py."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.docs._site import ROOT, mkdocs_build, require_docs_extra


@pytest.fixture(scope="session")
def built_site(tmp_path_factory) -> Path:
    """``mkdocs build --strict`` of the repository's site into a temporary folder (skips without
    the docs extra; fails with the build's log on any strict-mode warning)."""
    require_docs_extra()
    out = tmp_path_factory.mktemp("site")
    proc = mkdocs_build(ROOT / "mkdocs.yml", out)
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-4000:]
    return out
