"""mxjax's modules import each other without cycles (issue 17): layers import only downward.

The graph is derived from the source: every module-level ``import``/``from ... import`` of an
mxjax module (inside ``if``/``try`` blocks too), ``from pkg import name`` counted as an import
of ``pkg.name`` when that is a module, else of ``pkg``.  The full graph also counts imports
inside functions (a local import must not stand in for a cycle) and the package
``__init__`` each import runs: importing ``mxjax.a.b.c`` runs ``mxjax.a`` and ``mxjax.a.b``
first.  The root ``mxjax`` is left out of those package edges: it is the facade that
imports every layer, and every module is below it.
"""
from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "mxjax"


def _modules() -> dict[str, Path]:
    found = {}
    for path in PACKAGE.rglob("*.py"):
        parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        found[name] = path
    return found


def _targets(module: str, is_package: bool, node: ast.AST, modules: dict) -> list[str]:
    if isinstance(node, ast.Import):
        return [a.name for a in node.names if a.name in modules]
    if node.level:
        base = module.split(".")
        base = base if is_package else base[:-1]
        base = base[:len(base) - node.level + 1]
        source = ".".join(base + ([node.module] if node.module else []))
    else:
        source = node.module or ""
    out = []
    for alias in node.names:
        sub = f"{source}.{alias.name}"
        out.append(sub if sub in modules else source)
    return [t for t in out if t in modules]


def import_graph() -> dict[str, set[str]]:
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        deps: set[str] = set()
        for top in tree.body:
            nodes = ast.walk(top) if isinstance(top, (ast.If, ast.Try)) else [top]
            for node in nodes:
                if isinstance(node, (ast.Import, ast.ImportFrom)):
                    deps.update(_targets(name, path.name == "__init__.py", node, modules))
        deps.discard(name)
        graph[name] = deps
    return graph


def _enclosing_packages(importer: str, target: str) -> list[str]:
    """The packages (below the root) whose ``__init__`` importing ``target`` runs, other than the
    importer's own (already running when it imports anything)."""
    parts = target.split(".")
    found = []
    for k in range(2, len(parts)):
        package = ".".join(parts[:k])
        if importer != package and not importer.startswith(package + "."):
            found.append(package)
    return found


def full_import_graph() -> dict[str, set[str]]:
    """Every import anywhere in a module (function bodies too), plus the package inits it runs."""
    modules = _modules()
    graph = {}
    for name, path in modules.items():
        tree = ast.parse(path.read_text(), str(path))
        deps: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _targets(name, path.name == "__init__.py", node, modules):
                    deps.add(target)
                    deps.update(_enclosing_packages(name, target))
        deps.discard(name)
        graph[name] = deps
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components of more than one module (iterative Tarjan)."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_no_import_cycles():
    graph = import_graph()
    assert len(graph) > 100 and "mxjax.gluon.block" in graph["mxjax.gluon"]
    assert cycles(graph) == []


def test_the_cycle_finder_finds_cycles():
    graph = {"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}, "e": {"e2"}, "e2": {"e"}, "f": set()}
    assert sorted(cycles(graph)) == [["a", "b", "c"], ["e", "e2"]]


# The fork server's child runs ``import mxjax`` inside a function, on purpose: it starts before
# JAX is loaded and imports the package only when a worker needs it (see gluon/data/_zygote.py).
# That is the one import allowed to go up; every other import, local or not, goes down.
DELIBERATE_UPWARD = {("mxjax.gluon.data._zygote", "mxjax")}


def test_no_import_cycles_counting_local_imports_and_package_inits():
    graph = full_import_graph()
    for importer, target in DELIBERATE_UPWARD:
        assert target in graph[importer], f"{importer} no longer imports {target}: update DELIBERATE_UPWARD"
    with_it = cycles(graph)
    assert len(with_it) == 1 and "mxjax.gluon.data._zygote" in with_it[0]
    for importer, target in DELIBERATE_UPWARD:
        graph[importer].discard(target)
    assert cycles(graph) == []


def test_full_graph_counts_local_imports_and_package_inits():
    graph = full_import_graph()
    # a function-local import (the zygote's) and a package init run by a deeper import
    assert "mxjax.gluon.data._worker" in graph["mxjax.gluon.data._zygote"]
    assert "mxjax.symbol" in graph["mxjax.gluon._cached_graph"]  # it imports mxjax.symbol.interpret
    assert _enclosing_packages("mxjax.a.x", "mxjax.a.b.c") == ["mxjax.a.b"]
    assert _enclosing_packages("mxjax.z", "mxjax.a.b.c") == ["mxjax.a", "mxjax.a.b"]
    assert _enclosing_packages("mxjax.a.b", "mxjax.a.b.c") == []
