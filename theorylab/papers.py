"""The papers the entry points know: one line per paper.

``python -m theorylab.run``, ``python -m theorylab.check`` and ``python -m theorylab.figures``
reach the papers only through [`PAPERS`][]. To add a paper: write ``theorylab/<name>/`` with a
``PAPER`` ([`theorylab.core.paper.Paper`][]) and add it here.
"""

from __future__ import annotations

from theorylab.core.paper import Paper
from theorylab.huang2024 import PAPER as _HUANG2024
from theorylab.jelassi2022 import PAPER as _JELASSI2022

#: name → paper, in the order the entry points list them.
PAPERS: dict[str, Paper] = {p.name: p for p in (_JELASSI2022, _HUANG2024)}

#: The paper of a run config without ``[experiment] paper`` (every config written before
#: the second paper).
DEFAULT_PAPER = "jelassi2022"

__all__ = ["DEFAULT_PAPER", "PAPERS", "get_paper", "load_all_figures"]


def get_paper(name: str) -> Paper:
    """The paper called ``name`` (``ValueError`` naming the known papers otherwise)."""
    try:
        return PAPERS[name]
    except KeyError:
        raise ValueError(f"unknown paper {name!r} (known: {list(PAPERS)})") from None


def load_all_figures() -> None:
    """Import every paper's figure modules (they register their figures)."""
    for paper in PAPERS.values():
        paper.load_figures()
