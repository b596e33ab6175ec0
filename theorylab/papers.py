"""The papers the entry points know: [`PAPERS`][], the face of the kernel's registry
([`theorylab.core.registry`][]), with the installed papers loaded.

``theorylab run``, ``check``, ``figures``, ``sweep``, ``bench`` and ``config`` reach the papers
only through [`PAPERS`][] (name → [`theorylab.core.paper.Paper`][]). This package declares its
own papers in ``pyproject.toml`` (``[project.entry-points."theorylab.papers"]``) like any
installed package; [`register`][] adds one at run time (docs/adding-a-paper.md).
"""

from __future__ import annotations

from theorylab.core.registry import (
    ENTRY_POINT_GROUP,
    PAPERS,
    built_in,
    default_paper,
    get_paper,
    load_all_figures,
    load_entry_points,
    paper_claims,
    paper_config_doc,
    papers,
    register,
    unregister,
)

papers()

#: The paper of a run config without ``[experiment] paper`` (every config written before
#: the second paper).
DEFAULT_PAPER = default_paper()

#: The papers of this package: never replaced or removed.
BUILT_IN = built_in()

__all__ = ["BUILT_IN", "DEFAULT_PAPER", "ENTRY_POINT_GROUP", "PAPERS", "get_paper",
           "load_all_figures", "load_entry_points", "paper_claims", "paper_config_doc",
           "register", "unregister"]
