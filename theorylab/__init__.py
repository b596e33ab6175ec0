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

import importlib
from typing import TYPE_CHECKING

from theorylab.core import __version__ as __version__

if TYPE_CHECKING:  # what the names are, for type checkers and the API reference
    from theorylab.core.backend import get_backend  # noqa: F401
    from theorylab.core.sweep import run_sweep_spec as sweep  # noqa: F401
    from theorylab.core.sweep.store import load_sweep  # noqa: F401
    from theorylab.jelassi2022 import *  # noqa: F403

#: name → module of the names re-exported here besides the first paper's API
_OWN = {"get_backend": "theorylab.core.backend", "load_sweep": "theorylab.core.sweep.store",
        "sweep": "theorylab.core.sweep"}
_FIRST_PAPER = "theorylab.jelassi2022"


def _first_paper_names() -> list[str]:
    first = importlib.import_module(_FIRST_PAPER)
    return [n for n in first.__all__ if not n.startswith("PAPER")]


def __getattr__(name: str):
    """The re-exported names, imported on first use (PEP 562)."""
    if name == "__all__":
        value = [*_first_paper_names(), "get_backend", "load_sweep", "sweep", "__version__"]
    elif name in _OWN:
        importlib.import_module("theorylab.papers")  # registers the papers with the kernel
        module = importlib.import_module(_OWN[name])
        value = module.run_sweep_spec if name == "sweep" else getattr(module, name)
    elif name in _first_paper_names():
        importlib.import_module("theorylab.papers")
        value = getattr(importlib.import_module(_FIRST_PAPER), name)
    else:
        try:  # a subpackage or module not imported yet: theorylab.jelassi2022, ...
            return importlib.import_module(f"{__name__}.{name}")
        except ModuleNotFoundError as err:
            if err.name != f"{__name__}.{name}":
                raise
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *__getattr__("__all__")})
