"""The papers the kernel and the commands know: [`PAPERS`][] (name →
[`Paper`][theorylab.core.paper.Paper]).

A paper gets in one of two ways, neither of which edits the kernel (docs/adding-a-paper.md):

- an installed package declares it in the entry-point group [`ENTRY_POINT_GROUP`][]
  (``[project.entry-points."theorylab.papers"] mypaper = "mypkg.mypaper:PAPER"`` in its
  ``pyproject.toml``; this package declares its own papers the same way): loaded on the first
  call of [`papers`][], [`get_paper`][] or [`default_paper`][], in every process (Dask workers
  too);
- [`register`][] at run time, in this process (a script, a notebook, a test).

The papers this package declares (entry points into its own modules) are never replaced or
removed. The paper with ``Paper.default`` takes the run configs that name no paper and is
listed first; the others follow in the order of their entry points. A paper that fails (its
module raises at import, even ``SystemExit``; its claims, figures or config reference raise)
is reported in one line naming it, on stderr, and left out: the commands go on with the other
papers ([`paper_claims`][], [`load_all_figures`][], [`paper_config_doc`][]).
"""

from __future__ import annotations

import functools
import sys
from collections.abc import Callable
from importlib.metadata import distributions
from typing import Any

from .faults import deferred_signals, interrupt_by_hand
from .paper import Paper

__all__ = ["ENTRY_POINT_GROUP", "PAPERS", "built_in", "default_paper", "get_paper",
           "load_all_figures", "load_entry_points", "paper_claims", "paper_config_doc", "papers",
           "register", "unregister"]

#: The entry-point group through which an installed package adds its papers.
ENTRY_POINT_GROUP = "theorylab.papers"

#: name → paper: the default paper first, then in the order they were registered. Read it
#: through [`papers`][] (which loads the installed papers first).
PAPERS: dict[str, Paper] = {}

#: The top-level package of the kernel: entry points into it declare this package's papers.
_PACKAGE = __name__.partition(".")[0]
_OWN: set[str] = set()
_REPORTED: set[tuple[str, str]] = set()
#: The papers whose figure modules were loaded ([`load_all_figures`][]).
_FIGURES_OF: set[str] = set()


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


@functools.cache
def _installed() -> tuple[str, ...]:
    """The installed papers, loaded once per process ([`load_entry_points`][])."""
    names = tuple(load_entry_points())
    if not _OWN:  # the package's own entry points are written when it is installed
        print(f"{ENTRY_POINT_GROUP}: no paper of {_PACKAGE} is installed (install the package: "
              "pip install -e .)", file=sys.stderr)
    return names


def papers() -> dict[str, Paper]:
    """[`PAPERS`][], with the installed papers loaded."""
    _installed()
    return PAPERS


def built_in() -> tuple[str, ...]:
    """The papers this package declares (never replaced or removed)."""
    _installed()
    return tuple(n for n in PAPERS if n in _OWN)


def default_paper() -> str:
    """The paper of a run config without ``[experiment] paper`` (the one with
    ``Paper.default``, else the first registered; "" when none is)."""
    listed = papers()
    return next((n for n, p in listed.items() if p.default), next(iter(listed), ""))


def get_paper(name: str) -> Paper:
    """The paper called ``name`` (``ValueError`` naming the known papers otherwise)."""
    try:
        return papers()[name]
    except (KeyError, TypeError):
        raise ValueError(f"paper: unknown paper {name!r} (known: {list(PAPERS)})") from None


def _loaded(paper: Paper, what: str, load: Callable[[], Any], default: Any = None) -> Any:
    """``load()`` (a hook of `paper` that imports its modules; signals deferred to its end so
    that no library is interrupted mid-import), or `default` when it raises (reported in one
    line: [`_report`][])."""
    try:
        with deferred_signals():
            return load()
    except (Exception, SystemExit) as err:
        _report(paper, what, err)
        return default


def paper_claims(paper: Paper) -> dict:
    """``paper.load_claims()``, or ``{}`` (reported in one line) when it raises."""
    return _loaded(paper, "claims", lambda: dict(paper.load_claims()), {})


def paper_config_doc(paper: Paper) -> str | None:
    """``paper.config_doc()`` (None when the paper has none), or None (reported in one line)
    when it raises."""
    if paper.config_doc is None:
        return None
    return _loaded(paper, "config reference", paper.config_doc)


def _load_figures(paper: Paper) -> None:
    _loaded(paper, "figures", paper.load_figures)
    _FIGURES_OF.add(paper.name)


def register(paper: Paper, *, replace: bool = False) -> Paper:
    """Add ``paper`` to [`PAPERS`][]: from then on every entry point of this process knows it
    (``run`` takes configs with ``[experiment] paper = "<name>"``, ``check`` its claims,
    ``figures`` its figures, ``sweep`` its configs). Returns ``paper``.

    ``ValueError`` when it is not a `Paper`, when its name is a paper of this package, when
    another paper has its name (unless ``replace``) or it claims ``default`` beside another
    default paper. Registering the same object twice is harmless."""
    _installed()
    return _add(paper, replace)


def _add(paper: Paper, replace: bool = False) -> Paper:
    if not isinstance(paper, Paper):
        raise ValueError(f"paper: must be a theorylab.core.paper.Paper (got "
                         f"{type(paper).__name__})")
    if paper.name in _OWN and PAPERS.get(paper.name) is not paper:
        raise ValueError(f"paper: {paper.name!r} is a paper of theorylab; choose another name")
    if PAPERS.get(paper.name, paper) is not paper and not replace:
        raise ValueError(f"paper: another paper is registered as {paper.name!r} (pass "
                         f"replace=True to replace it)")
    other = [n for n, p in PAPERS.items() if p.default and n != paper.name]
    if paper.default and other:
        raise ValueError(f"paper: {paper.name!r} is marked default, and so is {other[0]!r}")
    PAPERS[paper.name] = paper
    if paper.default:  # listed first
        PAPERS.update({n: PAPERS.pop(n) for n in list(PAPERS) if n != paper.name})
    if _FIGURES_OF:
        _load_figures(paper)
    return paper


def unregister(name: str) -> Paper:
    """Remove the registered paper ``name`` and its figures (``ValueError`` for an unknown
    name or a paper of this package). Returns the paper."""
    _installed()
    if name in _OWN:
        raise ValueError(f"paper: {name!r} is a paper of theorylab and cannot be removed")
    if name not in PAPERS:
        raise ValueError(f"paper: no paper registered as {name!r} (known: {list(PAPERS)})")
    from .figures import list_figures
    from .figures import unregister as drop_figure

    for spec in list_figures():
        if spec.paper == name:
            drop_figure(spec.id)
    _FIGURES_OF.discard(name)
    return PAPERS.pop(name)


def load_all_figures() -> None:
    """Import every paper's figure modules (they register their figures); papers registered
    later load theirs when they are registered."""
    for paper in papers().values():
        _load_figures(paper)


def group_entry_points() -> list:
    """The entry points of [`ENTRY_POINT_GROUP`][] over every distribution on the path, each
    (name, target) once. ``importlib.metadata.entry_points`` keeps only the first distribution
    of each name, so the metadata folder of an older install left in a checkout (a
    ``*.egg-info`` found first when Python starts there) would hide the papers of the install
    that is really used."""
    found: dict[tuple[str, str], object] = {}
    for dist in distributions():
        for ep in dist.entry_points:
            if ep.group == ENTRY_POINT_GROUP:
                found.setdefault((ep.name, ep.value), ep)
    return list(found.values())


def load_entry_points() -> list[str]:
    """Register the papers that installed packages declare in [`ENTRY_POINT_GROUP`][]; returns
    their names. One that cannot be loaded (whatever it raises, ``SystemExit`` included), or is
    not a `Paper`, is left out with one line on stderr naming it."""
    names = []
    for ep in group_entry_points():
        try:
            paper = ep.load()
            if PAPERS.get(getattr(paper, "name", None)) is not paper:
                _add(paper)
        except (Exception, SystemExit, KeyboardInterrupt) as err:  # a broken plug-in must
            # not stop the package; a Ctrl-C (a signal, not the plug-in's own raise) does
            if isinstance(err, KeyboardInterrupt) and not interrupt_by_hand():
                raise
            text = " ".join(str(err).split())[:200]
            print(f"{ENTRY_POINT_GROUP}: entry point {ep.name!r} ({ep.value}) not loaded "
                  f"({type(err).__name__}: {text}); left out", file=sys.stderr)
            continue
        if ep.module.partition(".")[0] == _PACKAGE:
            _OWN.add(paper.name)
        names.append(paper.name)
    return names
