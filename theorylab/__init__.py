"""theorylab: numerical verification of deep-learning theory.

The kernel ([`theorylab.core`][]) holds what every paper shares; each paper has one subpackage
(``theorylab.jelassi2022``: Jelassi, Sander & Li (2022), "Vision Transformers provably learn
spatial structure"; ``theorylab.huang2024``: Huang, Wen, Chi & Liang (2025), "A Theoretical
Analysis of Self-Supervised Learning for Vision Transformers"); [`theorylab.vision`][] holds the
real-image side; [`theorylab.commands`][] the ``theorylab`` command, one module per subcommand.
The names below are the first paper's public API, re-exported so that ``from theorylab import
run_experiment`` keeps working, with ``sweep(spec, out=DIR)`` (a sweep spec of any paper,
[`run_sweep_spec`][theorylab.core.sweep.run_sweep_spec]) and ``load_sweep(DIR)``;
``theorylab.papers.PAPERS`` lists the papers the commands know.

``import theorylab`` itself is cheap: each re-exported name is imported on first use (the first
paper's modules, with pandas and scipy, when one of its names is first read; numba, torch,
Dask, matplotlib and seaborn only by the code that needs them). ``benchmarks/import_time.py``
measures it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from theorylab.core import __version__ as __version__

if TYPE_CHECKING:  # what the names are, for type checkers and the API reference
    from theorylab.core.backend import get_backend  # noqa: F401
    from theorylab.core.sweep import run_sweep_spec as sweep  # noqa: F401
    from theorylab.core.sweep.store import load_sweep  # noqa: F401
    from theorylab.jelassi2022 import *  # noqa: F403


def _first_paper():
    import theorylab.jelassi2022  # (``from theorylab import`` would ask __getattr__ again)

    return theorylab.jelassi2022


def _first_paper_names() -> list[str]:
    return [n for n in _first_paper().__all__ if not n.startswith("PAPER")]


def __getattr__(name: str):
    """The re-exported names, imported on first use (PEP 562); a paper's subpackage not
    imported yet is imported by the registry."""
    if name.startswith("_") and name != "__all__":  # (probes such as __wrapped__ import nothing)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if name == "__all__":
        value = [*_first_paper_names(), "get_backend", "load_sweep", "sweep", "__version__"]
    elif name == "get_backend":
        from theorylab.core.backend import get_backend as value
    elif name == "load_sweep":
        from theorylab.core.sweep.store import load_sweep as value
    elif name == "sweep":
        from theorylab.core.sweep import run_sweep_spec as value
    elif name in _first_paper_names():
        value = getattr(_first_paper(), name)
    else:  # a paper's subpackage: the registry imports it
        from theorylab.core.registry import papers

        if name not in papers() or name not in globals():
            raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
        return globals()[name]
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__getattr__("__all__")})
