"""Execute the ```python blocks of the hand-written pages of docs/ (every ``*.md`` except the
generated ``docs/results/``) so that they cannot go stale.

Blocks fenced as ```python no-run (or any ```python with a word after it) are skipped. Blocks
of one page run in order in a shared namespace, in a temporary working directory.
"""

import re
from pathlib import Path

import pytest

DOCS = Path(__file__).resolve().parents[2] / "docs"
PAGES = sorted(p for p in DOCS.rglob("*.md") if "results" not in p.relative_to(DOCS).parts)
FENCE = re.compile(r"^```python[ \t]*(?P<tag>[^\n]*)\n(?P<code>.*?)^```", re.M | re.S)


def blocks(page: Path):
    return [m.group("code") for m in FENCE.finditer(page.read_text())
            if not m.group("tag").strip()]


@pytest.mark.parametrize("page", [p for p in PAGES if blocks(p)],
                         ids=lambda p: str(p.relative_to(DOCS)))
def test_page_code_runs(page, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    ns: dict = {"__name__": "__docs__"}
    for code in blocks(page):
        exec(compile(code, str(page), "exec"), ns)


def test_pages_exist():
    assert (DOCS / "index.md").exists() and (DOCS / "reproducing.md").exists()


LINK = re.compile(r"!?\[[^\]]*\]\((?P<target>[^)#\s]+)\)")


@pytest.mark.parametrize("page", sorted((DOCS / "claims").rglob("*.md")),
                         ids=lambda p: str(p.relative_to(DOCS)))
def test_claim_page_links_exist(page):
    """Every relative link and image of a claims page points to a file of the repository."""
    for m in LINK.finditer(page.read_text()):
        target = m.group("target")
        if "://" in target:
            continue
        path = (page.parent / target).resolve()
        if path.parent == DOCS / "figures":  # the site copies figures/*.png there at build time
            path = DOCS.parent / "figures" / path.name
        assert path.exists(), f"{page.name}: {target}"
