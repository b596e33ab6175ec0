"""The documentation site builds with ``mkdocs build --strict`` (mkdocs.yml, docs/hooks/site.py),
and strict mode fails on a broken link, a missing image or an unresolved cross-reference."""

from __future__ import annotations

import json
import re

import pytest

from tests.docs._site import ROOT, mkdocs_build, require_docs_extra, site_config


def test_strict_build_has_every_section(built_site):
    site = built_site
    manifest = json.loads((ROOT / "figures" / "manifest.json").read_text())["figures"]
    for fid, fig in manifest.items():
        if (ROOT / "figures" / f"{fid}.png").exists():
            assert (site / "figures" / f"{fid}.png").exists(), fid
            gallery = (site / "gallery" / fig["paper"] / "index.html").read_text()
            assert f"../../figures/{fid}.png" in gallery, fid
    for page in (ROOT / "docs" / "claims").glob("*/*.md"):
        html = (site / page.relative_to(ROOT / "docs").with_suffix("") / "index.html")
        assert html.exists(), page
    for paper in ("jelassi2022", "huang2024"):
        assert (site / "api" / f"theorylab.{paper}" / "index.html").exists()
    assert (site / "api" / "theorylab.core.trainer" / "index.html").exists()
    # a docstring's [`Name`][] became a link, not literal brackets
    api = (site / "api" / "theorylab.jelassi2022.engines" / "index.html").read_text()
    assert 'href="#theorylab.jelassi2022.engines.make_engine"' in api
    assert "][]" not in api


def test_home_page_has_the_verdict_table_of_both_papers(built_site):
    """The home page's theorem → verdict table is generated from every summary.csv: each claim
    of each paper's summary is a row, linked to its claims page and its results page."""
    import csv
    import re

    html = (built_site / "index.html").read_text()
    assert "theorylab:verdicts" not in html
    for summary in sorted((ROOT / "docs" / "results").glob("*/summary.csv")):
        paper = summary.parent.name
        with open(summary, newline="") as f:
            claims = [row["claim"].split("/", 1)[-1] for row in csv.DictReader(f)]
        assert claims, summary
        for claim in claims:
            assert re.search(rf'href="results/{paper}/{re.escape(claim)}/"', html), (paper, claim)
            if (ROOT / "docs" / "claims" / paper / f"{claim}.md").exists():
                assert f'href="claims/{paper}/{claim}/"' in html, (paper, claim)


def test_formulas_render_locally_and_keep_their_stars(built_site):
    """Math is KaTeX served by the site itself (no resource from the network), and a formula
    written in text keeps its ``*``."""
    import re

    for asset in ("javascripts/katex/katex.min.js", "javascripts/katex/katex.min.css",
                  "javascripts/katex/contrib/auto-render.min.js",
                  "javascripts/katex/fonts/KaTeX_Main-Regular.woff2", "javascripts/katex/LICENSE"):
        assert (built_site / asset).is_file(), asset
    notes = (built_site / "papers" / "huang2024" / "index.html").read_text()
    assert 'class="arithmatex"' in notes and "katex.min.js" in notes
    remote = re.compile(r'<(?:script|link|img)[^>]+(?:src|href)="(?:https?:)?//', re.I)
    for page in built_site.rglob("*.html"):
        assert not remote.search(page.read_text()), page
    predictions = (built_site / "predictions" / "huang2024" / "index.html").read_text()
    # typeset: the stars of a*_glob and φ* are superscripts of the formula, not emphasis
    assert ('<span class="arithmatex">\\(a^*_{\\mathrm{glob}}\\)</span> = <span class="arithmatex">'
            '\\(E_z[e^{zφ^*}/(e^{zφ^*} + (1 − ρ)/ρ)]\\)</span>') in predictions


def test_summary_tables_link_their_claims(tmp_path):
    """A summary the kernel writes (one table per kind, claim ids linked to their pages) builds
    strictly with the site's markdown and links each id."""
    require_docs_extra()
    import pandas as pd
    import yaml

    from theorylab.core.claims.runner import summary_markdown

    cfg = site_config()
    for key in ("hooks", "exclude_docs", "extra_javascript", "extra_css"):
        cfg.pop(key, None)
    cfg["plugins"] = ["search"]
    cfg["docs_dir"] = str(tmp_path / "docs")
    cfg["nav"] = [{"Summary": "p/summary.md"}, {"Claim": "p/thm1.md"}]
    (tmp_path / "docs" / "p").mkdir(parents=True)
    part = pd.DataFrame([{"kind": "theorem check", "claim": "p/thm1", "label": "FOUND",
                          "verdict": "agrees", "robust?": "yes", "readings": "–",
                          "can fail?": "yes", "runtime_s": 1.5,
                          "headline": "T* exponent 0.36 and T* at P=64", "error": ""}])
    made = {"run": "full", "commit": "abc1234", "date": "2026-01-02 03:04 UTC",
            "version": "0.1.0"}
    (tmp_path / "docs" / "p" / "summary.md").write_text(
        summary_markdown(part, "A paper", "full", made))
    (tmp_path / "docs" / "p" / "thm1.md").write_text("# thm1\n")
    config = tmp_path / "mkdocs.yml"
    config.write_text(yaml.safe_dump(cfg))
    proc = mkdocs_build(config, tmp_path / "site")
    assert proc.returncode == 0, (proc.stdout + proc.stderr)[-2000:]
    html = (tmp_path / "site" / "p" / "summary" / "index.html").read_text()
    assert 'href="../thm1/"' in html and ">p/thm1</a>" in html


#: fault → (markdown, what the build's log must name)
FAULTS = {
    "broken link": ("See [the page](missing.md).", "missing.md"),
    "missing image": ("![figure](missing.png)", "missing.png"),
    "unresolved cross-reference": ("See [`Nowhere`][theorylab.core.threads.nowhere].",
                                   "theorylab.core.threads.nowhere"),
    "none": ("", None),
}


@pytest.mark.parametrize("fault", list(FAULTS))
def test_strict_build_fails_on(fault, tmp_path):
    """The real mkdocs.yml (plugins, validation) without the hook, on a one-page site with one
    fault: the build must fail and name it; the page without a fault builds."""
    require_docs_extra()
    import yaml  # a dependency of mkdocs

    cfg = site_config()
    cfg.pop("hooks")
    cfg.pop("exclude_docs")
    cfg["docs_dir"] = str(tmp_path / "docs")
    cfg["nav"] = [{"Home": "index.md"}]
    (tmp_path / "docs").mkdir()
    config = tmp_path / "mkdocs.yml"
    config.write_text(yaml.safe_dump(cfg))
    markdown, named = FAULTS[fault]
    page = f"# t\n\n::: theorylab.core.threads\n\n{markdown}\n"
    (tmp_path / "docs" / "index.md").write_text(page)
    proc = mkdocs_build(config, tmp_path / "site")
    log = proc.stdout + proc.stderr
    if named is None:
        assert proc.returncode == 0, log[-2000:]
    else:
        assert proc.returncode != 0 and "WARNING" in log and named in log, log[-2000:]


class _TextNodes:
    """The text nodes of an HTML page's body outside code, scripts and math (``arithmatex``)."""

    SKIP = {"script", "style", "code", "pre", "kbd", "head", "title", "svg"}
    VOID = {"br", "img", "hr", "meta", "link", "input", "source", "wbr", "area", "col", "embed"}

    def __init__(self, html: str):
        from html.parser import HTMLParser

        nodes, stack = [], []

        class Parser(HTMLParser):
            def handle_starttag(self, tag, attrs):
                if tag in _TextNodes.VOID:
                    return
                skip = tag in _TextNodes.SKIP or "arithmatex" in (dict(attrs).get("class") or "")
                stack.append((tag, skip))

            def handle_endtag(self, tag):
                while stack:
                    if stack.pop()[0] == tag:
                        break

            def handle_data(self, data):
                if data.strip() and not any(skip for _, skip in stack):
                    nodes.append(data)

        Parser(convert_charrefs=True).feed(html)
        self.nodes = nodes


#: markup of a formula that no longer belongs to one: an escaped star, a braced power or index,
#: a TeX command, a dollar sign
RAW_TEX = re.compile(r"\\\*|\^\{|_\{|\\[A-Za-z]{2,}|\$")
#: a formula the site's KaTeX renders wherever it stands in the page (navigation, contents)
KATEX = re.compile(r"\\\(.+?\\\)|\\\[.+?\\\]", re.S)


def test_no_raw_tex_outside_math(built_site):
    """Every page of the site (hand-written, generated by the claims kernel, by the hook) shows
    its formulas typeset: no text node outside code and math holds ``\\*``, ``^{``, ``_{``, a
    TeX command such as ``\\kappa``, or a ``$`` that did not open a formula; the navigation
    titles read ``T*``, not ``T\\*``."""
    found = []
    for page in sorted(built_site.rglob("*.html")):
        for node in _TextNodes(page.read_text(encoding="utf-8")).nodes:
            node = KATEX.sub(" ", node)
            for m in RAW_TEX.finditer(node):
                found.append(f"{page.relative_to(built_site)}: {m[0]!r} in "
                             f"{node[max(0, m.start() - 40):m.end() + 40]!r}")
    assert not found, f"{len(found)} raw TeX outside math:\n" + "\n".join(found[:400])
    results = (built_site / "results" / "huang2024" / "thm4.1" / "index.html").read_text()
    assert 'class="arithmatex"' in results


def test_gallery_figures_open_full_size_and_wide_tables_scroll(built_site):
    """Each gallery figure is a link to its full-size image, and the site's stylesheet lets a
    table wider than the page scroll sideways (a results page's thresholds table)."""
    manifest = json.loads((ROOT / "figures" / "manifest.json").read_text())["figures"]
    shown = [(fid, fig["paper"]) for fid, fig in manifest.items()
             if (ROOT / "figures" / f"{fid}.png").exists()]
    for fid, paper in shown:
        gallery = (built_site / "gallery" / paper / "index.html").read_text()
        assert re.search(rf'<a href="\.\./\.\./figures/{re.escape(fid)}\.png"[^>]*><img '
                         rf'[^>]*src="\.\./\.\./figures/{re.escape(fid)}\.png"', gallery), fid
    css = (built_site / "stylesheets" / "site.css").read_text()
    assert re.search(r"table:not\(\[class\]\)\s*\{[^}]*overflow-x:\s*auto", css)
    assert 'href="../../../stylesheets/site.css"' in (
        built_site / "results" / "huang2024" / "phases-reduction" / "index.html").read_text()


def test_every_inline_formula_parses_in_katex(built_site, tmp_path):
    """Each distinct inline formula of the site (hand-written or typeset from text) is TeX the
    vendored KaTeX parses without an error (run in Node.js; skipped without it)."""
    import html
    import shutil
    import subprocess

    node = shutil.which("node")
    if node is None:
        pytest.skip("node not installed")
    formulas = sorted({html.unescape(m[1]) for page in built_site.rglob("*.html")
                       for m in re.finditer(r'class="arithmatex">\\\((.*?)\\\)</span>',
                                            page.read_text(encoding="utf-8"), re.S)})
    assert formulas
    (tmp_path / "formulas.json").write_text(json.dumps(formulas))
    script = ("const katex = require(process.argv[1]);"
              "const fs = require('fs');"
              "const bad = JSON.parse(fs.readFileSync(process.argv[2], 'utf8')).filter(f => {"
              "  try { katex.renderToString(f, {throwOnError: true}); return false; }"
              "  catch (e) { return true; } });"
              "console.log(JSON.stringify(bad));")
    proc = subprocess.run([node, "-e", script, str(ROOT / "docs/javascripts/katex/katex.min.js"),
                           str(tmp_path / "formulas.json")],
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert json.loads(proc.stdout) == []
