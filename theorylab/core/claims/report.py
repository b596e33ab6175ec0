"""Writing a claim result: ``<id>.csv`` (+ ``<id>-<extra>.csv``), ``<id>.md`` and ``<id>.png``."""

from __future__ import annotations

import io
import re
from pathlib import Path

from theorylab.core import atomic_io as _io
from theorylab.core.markdown import escape_stray_stars, typeset_formulas
from theorylab.core.provenance import code_line, provenance_line
from theorylab.core.provenance import provenance as _provenance

from .claim import HEADLINE_MAX, KINDS, Claim, ClaimResult, _fmt, cut, markdown_table
from .readings import can_fail_cell, reading_dependent, readings_cell, rejected_count
from .referee import separation, settings_mismatches, weak_lines
from .robustness import judged_rows

__all__ = ["KIND_MEANING", "fragile_thresholds", "headline_cell", "marks",
           "prediction_line", "reading_folder", "render_markdown", "render_readings",
           "render_robustness", "render_separation", "render_sources", "robust_cell",
           "sources_cell", "write_result"]

#: One line per kind, as the pages say it.
KIND_MEANING = {
    "theorem check": "compares the measurement with a statement of the paper and rejects "
                     "declared wrong statements on the same data: evidence for or against the "
                     "paper",
    "derivation check": "tests our own derivation or reduction of the simulated model against "
                        "the engine: it validates what other checks compare with, and is not "
                        "evidence for the paper",
    "sanity check": "verifies a construction or a reduction the theorem rests on; it cannot "
                    "test the whole statement",
    "engine check": "what it checks holds by construction (a symmetry, an identity): it tests "
                    "the code, not the paper",
}
assert set(KIND_MEANING) == set(KINDS)


def render_markdown(claim: Claim, res: ClaimResult, figure_name: str | None = None,
                    made: dict[str, str] | None = None) -> str:
    """The generated results page of one claim; `made` is how the run was made
    ([`theorylab.core.provenance.provenance`][], taken now when None)."""
    mode = "quick" if res.quick else "full"
    made = made or _provenance(res.quick)
    lines = [
        f"# {claim.title}: generated results",
        "",
        f"- **Label:** {claim.label} ({claim.source})",
        f"- **Kind:** {claim.kind}: {KIND_MEANING[claim.kind]}",
        f"- **Statement checked:** {claim.statement}",
        f"- **Measured:** {claim.measured}",
        f"- **Predicted:** {claim.predicted}",
        *([f"- **Not tested here:** {claim.untested}"] if claim.untested else []),
        *render_sources(claim, res),
        f"- **Verdict:** `{res.verdict}` ({mode} run, {res.runtime_s:.1f} s for the whole "
        "check)",
        f"- **Can it fail?** {can_fail_cell(claim.kind, res.verdict, res.counterfactuals)}",
        f"- **Readings:** {readings_cell(res.readings)}",
        f"- **Run:** {provenance_line(made)}",
        code_line([claim.run, claim.judge]),
        "",
        *render_robustness(claim, res),
        *render_readings(claim, res),
        "## Reading",
        "",
        *[f"- {r}" for r in res.reading],
        "",
        "## Headline numbers",
        "",
        "| quantity | value |",
        "|---|---|",
        *[f"| {k} | {_fmt(v)} |" for k, v in res.headline.items()],
        "",
        "## Table",
        "",
        markdown_table(res.table, csv=f"{claim.id}.csv"),
        "",
    ]
    for name, df in res.extra.items():
        if name == "trajectory":
            lines += [f"Trajectory: `{claim.id}-{name}.csv` ({len(df)} rows).", ""]
            continue
        lines += [f"### {name}", "", markdown_table(df, csv=f"{claim.id}-{name}.csv"), ""]
    if figure_name:
        lines += [f"![{claim.id}]({figure_name})", ""]
    return escape_stray_stars(typeset_formulas("\n".join(lines)))


_SIDE_TEXT = {"two": "two-sided", "upper": "one-sided: an upper bound",
              "lower": "one-sided: a lower bound"}


def prediction_line(claim: Claim, p) -> str:
    """One header line on a prediction, generated from its declaration: its source (the
    paper's sentence and the notes' section, the check of a derivation, or a heuristic), its
    band and, for an asymptotic one, its correction form."""
    if p.source == "paper":
        src = (f"paper: \"{p.quote}\" (notes, {p.section})" if p.quote else
               "paper (quote not declared)")
    elif p.source == "derived":
        src = f"derived, checked by `{p.check}`" if p.check else "derived (check not named)"
    else:
        src = "heuristic: our guess, not the paper's"
    if p.legacy_source:
        src += f" [declared as {p.legacy_source!r}]"
    tol = next((t for t in claim.thresholds if t.name == p.tolerance), None)
    band = (f"band ± {tol.value:g} ({tol.name}), {_SIDE_TEXT[p.sides]}" if tol and
            p.scale == "shift" else
            f"band ×/÷ {1 + tol.value:g} ({tol.name}), {_SIDE_TEXT[p.sides]}" if tol else
            "no band declared")
    settle = (f"; extrapolated as {p.settlement.form} in {p.settlement.variable} "
              f"({p.settlement.derivation})" if p.settlement else "")
    weak = f"; **WEAK**: {p.weak}" if p.weak else ""
    return f"  - `{p.name}` = {p.value:g} ({p.meaning}): {src}; {band}{settle}{weak}"


#: The longest quote a summary's ``source`` cell shows.
QUOTE_MAX = 70


def sources_cell(claim: Claim) -> str:
    """The summary's ``source`` cell: the paper's sentence a claim judges (its first ``paper``
    prediction's quote, cut to [`QUOTE_MAX`][] characters, ``(+k)`` for k more), else the
    sources of its predictions (``derived``, ``heuristic``), ``–`` without predictions."""
    preds = getattr(claim, "predictions", ())  # a claim-like object may declare none
    quotes = [p.quote for p in preds if p.source == "paper" and p.quote]
    if quotes:
        q = cut(" ".join(quotes[0].split()), QUOTE_MAX)
        return f"paper: “{q}”" + (f" (+{len(quotes) - 1})" if len(quotes) > 1 else "")
    return ", ".join(dict.fromkeys(p.source for p in preds)) or "–"


def render_sources(claim: Claim, res: ClaimResult) -> list[str]:
    """The header's lines generated from the claim's declarations and the run: each
    prediction's source, band and settlement ([`prediction_line`][]), the settings the code
    used (those of the run when it reports them, with any that differ from the declared ones),
    and the interval method."""
    lines = []
    if claim.predictions:
        lines += ["- **Predictions:**", *[prediction_line(claim, p) for p in claim.predictions]]
    settings = {**claim.settings, **res.settings}
    if settings:
        lines.append("- **Settings (from the code):** " + "; ".join(
            f"{k} = {v}" for k, v in settings.items()))
        bad = settings_mismatches(claim.settings, res.settings)
        if bad:
            lines.append("- **Settings that differ from the declared ones:** " + "; ".join(bad))
    if claim.interval is not None:
        lines.append(f"- **Intervals:** {claim.interval.text()}")
    return lines


def render_separation(claim: Claim, res: ClaimResult) -> list[str]:
    """The page's section on each prediction's resolution against its nearest counterfactual
    on each side ([`separation`][theorylab.core.claims.referee.separation]), with one line per
    WEAK side."""
    if not claim.predictions or res.resolution is None:
        return []
    table = separation(claim.predictions, claim.counterfactuals, claim.values(),
                       res.resolution)
    weak = weak_lines(claim.predictions, table)
    return ["## Separation from the nearest counterfactuals", "",
            "Each prediction's resolution (the change that turns the verdict) against the "
            "distance to its nearest declared counterfactual on each side: a side is WEAK when "
            "the check cannot tell the prediction from it.", "",
            markdown_table(table[["prediction", "side", "counterfactual", "distance",
                                  "resolution", "status"]]), "",
            *[f"- {w}" for w in weak], *([""] if weak else [])]


def render_readings(claim: Claim, res: ClaimResult) -> list[str]:
    """The page's sections on what the check could detect and which reading it holds for:
    the verdict per reading of each variant, the counterfactuals it must reject, and each
    prediction's resolution."""
    lines: list[str] = []
    if claim.variants:
        lines += ["## Verdict per reading", "",
                  "Each RECONSTRUCTED choice that can change the verdict, run one at a time "
                  "around the main reading:", ""]
        for v in claim.variants:
            alts = "; ".join(f"{r.label} ({r.source}"
                             + (f"; run at {r.setting}" if r.setting else "") + ")"
                             for r in v.alternatives)
            lines.append(f"- **{v.name}**: main {v.main.label} ({v.main.source}); "
                         f"alternatives {alts}. {v.reason}")
        lines.append("")
        if res.readings is not None and len(res.readings):
            dep = reading_dependent(res.readings)
            cols = ["choice", "reading", "source", "verdict", "can_fail",
                    *(c for c in ("judged", "reported") if c in res.readings), "brief",
                    "measure_s"]
            lines += [("**The verdict depends on the reading of " + ", ".join(dep) + ".**")
                      if dep else f"Readings: {readings_cell(res.readings)}.", "",
                      markdown_table(res.readings[cols], csv=f"{claim.id}-readings.csv"), ""]
            reasons = [f"- {r.choice} = {r.reading}: {r.reason}"
                       for r in res.readings.itertuples() if not r.main and r.reason]
            lines += [*reasons, ""] if reasons else []
        else:
            lines += ["Alternative readings were not run this time.", ""]
    if claim.counterfactuals:
        k, n = rejected_count(res.counterfactuals)
        lines += ["## Counterfactuals: wrong statements this check must reject", "",
                  f"Rejected (judged `disagrees` on the same tables): {k} of {n}.", ""]
        if res.counterfactuals is not None:
            lines += [markdown_table(res.counterfactuals[["counterfactual", "statement",
                                                          "overrides", "verdict",
                                                          "rejected"]],
                                     csv=f"{claim.id}-counterfactuals.csv"), ""]
    elif claim.kind == "theorem check":
        lines += ["## Counterfactuals", "", "**None declared: nothing shows that this check "
                  "can fail.**", ""]
    if claim.predictions and res.resolution is not None:
        lines += ["## Resolution", "",
                  "The smallest change of each prediction that turns the verdict into "
                  "`disagrees` (or, from `disagrees`, out of it), on the same tables:", "",
                  markdown_table(res.resolution[["prediction", "value", "meaning", "source",
                                                 "target", "change_down", "change_up"]],
                                 csv=f"{claim.id}-resolution.csv"), ""]
        lines += render_separation(claim, res)
    return lines


def marks(claim: Claim, res: ClaimResult) -> str:
    """The warnings that go before a summary headline: ``FRAGILE (NAMES)`` when ×0.5 or ×2 of
    a threshold flips the verdict, ``READING-DEPENDENT (CHOICES)`` when another plausible
    reading changes it, ``CANNOT FAIL`` for a theorem check that rejects none of its
    counterfactuals on decided data."""
    out = []
    if res.robust is False:
        out.append(f"FRAGILE ({', '.join(fragile_thresholds(res))})")
    dep = reading_dependent(res.readings)
    if dep:
        out.append(f"READING-DEPENDENT ({', '.join(dep)})")
    if can_fail_cell(claim.kind, res.verdict, res.counterfactuals).startswith("NO"):
        out.append("CANNOT FAIL")
    return "".join(m + ": " for m in out)


def headline_cell(claim: Claim, res: ClaimResult) -> str:
    """The summary's headline: the [`marks`][] then the result's brief, at most
    [`HEADLINE_MAX`][theorylab.core.claims.claim.HEADLINE_MAX] characters (the page holds
    every number)."""
    return cut(marks(claim, res) + res.short(), HEADLINE_MAX)


def fragile_thresholds(res: ClaimResult) -> list[str]:
    """The judged thresholds whose ×0.5 or ×2 changes the verdict."""
    judged = judged_rows(res.sensitivity)
    return list(judged[~judged.robust.astype(bool)].threshold)


def robust_cell(res: ClaimResult) -> str:
    """The summary's ``robust?`` cell: ``yes``, ``no (NAME, ...)`` naming the thresholds whose
    ×0.5 or ×2 flips the verdict, or ``–`` without a judged threshold."""
    r = res.robust
    if r is None:
        return "–"
    return "yes" if r else "no (" + ", ".join(fragile_thresholds(res)) + ")"


def _flip_text(x) -> str:
    return "none within ×100" if not isinstance(x, (int, float)) or x != x else _fmt(x)


def render_robustness(claim: Claim, res: ClaimResult) -> list[str]:
    """The page's lines on what the verdict rests on: the RECONSTRUCTED part, the premises,
    the seeds, and the declared thresholds with their sources, reasons and flip points."""
    lines: list[str] = []
    if claim.reconstructed:
        lines.append(f"- **Rests on a RECONSTRUCTED formula:** {claim.reconstructed}")
    if claim.premises:
        lines.append("- **Premises (a failed one gives `inconclusive`):** "
                     + "; ".join(claim.premises) + ".")
    lines.append(f"- **Seeds:** {claim.seeds or 'none: exact and deterministic'}")
    r = res.robust
    if r is not None:
        names = ", ".join(fragile_thresholds(res))
        lines.append("- **Robust?** " + ("yes: the verdict is the same at ×0.5 and ×2 of every "
                                         "threshold" if r else
                                         f"**no, fragile**: {names} flips it within ×0.5–×2"))
    if not claim.thresholds:
        return lines + [""]
    sens = res.sensitivity
    by = {} if sens is None else {row.threshold: row for row in sens.itertuples()}
    lines += ["", "## Declared thresholds", "",
              "| threshold | value | source | reason | enters as | verdict ×0.5 | verdict ×2 | "
              "flips below at | flips above at |", "|---|---|---|---|---|---|---|---|---|"]
    for t in claim.thresholds:
        row = by.get(t.name)
        if row is None or not t.judged:
            cells = ["rerun"] * 2 + ["needs a rerun (enters the measurement)"] * 2
        else:
            cells = [f"`{row.verdict_half}`", f"`{row.verdict_double}`",
                     _flip_text(row.flip_below), _flip_text(row.flip_above)]
        free = [str(x).replace("|", "\\|") for x in (t.source, t.reason, t.role or "–")]
        lines.append(f"| {t.name} | {_fmt(t.value)} | " + " | ".join(free + cells) + " |")
    return lines + [""]


def write_result(claim: Claim, res: ClaimResult, out: str | Path, figures: bool = True,
                 made: dict[str, str] | None = None) -> None:
    """Write the result files of one claim into `out` (atomically); `made`: see
    [`render_markdown`][]."""
    out = Path(out)
    _io.write_csv(out / f"{claim.id}.csv", res.table)
    made_from_verdict = ("sensitivity", "counterfactuals", "resolution", "readings")
    for name, df in [*res.extra.items(), *((n, getattr(res, n)) for n in made_from_verdict)]:
        if df is not None:
            _io.write_csv(out / f"{claim.id}-{name}.csv", df)
    for (choice, value), vres in res.variant_results.items():
        folder = reading_folder(out, claim.id, choice, value)
        for name, df in vres.tables.items():
            _io.write_csv(folder / f"{name}.csv", df)
    fig_name = None
    if figures and res.figure is not None:
        import matplotlib

        matplotlib.use("Agg")
        from matplotlib.figure import Figure

        fig = Figure(figsize=claim.figsize)
        res.figure(fig)
        fig.tight_layout()
        buf = io.BytesIO()
        fig.savefig(buf, format="png", dpi=100, metadata={"Software": None})
        fig_name = f"{claim.id}.png"
        _io.atomic_write_bytes(out / fig_name, buf.getvalue())
    _io.atomic_write_text(out / f"{claim.id}.md", render_markdown(claim, res, fig_name, made))


def reading_folder(out: str | Path, claim_id: str, choice: str, value) -> Path:
    """Where the tables of one alternative reading go: ``<out>/<id>-readings/<choice>=<value>/``
    (``table.csv`` and one CSV per extra table), so its verdict can be re-judged like the main
    one."""
    return Path(out) / f"{claim_id}-readings" / f"{_slug(choice)}={_slug(value)}"


def _slug(x) -> str:
    """A file-name-safe form of a reading's value (``0.5`` → ``0.5``, ``"sqrt(d)"`` →
    ``sqrt_d``)."""
    return re.sub(r"[^A-Za-z0-9.+-]+", "_", str(x)).strip("_") or "x"
