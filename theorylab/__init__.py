"""theorylab: numerical verification of deep-learning theory.

The kernel ([`theorylab.core`][]) holds what every paper shares; each paper has one subpackage
(``theorylab.jelassi2022``: Jelassi, Sander & Li (2022), "Vision Transformers provably learn
spatial structure"); [`theorylab.vision`][] holds the real-image side. The names below are the
first paper's public API, re-exported so that ``from theorylab import run_experiment`` keeps
working; ``theorylab.papers.PAPERS`` lists the papers the entry points know.
"""

from theorylab import jelassi2022 as _first_paper
from theorylab import sweep  # noqa: E402  (callable: theorylab.sweep(spec, out=DIR))
from theorylab.core import __version__
from theorylab.core.backend import get_backend
from theorylab.core.sweep.store import load_sweep  # noqa: E402
from theorylab.jelassi2022 import *  # noqa: F403  (the first paper's public API)

__all__ = [n for n in _first_paper.__all__ if not n.startswith("PAPER")] + [
    "get_backend", "load_sweep", "sweep", "__version__"]
