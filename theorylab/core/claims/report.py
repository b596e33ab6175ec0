"""Writing a claim result: ``<id>.csv`` (+ ``<id>-<extra>.csv``), ``<id>.md`` and ``<id>.png``."""

from __future__ import annotations

import io
from pathlib import Path

from theorylab.core import atomic_io as _io
from theorylab.core.provenance import provenance as _provenance
from theorylab.core.provenance import provenance_line

from .claim import Claim, ClaimResult, markdown_table

__all__ = ["render_markdown", "write_result"]


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
