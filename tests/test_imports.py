"""The shape of the code: udflow's modules import one another without a circle,
and the modules of the analysis stay small enough to read (docs/analysis.md,
"How it works").

The import graph is read from the modules' syntax trees, so an import inside
a function (a lazy import, the usual way to hide a circle) counts like any other.
No module of udflow is part of a circle (the last one, `udflow.flow` ->
`udflow.spark_backend` -> `udflow.flow`, went with issue 14).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import udflow

ROOT = Path(udflow.__file__).resolve().parent  # the udflow package directory
MAX_ANALYSIS_LINES = 550


def module_name(path: Path, root: Path) -> str:
    parts = path.relative_to(root.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def modules(root: Path) -> dict:
    """Every module of the package at `root`: name -> path."""
    return {module_name(p, root): p for p in sorted(root.rglob("*.py"))}


def imported(name: str, path: Path, known: dict) -> set:
    """The udflow modules that `name` imports, at module level or inside functions.
    `from pkg import x` imports the module `pkg.x` when there is one, else `pkg`."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    out = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            for a in node.names:
                sub = f"{base}.{a.name}"
                out.add(sub if sub in known else base)
    return {m for m in out if m in known and m != name}


def import_graph(root: Path = ROOT) -> dict:
    """module -> the modules of the same package it imports."""
    known = modules(root)
    return {name: imported(name, path, known) for name, path in known.items()}


def cycles(graph: dict) -> list:
    """The strongly connected components with more than one module (Tarjan), sorted."""
    index, low, stack, on_stack, out = {}, {}, [], set(), []

    def visit(v):
        index[v] = low[v] = len(index)
        stack.append(v)
        on_stack.add(v)
        for w in sorted(graph[v]):
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
                out.append(sorted(component))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def test_the_graph_sees_lazy_and_relative_imports(tmp_path):
    """The reader of imports finds an import inside a function and resolves a relative one."""
    pkg = tmp_path / "udflow"
    pkg.mkdir()
    (pkg / "a.py").write_text("def f():\n    from udflow import b\n    return b\n")
    (pkg / "b.py").write_text("from .a import f\n")
    graph = import_graph(pkg)
    assert graph == {"udflow.a": {"udflow.b"}, "udflow.b": {"udflow.a"}}
    assert cycles(graph) == [["udflow.a", "udflow.b"]]


def test_no_import_circle_involves_the_analysis():
    found = [c for c in cycles(import_graph()) if any(m.startswith("udflow.analysis") for m in c)]
    assert found == [], f"import circles through udflow.analysis: {found}"


def test_no_import_circle_anywhere_in_udflow():
    """DESIGN.md: no import circles (flow.py and the Spark backend included, issue 14)."""
    assert cycles(import_graph()) == []


@pytest.mark.parametrize("path", sorted((ROOT / "analysis").glob("*.py")), ids=lambda p: p.name)
def test_analysis_modules_are_small(path):
    lines = len(path.read_text().splitlines())
    assert lines <= MAX_ANALYSIS_LINES, f"{path.name} has {lines} lines (at most {MAX_ANALYSIS_LINES})"
