"""Paper figures of `theorylab`, each registered under a stable id.

Run them with `python -m theorylab.figures` (see `--help`) or `run_figures(...)`.

To add figures: write a module `theorylab/figures/_<name>.py` whose functions are decorated
with `@register(...)` (see `theorylab.figures._registry`), and add its name to
`_FIGURE_MODULES` below -- one line. A listed module that does not exist yet is skipped, so a
name can be listed before its file lands; any other import error is raised.
"""

import importlib

from theorylab.figures._registry import (
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
from theorylab.figures._runner import MANIFEST_KEYS, package_version, read_manifest, run_figures

_FIGURE_MODULES = (
    "_images",  # jelassi2022-fig1a, -fig5, -fig6, -fig7 (Fashion-MNIST / digits stand-ins)
    "_gaussian",  # jelassi2022-fig1b, -fig2 (partitions, Gaussian CNN-teacher data)
    "_synthetic",  # jelassi2022-fig3, -fig4, theorylab-phases, -phase-diagram, -transfer
)


def _import_figure_modules() -> None:
    for name in _FIGURE_MODULES:
        full = f"{__name__}.{name}"
        try:
            importlib.import_module(full)
        except ModuleNotFoundError as err:
            if err.name != full:  # the module exists but one of its imports is missing
                raise


_import_figure_modules()

__all__ = [
    "DPI",
    "MANIFEST_KEYS",
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
