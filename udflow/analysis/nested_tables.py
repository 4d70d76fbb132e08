"""Look-ups in a constant dict of dicts (`udflow.tables.NestedGet`):

    SHIPPING = {"FR": {"std": 4.9, "express": 9.9}, "DE": {"std": 5.9}}

    SHIPPING.get(r["country"], {}).get(r["speed"], 0.0)   NestedGet(SHIPPING, country, get, speed, get, 0.0)
    SHIPPING[r["country"]][r["speed"]]                    NestedGet(SHIPPING, country, item, speed, item, None)
    SHIPPING[r["country"]].get(r["speed"])                NestedGet(..., item, ..., get, None)

The outer `get`'s default must be the empty dict written in place (another default is a
value no column holds). The keys and the inner default must be fields or constants: such
terms never raise, so a native plan that reads the inner key only where the outer key is
found computes what Python computes (Python reads the inner key and the default either way).
"""

from __future__ import annotations

import ast
from typing import Callable, Optional

from udflow.analysis.local_tables import table_of
from udflow.expr import Expr, Field, Lit
from udflow.tables import NestedGet


def nested_get_of(frame, node, child: Callable) -> Optional[Expr]:
    """The term of `node` (a `.get(...)` call or a subscript) where it looks up an inner dict
    of a nested table, or None."""
    inner = _access(node)
    if inner is None:
        return None
    inner_kind, receiver, inner_args = inner
    outer = _access(receiver)
    if outer is None:
        return None
    outer_kind, table_node, outer_args = outer
    if outer_kind == "get" and not (len(outer_args) == 2 and isinstance(outer_args[1], ast.Dict)
                                    and not outer_args[1].keys):
        return None
    table = table_of(frame, table_node)
    if table is None or table.kind != "nested":
        return None
    terms = [child(frame, a) for a in (outer_args[0], *inner_args)]
    if not all(isinstance(t, (Field, Lit)) for t in terms):
        return None
    default = terms[2] if len(terms) == 3 else Lit(None)
    return NestedGet(table, terms[0], outer_kind, terms[1], inner_kind, default)


def _access(node) -> Optional[tuple[str, ast.AST, list]]:
    """("get", receiver, args) for `receiver.get(args)` of one or two plain arguments,
    ("item", receiver, [key]) for `receiver[key]`; None for anything else."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "get" \
            and not node.keywords and 1 <= len(node.args) <= 2 and not any(isinstance(a, ast.Starred) for a in node.args):
        return "get", node.func.value, list(node.args)
    if isinstance(node, ast.Subscript) and not isinstance(node.slice, ast.Slice):
        return "item", node.value, [node.slice]
    return None
