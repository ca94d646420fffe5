"""No import circles in ``daemon`` and ``ui``.

Every module's imports are read statically (``ast``): top-level, function-level
and ``TYPE_CHECKING`` imports alike, since a lazy import is still a
dependency and the next refactoring may hoist it.  ``from package import
name`` counts as an import of ``package.name`` when that is a module of the
project, otherwise of ``package``.  Importing a module's parent packages (their
``__init__``) is implicit and not counted: a package may re-export its modules.
A shared type goes down to a module both sides depend on.
"""

from __future__ import annotations

import ast
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGES = ("daemon", "ui")


def project_modules(root: pathlib.Path = ROOT) -> dict[str, pathlib.Path]:
    modules = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts.pop()
            modules[".".join(parts)] = path
    return modules


def _project_module(name: str, modules: dict[str, pathlib.Path]) -> str:
    """The project module ``name`` refers to (its longest known prefix), or ""."""
    while name and name not in modules:
        name = name.rpartition(".")[0]
    return name


def imports_of(module: str, path: pathlib.Path, modules: dict[str, pathlib.Path]) -> dict[str, int]:
    """Project modules ``module`` imports, each with the first line that does."""
    found: dict[str, int] = {}
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")[: len(package.split(".")) - node.level + 1]
                source = ".".join(base + ([node.module] if node.module else []))
            else:
                source = node.module or ""
            targets = [f"{source}.{alias.name}" for alias in node.names]
        else:
            continue
        for target in targets:
            hit = _project_module(target, modules)
            if hit and hit != module:
                found.setdefault(hit, node.lineno)
    return found


def import_graph(root: pathlib.Path = ROOT) -> dict[str, dict[str, int]]:
    modules = project_modules(root)
    return {m: imports_of(m, p, modules) for m, p in modules.items()}


def cycles(graph: dict[str, dict[str, int]]) -> list[list[str]]:
    """One cycle per strongly connected component of more than one module
    (Tarjan), as the modules along it, the first repeated at the end."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    components: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, {}):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                components.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return [_path_through(sorted(c), graph) for c in components]


def _path_through(component: list[str], graph: dict[str, dict[str, int]]) -> list[str]:
    """A shortest cycle from the component's first module back to itself."""
    members = set(component)
    start = component[0]
    previous: dict[str, str] = {}
    frontier = [start]
    while frontier:
        following = []
        for v in frontier:
            for w in sorted(graph[v]):
                if w not in members:
                    continue
                if w == start:
                    path = [v]
                    while path[-1] != start:
                        path.append(previous[path[-1]])
                    return path[::-1] + [start]
                if w not in previous:
                    previous[w] = v
                    following.append(w)
        frontier = following
    return component + [start]  # pragma: no cover - a component always has a cycle


def _describe(cycle: list[str], graph: dict[str, dict[str, int]], modules: dict[str, pathlib.Path]) -> str:
    steps = []
    for a, b in zip(cycle, cycle[1:]):
        steps.append(f"{a} -> {b} ({modules[a].relative_to(ROOT)}:{graph[a][b]})")
    return "; ".join(steps)


def test_no_import_cycles():
    modules = project_modules()
    graph = import_graph()
    found = [_describe(c, graph, modules) for c in cycles(graph)]
    assert found == [], "import cycles:\n" + "\n".join(found)


def test_the_checker_sees_lazy_and_relative_imports(tmp_path):
    pkg = tmp_path / "daemon"
    (pkg / "sub").mkdir(parents=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "sub" / "__init__.py").write_text("")
    (pkg / "a.py").write_text("from daemon.sub import b\n")
    (pkg / "sub" / "b.py").write_text("def f():\n    from . import c\n")
    (pkg / "sub" / "c.py").write_text("import daemon.a\n")
    (pkg / "d.py").write_text("from daemon.sub.c import x\n")
    (tmp_path / "ui").mkdir()
    graph = import_graph(tmp_path)
    assert graph["daemon.a"] == {"daemon.sub.b": 1}
    assert graph["daemon.sub.b"] == {"daemon.sub.c": 2}
    assert cycles(graph) == [["daemon.a", "daemon.sub.b", "daemon.sub.c", "daemon.a"]]
