"""The figures of every registered paper: ``python -m theorylab.figures`` (see ``--help``) or
[`run_figures`][theorylab.core.figures.run_figures].

Importing this package loads every paper's figure modules (``theorylab.papers``), so
[`list_figures`][theorylab.core.figures.list_figures] lists them all. The machinery (registry,
runner, manifest) is the kernel's [`theorylab.core.figures`][]; a paper registers its figures
with [`register`][theorylab.core.figures.register] in its own subpackage.
"""

from theorylab.core.figures import (
    DPI,
    MANIFEST_KEYS,
    MANIFEST_NAME,
    FigureContext,
    FigureResult,
    FigureSpec,
    figure_theme,
    get_figure,
    list_figures,
    new_figure,
    package_version,
    read_manifest,
    register,
    run_figures,
    save_figure,
)
from theorylab.papers import load_all_figures

load_all_figures()

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
