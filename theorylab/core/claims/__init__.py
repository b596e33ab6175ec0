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
from .claim import (
    BRIEF_MAX,
    HEADLINE_MAX,
    KINDS,
    VERDICTS,
    Claim,
    ClaimResult,
    lookup_claim,
    markdown_table,
    point_rows,
)
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
from .referee import near_counterfactuals, quote_problem, referee_problems, separation
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
from .verdict import (
    MIN_FIT_POINTS,
    Reported,
    Verdict,
    combine,
    ladder_threshold,
    loglog_fit,
    strictly_increasing,
)

__all__ = [
    "CORRECTIONS",
    "NEAR_TOLERANCES",
    "Settlement",
    "band_verdict",
    "judge_band",
    "judge_settled",
    "settle",
    "settled_verdict",
    "LEGACY_SOURCES",
    "SIDES",
    "dropped_parts",
    "near_counterfactuals",
    "quote_problem",
    "referee_problems",
    "separation",
    "INTERVAL_METHODS",
    "IntervalMethod",
    "interval_coverage",
    "calibrated_level",
    "Reported",
    "BRIEF_MAX",
    "HEADLINE_MAX",
    "PREDICTION_SOURCES",
    "READING_SOURCES",
    "SCALES",
    "Counterfactual",
    "Prediction",
    "Reading",
    "Variant",
    "can_fail_cell",
    "counterfactual_table",
    "readings_cell",
    "resolution",
    "KINDS",
    "SOURCES",
    "Premise",
    "Threshold",
    "bootstrap_interval",
    "format_interval",
    "is_robust",
    "log_t_interval",
    "premises_verdict",
    "sensitivity",
    "t_interval",
    "threshold_values",
    "wilson_interval",
    "MIN_FIT_POINTS",
    "VERDICTS",
    "Claim",
    "ClaimResult",
    "Verdict",
    "combine",
    "ladder_threshold",
    "loglog_fit",
    "lookup_claim",
    "markdown_table",
    "point_rows",
    "render_markdown",
    "strictly_increasing",
    "write_result",
]
