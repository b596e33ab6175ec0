"""The command ``python -m theorylab.bench`` (``theorylab bench``): time the engines.

The harness (timing, device peaks, machine naming, CSV output) is the kernel's
[`theorylab.core.bench`][]; what is timed belongs to a paper: the first paper's engines in
[`theorylab.jelassi2022.bench`][]. This package holds only the command line (``__main__``).
"""
