"""Terms of attributes: a date's parts, a duration's days, `math`'s constants, and the parts
of the ISO calendar, read through a value the IR does not hold.

    d.year                    Call('date.year', (d,))
    (b - a).days              Call('timedelta.days', (Arith('-', b, a),))
    math.pi                   Lit(3.141592653589793)
    d.timetuple().tm_yday     Call('date.dayofyear', (d,))

`d.isocalendar()` is a named tuple, which no term is; its parts are ints, read by index or
by name, each one term:

    d.isocalendar()[1]        Call('date.isocalendar', (d, Lit(1)))     the ISO week
    d.isocalendar().year      Call('date.isocalendar', (d, Lit(0)))     the ISO year
    d.isocalendar()[-1]       Call('date.isocalendar', (d, Lit(2)))     the ISO weekday, 1 .. 7

and a date's parts replaced by constants that always make a valid date (`replaced_parts`):

    ts.replace(second=0, microsecond=0)   Call('date.replace', (ts, 'second', 0, 'microsecond', 0))
    d.replace(day=1)                      Call('date.replace', (d, 'day', 1))
"""

from __future__ import annotations

import ast
from typing import Callable, Optional

from udflow.analysis.constants import math_constant
from udflow.expr import Call, Expr, Lit

DATE_PARTS = ("year", "month", "day", "hour", "minute", "second")
ISO_PARTS = {"year": 0, "week": 1, "weekday": 2}
# the parts `replace` may set, each to a constant in this range: a day up to 28 and a month only
# with a day, so that no result is invalid (Feb 30 is Python's ValueError); not the year (Feb 29)
REPLACEABLE = {"month": range(1, 13), "day": range(1, 29), "hour": range(24), "minute": range(60),
               "second": range(60), "microsecond": range(1_000_000)}


def replaced_parts(frame, node: ast.Call, child: Callable) -> Optional[Call]:
    """`d.replace(day=1)`, `ts.replace(minute=0, second=0, microsecond=0)`: keywords only, each
    a part of `REPLACEABLE` set to an int constant in its range; None for any other call."""
    if not (isinstance(node.func, ast.Attribute) and node.func.attr == "replace") or node.args or not node.keywords:
        return None
    parts = {k.arg: k.value for k in node.keywords}
    if None in parts or len(parts) != len(node.keywords) or not set(parts) <= set(REPLACEABLE) \
            or ("month" in parts and "day" not in parts):
        return None
    if not all(isinstance(v, ast.Constant) and type(v.value) is int and v.value in REPLACEABLE[k]
               for k, v in parts.items()):
        return None
    receiver = child(frame, node.func.value)
    if receiver is None:
        return None
    flat = [Lit(x) for name in REPLACEABLE if name in parts for x in (name, parts[name].value)]
    return Call("date.replace", (receiver, *flat))


def attribute_term(frame, node: ast.Attribute, child: Callable) -> Optional[Expr]:
    """The term of `node.attr` read from `node.value` (`child` gives a node's term), or None."""
    if (part := iso_calendar_part(frame, node, child)) is not None:
        return part
    if node.attr == "tm_yday" and (called := _method_call(node.value, "timetuple")) is not None:
        receiver = child(frame, called.func.value)
        return Call("date.dayofyear", (receiver,)) if receiver is not None else None
    if node.attr in DATE_PARTS or node.attr == "days":
        base = child(frame, node.value)
        name = "timedelta.days" if node.attr == "days" else f"date.{node.attr}"
        return Call(name, (base,)) if base is not None else None
    return math_constant(frame, node)


def iso_calendar_part(frame, node: ast.AST, child: Callable, index=None) -> Optional[Call]:
    """The term of `node` where it reads one part of `<receiver>.isocalendar()` (`child`
    gives the receiver's term; `index`, for a subscript, its constant int index as
    `terms._int_literal` reads it); None for anything else, and for an index past the tuple
    (Python's IndexError, in Python)."""
    if isinstance(node, ast.Subscript) and type(index) is int:
        if not -3 <= index < 3:
            return None
        index %= 3
    elif isinstance(node, ast.Attribute) and node.attr in ISO_PARTS:
        index = ISO_PARTS[node.attr]
    else:
        return None
    called = _method_call(node.value, "isocalendar")
    if called is None:
        return None
    receiver = child(frame, called.func.value)
    return Call("date.isocalendar", (receiver, Lit(index))) if receiver is not None else None


def _method_call(node: ast.AST, name: str) -> Optional[ast.Call]:
    """`node` where it is `<receiver>.name()` called without arguments, else None."""
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == name \
            and not node.args and not node.keywords:
        return node
    return None

