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
"""

from theorylab import jelassi2022 as _first_paper
from theorylab import papers as _papers  # noqa: F401  (registers the papers with the kernel)
from theorylab.core import __version__
from theorylab.core.backend import get_backend
from theorylab.core.sweep import run_sweep_spec as sweep
from theorylab.core.sweep.store import load_sweep
from theorylab.jelassi2022 import *  # noqa: F403  (the first paper's public API)

__all__ = [n for n in _first_paper.__all__ if not n.startswith("PAPER")] + [
    "get_backend", "load_sweep", "sweep", "__version__"]
