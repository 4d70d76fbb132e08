"""The construct a model stopped at, named as the user wrote it.

The model says where it stopped ("computes field segment the expression IR cannot
express (line 52)"); the user wants to know what on that line: an f-string, `COUPONS.get`,
`math.log10`, `str.upper`, a call of their own helper, a `try`. `named(reason, node,
globals_)` reads the function's syntax tree at that line and puts the first construct
outside the model's vocabulary into the reason:

    computes field segment the expression IR cannot express (line 52)
      ->  computes field segment with an f-string, which has no model yet (line 52)
"""

from __future__ import annotations

import ast
import re
import types
from typing import Optional

from udflow.expr import FUNCTIONS

_STOPPED = re.compile(r"^(?P<what>.*?) the expression IR cannot express(?P<rest>.*?) \(line (?P<line>\d+)\)$")
_MODELLED_METHODS = {name.split(".", 1)[1] for name in FUNCTIONS if "." in name} | {"get", "pop", "split"}


def named(reason: str, node: ast.AST, globals_: dict) -> str:
    """`reason` with the construct at its line named, when it is a "cannot express" one."""
    found = _STOPPED.match(reason or "")
    if not found:
        return reason
    construct = construct_at(node, int(found.group("line")), globals_)
    if construct is None:
        return reason
    what = found.group("what").removesuffix(" a value").removesuffix(" a condition")
    return f"{what} with {construct}, which has no model yet{found.group('rest')} (line {found.group('line')})"


def construct_at(node: ast.AST, line: int, globals_: dict) -> Optional[str]:
    """The first construct on `line` of the function `node` that the model does not know."""
    for n in sorted((n for n in ast.walk(node) if getattr(n, "lineno", None) == line),
                    key=lambda n: (n.col_offset, -getattr(n, "end_col_offset", 0))):
        text = _construct(n, globals_)
        if text is not None:
            return text
    return None


def _construct(n: ast.AST, globals_: dict) -> Optional[str]:
    if isinstance(n, ast.JoinedStr):
        return "an f-string"
    if isinstance(n, ast.Try):
        return "try/except"
    if isinstance(n, ast.Call):
        return _call(n, globals_)
    if isinstance(n, ast.Subscript) and isinstance(n.value, ast.Name) and n.value.id in globals_:
        return f"a look-up in {n.value.id}"
    return None


def _call(n: ast.Call, globals_: dict) -> Optional[str]:
    func = n.func
    if isinstance(func, ast.Attribute):
        owner = func.value.id if isinstance(func.value, ast.Name) else None
        value = globals_.get(owner) if owner else None
        if isinstance(value, types.ModuleType):
            return f"a call of {owner}.{func.attr}"
        if owner in globals_:
            return f"{type(value).__name__}.{func.attr} on {owner}"
        if func.attr not in _MODELLED_METHODS:
            return f"the method .{func.attr}()"
        return None
    if isinstance(func, ast.Name):
        if func.id in FUNCTIONS or func.id in ("sum", "len", "list", "any", "all", "dict", "sorted"):
            return None
        target = globals_.get(func.id)
        if isinstance(target, types.FunctionType):
            return f"a call of your helper {func.id}"
        return f"a call of {func.id}()"
    return None
