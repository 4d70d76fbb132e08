"""Constants a function builds when it runs: `date(1996, 1, 1)`, `Decimal("0.30")` or
`timedelta(days=30)` called in the function body is the constant it makes, as a module-level
`CUTOFF = date(1996, 1, 1)` already is (closures and globals of literal values are folded when the function is read);
and the constants of `math` read as its attributes (`math.pi`)."""

from __future__ import annotations

import ast
import datetime
import decimal
import math
import types
from typing import Optional

from udflow.expr import Call, Lit, Neg

DATE_TYPES = (datetime.date, datetime.datetime)
NUMBERS = (int, float)  # a timedelta's arguments
MATH_CONSTANTS = ("pi", "e", "tau", "inf")  # floats; not nan, which equals no literal, itself included


# decimal's rounding modes: each constant holds its own name ("ROUND_HALF_UP")
ROUNDINGS = frozenset(name for name in dir(decimal) if name.startswith("ROUND_") and getattr(decimal, name) == name)


def math_constant(frame, node: ast.Attribute) -> Optional[Lit]:
    """`math.pi`, `math.e`, `math.tau`, `math.inf`, where the name before the dot is the
    module `math`: the float it holds; `decimal.ROUND_HALF_UP` and the other roundings of the
    module `decimal`: the str it holds. None for any other attribute."""
    if node.attr in MATH_CONSTANTS and _resolved(frame, node.value) is math:
        return Lit(getattr(math, node.attr))
    if node.attr in ROUNDINGS and _resolved(frame, node.value) is decimal:
        return Lit(getattr(decimal, node.attr))
    return None


def constant_made(frame, node, args) -> Optional[Lit]:
    """`date(1996, 1, 1)`, `datetime.datetime(2000, 1, 1, 12)` of int constants, or
    `Decimal("0.30")` of a str or int constant, called in the function: the constant it
    builds (a naive datetime; a Decimal exactly as written, whatever the context). None for
    anything else, and where the constructor raises (`date(2023, 2, 30)`, `Decimal("x")`):
    Python raises it, in Python."""
    made = _resolved(frame, node.func) if args and all(isinstance(a, Lit) for a in args) else None
    if made in DATE_TYPES and all(type(a.value) is int for a in args):
        values = [a.value for a in args]
    elif made is decimal.Decimal and len(args) == 1 and type(args[0].value) in (str, int):
        values = [args[0].value]
    else:
        return None
    try:
        return Lit(made(*values))
    except (ValueError, TypeError, OverflowError, ArithmeticError):
        return None


def constant_timedelta(frame, node, child) -> Optional[Lit]:
    """`timedelta(days=30)`, `timedelta(7, hours=1.5)` of int and float constants (`child` gives
    each argument's term): the duration it builds. None for anything else, and where the
    constructor raises (a magnitude past 999999999 days)."""
    if _resolved(frame, node.func) is not datetime.timedelta or any(isinstance(a, ast.Starred) for a in node.args) \
            or any(k.arg is None for k in node.keywords):
        return None
    args = [constant_number(child(frame, a)) for a in node.args]
    kwargs = {k.arg: constant_number(child(frame, k.value)) for k in node.keywords}
    if None in args or None in kwargs.values():
        return None
    try:
        return Lit(datetime.timedelta(*args, **kwargs))
    except (ValueError, TypeError, OverflowError):
        return None


TIMEDELTA_UNITS = ("days", "seconds", "minutes", "hours", "weeks")  # `expr_functions.FUNCTIONS["timedelta"]`


def timedelta_of(frame, node, child) -> Optional[Call]:
    """`timedelta(days=n)` (or `timedelta(n)`, or one of `TIMEDELTA_UNITS`) of a computed term:
    `Call('timedelta', (Lit(unit), n))`, a duration Python builds when the function runs
    (`spark_backend.native_dates.moved_by` moves a date by it). None for anything else: a
    constant duration is `constant_timedelta`'s, several units have no term."""
    if _resolved(frame, node.func) is not datetime.timedelta or len(node.args) + len(node.keywords) != 1 \
            or any(isinstance(a, ast.Starred) for a in node.args):
        return None
    unit, value = ("days", node.args[0]) if node.args else (node.keywords[0].arg, node.keywords[0].value)
    if unit not in TIMEDELTA_UNITS:
        return None
    term = child(frame, value)
    return None if term is None or isinstance(term, Lit) else Call("timedelta", (Lit(unit), term))


def constant_number(term):
    """The int or float a constant term is (`-1` is the negation of a constant), else None."""
    if isinstance(term, Neg):
        value = constant_number(term.operand)
        return None if value is None else -value
    return term.value if isinstance(term, Lit) and type(term.value) in NUMBERS else None


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
