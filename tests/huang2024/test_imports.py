"""The huang2024 package's static import graph: no circle, and no figure imports a claim
check module (figures and claims share their configs through ``theorylab.huang2024.setups``
and their P ladders through ``theorylab.huang2024.ladders``)."""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "theorylab" / "huang2024"


def _module(path: Path) -> str:
    rel = path.relative_to(ROOT.parent.parent).with_suffix("")
    parts = list(rel.parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def _graph() -> dict[str, set[str]]:
    """module → the huang2024 modules it imports anywhere in its source (function-level
    imports included); a package import ``from . import x`` counts as importing ``x``."""
    mods = {_module(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for name, path in mods.items():
        pkg = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
        out: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                base = pkg
                for _ in range(max(0, node.level - 1)):
                    base = base.rsplit(".", 1)[0]
                target = (f"{base}.{node.module}" if node.module else base) if node.level \
                    else (node.module or "")
                cands = [target] + [f"{target}.{a.name}" for a in node.names]
            elif isinstance(node, ast.Import):
                cands = [a.name for a in node.names]
            else:
                continue
            out.update(c for c in cands if c in mods and c != name)
        graph[name] = out
    return graph


def _cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(n: str) -> list[str] | None:
        state[n] = 1
        stack.append(n)
        for m in sorted(graph[n]):
            if state.get(m) == 1:
                return stack[stack.index(m):] + [m]
            if m not in state and (c := visit(m)):
                return c
        state[n] = 2
        stack.pop()
        return None

    for n in sorted(graph):
        # a package's __init__ importing its own submodules is not a circle
        if n not in state and (c := visit(n)):
            return c
    return None


def test_no_import_circle_between_modules():
    g = _graph()
    # edges into a package __init__ from its own submodules are implicit in Python and
    # harmless; only module ↔ module circles are refused
    pk = {n for n in g if (ROOT.parent.parent / n.replace(".", "/") / "__init__.py").exists()}
    g = {n: {m for m in out if m not in pk} for n, out in g.items()}
    assert _cycle(g) is None, _cycle(g)
    assert "theorylab.huang2024.engines._base" in g["theorylab.huang2024.engines._laplace"]


def test_a_circle_is_detected():
    assert _cycle({"a": {"b"}, "b": {"a"}}) == ["a", "b", "a"]


def test_figures_import_no_claim_check():
    g = _graph()
    for name, out in g.items():
        if ".figures" in name:
            bad = [m for m in out if ".claims." in m]
            assert not bad, (name, bad)
