"""theorylab's kernel: what every paper shares.

- [`backend`][theorylab.core.backend]: numpy / torch (CPU, CUDA) array backends;
- [`atomic_io`][theorylab.core.atomic_io]: atomic file output;
- [`config`][theorylab.core.config]: field validators and TOML in and out;
- [`engine`][theorylab.core.engine] and [`trainer`][theorylab.core.trainer]: the engine
  interface and the gradient-descent loop (recording, checkpoints, resume, divergence stop);
- [`claims`][theorylab.core.claims]: claims, verdicts and results pages;
- [`figures`][theorylab.core.figures]: the figure registry and runner;
- [`paper`][theorylab.core.paper]: the [`Paper`][theorylab.core.paper.Paper] object through
  which the entry points reach a paper.

The kernel imports no paper (a test walks the imports).
"""

__version__ = "0.1.0"
