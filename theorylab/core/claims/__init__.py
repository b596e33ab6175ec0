"""The claim machinery every paper uses: [`Claim`][], [`ClaimResult`][], verdict helpers and the
results page writer.

A paper lists its claims (``theorylab.<paper>.claims.CLAIMS``); ``python -m theorylab check``
runs them (the kernel's [`run_checks`][theorylab.core.claims.runner.run_checks]) and writes
``docs/results/<paper>/<id>.md``/``.csv``/``.png``. Besides its thresholds, a claim declares
what it could detect (predictions and the counterfactuals it must reject) and which reading of
the paper it holds for (variants): [`theorylab.core.claims.readings`][]. Each prediction names
its source (the paper's sentence, our derivation or a heuristic), its two-sided band and, for a
limit read off a ladder, its correction form ([`theorylab.core.claims.bands`][]);
[`theorylab.core.claims.referee`][] lists the rules a claim still breaks.
"""

from . import bands, claim, readings, referee, report, robustness, verdict
from .bands import *  # noqa: F403  (bands, settlement, the judges of a declared prediction)
from .claim import *  # noqa: F403  (the declared claim and its result)
from .readings import *  # noqa: F403  (readings, predictions, counterfactuals, resolution)
from .referee import *  # noqa: F403  (the rules a verdict must pass)
from .report import *  # noqa: F403  (the results page)
from .robustness import *  # noqa: F403  (thresholds, sensitivity, premises, intervals)
from .verdict import *  # noqa: F403  (the pure verdict helpers)

__all__ = [*bands.__all__, *claim.__all__, *readings.__all__, *referee.__all__,
           *report.__all__, *robustness.__all__, *verdict.__all__]
