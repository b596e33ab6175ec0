"""Writing a claim result: ``<id>.csv`` (+ ``<id>-<extra>.csv``), ``<id>.md`` and ``<id>.png``."""

from __future__ import annotations

import io
from pathlib import Path

from theorylab.core import atomic_io as _io
from theorylab.core.provenance import provenance as _provenance
from theorylab.core.provenance import provenance_line

from .claim import Claim, ClaimResult, markdown_table

__all__ = ["fragile_thresholds", "render_markdown", "render_robustness", "robust_cell",
           "write_result"]


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
        f"- **Kind:** {claim.kind}",
        f"- **Statement checked:** {claim.statement}",
        f"- **Measured:** {claim.measured}",
        f"- **Predicted:** {claim.predicted}",
        *([f"- **Not tested here:** {claim.untested}"] if claim.untested else []),
        f"- **Verdict:** `{res.verdict}` ({mode} run, {res.runtime_s:.1f} s)",
        f"- **Run:** {provenance_line(made)}",
        "",
        *render_robustness(claim, res),
        "## Reading",
        "",
        *[f"- {r}" for r in res.reading],
        "",
        "## Headline numbers",
        "",
        "| quantity | value |",
        "|---|---|",
        *[f"| {k} | {_short(v)} |" for k, v in res.headline.items()],
        "",
        "## Table",
        "",
        markdown_table(res.table),
        "",
    ]
    for name, df in res.extra.items():
        if name == "trajectory":
            lines += [f"Trajectory: `{claim.id}-{name}.csv` ({len(df)} rows).", ""]
            continue
        lines += [f"### {name}", "", markdown_table(df), ""]
    if figure_name:
        lines += [f"![{claim.id}]({figure_name})", ""]
    return "\n".join(lines)


def fragile_thresholds(res: ClaimResult) -> list[str]:
    """The judged thresholds whose ×0.5 or ×2 changes the verdict."""
    s = res.sensitivity
    if s is None or len(s) == 0:
        return []
    j = s[s.judged.astype(bool)]
    return list(j[~j.robust.astype(bool)].threshold)


def robust_cell(res: ClaimResult) -> str:
    """The summary's ``robust?`` cell: ``yes``, ``no (NAME, ...)`` naming the thresholds whose
    ×0.5 or ×2 flips the verdict, or ``–`` without a judged threshold."""
    r = res.robust
    if r is None:
        return "–"
    return "yes" if r else "no (" + ", ".join(fragile_thresholds(res)) + ")"


def _flip_text(x) -> str:
    from .claim import _fmt

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
        lines.append(f"| {t.name} | {_short(t.value)} | {t.source} | {t.reason} | "
                     f"{t.role or '–'} | " + " | ".join(cells) + " |")
    return lines + [""]


def _short(v) -> str:
    from .claim import _fmt

    return _fmt(v)


def write_result(claim: Claim, res: ClaimResult, out: str | Path, figures: bool = True,
                 made: dict[str, str] | None = None) -> None:
    """Write the result files of one claim into `out` (atomically); `made`: see
    [`render_markdown`][]."""
    out = Path(out)
    _io.write_csv(out / f"{claim.id}.csv", res.table)
    for name, df in res.extra.items():
        _io.write_csv(out / f"{claim.id}-{name}.csv", df)
    if res.sensitivity is not None:
        _io.write_csv(out / f"{claim.id}-sensitivity.csv", res.sensitivity)
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
