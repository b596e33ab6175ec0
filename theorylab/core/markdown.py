"""Markdown that keeps its formulas: a ``*`` of a formula written in text (``w*``, ``T*``,
``a*_glob = E_z[e^{zφ*} …]``) is emphasis to markdown, which pairs two of them and eats both,
so the formula shown is wrong. [`escape_stray_stars`][] escapes every such ``*`` (``\\*``) and
leaves emphasis (``*word*``, ``**bold**``), code spans, fenced code and ``$…$`` math alone. The
claims' generated pages pass their free text through it, and the documentation site's hook
passes every page through it.
"""

from __future__ import annotations

import re

__all__ = ["escape_stray_stars", "stray_stars"]

_FENCE = re.compile(r"^[ \t]*(```|~~~)[^\n]*\n.*?^[ \t]*\1[ \t]*$", re.M | re.S)
#: kept as they are: code spans, display and inline math, HTML comments, escaped characters
_KEEP = re.compile(r"(`+)(?:(?!\1).)+?\1|\$\$.+?\$\$|(?<![\\$\w])\$[^$\n]+?\$(?![\w$])"
                   r"|<!--.*?-->|\\.", re.S)
#: emphasis markdown means: an opening ``*``/``**`` at a word start, a closing one at a word end
_EMPHASIS = re.compile(r"(?<![\w*\\])(\*\*?)(?=[^\s*])(.+?)(?<=[^\s*\\])\1(?![\w*])")


def _stars_of(text: str) -> list[int]:
    """Offsets of the stray ``*`` in a piece of text with no code, math or fence."""
    covered = set()
    for m in _EMPHASIS.finditer(text):
        covered.update(range(m.start(), m.start() + len(m.group(1))))
        covered.update(range(m.end() - len(m.group(1)), m.end()))
    return [i for i, ch in enumerate(text) if ch == "*" and i not in covered
            and not (i > 0 and text[i - 1] == "\\")]


def _pieces(text: str):
    """(offset, piece, is_text) in order: fenced code, code spans, math and comments are not
    text; list markers (``* item``) and rules (``***``) count as kept."""
    pos = 0
    kept = sorted([(m.start(), m.end()) for m in _FENCE.finditer(text)])
    spans: list[tuple[int, int]] = []
    for a, b in kept:
        if a >= pos:
            spans.append((a, b))
            pos = b
    out = []
    pos = 0
    for a, b in spans:
        out += _inline(text, pos, a)
        out.append((a, text[a:b], False))
        pos = b
    out += _inline(text, pos, len(text))
    return out


def _inline(text: str, start: int, end: int):
    out = []
    pos = start
    for m in _KEEP.finditer(text, start, end):
        out.append((pos, text[pos:m.start()], True))
        out.append((m.start(), m.group(0), False))
        pos = m.end()
    out.append((pos, text[pos:end], True))
    return out


_LIST_OR_RULE = re.compile(r"^[ \t]*(\*[ \t]|(\*[ \t]*){3,}$)", re.M)


def stray_stars(text: str) -> list[int]:
    """Offsets in `text` of the ``*`` that markdown would read as emphasis but that are not
    meant as emphasis (see the module)."""
    found = []
    for offset, piece, is_text in _pieces(text):
        if not is_text:
            continue
        blank = _LIST_OR_RULE.sub(lambda m: " " * len(m.group(0)), piece)
        found += [offset + i for i in _stars_of(blank)]
    return found


def escape_stray_stars(text: str) -> str:
    """`text` with every stray ``*`` ([`stray_stars`][]) written ``\\*``."""
    stars = stray_stars(text)
    if not stars:
        return text
    parts, pos = [], 0
    for i in stars:
        parts += [text[pos:i], "\\*"]
        pos = i + 1
    parts.append(text[pos:])
    return "".join(parts)
