"""Constants a function builds when it runs: `date(1996, 1, 1)` called in the function body is
the constant it makes, as a module-level `CUTOFF = date(1996, 1, 1)` already is (closures and
globals of literal values are folded when the function is read)."""

from __future__ import annotations

import ast
import datetime
import types
from typing import Optional

from udflow.expr import Lit

DATE_TYPES = (datetime.date, datetime.datetime)


def constant_date(frame, node, args) -> Optional[Lit]:
    """`date(1996, 1, 1)`, `datetime.datetime(2000, 1, 1, 12)` of int constants, called in the
    function: the constant it builds (a naive one). None for anything else, and where the
    constructor raises (`date(2023, 2, 30)`): Python raises it, in Python."""
    if not args or not all(isinstance(a, Lit) and type(a.value) is int for a in args):
        return None
    made = _resolved(frame, node.func)
    if made not in DATE_TYPES:
        return None
    try:
        return Lit(made(*[a.value for a in args]))
    except (ValueError, TypeError, OverflowError):
        return None


def _resolved(frame, node):
    """The object a name or a module attribute (`dt.date`) is bound to in the function's
    globals, where the analysis resolves it to one object; else None."""
    if isinstance(node, ast.Attribute):
        module = _resolved(frame, node.value)
        return getattr(module, node.attr, None) if isinstance(module, types.ModuleType) else None
    if not isinstance(node, ast.Name):
        return None
    try:
        found = frame.lookup(node.id, node)
    except Exception:  # noqa: BLE001 - not a name the analysis resolves
        return None
    objs = {id(getattr(a, "obj", None)): getattr(a, "obj", None) for a in found.atoms}
    return next(iter(objs.values())) if len(objs) == 1 else None
