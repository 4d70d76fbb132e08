"""Finding a function's syntax tree: one parse per file, nodes found by code positions.

`inspect.getsource` re-reads and re-tokenizes the file for every call; here the
whole file is parsed once (`linecache` + `ast`) and every def and lambda in it
is indexed by its first line. Several lambdas on one line are told apart by the
column span of their body, which the code object's `co_positions()` gives.
"""

from __future__ import annotations

import ast
import linecache
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional


@dataclass(frozen=True)
class FileIndex:
    filename: str
    lines: tuple
    tree: ast.Module
    functions: dict  # first line -> [FunctionDef | Lambda]
    rebound_globals: frozenset  # names some function declares `global`
    nonlocal_names: frozenset  # names some function declares `nonlocal`

    def text(self, line: int) -> str:
        return self.lines[line - 1].strip() if 0 < line <= len(self.lines) else ""


def _first_line(node) -> int:
    decorators = getattr(node, "decorator_list", None) or []
    return min([node.lineno] + [d.lineno for d in decorators])


@lru_cache(maxsize=256)
def _index(filename: str, text: str) -> Optional[FileIndex]:
    try:
        tree = ast.parse(text, filename)
    except SyntaxError:
        return None
    functions: dict = {}
    rebound, nonlocals = set(), set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            functions.setdefault(_first_line(node), []).append(node)
        elif isinstance(node, ast.Global):
            rebound.update(node.names)
        elif isinstance(node, ast.Nonlocal):
            nonlocals.update(node.names)
    return FileIndex(filename, tuple(text.splitlines()), tree, functions, frozenset(rebound), frozenset(nonlocals))


def file_index(code) -> Optional[FileIndex]:
    """The parsed file a code object comes from; None when its source is not available."""
    filename = code.co_filename
    if not filename or filename.startswith("<"):
        return None  # exec / eval / interactive code: no file to read
    lines = linecache.getlines(filename)
    if not lines:
        return None
    return _index(filename, "".join(lines))


def _contains(node, line: int, end_line: int, col: int, end_col: int) -> bool:
    """Does `node` span the code position (line, end_line, col, end_col) of `co_positions()`?"""
    start = (node.lineno, node.col_offset)
    end = (node.end_lineno, node.end_col_offset)
    return start <= (line, col) and (end_line, end_col) <= end


def _params(node) -> tuple:
    a = node.args
    return tuple(p.arg for p in a.posonlyargs + a.args)


def find_node(code, index: FileIndex):
    """The def or lambda node whose code object is `code`, or None."""
    candidates = index.functions.get(code.co_firstlineno, [])
    params = tuple(code.co_varnames[: code.co_argcount])
    if code.co_name != "<lambda>":
        named = [n for n in candidates if not isinstance(n, ast.Lambda) and n.name == code.co_name]
        named = [n for n in named if _params(n) == params] or named
        return named[0] if len(named) == 1 else None
    lambdas = [n for n in candidates if isinstance(n, ast.Lambda) and _params(n) == params]
    if len(lambdas) <= 1:
        return lambdas[0] if lambdas else None
    spans = [
        p for p in code.co_positions()
        if p[0] is not None and p[2] is not None and (p[0], p[2]) != (p[1], p[3])
    ]
    if not spans:
        return None
    inside = [n for n in lambdas if all(_contains(n.body, *s) for s in spans)]
    if not inside:
        return None
    # nested lambdas: the innermost one that holds every instruction of this code
    return min(inside, key=lambda n: (n.end_lineno - n.lineno, n.end_col_offset - n.col_offset))
