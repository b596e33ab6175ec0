"""The claims pages' "Last full run" box (docs/hooks/site.py) shows the generated results page
of a full run and refuses a quick one."""

from __future__ import annotations

from types import SimpleNamespace

import pytest

from tests._scripts import load_script

pytest.importorskip("mkdocs")


def _hook():
    return load_script("docs/hooks/site.py", "site_hook")


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


# -- the home page's theorem → verdict table and the code-changed flags -------------------------
def _docs(tmp_path, code_line="", headline="short"):
    """A docs folder with two papers: p1 with a summary, a claims page and a results page;
    p2 with a claims page only."""
    docs = tmp_path / "docs"
    for paper, year in (("p1", 2001), ("p2", 2002)):
        (docs / "papers").mkdir(parents=True, exist_ok=True)
        (docs / "papers" / f"{paper}.md").write_text(f"# Notes on Someone ({year})\n")
        (docs / "claims" / paper).mkdir(parents=True)
        (docs / "claims" / paper / "thm1.md").write_text("# Theorem 1 — a statement\n\nbody\n")
    (docs / "results" / "p1").mkdir(parents=True)
    (docs / "results" / "p1" / "summary.csv").write_text(
        "claim,kind,label,verdict,robust?,runtime_s,headline,error\n"
        f"p1/thm1,theorem check,FOUND,agrees,yes,1.0,{headline},\n")
    (docs / "results" / "p1" / "thm1.md").write_text(
        "# thm1: generated results\n\n- **Verdict:** `agrees` (full run, 1.0 s)\n"
        "- **Run:** full run, commit `abc1234`, 2026-01-02 03:04 UTC, theorylab 0.1.0\n"
        + (code_line + "\n" if code_line else ""))
    return docs


def test_home_table_has_every_claim_of_every_paper(tmp_path):
    hook = _hook()
    docs = _docs(tmp_path, headline="x" * 2000)
    page = SimpleNamespace(file=SimpleNamespace(src_uri="index.md"))
    out = hook.on_page_markdown(f"# Home\n\n{hook.VERDICTS_MARK}\n", page,
                                {"docs_dir": str(docs)}, None)
    rows = [line for line in out.splitlines() if line.startswith(("| p1", "| p2"))]
    assert len(rows) == 2
    assert "[Theorem 1 — a statement](claims/p1/thm1.md)" in rows[0]
    assert "[`agrees`](results/p1/thm1.md)" in rows[0] and "robust: yes" in rows[0]
    assert "x" * (hook.HOME_HEADLINE - 1) + "…" in rows[0]
    assert "x" * hook.HOME_HEADLINE not in rows[0]
    assert rows[1].startswith("| p2 |") and "not run yet" in rows[1]


def test_changed_code_is_flagged(tmp_path, monkeypatch):
    from theorylab.core import provenance

    hook = _hook()
    src = tmp_path / "repo"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "claim.py").write_text("x = 1\n")
    digest = provenance.source_digest(["pkg/claim.py"], src)
    line = f"- **Code:** `{digest}` (sha256 of pkg/claim.py)"
    assert provenance.code_changed(line, src) == []
    monkeypatch.setattr(hook, "ROOT", src)
    docs = _docs(tmp_path, code_line=line)
    cfg = {"docs_dir": str(docs)}
    results = SimpleNamespace(file=SimpleNamespace(src_uri="results/p1/thm1.md"))
    claims = SimpleNamespace(file=SimpleNamespace(src_uri="claims/p1/thm1.md"))
    home = SimpleNamespace(file=SimpleNamespace(src_uri="index.md"))
    assert "code changed" not in hook.on_page_markdown("# r\n", results, cfg, None)
    (src / "pkg" / "claim.py").write_text("x = 2\n")  # the claim's code changes after the run
    assert provenance.code_changed(line, src) == ["pkg/claim.py"]
    assert "The claim's code changed after this run" in hook.on_page_markdown(
        "# r\nbody", results, cfg, None)
    boxed = hook.on_page_markdown("# Claim\nbody", claims, cfg, None)
    assert "Last full run" in boxed and "code changed after this run" in boxed
    assert "**code changed since the run**" in hook.on_page_markdown(
        hook.VERDICTS_MARK, home, cfg, None)


def test_results_pages_record_the_code_of_their_claim():
    from theorylab.core.provenance import CODE_LINE, code_changed, code_line
    from theorylab.jelassi2022.claims import CLAIMS

    claim = CLAIMS["thm3.1"]
    line = code_line([claim.run, claim.judge])
    m = CODE_LINE.match(line)
    assert m and "theorylab/jelassi2022/claims/thm31.py" in m["files"]
    assert "theorylab/jelassi2022/data.py" in m["files"]  # a module it imports
    assert "theorylab/core" not in m["files"]
    assert code_changed(line) == []


def test_every_page_keeps_the_stars_of_its_formulas(tmp_path):
    page = SimpleNamespace(file=SimpleNamespace(src_uri="predictions/huang2024.md"))
    out = _hook().on_page_markdown("# P\n\na*_glob = E_z[e^{zφ*}] and *emphasis*, w*\n", page,
                                   {"docs_dir": str(tmp_path)}, None)
    # the formulas are typeset (their stars superscripts), a star in text escaped
    assert r"$a^*_{\mathrm{glob}}$ = $E_z[e^{zφ^*}]$ and *emphasis*, w\*" in out
