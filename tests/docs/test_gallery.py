"""The figure galleries of the site (docs/hooks/site.py): headline numbers as markdown tables,
captions as short paragraphs."""

from __future__ import annotations

import pytest

from tests._scripts import load_script


@pytest.fixture(scope="module")
def hook():
    pytest.importorskip("mkdocs")
    return load_script("docs/hooks/site.py", "site_hook")


def test_headline_dicts_become_tables(hook):
    headline = {"error": 0.0123456, "phases": {"t_I": 11, "t_II": 2902},
                "cells": [{"C": 2, "ok": True}, {"C": 3, "ok": False}],
                "runs": {"mae": {"nmi": 0.5, "d": 1.25}, "cl": {"nmi": 0.25}}, "gaps": [0.5, 1 / 3]}
    lines = hook._headline_tables(headline)
    text = "\n".join(lines)
    assert "{" not in text and "'" not in text  # no raw Python dict anywhere
    assert "| error | 0.01235 |" in lines and "| gaps | [0.5, 0.3333] |" in lines
    assert "**phases**" in lines and "| t_II | 2902 |" in lines
    assert "| | C | ok |" in lines and "| 1 | 3 | False |" in lines
    assert "| | nmi | d |" in lines and "| cl | 0.25 |  |" in lines
    assert hook._cell("a|b") == "a\\|b"


def test_captions_become_short_paragraphs(hook):
    sentence = ("The attention of a query patch over the keys, averaged over draws "
                "(Huang et al. (2025), Fig. 1). ")
    caption = sentence * 12 + "\n\nA second block, e.g. a note. Last one."
    paragraphs = hook._caption_paragraphs(caption)
    assert len(paragraphs) > 3
    assert all(len(p) <= hook.CAPTION_PARAGRAPH_CHARS + len(sentence) for p in paragraphs)
    assert " ".join(paragraphs) == " ".join(caption.split())  # nothing lost or reordered
    assert paragraphs[-1] == "A second block, e.g. a note. Last one."  # no split after "e.g."
    assert all(p.endswith(".") for p in paragraphs)


def test_gallery_page_has_no_raw_dicts(hook, tmp_path, monkeypatch):
    monkeypatch.setattr(hook, "FIGURES", tmp_path)
    (tmp_path / "toy-fig.png").write_bytes(b"")
    figures = {"toy-fig": {"paper": "toy", "title": "A toy", "caption": "One. Two.",
                           "headline": {"final": {"alpha": 1.0, "gamma": 2.0}}}}
    page = hook._gallery("toy", figures)
    assert "{'alpha'" not in page and "| alpha | 1 |" in page and "One. Two." in page
