"""The layout's import rules (docs/architecture.md), checked on every import statement of the
package, function-level imports included:

- the kernel (``theorylab.core``) imports nothing of theorylab outside ``core``;
- ``theorylab.vision`` imports the kernel and itself only;
- a paper imports the kernel, ``vision`` and itself, never another paper;
- ``bench`` and the entry points may import anything;
- no module imports itself around a circle (function-level imports count too).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from theorylab.papers import PAPERS

PACKAGE = Path(__file__).resolve().parents[1] / "theorylab"


def module_name(path: Path) -> str:
    parts = list(path.relative_to(PACKAGE.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def imported_modules(path: Path, text: str | None = None) -> set[str]:
    """Absolute names of the theorylab modules imported anywhere in ``path`` (or in ``text``
    read as if it were that file)."""
    name = module_name(path)
    package = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text() if text is None else text, str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            found.add(mod)
            # ``from theorylab import jelassi2022`` imports a subpackage
            found |= {f"{mod}.{a.name}" for a in node.names}
    return {m for m in found if m == "theorylab" or m.startswith("theorylab.")}


def room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def is_module(name: str) -> bool:
    p = PACKAGE.parent.joinpath(*name.split("."))
    return p.with_suffix(".py").exists() or (p / "__init__.py").exists()


FILES = sorted(PACKAGE.rglob("*.py"))


def allowed_rooms(r: str) -> set[str] | None:
    """Rooms a module of room ``r`` may import (None: anything)."""
    if r == "core":
        return {"core"}
    if r == "vision":
        return {"core", "vision"}
    if r in PAPERS:
        return {"core", "vision", r}
    return None


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_import_rules(path):
    src = module_name(path)
    allowed = allowed_rooms(room(src))
    if allowed is None:
        return
    bad = sorted(m for m in imported_modules(path)
                 if is_module(m) and room(m) not in allowed)
    assert not bad, f"{src} (room {room(src)!r}) imports {bad}; allowed rooms: {sorted(allowed)}"


def test_every_paper_is_a_room_and_the_rules_see_imports():
    for name in PAPERS:
        assert (PACKAGE / name / "__init__.py").exists()
    # the walker resolves relative and function-level imports (a rule that sees nothing
    # would pass vacuously)
    tr = imported_modules(PACKAGE / "jelassi2022" / "trainer.py")
    assert "theorylab.core.trainer" in tr and "theorylab.jelassi2022.engines" in tr
    figs = imported_modules(PACKAGE / "jelassi2022" / "figures" / "_images.py")
    assert "theorylab.vision.nets" in figs  # imported inside functions
    assert allowed_rooms("core") == {"core"}


def test_a_kernel_module_importing_a_paper_is_caught():
    """The rule on planted violations: kernel code with a lazy relative import of a paper, and
    one with an absolute import of the vision room."""
    fake = PACKAGE / "core" / "claims" / "planted.py"
    lazy = "def f():\n    from ...jelassi2022 import config\n    return config\n"
    found = imported_modules(fake, lazy)
    assert "theorylab.jelassi2022.config" in found
    assert any(is_module(m) and room(m) not in allowed_rooms("core") for m in found)
    found = imported_modules(fake, "import theorylab.vision.nets\n")
    assert any(is_module(m) and room(m) not in allowed_rooms("core") for m in found)


# -- no import circle -----------------------------------------------------------------------------
def import_graph() -> dict[str, set[str]]:
    """Module → the theorylab modules it imports (function-level imports included)."""
    graph = {}
    for path in FILES:
        name = module_name(path)
        graph[name] = {m for m in imported_modules(path) if is_module(m) and m != name}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm,
    iterative): every import circle lies inside one."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            v, edges = work[-1]
            w = next((w for w in edges if w in graph), None)
            if w is not None:
                if w not in index:
                    index[w] = low[w] = len(index)
                    stack.append(w)
                    on_stack.add(w)
                    work.append((w, iter(sorted(graph[w]))))
                elif w in on_stack:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                if len(comp) > 1:
                    found.append(sorted(comp))
    return found


def test_no_import_circle():
    graph = import_graph()
    assert not circles(graph), f"modules that import each other (directly or around a circle): " \
                               f"{circles(graph)}"


def test_the_circle_finder_finds_circles():
    """The finder on planted graphs: a two-module circle, a longer one beside an acyclic part,
    and an acyclic graph with a shared dependency (a diamond is not a circle)."""
    assert circles({"a": {"b"}, "b": {"a"}}) == [["a", "b"]]
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b", "c"}, "b": {"d"}, "c": {"d"}, "d": set()}) == []
    # the real graph: the bench harness and the first paper's benchmarks are not a circle
    graph = import_graph()
    assert "theorylab.jelassi2022.bench.empirical" in graph["theorylab.jelassi2022.bench.targets"]
    assert "theorylab.jelassi2022.bench.targets" not in graph[
        "theorylab.jelassi2022.bench.empirical"]


def test_no_figure_imports_a_claim():
    """A paper's figures take their configs and readings from shared modules (``setups``,
    ``phases``, ``ladders``, ...), never from its claim checks."""
    graph = import_graph()
    bad = {m: sorted(t for t in out if ".claims" in t)
           for m, out in graph.items() if ".figures" in m}
    assert not {m: t for m, t in bad.items() if t}, bad


# -- the kernel names no paper -----------------------------------------------------------------
def paper_mentions(text: str, names) -> list[str]:
    """The registered paper ids that ``text`` names (case-insensitive: code, strings, comments
    and docstrings alike)."""
    low = text.lower()
    return sorted(n for n in names if n.lower() in low)


def test_the_kernel_names_no_paper():
    """The kernel reaches a paper only through its `Paper` hooks: no file of ``core`` names a
    registered paper, not even in a string (an import test cannot see a module named in a
    string, or a paper singled out by name)."""
    found = {str(p.relative_to(PACKAGE)): paper_mentions(p.read_text(encoding="utf-8"), PAPERS)
             for p in sorted((PACKAGE / "core").rglob("*.py"))}
    assert len(found) > 20  # the kernel's files were read
    bad = {k: v for k, v in found.items() if v}
    assert not bad, f"kernel files naming a paper: {bad}"


def test_a_paper_named_in_a_kernel_string_is_caught():
    assert paper_mentions('BATCHED = "Jelassi2022"\n', PAPERS) == ["jelassi2022"]
    assert paper_mentions("# the huang2024 engines\n", PAPERS) == ["huang2024"]
    assert paper_mentions("import theorylab.core\n", PAPERS) == []
