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

from . import claim, verdict
from .bands import (
    CORRECTIONS,
    NEAR_TOLERANCES,
    Settlement,
    band_verdict,
    judge_band,
    judge_settled,
    settle,
    settled_verdict,
)
from .claim import *  # noqa: F403  (the declared claim and its result)
from .claim import BRIEF_MAX, HEADLINE_MAX
from .readings import (
    LEGACY_SOURCES,
    PREDICTION_SOURCES,
    READING_SOURCES,
    SCALES,
    SIDES,
    Counterfactual,
    Prediction,
    Reading,
    Variant,
    can_fail_cell,
    counterfactual_table,
    dropped_parts,
    readings_cell,
    resolution,
)
from .referee import (
    near_counterfactuals,
    quote_problem,
    referee_problems,
    separation,
    wrong_sides,
)
from .report import render_markdown, write_result
from .robustness import (
    INTERVAL_METHODS,
    SOURCES,
    IntervalMethod,
    Premise,
    Threshold,
    bootstrap_interval,
    calibrated_level,
    format_interval,
    interval_coverage,
    is_robust,
    log_t_interval,
    premises_verdict,
    sensitivity,
    t_interval,
    threshold_values,
    wilson_interval,
)
from .verdict import *  # noqa: F403  (the pure verdict helpers)

__all__ = [*claim.__all__, *verdict.__all__, "band_verdict", "bootstrap_interval", "BRIEF_MAX",
           "calibrated_level", "can_fail_cell", "CORRECTIONS", "Counterfactual",
           "counterfactual_table", "dropped_parts", "format_interval", "HEADLINE_MAX",
           "interval_coverage", "INTERVAL_METHODS", "IntervalMethod", "is_robust", "judge_band",
           "judge_settled", "LEGACY_SOURCES", "log_t_interval", "near_counterfactuals",
           "NEAR_TOLERANCES", "Prediction", "PREDICTION_SOURCES", "Premise", "premises_verdict",
           "quote_problem", "Reading", "READING_SOURCES", "readings_cell", "referee_problems",
           "render_markdown", "resolution", "SCALES", "sensitivity", "separation", "settle",
           "settled_verdict", "Settlement", "SIDES", "SOURCES", "t_interval", "Threshold",
           "threshold_values", "Variant", "wilson_interval", "write_result", "wrong_sides"]
