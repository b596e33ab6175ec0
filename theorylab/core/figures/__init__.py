"""The figure machinery every paper uses: a registry of figure functions and the runner that
renders them (PDF + PNG) and keeps ``<out>/manifest.json`` up to date.

A paper's figure modules decorate their functions with [`register`][] (see
[`theorylab.core.figures.registry`][]); ``python -m theorylab.figures`` loads every paper's
figures and runs them.
"""

from theorylab.core.figures.registry import (
    DPI,
    FigureContext,
    FigureResult,
    FigureSpec,
    figure_theme,
    get_figure,
    list_figures,
    new_figure,
    register,
    save_figure,
)
from theorylab.core.figures.runner import (
    MANIFEST_KEYS,
    MANIFEST_NAME,
    package_version,
    read_manifest,
    run_figures,
)

__all__ = [
    "DPI",
    "MANIFEST_KEYS",
    "MANIFEST_NAME",
    "FigureContext",
    "FigureResult",
    "FigureSpec",
    "figure_theme",
    "get_figure",
    "list_figures",
    "new_figure",
    "package_version",
    "read_manifest",
    "register",
    "run_figures",
    "save_figure",
]
