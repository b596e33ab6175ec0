"""What the plots write on a figure: the symbol of a config key, a trajectory column or a
reading (``data.C1`` → $C_1$, ``model.gamma`` → $\\gamma$, ``t_I`` → $t_{\\rm I}$), the
setting a sweep's points share (a title) and what sets each point apart (a legend label),
and the PNG a plot may write.

The symbols come from a small table of keys every paper has ([`COMMON_SYMBOLS`][]) and the
paper's own table (``Paper.symbols``, declared by the paper like its other hooks); a key in
neither is written as it is. Symbols are matplotlib mathtext (``$…$``).
"""

from __future__ import annotations

import io
import json
from collections.abc import Mapping, Sequence
from pathlib import Path

import pandas as pd

from theorylab.core.folders import check_output_file, folder_kind, write_output
from theorylab.papers import PAPERS

__all__ = ["COMMON_SYMBOLS", "SOFTWARE", "axis_label", "check_out", "default_png", "note_box",
           "paper_named", "point_settings", "save", "symbol", "written_by_plot"]

#: Symbols of keys that mean the same in every paper (a paper's ``symbols`` add to them and
#: win over them).
COMMON_SYMBOLS: Mapping[str, str] = {
    "step": "step", "train.seed": "seed", "seed": "seed", "data.seed": "data seed",
    "train.steps": "steps", "train.lr": r"$\eta$", "loss": "loss",
    "train_loss": "training loss",
}
#: The ``Software`` text of every PNG the plots write (how ``theorylab plot`` knows its files).
SOFTWARE = "theorylab plot"
#: Resolution of the PNGs (a 6.4-inch figure is 960 pixels wide: a slide's half width).
PNG_DPI = 150


def paper_named(name) -> object | None:
    """The registered paper `name` (a sweep manifest's ``paper``), or None."""
    return PAPERS.get(name) if isinstance(name, str) else None


def symbol(key: str, paper=None) -> str:
    """The symbol of `key` (a config key ``data.C1``, a trajectory column or a reading) in
    `paper` (a ``Paper`` or its name; module docstring); `key` itself when it has none."""
    if isinstance(paper, str):
        paper = paper_named(paper)
    own = getattr(paper, "symbols", None) or {}
    key = str(key)
    return own.get(key) or COMMON_SYMBOLS.get(key) or key


def axis_label(key: str, paper=None) -> str:
    """An axis label: the symbol of `key`, with "(steps)" for a time reading of the paper (a
    reading taken at itself, ``Paper.reading_times``)."""
    if isinstance(paper, str):
        paper = paper_named(paper)
    times = getattr(paper, "reading_times", None) or {}
    unit = " (steps)" if times.get(key) == key else ""
    return symbol(key, paper) + unit


def tick(v) -> str:
    """An axis value as a tick or a label."""
    return f"{v:g}" if isinstance(v, float) else str(v)


def point_settings(manifest: dict, points: pd.DataFrame, axes: Sequence[str]) -> tuple[
        str, dict]:
    """The setting the points share (a title) and, per row of `points` (one per combination
    of the `axes` values), what sets it apart (a legend label): the paper's ``describe`` of
    each point's config, split at ", ", the common parts in the title, the others in the label
    (a huang2024 sweep over C1 gets its Δ in each label). Falls back to ``symbol = value``."""
    paper = paper_named(manifest.get("paper"))

    def fallback(row) -> str:
        return ", ".join(f"{symbol(a, paper)} = {tick(row[a])}" for a in axes)

    labels = {i: fallback(row) for i, row in points.iterrows()}
    try:
        base = manifest["base"]
        if paper is None or paper.describe is None or not isinstance(base, dict):
            raise KeyError("describe")
        parts = {}
        for i, row in points.iterrows():
            tables = json.loads(json.dumps(base))
            for a in axes:
                if "." not in a:
                    continue
                section, key = a.split(".", 1)
                value = row[a]
                tables.setdefault(section, {})[key] = value.item() if hasattr(
                    value, "item") else value
            parts[i] = paper.describe(paper.config_from_tables(tables)).split(", ")
    except (KeyError, ValueError, TypeError, AttributeError):
        return "", labels
    common = [p for p in next(iter(parts.values()), []) if all(p in q for q in parts.values())]
    for i, q in parts.items():
        own = [p for p in q if p not in common]
        labels[i] = ", ".join(own) or labels[i]
    return f"{manifest['paper']}: " + ", ".join(common), labels


def written_by_plot(path: Path) -> bool:
    """True when ``path`` is a PNG whose ``Software`` text chunk is [`SOFTWARE`][]."""
    try:
        with open(path, "rb") as f:
            head = f.read(1 << 16)
    except OSError:
        return False
    if not head.startswith(b"\x89PNG\r\n\x1a\n"):
        return False
    pos = 8
    while pos + 8 <= len(head):
        size = int.from_bytes(head[pos:pos + 4], "big")
        kind = head[pos + 4:pos + 8]
        if kind == b"tEXt" and head[pos + 8:pos + 8 + size].startswith(b"Software\0"):
            return head[pos + 8 + 9:pos + 8 + size] == SOFTWARE.encode()
        if kind == b"IDAT":
            return False
        pos += 12 + size
    return False


def check_out(out: Path, *, default: bool, force: bool) -> Path:
    """``out`` as a PNG the plots may write: a new file, one they wrote, the default plot of a
    folder theorylab wrote, or any file with `force` (``ValueError("out: ...")`` otherwise)."""

    def ours(p: Path) -> bool:
        return written_by_plot(p) or (default and folder_kind(p.parent) is not None)

    return check_output_file(out, ".png", command="theorylab plot", ours=ours, force=force)


def save(fig, out: Path, *, default: bool = False, force: bool = False) -> Path:
    """Write `fig` to `out` (checked by [`check_out`][]), atomically, marked as ours."""
    out = check_out(out, default=default, force=force)
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=PNG_DPI, metadata={"Software": SOFTWARE})
    return write_output(out, buf.getvalue(), command=SOFTWARE, mark=False)  # its text chunk


def note_box(fig, notes: Sequence[str], width_in: float) -> None:
    """The figure's notes under its panels (the layout leaves them room)."""
    import textwrap

    if not notes:
        return
    chars = max(40, int(width_in * 15))
    text_ = "\n".join(textwrap.fill(f"Note: {n}", chars) for n in notes)
    lines = text_.count("\n") + 1
    height = fig.get_figheight()
    bottom = min(0.4, (0.12 + 0.14 * lines) / height)
    fig.get_layout_engine().set(rect=(0, bottom, 1, 1 - bottom))
    fig.text(0.01, 0.01, text_, fontsize="x-small", va="bottom", ha="left", wrap=False)


def default_png(source: Path, name: str) -> Path:
    """The PNG `name` beside a store (``<store>/<name>.png``) or a table
    (``<table>-<name>.png``)."""
    return source / f"{name}.png" if source.is_dir() else source.with_name(
        f"{source.stem}-{name}.png")
