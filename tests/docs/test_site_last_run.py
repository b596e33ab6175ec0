"""The claims pages' "Last full run" box (docs/hooks/site.py) shows the generated results page
of a full run and refuses a quick one."""

from __future__ import annotations

import importlib.util
from types import SimpleNamespace

import pytest

from tests.docs._site import ROOT

pytest.importorskip("mkdocs")


def _hook():
    spec = importlib.util.spec_from_file_location("site_hook", ROOT / "docs" / "hooks" / "site.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _render(tmp_path, page_lines):
    results = tmp_path / "results" / "p"
    results.mkdir(parents=True)
    (results / "c.md").write_text("# c: generated results\n\n" + "\n".join(page_lines) + "\n")
    page = SimpleNamespace(file=SimpleNamespace(src_uri="claims/p/c.md"))
    return _hook().on_page_markdown("# Claim c\nbody", page, {"docs_dir": str(tmp_path)}, None)


def test_full_run_is_shown(tmp_path):
    out = _render(tmp_path, ["- **Label:** Thm 1", "- **Verdict:** `agrees` (full run, 3.0 s)",
                             "- **Run:** full run, commit `abc1234`, 2026-01-02 03:04 UTC, "
                             "theorylab 0.1.0"])
    assert "Last full run" in out and "`agrees`" in out and "abc1234" in out


@pytest.mark.parametrize("verdict,run", [
    ("(quick run, 3.0 s)", "quick run, commit `abc1234`, 2026-01-02 03:04 UTC, theorylab 0.1.0"),
    ("(quick run, 3.0 s)", None),  # a page written before pages recorded their run
])
def test_quick_run_is_refused(tmp_path, verdict, run):
    lines = ["- **Label:** Thm 1", f"- **Verdict:** `inconclusive` {verdict}"]
    out = _render(tmp_path, lines + ([f"- **Run:** {run}"] if run else []))
    assert "Last full run" not in out and "inconclusive" not in out
    assert "No full run recorded" in out and out.startswith("# Claim c\n") and "body" in out
