"""f-strings as terms: each replacement field is what Python formats it as.

    f"{a}/{b}"            Call('str', (a,)) + Lit('/') + Call('str', (b,))
    f"{price:.2f} EUR"    Call('format', (price, Lit('.2f'))) + Lit(' EUR')
    f"{m:02d}"            Call('format', (m, Lit('02d')))
    f"{name!r}"           Call('repr', (name,))

A replacement field `{x!c:spec}` is `format(c(x), spec)` (Python's own definition), and
`format(x, "")` is `str(x)` for the built-in types. A spec that is itself computed
(`f"{x:{width}}"`) has no term.
"""

from __future__ import annotations

import ast
from typing import Callable, Optional

from udflow.expr import Arith, Call, Expr, Lit

CONVERSIONS = {-1: None, ord("s"): "str", ord("r"): "repr", ord("a"): "ascii"}


def joined_term(frame, node: ast.JoinedStr, constant, child: Callable) -> Optional[Expr]:
    """The term of an f-string (`constant`: the analysis's constant value, `Val.const()`, where
    it knows the string whole), or None where a part has none."""
    if constant is not None and isinstance(constant.value, str):
        return Lit(constant.value)
    pieces = []
    for part in node.values:
        piece = Lit(part.value) if isinstance(part, ast.Constant) else _field(frame, part, child)
        if piece is None:
            return None
        pieces.append(piece)
    if not pieces:
        return Lit("")
    out = pieces[0]
    for piece in pieces[1:]:
        out = Arith("+", out, piece)
    return out


def _field(frame, part: ast.AST, child: Callable) -> Optional[Expr]:
    """One replacement field `{x!c:spec}`: format(c(x), spec), as Python formats it."""
    if not isinstance(part, ast.FormattedValue):
        return None
    value, spec = child(frame, part.value), _spec(part.format_spec)
    if value is None or spec is None:
        return None
    conversion = CONVERSIONS.get(part.conversion)
    if conversion is not None:
        value = Call(conversion, (value,))
    if spec:
        return Call("format", (value, Lit(spec)))
    return value if conversion is not None else Call("str", (value,))


def _spec(spec: Optional[ast.AST]) -> Optional[str]:
    """A constant format spec's text ("" where there is none), None where it is computed."""
    if spec is None:
        return ""
    if isinstance(spec, ast.JoinedStr) and all(isinstance(p, ast.Constant) for p in spec.values):
        return "".join(p.value for p in spec.values)
    return None
