"""The papers the entry points know: [`PAPERS`][], and how a paper gets in.

``theorylab run``, ``check``, ``figures``, ``sweep``, ``bench`` and ``config`` reach the papers
only through [`PAPERS`][] (name → [`theorylab.core.paper.Paper`][]); importing this module also
hands the registry to the kernel's sweep. Three ways in, none of which edits the kernel
(docs/adding-a-paper.md):

- the papers of this package, listed below (``theorylab/<name>/`` with a ``PAPER``);
- an installed package that declares an entry point in the group ``theorylab.papers``
  (``[project.entry-points."theorylab.papers"] mypaper = "mypkg.mypaper:PAPER"`` in its
  ``pyproject.toml``): loaded when this module is imported, in every process (Dask workers too);
- [`register`][] at run time, in this process (a script, a notebook, a test).

A paper that fails (its module raises at import, even ``SystemExit``; its claims, figures or
config reference raise) is reported in one line naming it, on stderr, and left out: the
commands go on with the other papers ([`paper_claims`][], [`load_all_figures`][],
[`paper_config_doc`][]).
"""

from __future__ import annotations

import sys
from importlib.metadata import entry_points

from theorylab.core.faults import deferred_signals, interrupt_by_hand
from theorylab.core.paper import Paper
from theorylab.core.sweep.spec import register_papers
from theorylab.huang2024 import PAPER as _HUANG2024
from theorylab.jelassi2022 import PAPER as _JELASSI2022

#: name → paper, in the order the entry points list them.
PAPERS: dict[str, Paper] = {p.name: p for p in (_JELASSI2022, _HUANG2024)}

#: The paper of a run config without ``[experiment] paper`` (every config written before
#: the second paper).
DEFAULT_PAPER = "jelassi2022"

#: The entry-point group through which an installed package adds its papers.
ENTRY_POINT_GROUP = "theorylab.papers"

#: The papers of this package: never replaced or removed.
BUILT_IN = tuple(PAPERS)

__all__ = ["DEFAULT_PAPER", "ENTRY_POINT_GROUP", "PAPERS", "get_paper", "load_all_figures",
           "load_entry_points", "paper_claims", "paper_config_doc", "register", "unregister"]

_REPORTED: set[tuple[str, str]] = set()


def _report(paper: Paper, what: str, err: BaseException) -> None:
    """One line on stderr, once per paper and hook: ``paper NAME: its WHAT could not be loaded
    (Error: message); left out``."""
    key = (paper.name, what)
    if key in _REPORTED:
        return
    _REPORTED.add(key)
    text = " ".join(str(err).split())[:200]
    print(f"paper {paper.name}: its {what} could not be loaded ({type(err).__name__}: {text}); "
          "left out", file=sys.stderr)


def paper_claims(paper: Paper) -> dict:
    """``paper.load_claims()``, or ``{}`` (reported in one line) when it raises."""
    try:
        with deferred_signals():  # the claims' libraries are never interrupted mid-import
            return dict(paper.load_claims())
    except (Exception, SystemExit) as err:
        _report(paper, "claims", err)
        return {}


def paper_config_doc(paper: Paper) -> str | None:
    """``paper.config_doc()`` (None when the paper has none), or None (reported in one line)
    when it raises."""
    if paper.config_doc is None:
        return None
    try:
        return paper.config_doc()
    except (Exception, SystemExit) as err:
        _report(paper, "config reference", err)
        return None


def _load_figures(paper: Paper) -> None:
    try:
        with deferred_signals():
            paper.load_figures()
    except (Exception, SystemExit) as err:
        _report(paper, "figures", err)


def get_paper(name: str) -> Paper:
    """The paper called ``name`` (``ValueError`` naming the known papers otherwise)."""
    try:
        return PAPERS[name]
    except KeyError:
        raise ValueError(f"unknown paper {name!r} (known: {list(PAPERS)})") from None


def register(paper: Paper, *, replace: bool = False) -> Paper:
    """Add ``paper`` to [`PAPERS`][]: from then on every entry point of this process knows it
    (``run`` takes configs with ``[experiment] paper = "<name>"``, ``check`` its claims,
    ``figures`` its figures, ``sweep`` its configs). Returns ``paper``.

    ``ValueError`` when it is not a `Paper`, when its name is a paper of this package, or when
    another paper has its name (unless ``replace``). Registering the same object twice is
    harmless."""
    if not isinstance(paper, Paper):
        raise ValueError(f"paper: must be a theorylab.core.paper.Paper (got "
                         f"{type(paper).__name__})")
    if paper.name in BUILT_IN and PAPERS.get(paper.name) is not paper:
        raise ValueError(f"paper: {paper.name!r} is a paper of theorylab; choose another name")
    if PAPERS.get(paper.name, paper) is not paper and not replace:
        raise ValueError(f"paper: another paper is registered as {paper.name!r} (pass "
                         f"replace=True to replace it)")
    PAPERS[paper.name] = paper
    _load_figures_if_loaded(paper)
    return paper


def unregister(name: str) -> Paper:
    """Remove the registered paper ``name`` and its figures (``ValueError`` for an unknown
    name or a paper of this package). Returns the paper."""
    if name in BUILT_IN:
        raise ValueError(f"paper: {name!r} is a paper of theorylab and cannot be removed")
    if name not in PAPERS:
        raise ValueError(f"paper: no paper registered as {name!r} (known: {list(PAPERS)})")
    from theorylab.core.figures import list_figures
    from theorylab.core.figures import unregister as drop_figure

    for spec in list_figures():
        if spec.paper == name:
            drop_figure(spec.id)
    return PAPERS.pop(name)


_FIGURES_LOADED = {"done": False}


def load_all_figures() -> None:
    """Import every paper's figure modules (they register their figures); papers registered
    later load theirs when they are registered."""
    for paper in PAPERS.values():
        _load_figures(paper)
    _FIGURES_LOADED["done"] = True


def _load_figures_if_loaded(paper: Paper) -> None:
    if _FIGURES_LOADED["done"]:
        _load_figures(paper)


def load_entry_points() -> list[str]:
    """Register the papers that installed packages declare in [`ENTRY_POINT_GROUP`][]; returns
    their names. One that cannot be loaded (whatever it raises, ``SystemExit`` included), or is
    not a `Paper`, is left out with one line on stderr naming it."""
    names = []
    for ep in entry_points(group=ENTRY_POINT_GROUP):
        try:
            paper = ep.load()
            if PAPERS.get(getattr(paper, "name", None)) is not paper:
                register(paper)
        except (Exception, SystemExit, KeyboardInterrupt) as err:  # a broken plug-in must
            # not stop the package; a Ctrl-C (a signal, not the plug-in's own raise) does
            if isinstance(err, KeyboardInterrupt) and not interrupt_by_hand():
                raise
            text = " ".join(str(err).split())[:200]
            print(f"{ENTRY_POINT_GROUP}: entry point {ep.name!r} ({ep.value}) not loaded "
                  f"({type(err).__name__}: {text}); left out", file=sys.stderr)
            continue
        names.append(paper.name)
    return names


def _registry():
    return PAPERS, DEFAULT_PAPER


load_entry_points()
register_papers(_registry)  # the kernel's sweep reaches the papers only through this
