"""mkdocs hook of the theorylab site (registered with ``hooks:`` in ``mkdocs.yml``).

At build time, driven by the files present (nothing to edit when a paper, a claims page or a
figure is added):

- every ``figures/*.png`` of the repository joins the site under ``figures/`` (the files stay
  where ``python -m theorylab figures`` writes them; nothing is duplicated in git);
- one figure gallery per paper, ``gallery/<paper>.md``, with the titles and captions of
  ``figures/manifest.json``; each figure is a link to its full-size image;
- one API page per public module of the kernel and of each paper (``api/<module>.md``, a
  mkdocstrings ``::: module`` block);
- the navigation: one section per paper (notes ``docs/papers/<paper>.md``, claims pages
  ``docs/claims/<paper>/*.md``, generated results ``docs/results/<paper>/*.md``, gallery),
  every other top-level page under "Guides", and the API reference;
- on the home page, in place of the line ``<!-- theorylab:verdicts -->``, one theorem →
  verdict table of every paper, generated from ``docs/results/*/summary.csv`` (the last run of
  each claim: its theorem, kind, verdict, robustness, the short headline, links to its claims
  and results pages) with every claim page that has no result yet;
- a results page, and the claims page it feeds, whose claim's code changed after the run (the
  ``- **Code:**`` line of the page records a sha256 of the claim's source files; recomputed
  here) gets a warning, and the home table marks it;
- every page's formulas written in text (``P^{1−κ_c}/η``, ``L_MAE``, ``Φ_{p→v}``) become
  ``$…$`` TeX ([`theorylab.core.markdown.typeset_formulas`][]; docstrings of the API pages
  through ``docs/hooks/griffe_formulas.py``), a displayed ``$$…$$`` gets the blank lines
  markdown needs, and the remaining stray ``*`` (``w*``) are escaped, so that markdown does not
  read two of them as emphasis and eat them
  ([`theorylab.core.markdown.escape_stray_stars`][]); ``$…$`` and ``$$…$$`` are rendered by the
  vendored KaTeX (``docs/javascripts/katex/``); titles in the navigation are plain text
  ([`theorylab.core.markdown.plain_formulas`][]).
"""

from __future__ import annotations

import csv
import json
import re
from pathlib import Path

from mkdocs.structure.files import File, Files

from theorylab.core.markdown import escape_stray_stars, plain_formulas, typeset_formulas
from theorylab.core.provenance import code_changed

ROOT = Path(__file__).resolve().parents[2]
FIGURES = ROOT / "figures"
#: the packages whose public modules get an API page.
API_PACKAGES = ("core", "jelassi2022", "huang2024", "vision", "analysis", "commands")
#: guides first in this order; any other top-level page follows (e.g. a new guide).
GUIDE_ORDER = ("reproducing.md", "reading-a-verdict.md", "recipes.md", "config.md",
               "engines.md", "sweeps.md", "performance.md", "properties.md", "architecture.md")


def _title(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("# "):
            return plain_formulas(line[2:].strip())
    return path.stem


def _manifest() -> dict:
    path = FIGURES / "manifest.json"
    return json.loads(path.read_text(encoding="utf-8"))["figures"] if path.exists() else {}


def _papers(docs: Path) -> list[str]:
    """The papers with notes ``docs/papers/<paper>.md``, oldest first (the year in the notes'
    title), then by name."""
    def year(path: Path) -> int:
        found = re.search(r"\((\d{4})\)", _title(path))
        return int(found[1]) if found else 9999

    return [p.stem for p in sorted((docs / "papers").glob("*.md"), key=lambda p: (year(p), p.stem))]


def _modules(package: str) -> list[str]:
    """Public modules of ``theorylab.<package>`` (no ``_``-prefixed part but the claims'
    shared ``_common``), in dotted order."""
    base = ROOT / "theorylab" / package
    out = []
    for path in sorted(base.rglob("*.py")):
        parts = path.relative_to(ROOT).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        if any(p.startswith("_") and p != "_common" for p in parts):
            continue
        out.append(".".join(parts))
    return sorted(out)


#: words ending in a full stop that do not end a sentence of a caption
_ABBREVIATIONS = ("al.", "e.g.", "i.e.", "cf.", "vs.", "Fig.", "Eq.", "eq.", "Thm.", "resp.")
#: at most this many characters in one paragraph of a caption (more than one sentence each)
CAPTION_PARAGRAPH_CHARS = 400


def _caption_paragraphs(caption: str) -> list[str]:
    """A figure's caption as short paragraphs: whole sentences, a new paragraph once one holds
    more than [`CAPTION_PARAGRAPH_CHARS`][] characters; blank lines of the caption are kept."""
    out = []
    for block in re.split(r"\n\s*\n", str(caption)):
        words = block.split()
        sentences, current = [], []
        for i, word in enumerate(words):
            current.append(word)
            following = words[i + 1] if i + 1 < len(words) else ""
            if (word.endswith((".", "?", "!")) and not word.endswith(_ABBREVIATIONS)
                    and (not following or following[0].isupper())):
                sentences.append(" ".join(current))
                current = []
        if current:
            sentences.append(" ".join(current))
        paragraph = ""
        for sentence in sentences:
            if paragraph and len(paragraph) > CAPTION_PARAGRAPH_CHARS:
                out.append(paragraph)
                paragraph = ""
            paragraph = f"{paragraph} {sentence}".strip()
        if paragraph:
            out.append(paragraph)
    return out


def _cell(value) -> str:
    """One headline value as the text of a table cell: floats to 4 significant digits, lists
    and nested tables inline, ``|`` escaped."""
    if isinstance(value, bool) or value is None:
        text = str(value)
    elif isinstance(value, float):
        text = f"{value:.4g}"
    elif isinstance(value, (list, tuple)):
        text = "[" + ", ".join(_cell(v) for v in value) + "]"
    elif isinstance(value, dict):
        text = "; ".join(f"{k}: {_cell(v)}" for k, v in value.items())
    else:
        text = str(value)
    return text.replace("|", "\\|")


def _records_table(rows: dict) -> list[str]:
    """A table with one row per key of ``rows`` (each a dict) and one column per inner key."""
    columns = list(dict.fromkeys(k for row in rows.values() for k in row))
    lines = ["| | " + " | ".join(_cell(c) for c in columns) + " |",
             "|---" * (len(columns) + 1) + "|"]
    lines += [f"| {_cell(name)} | " + " | ".join(_cell(row.get(c, "")) for c in columns)
              + " |" for name, row in rows.items()]
    return lines


def _headline_tables(headline: dict) -> list[str]:
    """A figure's headline numbers as markdown tables: the scalars (and lists of scalars) in
    one quantity/value table; each dict in a table of its own (a dict of dicts, or a list of
    dicts, with one row per entry and one column per inner key)."""
    def is_records(value) -> bool:
        items = value.values() if isinstance(value, dict) else value
        return (isinstance(value, (dict, list)) and len(value) > 0
                and all(isinstance(v, dict) for v in items))

    scalars = {k: v for k, v in headline.items() if not isinstance(v, dict) and not is_records(v)}
    lines = []
    if scalars:
        lines += ["| quantity | value |", "|---|---|"]
        lines += [f"| {_cell(k)} | {_cell(v)} |" for k, v in scalars.items()]
        lines += [""]
    for key, value in headline.items():
        if key in scalars:
            continue
        lines += [f"**{key}**", ""]
        if is_records(value):
            rows = value if isinstance(value, dict) else {i: v for i, v in enumerate(value)}
            lines += _records_table(rows)
        else:
            lines += ["| quantity | value |", "|---|---|"]
            lines += [f"| {_cell(k)} | {_cell(v)} |" for k, v in value.items()]
        lines += [""]
    return lines


def _gallery(paper: str, figures: dict) -> str:
    lines = [f"# Figure gallery: {paper}", "",
             "Every figure of `python -m theorylab figures --only " + paper + "`; titles and "
             "captions from `figures/manifest.json` (the figures themselves are written by "
             "the figure runner, with their settings and runtime in the manifest).", ""]
    for fid, fig in sorted(figures.items()):
        if fig.get("paper") != paper or not (FIGURES / f"{fid}.png").exists():
            continue
        # the figure links to itself: a six-panel figure is read at full size
        lines += [f"## {fid}", "", f"**{fig.get('title', fid)}**", "",
                  f'[![{fid}](../figures/{fid}.png)](../figures/{fid}.png '
                  f'"open the full-size image")', "",
                  f"[Open the full-size image](../figures/{fid}.png)", ""]
        for paragraph in _caption_paragraphs(fig.get("caption", "")):
            lines += [paragraph, ""]
        if fig.get("headline"):
            lines += _headline_tables(fig["headline"])
    return "\n".join(lines)


def on_files(files: Files, config) -> Files:
    docs = Path(config["docs_dir"])
    for png in sorted(FIGURES.glob("*.png")):
        files.append(File.generated(config, f"figures/{png.name}", abs_src_path=str(png)))
    manifest = _manifest()
    for paper in _papers(docs):
        files.append(File.generated(config, f"gallery/{paper}.md",
                                    content=_gallery(paper, manifest)))
    for package in API_PACKAGES:
        for module in _modules(package):
            files.append(File.generated(config, f"api/{module}.md",
                                        content=f"# `{module}`\n\n::: {module}\n"))
    return files


def _pages(docs: Path, folder: str) -> list[dict]:
    return [{_title(p): p.relative_to(docs).as_posix()}
            for p in sorted((docs / folder).glob("*.md"))]


def on_config(config):
    docs = Path(config["docs_dir"])
    nav: list = [{"Home": "index.md"}]
    for paper in _papers(docs):
        # the labels name the paper: they are also the pages' browser titles
        section: list = [{f"Notes ({paper})": f"papers/{paper}.md"}]
        if claims := _pages(docs, f"claims/{paper}"):
            section.append({"Claims": claims})
        if results := _pages(docs, f"results/{paper}"):
            section.append({"Results (generated)": results})
        if (docs / "predictions" / f"{paper}.md").exists():
            section.append({f"Derived predictions ({paper})": f"predictions/{paper}.md"})
        section.append({f"Figure gallery ({paper})": f"gallery/{paper}.md"})
        name = _title(docs / "papers" / f"{paper}.md").removeprefix("Notes on ").split(', "')[0]
        nav.append({name: section})
    top = {p.name for p in docs.glob("*.md")} - {"index.md"}
    guides = [g for g in GUIDE_ORDER if g in top] + sorted(top - set(GUIDE_ORDER))
    nav.append({"Guides": [{_title(docs / g): g} for g in guides]})
    api = []
    for package in API_PACKAGES:
        api.append({f"theorylab.{package}": [{m: f"api/{m}.md"} for m in _modules(package)]})
    nav.append({"API reference": api})
    config["nav"] = nav
    return config



_QUICK = re.compile(r"\bquick run\b")
_CLAIM_PAGE = re.compile(r"^claims/(?P<paper>[^/]+)/(?P<claim>[^/]+)\.md$")


def _last_run(docs: Path, paper: str, claim: str) -> list[str]:
    """The ``- **Label:** ...`` to ``- **Verdict:** ...`` lines of the generated results page."""
    path = docs / "results" / paper / f"{claim}.md"
    if not path.exists():
        return []
    return [line for line in path.read_text(encoding="utf-8").splitlines()
            if line.startswith("- **")]


#: the line of the home page that the theorem → verdict table replaces
VERDICTS_MARK = "<!-- theorylab:verdicts -->"
#: the longest headline the home table shows (the summary and the page hold the rest)
HOME_HEADLINE = 160
_RESULTS_PAGE = re.compile(r"^results/(?P<paper>[^/]+)/(?P<claim>[^/]+)\.md$")


def _code_note(docs: Path, paper: str, claim: str) -> list[str] | None:
    """The files of the claim's code that changed after its recorded run (``[]``: none; None:
    the results page records no code digest)."""
    path = docs / "results" / paper / f"{claim}.md"
    if not path.exists():
        return None
    for line in path.read_text(encoding="utf-8").splitlines():
        changed = code_changed(line, ROOT)
        if changed is not None:
            return changed
    return None


def _code_box(files: list[str]) -> list[str]:
    return ['!!! warning "The claim\'s code changed after this run"', "",
            "    These files differ from the ones the run recorded: " + ", ".join(
                f"`{f}`" for f in files) + ". The verdict below is that of the old code; "
            "`python -m theorylab check` reruns it.", ""]


def _short(text: str, limit: int = HOME_HEADLINE) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1].rstrip() + "…"


def _claim_title(docs: Path, paper: str, claim: str) -> str:
    page = docs / "claims" / paper / f"{claim}.md"
    return _title(page) if page.exists() else claim


def verdict_rows(docs: Path) -> list[dict]:
    """One row per claim of every paper (papers in site order, claims in summary order, then
    claim pages without a result): paper, claim, theorem, kind, verdict, robust, headline,
    code note, and whether its claims and results pages exist."""
    rows = []
    for paper in _papers(docs):
        seen = set()
        summary = docs / "results" / paper / "summary.csv"
        if summary.exists():
            with open(summary, encoding="utf-8", newline="") as f:
                for rec in csv.DictReader(f):
                    claim = (rec.get("claim") or "").split("/", 1)[-1]
                    if not claim:
                        continue
                    seen.add(claim)
                    rows.append({"paper": paper, "claim": claim,
                                 "kind": rec.get("kind", ""), "verdict": rec.get("verdict", ""),
                                 "robust": rec.get("robust?", ""),
                                 "headline": rec.get("headline") or rec.get("error") or "",
                                 "changed": _code_note(docs, paper, claim)})
        for page in sorted((docs / "claims" / paper).glob("*.md")):
            if page.stem not in seen:
                rows.append({"paper": paper, "claim": page.stem, "kind": "", "verdict": "",
                             "robust": "", "headline": "", "changed": None})
        for row in rows:
            if row["paper"] == paper:
                row["theorem"] = _claim_title(docs, paper, row["claim"])
                row["has_page"] = (docs / "claims" / paper / f"{row['claim']}.md").exists()
                row["has_result"] = (docs / "results" / paper / f"{row['claim']}.md").exists()
    return rows


def verdict_table(docs: Path, page_dir: str = "") -> str:
    """The home page's theorem → verdict table (markdown), links relative to `page_dir`: one
    row per claim, the theorem linked to its claims page (its id and kind under it), the
    verdict linked to its results page (robustness under it), the short headline."""
    def cell(text) -> str:
        return str(text).replace("|", "\\|")

    lines = ["| paper | claim | verdict | last run |", "|---|---|---|---|"]
    for r in verdict_rows(docs):
        claim, paper = r["claim"], r["paper"]
        theorem = cell(r["theorem"])
        if r["has_page"]:
            theorem = f"[{theorem}]({page_dir}claims/{paper}/{claim}.md)"
        under = ", ".join(x for x in (claim, r["kind"]) if x)
        verdict = f"`{r['verdict']}`" if r["verdict"] else "not run yet"
        if r["has_result"]:
            verdict = f"[{verdict}]({page_dir}results/{paper}/{claim}.md)"
        notes = [f"robust: {cell(r['robust'])}"] if r["robust"] else []
        if r["changed"]:
            notes.append("**code changed since the run**")
        verdict += "".join(f"<br><small>{n}</small>" for n in notes)
        lines.append(f"| {paper} | {theorem}<br><small>{cell(under)}</small> | {verdict} | "
                     f"<small>{cell(_short(r['headline']))}</small> |")
    return "\n".join(lines)


def on_page_markdown(markdown: str, page, config, files) -> str:
    """The home page gets its theorem → verdict table; a claims page gets, under its title, the
    label / statement / prediction / measurement / verdict of the last full run, read from its
    generated results page (a page that holds a quick run gives a warning instead: a quick
    verdict is never shown as the full one); a claims or results page whose claim's code
    changed after the run gets a warning; every page's stray ``*`` are escaped."""
    docs = Path(config["docs_dir"])
    uri = page.file.src_uri
    if uri == "index.md" and VERDICTS_MARK in markdown:
        markdown = markdown.replace(VERDICTS_MARK, verdict_table(docs))
    result = _RESULTS_PAGE.match(uri)
    if result and result["claim"] != "summary":
        changed = _code_note(docs, result["paper"], result["claim"])
        if changed:
            head, _, rest = markdown.partition("\n")
            markdown = "\n".join([head, "", *_code_box(changed), rest])
    match = _CLAIM_PAGE.match(uri)
    if match:
        markdown = _claim_box(markdown, docs, match["paper"], match["claim"])
    return escape_stray_stars(typeset_formulas(display_blocks(markdown)))


#: a line that opens a displayed formula (``$$…``, indented in a list item or not)
_DISPLAY_OPEN = re.compile(r"^([ \t]*)\$\$")


def display_blocks(markdown: str) -> str:
    """`markdown` with a blank line before and after each displayed formula (``$$…$$`` on lines
    of their own), which markdown otherwise reads as part of the paragraph around it, leaving its
    ``$`` on the page; an indentation of 1 to 3 spaces is dropped (4 nest it in a list item)."""
    lines, out, i = markdown.split("\n"), [], 0
    fence = False
    while i < len(lines):
        line = lines[i]
        if line.lstrip().startswith(("```", "~~~")):
            fence = not fence
        m = None if fence else _DISPLAY_OPEN.match(line)
        if not m:
            out.append(line)
            i += 1
            continue
        j = i
        while not (lines[j].rstrip().endswith("$$") and (j > i or len(lines[j].strip()) > 2)):
            if j + 1 >= len(lines):
                break
            j += 1
        if out and out[-1].strip():
            out.append("")
        # Python-Markdown nests a block by 4 spaces: an indentation of 1–3 is dropped, or the
        # formula is read as text between two ``$``
        cut = len(m.group(1).expandtabs(4)) % 4
        out += [x[cut:] if x[:cut].isspace() else x for x in lines[i:j + 1]]
        if j + 1 < len(lines) and lines[j + 1].strip():
            out.append("")
        i = j + 1
    return "\n".join(out)


def _claim_box(markdown: str, docs: Path, paper: str, claim: str) -> str:
    lines = _last_run(docs, paper, claim)
    if not lines:
        return markdown
    if any(_QUICK.search(line) for line in lines if line.startswith(("- **Verdict:**",
                                                                       "- **Run:**"))):
        box = ['!!! warning "No full run recorded"', "",
               "    The generated results page holds a quick run (reduced grids), whose verdict "
               "is not shown here; `python -m theorylab check` writes the full run."]
    else:
        box = ['!!! abstract "Last full run (from the generated results page)"', ""]
        box += ["    " + line for line in lines if not line.startswith("- **Code:**")]
        changed = _code_note(docs, paper, claim)
        if changed:
            box += ["", *["    " + b if b else "" for b in _code_box(changed)]]
    head, _, rest = markdown.partition("\n")
    return "\n".join([head, "", *box, "", rest])
