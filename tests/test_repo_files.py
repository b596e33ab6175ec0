"""The files a user of the repository relies on besides the code: the licence that
``pyproject.toml`` names, a citation file for both papers and theorylab, and a CI script that
says what it deletes."""

from __future__ import annotations

from pathlib import Path

import tomllib
import yaml

ROOT = Path(__file__).resolve().parents[1]


def test_license_is_the_mit_licence_pyproject_names():
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert meta["license"] == {"text": "MIT"}
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License")
    assert "Copyright (c)" in text and "theorylab contributors" in text
    assert 'THE SOFTWARE IS PROVIDED "AS IS"' in text


def test_citation_file_cites_theorylab_and_both_papers():
    cff = yaml.safe_load((ROOT / "CITATION.cff").read_text(encoding="utf-8"))
    meta = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert cff["cff-version"] == "1.2.0"
    assert cff["type"] == "software" and cff["title"].startswith("theorylab")
    assert cff["version"] == meta["version"] and cff["license"] == "MIT"
    assert cff["authors"] == [{"name": "theorylab contributors"}]
    refs = {r["title"]: r for r in cff["references"]}
    jel = refs["Vision Transformers provably learn spatial structure"]
    hua = refs["A Theoretical Analysis of Self-Supervised Learning for Vision Transformers"]
    assert [a["family-names"] for a in jel["authors"]] == ["Jelassi", "Sander", "Li"]
    assert [a["family-names"] for a in hua["authors"]] == ["Huang", "Wen", "Chi", "Liang"]
    assert (jel["year"], hua["year"]) == (2022, 2025)
    assert "NeurIPS 2022" in jel["collection-title"] and "ICLR 2025" in hua["collection-title"]


def test_ci_script_says_what_it_removes_before_removing_it():
    lines = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    removals = [i for i, line in enumerate(lines) if line.strip().startswith("rm ")]
    assert removals, "the CI script removes nothing any more: drop this test"
    for i in removals:
        target = lines[i].split()[-1].strip("\"'")  # the last path, without its quotes
        before = lines[i - 1].strip()
        assert before.startswith("echo") and target in before, (lines[i - 1], lines[i])


def test_every_proof_check_a_prediction_names_exists():
    """A derived prediction says what checks its derivation (``check=``): each file it names
    (``proofs_checks/<paper>/check_<what>.py``, ``tests/...py::test``) is there, and every
    proof check of a paper lives in that paper's folder without a leftover prefix."""
    import re

    from theorylab.papers import PAPERS, paper_claims

    named = {m for paper in PAPERS.values() for claim in paper_claims(paper).values()
             for p in claim.predictions
             for m in re.findall(r"(?:proofs_checks|tests)/[\w/]+\.py", p.check or "")}
    assert sum(c.startswith("proofs_checks/") for c in named) >= 3  # the predictions were read
    assert sorted(c for c in named if not (ROOT / c).is_file()) == []
    for paper in PAPERS:
        checks = sorted((ROOT / "proofs_checks" / paper).glob("*.py"))
        assert (ROOT / "proofs_checks" / paper / "__init__.py") in checks
        assert all(p.name.startswith("check_") and not p.name.startswith(("check_h24", "check_j22"))
                   for p in checks if p.name != "__init__.py")
