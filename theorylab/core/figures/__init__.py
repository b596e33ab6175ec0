"""The figure machinery every paper uses: a registry of figure functions and the runner that
renders them (PDF + PNG) and keeps ``<out>/manifest.json`` up to date, and the axes set-up
the figures share ([`theorylab.core.figures.axes`][]).

A paper's figure modules decorate their functions with [`register`][] (see
[`theorylab.core.figures.registry`][]); ``python -m theorylab figures`` loads every paper's
figures and runs them.
"""

from theorylab.core.figures import axes as _axes
from theorylab.core.figures import registry as _registry
from theorylab.core.figures import runner as _runner
from theorylab.core.figures.axes import *  # noqa: F403
from theorylab.core.figures.registry import *  # noqa: F403
from theorylab.core.figures.runner import *  # noqa: F403
from theorylab.core.figures.runner import MANIFEST_KEYS

__all__ = [*_axes.__all__, *_registry.__all__, *_runner.__all__, "MANIFEST_KEYS"]
