"""The figures of every registered paper: ``python -m theorylab.figures`` (see ``--help``) or
[`run_figures`][theorylab.core.figures.run_figures].

Importing this package loads every paper's figure modules (``theorylab.papers``), so
[`list_figures`][theorylab.core.figures.list_figures] lists them all. The machinery (registry,
runner, manifest) is the kernel's [`theorylab.core.figures`][]; a paper registers its figures
with [`register`][theorylab.core.figures.register] in its own subpackage.
"""

from theorylab.core import figures as _core
from theorylab.core.figures import *  # noqa: F403  (the kernel's figure API, re-exported)
from theorylab.papers import load_all_figures

load_all_figures()

__all__ = list(_core.__all__)
