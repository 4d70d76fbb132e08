"""Constant tables written in the function itself (`udflow.tables`): a dict, set, list or
tuple literal of constants, looked up where it is written or through a local name that is
bound to it once and only looked up.

    {"BOO": "books", "MUS": "music"}.get(prefix, "other")
        TableGet(Table('{...}', ...), prefix, Lit('other'))     (a short literal: as written)
    sizes = {"S": 1, "M": 2}          a statement of the function's body, before every use
    sizes.get(r["size"], 0)           TableGet(Table('sizes', ...), r['size'], Lit(0))

The literal is evaluated once (`ast.literal_eval`); Python builds the same value on every
call, so the snapshot is the value every call looks up. A local name qualifies only where
Python's value at each use is surely that literal (`bound_once`): every use a look-up
(`name.get(...)`, `name[...]`, `... in name`).
"""

from __future__ import annotations

import ast
from typing import Optional

from udflow.analysis.bound_once import bound_once
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
    up after (`bound_once`); None otherwise."""
    assign = bound_once(function, name.id, _looked_up)
    return literal_table(assign.value, name.id) if assign is not None else None


def _looked_up(parent: ast.AST, use: ast.Name) -> bool:
    """Whether `use` is the table of a look-up: `use.get`, `use[...]`, or `... in use`."""
    if isinstance(parent, ast.Attribute):
        return parent.attr == "get"
    if isinstance(parent, ast.Subscript):
        return parent.value is use and isinstance(parent.ctx, ast.Load)
    if isinstance(parent, ast.Compare):
        return any(c is use and isinstance(op, (ast.In, ast.NotIn)) for op, c in zip(parent.ops, parent.comparators))
    return False


def table_of(frame, node) -> Optional[Table]:
    """The constant table (`udflow.tables`) a module global or closure variable named by `node`
    holds, as it is now, or a literal written in the function or a local bound to one
    (`local_tables`); None for another local name, a name some function rebinds, or anything
    but a dict, set or sequence of literals."""
    if not isinstance(node, ast.Name):
        return literal_table(node)
    scope = frame
    while scope is not None:
        if node.id in scope.env:
            return local_table(scope.unit.node, node) if scope is frame else None
        scope = scope.parent
    unit = frame.unit
    if node.id in unit.closure:
        value = unit.closure[node.id]
        if node.id in unit.index.nonlocal_names:
            return None
    elif node.id in unit.globals and node.id not in unit.index.rebound_globals:
        value = unit.globals[node.id]
    else:
        return None
    return Table.of(node.id, value)
