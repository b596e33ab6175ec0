"""docs/config.md is generated from the config classes (core.configdoc) and cannot drift."""

from __future__ import annotations

import re
from dataclasses import dataclass, fields

import pytest

from theorylab.commands.config import PAGE, main, render
from theorylab.core.configdoc import config_markdown, field_docs, paper_refs
from theorylab.papers import PAPERS


def test_committed_page_is_the_generated_one():
    """Byte for byte: regenerate with ``python -m theorylab config`` after changing a
    config class, its docstring or its allowed values."""
    assert PAGE.read_bytes() == render().encode("utf-8")
    assert main(["--check"]) == 0


def _rows(page: str) -> dict[tuple[str, str], set[str]]:
    """(paper, ``[section]``) → the keys of its table (paper "" for ``[experiment]``)."""
    out: dict[tuple[str, str], set[str]] = {}
    paper, section = "", None
    for line in page.splitlines():
        if m := re.match(r"^## `(\w+)`: ", line):
            paper = m.group(1)
        elif m := re.match(r"^#+ `\[(\w+)\]`$", line):
            section = (paper, m.group(1))
            out[section] = set()
        elif section and (k := re.match(r"^\| `(\w+)` \|", line)):
            out[section].add(k.group(1))
    return out


def test_every_field_of_every_section_has_a_row():
    from theorylab.huang2024.config import DataConfig, ModelConfig, TrainConfig
    from theorylab.jelassi2022.config import SECTIONS

    rows = _rows(PAGE.read_text(encoding="utf-8"))
    assert rows[("", "experiment")] == {"paper"}
    huang = {"data": DataConfig, "model": ModelConfig, "train": TrainConfig}
    for paper, sections in (("jelassi2022", SECTIONS), ("huang2024", huang)):
        for name, cls in sections.items():
            assert rows[(paper, name)] == {f.name for f in fields(cls)}, (paper, name)
    assert all(p.config_doc is not None for p in PAPERS.values())


def test_resolved_defaults_and_references_come_from_the_docstrings():
    page = PAGE.read_text(encoding="utf-8")
    assert "| `sigma` | number | unset: `1/√d` |" in page
    assert "| `temperature` | number | unset: `√d` |" in page
    assert "| `lr_A` | number | unset: `lr_v` |" in page
    assert "Jelassi et al. (2022), Assumption 1 (FOUND) |" in page  # data.q
    assert "Jelassi et al. (2022), eq. (T) (RECONSTRUCTED) |" in page  # model.activation
    assert '`"population"`, `"empirical"`' in page  # ENGINES
    assert '`"cubic"`, `"quintic"`, or an array of coefficients' in page  # named activations
    assert "2 … 4096 (A is D×D)" in page  # the hard limit of data.D
    # every field whose default is None says what it resolves to
    from theorylab.jelassi2022.config import SECTIONS

    for name, cls in SECTIONS.items():
        for f in fields(cls):
            if f.default is None:
                assert re.search(rf"\| `{f.name}` \| [^|]+ \| unset: `[^`]+` \|", page), name


@dataclass
class _Toy:
    """A toy section (Jelassi et al. (2022), Definition 2.1, FOUND).

    **Arguments:**

    - `a`, `b`: two fields that share a line which goes on
      over two lines (eq. (T), RECONSTRUCTED).
    - `c`: resolved later; default ``2·a``.

    Text after the list.
    """

    a: int = 1
    b: str | list = "x"
    c: float | None = None


@dataclass
class _Undocumented:
    """- `a`: documented."""

    a: int = 1
    b: int = 2


def test_field_docs_and_the_generated_table():
    docs = field_docs(_Toy)
    assert docs == {
        "a": "two fields that share a line which goes on over two lines (eq. (T), RECONSTRUCTED).",
        "b": "two fields that share a line which goes on over two lines (eq. (T), RECONSTRUCTED).",
        "c": "resolved later; default ``2·a``.",
    }
    assert paper_refs(docs["a"]) == (["eq. (T)"], ["RECONSTRUCTED"])
    md = config_markdown({"toy": _Toy}, allowed={"toy.b": "`\"x\"`, `\"y\"`"}, citation="P (1)",
                         title="T", level=3)
    lines = md.splitlines()
    assert lines[0] == "# T" and "### `[toy]`" in lines
    assert "A toy section (Jelassi et al. (2022), Definition 2.1, FOUND)." in lines
    assert ("| `a` | integer | `1` |  | two fields that share a line which goes on over two "
            "lines (eq. (T), RECONSTRUCTED). | P (1), eq. (T) (RECONSTRUCTED) |") in lines
    assert any(x.startswith('| `b` | string or array | `"x"` | `"x"`, `"y"` |') for x in lines)
    assert "| `c` | number | unset: `2·a` |  | resolved later; default `2·a`. | — |" in lines
    with pytest.raises(ValueError, match=r"^toy\.b: no '- `b`: \.\.\.' line in the docstring"):
        config_markdown({"toy": _Undocumented})
