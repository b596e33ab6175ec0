"""``theorylab.sweep``: run a sweep spec (``theorylab.sweep("spec.toml", out="DIR")``) and the
command ``python -m theorylab.sweep SPEC.toml --out DIR``; ``theorylab.load_sweep(DIR)`` reads
the table. The machinery lives in the kernel, [`theorylab.core.sweep`][].

Why a callable module: the issue asks for both ``python -m theorylab.sweep`` (which needs a
package ``theorylab/sweep/`` with a ``__main__``) and ``theorylab.sweep(...)`` in Python. A
module cannot be both a package and a function, so this module's class is replaced by a
``ModuleType`` subclass whose ``__call__`` is [`run`][]: ``theorylab.sweep(...)``,
``theorylab.sweep.run(...)`` and ``from theorylab.sweep import run`` are the same function, and
``python -m theorylab.sweep`` keeps working. (The batched seeds x learning-rates sweep of the
first paper stays ``theorylab.run_sweep``, and is the point type ``point = "batched"`` here.)
"""

from __future__ import annotations

import sys
import types

from theorylab.core.sweep import (
    RESULT_SCHEMA_VERSION,
    SweepSpec,
    call_point,
    load_spec,
    load_sweep,
    run_points,
)
from theorylab.core.sweep import run_sweep_spec as run
from theorylab.core.sweep.spec import register_papers

__all__ = ["RESULT_SCHEMA_VERSION", "SweepSpec", "call_point", "load_spec", "load_sweep", "run",
           "run_points"]


def _papers():
    from theorylab.papers import DEFAULT_PAPER, PAPERS

    return PAPERS, DEFAULT_PAPER


register_papers(_papers)  # the kernel's sweep reaches the papers only through this


class _CallableModule(types.ModuleType):
    def __call__(self, *args, **kwargs):
        return run(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
