"""The reference page of a run-config file, generated from the config dataclasses.

A paper's config is one frozen dataclass per TOML section (``core.config``); its docstring lists
the fields as ``- `name`: meaning`` bullets (several names may share one bullet:
``- `a`, `b`: ...``). The meaning of a field whose default is ``None`` says what it resolves
to: the word "default" and then the rule in double backticks, as in the meaning of σ, "noise
level; default 1/√d" with 1/√d in double backticks. A meaning names the paper's reference
where there is one (``Definition 2.1``, ``eq. (T)``, ``Assumption 1``, ..., with ``FOUND`` or
``RECONSTRUCTED``). [`config_markdown`][] turns that into one markdown table per section
(key, type, default, allowed values, meaning, paper reference), so the page says nothing the
classes do not.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import MISSING, fields, is_dataclass
from typing import Any

from .config import EXPERIMENT, toml_value

__all__ = ["config_markdown", "experiment_markdown", "field_docs", "one_of", "paper_refs"]

_BULLET = re.compile(r"^(\s*)- ((?:`\w+`(?:, )?)+):\s*(.*)$")
_NAME = re.compile(r"`(\w+)`")
_DEFAULT = re.compile(r"\b[Dd]efaults? (?:to )?``([^`]+)``")
_REF = re.compile(
    r"\b(?:Definition|Assumption|Simplification|Theorem|Lemma|Proposition|Corollary|Figure|"
    r"Section|Appendix) [A-Z]?\d+(?:\.\d+)*"
    r"|\beq\. \([^)]+\)"
    r"|\bproblems? \(\w\)(?: and \(\w\))?"
)
_STATUS = re.compile(r"\b(FOUND|RECONSTRUCTED|INFERRED)\b")
_TYPES = {"int": "integer", "float": "number", "str": "string", "list": "array",
          "bool": "boolean"}


def field_docs(cls: type) -> dict[str, str]:
    """Field name → meaning, from the ``- `name`: text`` bullets of ``cls``'s docstring (the
    indented lines under a bullet continue it; a bullet naming several fields gives each the
    same text)."""
    out: dict[str, str] = {}
    names: list[str] = []
    indent = -1
    for line in (cls.__doc__ or "").splitlines():
        m = _BULLET.match(line)
        if m:
            names, indent = _NAME.findall(m.group(2)), len(m.group(1))
            for n in names:
                out[n] = m.group(3).strip()
        elif names and line.strip() and len(line) - len(line.lstrip()) > indent:
            for n in names:
                out[n] += " " + line.strip()
        else:
            names = []
    return out


def paper_refs(text: str) -> tuple[list[str], list[str]]:
    """The paper's references (``Definition 2.1``, ``eq. (T)``, ...) and the status words
    (``FOUND``, ``RECONSTRUCTED``, ``INFERRED``) named in ``text``, each once, in order."""
    refs = list(dict.fromkeys(_REF.findall(text)))
    status = list(dict.fromkeys(_STATUS.findall(text)))
    return refs, status


def one_of(values: Sequence[Any]) -> str:
    """Allowed values as markdown: ``"a"``, ``"b"`` (TOML spelling)."""
    return ", ".join(f"`{toml_value(v)}`" for v in values)


def run_fields_allowed(dtypes: Sequence[str]) -> dict[str, str]:
    """The allowed values of the ``[train]`` fields every paper shares, in markdown: where it
    computes ([`check_placement`][theorylab.core.config.check_placement]: backend, device,
    dtype, with the paper's `dtypes`) and its loop ([`check_flow_fields`][theorylab.core.flow.
    check_flow_fields]: mode, flow_method)."""
    from .config import BACKENDS, MODES
    from .flow import FLOW_METHODS

    return {"train.backend": one_of(BACKENDS), "train.device": '`"cpu"`, `"cuda"`, `"cuda:N"`',
            "train.dtype": one_of(dtypes), "train.mode": one_of(MODES),
            "train.flow_method": one_of(FLOW_METHODS)}


def _type(annotation: Any) -> str:
    words = [_TYPES.get(t.strip(), t.strip()) for t in str(annotation).split("|")]
    return " or ".join(w for w in words if w != "None")


def _cell(text: str) -> str:
    """Markdown table cell: RST double backticks as code spans, pipes escaped."""
    return text.replace("``", "`").replace("|", "\\|")


def _default(f, meaning: str) -> str:
    if f.default is not MISSING:
        value = f.default
    elif f.default_factory is not MISSING:  # pragma: no cover - sections have plain defaults
        value = f.default_factory()
    else:
        return "required"
    if value is not None:
        return f"`{toml_value(value)}`"
    m = _DEFAULT.search(meaning)
    return f"unset: `{m.group(1)}`" if m else "unset"


def section_markdown(
    section: str, cls: type, allowed: Mapping[str, str], citation: str, level: int = 2
) -> str:
    """The ``[section]`` table of one config dataclass; ``ValueError`` for a field the docstring
    does not describe."""
    if not is_dataclass(cls):
        raise TypeError(f"{section}: {cls!r} is not a dataclass")
    docs = field_docs(cls)
    summary = " ".join((cls.__doc__ or "").split("**Arguments:**")[0].split())
    lines = [f"{'#' * level} `[{section}]`", "", _cell(summary), "",
             "| key | type | default | allowed | meaning | paper |",
             "|---|---|---|---|---|---|"]
    for f in fields(cls):
        if f.name not in docs:
            raise ValueError(f"{section}.{f.name}: no '- `{f.name}`: ...' line in the docstring "
                             f"of {cls.__name__}")
        meaning = docs[f.name]
        refs, status = paper_refs(meaning)
        paper = (", ".join([citation, *refs]) + (f" ({', '.join(status)})" if status else "")
                 if refs or status else "—")
        row = [f"`{f.name}`", _type(f.type), _default(f, meaning),
               allowed.get(f"{section}.{f.name}", ""), meaning, paper]
        lines.append("| " + " | ".join(_cell(c) for c in row) + " |")
    return "\n".join(lines) + "\n"


def experiment_markdown(papers: Sequence[str], default: str, level: int = 2) -> str:
    """The ``[experiment]`` table: the one key ``paper`` that every run config may carry."""
    return "\n".join([
        f"{'#' * level} `[{EXPERIMENT}]`",
        "",
        "The paper whose engines run the file; the other sections are that paper's.",
        "",
        "| key | type | default | allowed | meaning | paper |",
        "|---|---|---|---|---|---|",
        f"| `paper` | string | `{toml_value(default)}` | {one_of(papers)} | the paper whose "
        "config sections follow and whose engines run them | — |",
    ]) + "\n"


def config_markdown(
    sections: Mapping[str, type],
    *,
    allowed: Mapping[str, str] | None = None,
    citation: str = "",
    title: str = "",
    intro: str = "",
    level: int = 2,
) -> str:
    """Markdown reference of the sections ``{name: dataclass}``: a ``## [name]`` table each.

    **Arguments:**

    - `sections`: TOML section name → its config dataclass, in page order.
    - `allowed`: ``"section.field"`` → markdown of the allowed values (choices from the
      paper's constants, upper bounds); other fields: the meaning says.
    - `citation`: the paper's short citation put before each field's references, e.g.
      ``"Doe & Roe (2030)"``.
    - `title`, `intro`: an optional ``#`` heading and paragraph on top.
    - `level`: the heading level of each section (``2``: ``## [name]``).
    """
    parts = []
    if title:
        parts.append(f"# {title}\n")
    if intro:
        parts.append(intro.rstrip("\n") + "\n")
    parts.extend(section_markdown(name, cls, allowed or {}, citation, level)
                 for name, cls in sections.items())
    return "\n".join(parts)
