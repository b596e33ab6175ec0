"""griffe extension of the theorylab site (``extensions:`` of the mkdocstrings handler in
``mkdocs.yml``): the formulas a docstring writes in text (``P^{1−κ_c}``, ``Φ_{p→v}``, ``L_MAE``)
become ``$…$`` TeX ([`theorylab.core.markdown.typeset_formulas`][]), which the API pages render
with the site's KaTeX. A parameter's name at the start of a line (``x_0: the start``) is kept."""

from __future__ import annotations

import re

import griffe

from theorylab.core.markdown import typeset_formulas

#: the name part of a docstring section's entry: ``    x_0 (float): the start``
_ENTRY = re.compile(r"^(\s+[\w*]+(?:\s*\([^)\n]*\))?:)(?=\s)", re.M)


def typeset_docstring(text: str) -> str:
    """`text` with its formulas typeset, the names of section entries left as they are."""
    out, pos = [], 0
    for m in _ENTRY.finditer(text):
        out += [typeset_formulas(text[pos:m.start()]), m.group(1)]
        pos = m.end()
    out.append(typeset_formulas(text[pos:]))
    return "".join(out)


class TypesetFormulas(griffe.Extension):
    """Typeset the formulas of every docstring the API pages show."""

    def on_instance(self, *, node, obj, agent, **kwargs) -> None:
        if obj.docstring is not None:
            obj.docstring.value = typeset_docstring(obj.docstring.value)
