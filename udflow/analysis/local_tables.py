"""Constant tables written in the function itself (`udflow.tables`): a dict, set, list or
tuple literal of constants, looked up where it is written or through a local name that is
bound to it once and only looked up.

    {"BOO": "books", "MUS": "music"}.get(prefix, "other")
        TableGet(Table('{...}', ...), prefix, Lit('other'))     (a short literal: as written)
    sizes = {"S": 1, "M": 2}          a statement of the function's body, before every use
    sizes.get(r["size"], 0)           TableGet(Table('sizes', ...), r['size'], Lit(0))

The literal is evaluated once (`ast.literal_eval`); Python builds the same value on every
call, so the snapshot is the value every call looks up. A local name qualifies only where
Python's value at each use is surely that literal: one plain assignment, a statement of the
function's own body (run on every call, before anything after it), every other use of the
name after it and a look-up (`name.get(...)`, `name[...]`, `... in name`), so no one else
holds it to change it.
"""

from __future__ import annotations

import ast
from typing import Optional

from udflow.tables import Table

SHAPES = {ast.Dict: "{...}", ast.Set: "{...}", ast.List: "[...]", ast.Tuple: "(...)"}  # a literal's printed name
LITERALS = tuple(SHAPES)
SHOWN = 40  # a literal printed as written up to this length, by its shape beyond


def literal_table(node: ast.AST, name: str = "") -> Optional[Table]:
    """The table a literal of constants builds, or None (a computed entry, not a table)."""
    if not isinstance(node, LITERALS):
        return None
    try:
        value = ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None
    if not name:
        text = ast.unparse(node)
        name = text if len(text) <= SHOWN else SHAPES[type(node)]
    return Table.of(name, value)


def local_table(function: ast.AST, name: ast.Name) -> Optional[Table]:
    """The table the local `name` holds where it is bound once to a literal and only looked
    up (module docstring); None otherwise."""
    body = getattr(function, "body", None)
    if not isinstance(body, list):
        return None  # a lambda binds no local
    binding = [s for s in body if isinstance(s, ast.Assign) and len(s.targets) == 1
               and isinstance(s.targets[0], ast.Name) and s.targets[0].id == name.id]
    if len(binding) != 1:
        return None
    (assign,) = binding
    after = (assign.end_lineno, assign.end_col_offset)
    for parent in ast.walk(function):
        for child in ast.iter_child_nodes(parent):
            if not _names(child, name.id) or child is assign.targets[0]:
                continue
            if not isinstance(child, ast.Name) or not isinstance(child.ctx, ast.Load):
                return None  # bound or deleted again
            if (child.lineno, child.col_offset) < after or not _looked_up(parent, child):
                return None
    if any(isinstance(n, (ast.Global, ast.Nonlocal)) and name.id in n.names for n in ast.walk(function)):
        return None
    return literal_table(assign.value, name.id)


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


def _looked_up(parent: ast.AST, use: ast.Name) -> bool:
    """Whether `use` is the table of a look-up: `use.get`, `use[...]`, or `... in use`."""
    if isinstance(parent, ast.Attribute):
        return parent.attr == "get"
    if isinstance(parent, ast.Subscript):
        return parent.value is use and isinstance(parent.ctx, ast.Load)
    if isinstance(parent, ast.Compare):
        return any(c is use and isinstance(op, (ast.In, ast.NotIn)) for op, c in zip(parent.ops, parent.comparators))
    return False
