"""The layout's import rules (docs/architecture.md), checked on every import of the package:
static imports, imports inside functions, and by-name loads (``importlib.import_module``,
``__import__`` of a name written in the code).

The package is six layers, each importing only its own layer and the ones below it:

1. the kernel (``theorylab.core``);
2. ``theorylab.vision``;
3. the papers (``theorylab.<paper>``), each importing itself but never another paper;
4. the registry's face (``theorylab.papers``);
5. ``theorylab.analysis``;
6. the commands (``theorylab.commands``, the thin command modules, ``__main__``, the package's
   ``__init__`` and ``theorylab.testing``).

No module imports itself around a circle (imports inside functions count too), and no module
loads a module of the package by name: the papers come from the kernel's registry
(entry points), everything else from import statements.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from theorylab.papers import PAPERS

PACKAGE = Path(__file__).resolve().parents[1] / "theorylab"
LAYERS = ("core", "vision", "papers", "registry face", "analysis", "commands")
_LOADERS = {"import_module", "__import__"}


def module_name(path: Path, package: Path = PACKAGE) -> str:
    parts = list(path.relative_to(package.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _loaded_by_name(call: ast.Call, names: dict[str, str], loaders: set[str]) -> str | None:
    """The module a call ``import_module(X)`` / ``__import__(X)`` loads when X is written in
    the code: a string, an f-string (its text up to the first field, ending in "{"), or a
    module-level name bound to a string; None for any other call."""
    func = call.func
    name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
    if name not in loaders or not call.args:
        return None
    arg = call.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        return arg.value
    if isinstance(arg, ast.Name) and arg.id in names:
        return names[arg.id]
    if isinstance(arg, ast.JoinedStr):
        head = arg.values[0] if arg.values else None
        text = head.value if isinstance(head, ast.Constant) else ""
        return text + "{"
    return None


def by_name_loads(path: Path, text: str | None = None, package: Path = PACKAGE) -> set[str]:
    """The theorylab modules that ``path`` (or ``text`` read as that file) loads by name."""
    tree = ast.parse(path.read_text() if text is None else text, str(path))
    names = {t.id: n.value.value for n in tree.body if isinstance(n, ast.Assign)
             and isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
             for t in n.targets if isinstance(t, ast.Name)}
    loaders = _LOADERS | {a.asname for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)
                          for a in n.names if a.name in _LOADERS and a.asname}
    found = {_loaded_by_name(n, names, loaders) for n in ast.walk(tree)
             if isinstance(n, ast.Call)}
    top = package.name
    return {m for m in found if m and (m == top or m.startswith((top + ".", "{")))}


def imported_modules(path: Path, text: str | None = None, package: Path = PACKAGE) -> set[str]:
    """Absolute names of the theorylab modules imported anywhere in ``path`` (or in ``text``
    read as if it were that file): import statements at any depth and by-name loads."""
    name = module_name(path, package)
    pkg = name if path.name == "__init__.py" else name.rsplit(".", 1)[0]
    top = package.name
    found = set()
    for node in ast.walk(ast.parse(path.read_text() if text is None else text, str(path))):
        if isinstance(node, ast.Import):
            found |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = pkg.split(".")
                base = base[: len(base) - (node.level - 1)]
                mod = ".".join(base + ([node.module] if node.module else []))
            else:
                mod = node.module or ""
            # ``from theorylab import jelassi2022`` imports a subpackage (the package's own
            # __init__ is imported by every import of the package, and is no edge)
            subs = {f"{mod}.{a.name}" for a in node.names}
            found |= subs if mod == top else {mod, *subs}
    found |= by_name_loads(path, text, package)
    return {m for m in found if m == top or m.startswith(top + ".")}


def room(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def layer(module: str) -> int:
    """The layer of a module (an index of [`LAYERS`][])."""
    r = room(module)
    named = {"core": "core", "vision": "vision", "papers": "registry face",
             "analysis": "analysis"}
    return LAYERS.index("papers" if r in PAPERS else named.get(r, "commands"))


def is_module(name: str, package: Path = PACKAGE) -> bool:
    p = package.parent.joinpath(*name.split("."))
    return p.with_suffix(".py").exists() or (p / "__init__.py").exists()


FILES = sorted(PACKAGE.rglob("*.py"))


def import_faults(src: str, imported) -> list[str]:
    """What is wrong with module ``src`` importing each of ``imported``: a higher layer, or
    another paper."""
    bad = []
    for m in sorted(imported):
        if layer(m) > layer(src):
            bad.append(f"{m} (layer {LAYERS[layer(m)]!r} above {LAYERS[layer(src)]!r})")
        elif layer(m) == layer(src) == LAYERS.index("papers") and room(m) != room(src):
            bad.append(f"{m} (another paper)")
    return bad


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_import_rules(path):
    src = module_name(path)
    bad = import_faults(src, {m for m in imported_modules(path) if is_module(m)})
    assert not bad, f"{src} (layer {LAYERS[layer(src)]!r}) imports {bad}"


def test_no_module_loads_the_package_by_name():
    """A module of the package is reached through an import statement (which the rules above
    see), never by a name handed to ``import_module`` or ``__import__``."""
    found = {str(p.relative_to(PACKAGE)): sorted(by_name_loads(p)) for p in FILES}
    assert not {k: v for k, v in found.items() if v}, found


#: The modules that call ``import_module`` on a name they are handed (data, not a module of the
#: package written in the code): the command table, a sweep point's "package.module:name", and
#: the modules whose source a stored real-image arm depends on.
DATA_LOADERS = {"commands/__init__.py", "core/sweep/runner.py", "huang2024/realvit.py"}


def test_every_other_load_by_name_is_a_documented_one():
    """Any other call of ``import_module`` or ``__import__`` in the package is new: make it an
    import statement, or add it here with the reason."""
    def loads_data(path: Path) -> bool:
        for n in ast.walk(ast.parse(path.read_text())):
            name = getattr(getattr(n, "func", None), "attr", None) or getattr(
                getattr(n, "func", None), "id", None)
            if isinstance(n, ast.Call) and name in _LOADERS:
                return True
        return False

    calls = {str(p.relative_to(PACKAGE)) for p in FILES if loads_data(p)}
    assert "core/sweep/runner.py" in calls  # the walk sees them
    assert calls <= DATA_LOADERS, sorted(calls - DATA_LOADERS)


def test_every_paper_is_a_room_and_the_rules_see_imports():
    for name in PAPERS:
        assert (PACKAGE / name / "__init__.py").exists()
        assert layer(f"theorylab.{name}.config") == LAYERS.index("papers")
    # the walker resolves relative and function-level imports (a rule that sees nothing
    # would pass vacuously)
    tr = imported_modules(PACKAGE / "jelassi2022" / "trainer.py")
    assert "theorylab.core.trainer" in tr and "theorylab.jelassi2022.engines" in tr
    figs = imported_modules(PACKAGE / "jelassi2022" / "figures" / "_images.py")
    assert "theorylab.vision.nets" in figs  # imported inside functions
    assert [layer(m) for m in ("theorylab.core.sweep", "theorylab.vision.nets",
                               "theorylab.huang2024", "theorylab.papers", "theorylab.analysis",
                               "theorylab.commands.run", "theorylab")] == [0, 1, 2, 3, 4, 5, 5]


def test_a_kernel_module_importing_a_paper_is_caught():
    """The rule on planted violations: kernel code with a lazy relative import of a paper, an
    absolute import of the vision room, and by-name loads of the registry's face."""
    fake = PACKAGE / "core" / "claims" / "planted.py"
    src = module_name(fake)
    lazy = "def f():\n    from ...jelassi2022 import config\n    return config\n"
    found = imported_modules(fake, lazy)
    assert "theorylab.jelassi2022.config" in found
    assert "theorylab.jelassi2022.config (layer 'papers' above 'core')" in import_faults(src,
                                                                                        found)
    assert import_faults(src, imported_modules(fake, "import theorylab.vision.nets\n"))
    for planted in ('def f():\n    import importlib\n'
                    '    return importlib.import_module("theorylab.papers")\n',
                    'NAME = "theorylab.papers"\n\ndef f():\n    return __import__(NAME)\n',
                    'from importlib import import_module as load\n'
                    'def f(n):\n    return load(f"theorylab.{n}")\n'):
        assert by_name_loads(fake, planted), planted
    planted = 'import importlib\nimportlib.import_module("theorylab.papers")\n'
    by_name = imported_modules(fake, planted)
    assert import_faults(src, by_name) == [
        "theorylab.papers (layer 'registry face' above 'core')"]
    assert not by_name_loads(fake, 'import importlib\nimportlib.import_module("numpy")\n')


def test_a_lazy_upward_import_and_a_circle_in_a_tree_are_caught(tmp_path):
    """The whole walk on a planted package tree (not the package): a paper whose function
    imports the registry's face, and a kernel module that loads it by name, make an upward
    import and a circle."""
    pkg = tmp_path / "theorylab"
    files = {"__init__.py": "", "core/__init__.py": "",
             "papers.py": "from theorylab.core import sweep\n",
             "core/sweep.py": "import importlib\n\ndef f():\n"
                              "    return importlib.import_module('theorylab.papers')\n",
             f"{next(iter(PAPERS))}/__init__.py": "def g():\n    from theorylab import papers\n"
                                                  "    return papers\n"}
    for name, text in files.items():
        (pkg / name).parent.mkdir(parents=True, exist_ok=True)
        (pkg / name).write_text(text)
    graph = import_graph(pkg)
    paper = f"theorylab.{next(iter(PAPERS))}"
    assert import_faults(paper, graph[paper]) == [
        "theorylab.papers (layer 'registry face' above 'papers')"]
    assert circles(graph) == [["theorylab.core.sweep", "theorylab.papers"]]


# -- no import circle -----------------------------------------------------------------------------
def import_graph(package: Path = PACKAGE) -> dict[str, set[str]]:
    """Module → the theorylab modules it imports (function-level imports and by-name loads
    included), with the packages that an import runs on the way: importing ``a.b.c`` runs
    ``a.b``'s ``__init__`` unless the importer lies inside ``a.b``."""
    graph = {}
    for path in sorted(package.rglob("*.py")):
        name = module_name(path, package)
        found = {m for m in imported_modules(path, package=package) if is_module(m, package)}
        graph[name] = set()
        for m in found:
            parts = m.split(".")
            runs = {".".join(parts[:i]) for i in range(2, len(parts) + 1)}
            graph[name] |= {p for p in runs if not f"{name}.".startswith(f"{p}.")}
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


# -- docs/architecture.md lists the kernel as it is ----------------------------------------------
def tree_paths(text: str) -> set[str]:
    """The paths of the entries of the first ``text`` block of a markdown page drawn as a tree
    (``├── name   what it is``, four columns per level; a folder ends in ``/``)."""
    block = text.split("```text\n", 1)[1].split("```", 1)[0].splitlines()
    stack = [block[0].strip()]
    paths = set()
    for line in block[1:]:
        at = max(line.find("├── "), line.find("└── "))
        if at < 0:
            continue  # a description's second line
        depth = at // 4 + 1
        name = line[at + 4:].split()[0].rstrip(",")
        stack = stack[:depth] + [name]
        paths.add("".join(stack))
    return paths


def test_the_architecture_page_lists_every_kernel_module():
    """Every module of the kernel has its line in docs/architecture.md's tree, and every line
    of the kernel there is a module or folder that exists."""
    listed = {p for p in tree_paths((PACKAGE.parent / "docs" / "architecture.md").read_text(
        encoding="utf-8")) if p.startswith("theorylab/core/")}
    files = {str(p.relative_to(PACKAGE.parent)) for p in (PACKAGE / "core").rglob("*.py")
             if p.name != "__init__.py"}
    folders = {str(p.relative_to(PACKAGE.parent)) + "/" for p in (PACKAGE / "core").rglob("*")
               if (p / "__init__.py").exists()} | {"theorylab/core/"}
    assert sorted(files - listed) == [], "kernel modules missing from docs/architecture.md"
    assert sorted(listed - files - folders) == [], "docs/architecture.md lists what is not there"


def test_the_tree_reader_reads_nesting():
    page = ("```text\npkg/\n├── a/   a folder\n│   ├── b.py     what b is,\n│   │            "
            "on two lines\n│   └── c.py\n└── d.py\n```\n")
    assert tree_paths(page) == {"pkg/a/", "pkg/a/b.py", "pkg/a/c.py", "pkg/d.py"}
