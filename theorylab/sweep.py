"""``python -m theorylab.sweep ARGS``: the command ``theorylab sweep ARGS``, with the same
flags, output and exit codes (its module: ``theorylab.commands.sweep``).

In Python, ``theorylab.sweep`` is the function ``theorylab.sweep(spec, out=DIR)`` (the kernel's
``run_sweep_spec``): imported, this module puts that function in its place, so that
``import theorylab.sweep`` leaves ``theorylab.sweep(...)`` callable."""

import sys

if __name__ == "__main__":
    from theorylab.commands import run_as_module

    run_as_module("sweep")
else:
    import theorylab

    sys.modules[__name__] = theorylab.__getattr__("sweep")
