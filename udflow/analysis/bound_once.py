"""A local name bound once, by a statement of the function's own body, and only read after it
in given ways: the one value Python's name holds at each of those reads.

    sizes = {"S": 1, "M": 2}          a statement of the body: it runs on every call, before
    ...                               every statement after it
    sizes.get(r["size"], 0)           a read the caller allows (`local_tables`: a look-up;
                                      `split_terms`: an item or the length of a split)

The binding is the only one in the function (no other assignment, `del`, loop target,
`global`, import or parameter of that name), and every other mention of the name is a read,
textually after the statement and of an allowed form, so nothing else holds the value to
change it, and no read happens before the binding (Python's UnboundLocalError).
"""

from __future__ import annotations

import ast
from typing import Callable, Optional


def bound_once(function: ast.AST, name: str, allowed: Callable[[ast.AST, ast.Name], bool]) -> Optional[ast.Assign]:
    """The assignment that binds `name` in `function` where the module docstring's conditions
    hold (`allowed(parent, read)` says whether a read is of an allowed form); else None."""
    body = getattr(function, "body", None)
    if not isinstance(body, list):
        return None  # a lambda binds no local
    binding = [s for s in body if isinstance(s, ast.Assign) and len(s.targets) == 1
               and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name]
    if len(binding) != 1:
        return None
    (assign,) = binding
    after = (assign.end_lineno, assign.end_col_offset)
    for parent in ast.walk(function):
        for child in ast.iter_child_nodes(parent):
            if not _names(child, name) or child is assign.targets[0]:
                continue
            if not isinstance(child, ast.Name) or not isinstance(child.ctx, ast.Load):
                return None  # bound or deleted again
            if (child.lineno, child.col_offset) < after or not allowed(parent, child):
                return None
    if any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in ast.walk(function)):
        return None
    return assign


def _names(node: ast.AST, name: str) -> bool:
    """Whether `node` binds, reads or deletes `name` (an `except ... as name`, an import and a
    nested definition's name bind it too)."""
    if isinstance(node, ast.Name):
        return node.id == name
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name == name
    if isinstance(node, ast.ExceptHandler):
        return node.name == name
    if isinstance(node, ast.alias):
        return (node.asname or node.name).split(".")[0] == name
    if isinstance(node, ast.arg):
        return node.arg == name
    return False
