"""Markdown that keeps its formulas: a ``*`` of a formula written in text (``w*``, ``T*``,
``a*_glob = E_z[e^{zφ*} …]``) is emphasis to markdown, which pairs two of them and eats both,
so the formula shown is wrong. [`escape_stray_stars`][] escapes every such ``*`` (``\\*``) and
leaves emphasis (``*word*``, ``**bold**``), code spans, fenced code and ``$…$`` math alone.
[`typeset_formulas`][] goes first: it turns the formulas written in text (``P^{1−κ_c}/η``,
``L_MAE``, ``Φ_{p→v}``) into ``$…$`` TeX, so that a page shows them typeset. The claims'
generated pages pass through both, and so does every page of the documentation site.
"""

from __future__ import annotations

import re

__all__ = ["escape_stray_stars", "plain_formulas", "stray_stars", "typeset_formulas"]

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
    out, pos = [], 0
    for m in _FENCE.finditer(text):  # in order, never overlapping
        out += _inline(text, pos, m.start())
        out.append((m.start(), m.group(0), False))
        pos = m.end()
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
    chars = list(text)
    for i in stray_stars(text):
        chars[i] = "\\*"
    return "".join(chars)


# --- formulas written in text -------------------------------------------------------------------
#
# Generated and hand-written pages write formulas in text the way a plain-text reader can read
# them: ``P^{1−κ_c}/η``, ``L_MAE``, ``Φ_{p→v}``, ``a*_glob = E_z[e^{zφ*}/(e^{zφ*} + (1 − ρ)/ρ)]``.
# [`typeset_formulas`][] wraps each in ``$…$`` (TeX the site's KaTeX renders), so the page shows
# the formula and never its markup.

#: not text: fenced code, code spans, math, comments, HTML tags, link targets, bare addresses,
#: file names
_NOT_TEXT = re.compile(r"(`+)(?:(?!\1).)+?\1|\$\$.+?\$\$|(?<![\\$\w])\$[^$\n]+?\$(?![\w$])"
                       r"|<!--.*?-->|<[A-Za-z/][^>\n]*>|\]\([^)\s]*\)|https?://\S+"
                       r"|[\w./-]*\w\.(?:py|md|csv|png|toml|json|ya?ml|txt|nc|html|css|js)\b", re.S)
_LETTER = r"A-Za-zͰ-Ͽ"
#: a formula: a run of text with a power ``^``, a braced index ``_{``, or an index ``_x`` on a
#: one-letter name (``t_I``, ``L_MAE``, ``a*_glob``; not ``phase_readings``)
_FORMULA_MARK = re.compile(rf"\^|_\{{|(?:^|[^{_LETTER}\d_\\])[{_LETTER}](?:\\?\*)?_[{_LETTER}\d]")
_TOKEN = re.compile(r"(?:[^\s|]|(?<=[^\s\\|])\|(?=[^\s|]))+")
#: a name of three or more parts (``B_D_SHIFT``, ``n_phase_I``): a name, not an index
_NAME = re.compile(r"(?<![\\\w])[A-Za-z][A-Za-z0-9]*(?:_[A-Za-z0-9]+){2,}")
_SYMBOLS = {"‖": "\\|", "½": "\\tfrac12 ", "–": "\\text{–}"}
_TABLE_ROW = re.compile(r"^[ \t]*\|.*$", re.M)
_SUPERSCRIPTS = "⁰¹²³⁴⁵⁶⁷⁸⁹⁻"
_WORD = re.compile(r"(?<![\\A-Za-z])[A-Za-z]{2,}(?![A-Za-z])")
_FUNCTIONS = {"log", "ln", "exp", "sin", "cos", "max", "min", "sup", "inf", "lim", "det"}
_OPEN, _CLOSE = "([{⟨", ")]}⟩"


def _tex(formula: str) -> str:
    """A formula written in text as TeX: ``*`` of a name a superscript (``T*`` → ``T^*``), an
    index or power of several characters braced, a word upright (``\\mathrm{polylog}``,
    ``\\log``)."""
    out = formula.replace("\\*", "*")
    names = []

    def name(m):        # a name of several parts (``B_D_SHIFT``): upright, as one symbol
        names.append("\\text{" + m.group(0).replace("_", "\\_") + "}")
        return f"\x00{len(names) - 1}\x00"

    out = _NAME.sub(name, out)
    for char, tex in _SYMBOLS.items():
        out = out.replace(char, tex)
    out = re.sub(f"([{_SUPERSCRIPTS}])(?=\\^)", r"\1{}", out)
    out = re.sub(rf"(?<=[{_LETTER}\d}}')])\*", "^*", out)
    out = re.sub(r"([\^_])\(([^()]*)\)", r"\1{(\2)}", out)             # ``3^(D−C)``
    out = re.sub(r"\^([Ͱ-Ͽ])_([A-Za-z0-9])(?![A-Za-z0-9])", r"^{\1_\2}", out)   # ``P^κ_c``

    def braced(m):      # an index of one or two letters (``A_ij``) stays italic
        body = m.group(2)
        if "_" in body:     # a name of two parts (``^POLYLOG_POWER``): one symbol
            names.append("\\text{" + body.replace("_", "\\_") + "}")
            return f"{m.group(1)}{{\x00{len(names) - 1}\x00}}"
        if body.isalpha() and len(body) == 2:
            body = " ".join(body)
        return f"{m.group(1)}{{{body}}}"

    # a power or index written without braces: ``^1.3``, ``^−1.02``, ``_MAE``, ``^power``
    out = re.sub(r"([\^_])([-−]?\d+(?:\.\d+)?|[A-Za-z][A-Za-z0-9]+(?:_[A-Za-z0-9]+)*)", braced, out)

    def word(m):        # ``log`` → ``\log``; a word (``polylog``, ``MAE``) upright; ``dt`` as is
        w = m.group(0)
        if w in _FUNCTIONS:
            return f"\\{w}"
        upright = (w.islower() and len(w) >= 3) or (w[0].isupper() and (w[1:].islower()
                                                                         or w.isupper()))
        return "\\mathrm{" + w + "}" if upright else w

    out = _WORD.sub(word, out)
    out = re.sub(r"(\\mathrm\{\w+\})\s+(?=[\\\w])", r"\1\\ ", out)   # words keep their spaces
    out = re.sub(r"√(\w|\([^()]*\))", r"\\sqrt{\1}", out).replace("√", "\\surd ")
    out = re.sub("\x00(\\d+)\x00", lambda m: names[int(m[1])], out)
    return out.replace("%", "\\%")


def plain_formulas(text: str) -> str:
    """A title for places that show plain text (navigation, the browser's title): ``$`` and the
    markdown escape of ``*`` dropped, font commands (``\\mathrm{own}``) reduced to their text,
    ``^{…}`` written ``^(…)`` and ``_{…}`` as ``_…``."""
    out = text.replace("\\*", "*").replace("$", "")
    out = re.sub(r"\\(?:mathrm|text|mathit|mathbf|operatorname)\{([^{}]*)\}", r"\1", out)
    out = re.sub(r"\^\{([^{}]*)\}", lambda m: "^" + (m[1] if len(m[1]) == 1 else f"({m[1]})"), out)
    return re.sub(r"_\{([^{}]*)\}", r"_\1", out)


def _unmatched(token: str) -> tuple[int, int]:
    """How many closing brackets of `token` were opened before it, and how many it leaves
    open."""
    depth = lowest = 0
    for ch in token:
        depth += (ch in _OPEN) - (ch in _CLOSE)
        lowest = min(lowest, depth)
    return -lowest, depth - lowest


#: prose in brackets (``(t_I grows like …)``) is not joined to a formula
_PROSE = re.compile(r"(?<![\\\w])[a-z]{3,}\b|`|\$|\||\v")


def _formula_text(text: str) -> bool:
    """Whether `text`, between a formula's brackets, reads as part of the formula."""
    return not any(m.group(0) not in _FUNCTIONS for m in _PROSE.finditer(text))


def _unbalanced_close(token: str) -> bool:
    """Whether the last character of `token` closes a bracket that the token never opened."""
    close = token[-1]
    if close not in _CLOSE:
        return False
    opener = _OPEN[_CLOSE.index(close)]
    return token.count(close) > token.count(opener)


def _extend(line: str, start: int, end: int) -> tuple[int, int]:
    """Grow ``line[start:end]`` to its matching brackets (``(ln P)^k``, ``E_z[… + …]``) within
    the line, and trim the punctuation and emphasis around it."""
    token = line[start:end]
    stars = len(token) - len(token.lstrip("*"))     # emphasis around it: ``**d^{1/4}**,``
    token, start = token[stars:], start + stars
    while token:
        if token[-1] in ".,;:!?\"'\\" or _unbalanced_close(token):
            token, end = token[:-1], end - 1
        elif token.endswith("**") or (token[-1] == "*" and (stars or token[-2:-1] in ("}", ")"))):
            n = len(token) - len(token.rstrip("*"))
            token, end = token[:-n], end - n
        else:
            break
    while token and token[0] in "\"'":
        token, start = token[1:], start + 1
    closers, openers = _unmatched(token)
    if closers:        # an opening bracket before the token: ``(ln P)^k``
        i, d = start, -closers
        while i > 0 and d < 0 and start - i < 40:
            i -= 1
            d += (line[i] in _OPEN) - (line[i] in _CLOSE)
        if d == 0 and _formula_text(line[i:start]):
            start = i
    if openers:        # a closing bracket after it: ``E_z[e^{zφ*}/(… + (1 − ρ)/ρ)]``
        j, d = end, openers
        while j < len(line) and d > 0 and j - end < 60:
            d += (line[j] in _OPEN) - (line[j] in _CLOSE)
            j += 1
        if d == 0 and (_formula_text(line[end:j]) or ("{" in token and "\v" not in line[end:j])):
            end = j    # words inside an index or a power belong to it: ``v_{k, own area}``
        else:          # no closing bracket: the opening one is not the formula's
            while start < end and line[start] in _OPEN and _unmatched(line[start:end])[1]:
                start += 1
    return start, end


def typeset_formulas(text: str) -> str:
    """`text` (markdown) with each formula written in text (see the module) as ``$…$`` TeX;
    code, math, HTML, link targets and addresses are left alone, and so is text already in
    ``$…$``. A title line (``# …``) is changed like any other."""
    out, pos = [], 0
    blocked = bytearray(len(text))
    for m in (*_FENCE.finditer(text), *_NOT_TEXT.finditer(text)):
        blocked[m.start():m.end()] = b"\x01" * (m.end() - m.start())
    # a table row's cells end at an unescaped ``|``: no formula runs across one
    # (nor an escaped one ``\|``, a bar the cell shows, which TeX would read as ``‖``)
    scan = _TABLE_ROW.sub(lambda m: re.sub(r"\\?\|", lambda b: "\v" * len(b[0]), m[0]), text)
    spans = []
    for m in _TOKEN.finditer(scan):
        a, b = m.start(), m.end()
        if (any(blocked[a:b]) or "://" in scan[a:b]
                or not _FORMULA_MARK.search(_NAME.sub(" ", scan[a:b]))):
            continue
        line_start = scan.rfind("\n", 0, a) + 1
        line_end = scan.find("\n", b)
        line_end = len(scan) if line_end < 0 else line_end
        line = scan[line_start:line_end]
        s, e = _extend(line, a - line_start, b - line_start)
        for _ in range(3):     # a formula that goes on after its brackets: ``(d − 1)^{…}/N^{…}``
            if e >= len(line) or line[e].isspace() or line[e] in ".,;:!?*\"'\\|":
                break
            stop = next((k for k in range(e, len(line)) if line[k].isspace()), len(line))
            s2, e2 = _extend(line, s, stop)
            if e2 <= e:
                break
            s, e = min(s, s2), e2
        # a formula touches no word outside its ``$`` (``c(d − 1)^k``: the ``c`` is its own)
        while s > 0 and (line[s - 1].isalnum() or line[s - 1] in _SUPERSCRIPTS + "²³¹"):
            s -= 1
        while e < len(line) and line[e].isalnum():
            e += 1
        s, e = s + line_start, e + line_start
        if e <= s or any(blocked[s:e]) or (spans and s < spans[-1][1]):
            continue
        if not _FORMULA_MARK.search(_NAME.sub(" ", scan[s:e])):
            continue
        spans.append((s, e))
    for s, e in spans:
        out += [text[pos:s], "$", _tex(text[s:e]), "$"]
        pos = e
    out.append(text[pos:])
    return "".join(out)
