"""The construct a model stopped at, named as the user wrote it.

The model says where it stopped ("computes field segment the expression IR cannot
express (line 52)"); the user wants to know what on that line: an f-string with a format
spec, `COUPONS.get`, `math.gamma`, a call of their own helper, a `try`. `named(reason, node,
globals_)` reads the function's syntax tree at that line and puts the first construct
outside the model's vocabulary into the reason:

    computes field segment the expression IR cannot express (line 52)
      ->  computes field segment with dict.get on COUPONS, which has no model yet (line 52);
          native-friendly: a conditional expression per key, e.g. 0.1 if r["k"] == "A" else ...

(A look-up in a table of literals has a model, `udflow.tables`; COUPONS here holds
something else, a list say.)

Where the model has a way to say the same thing natively, the reason ends with it
(`ADVICE`); each piece of advice is checked to run natively in tests/test_constructs.py.
"""

from __future__ import annotations

import ast
import re
import types
from typing import Optional

from udflow.analysis.caught_form import caught_form
from udflow.expr_functions import FUNCTIONS

_STOPPED = re.compile(r"^(?P<what>.*?) the expression IR cannot express(?P<rest>.*?) \(line (?P<line>\d+)\)$")
_MODELLED_METHODS = {name.split(".", 1)[1] for name in FUNCTIONS if name.startswith(("str.", "date.", "timedelta."))} \
    | {"get", "pop", "split"}


# The native-friendly way to write a construct, by the start of its name: only forms the
# model and the native lowering know, with the condition under which they mean the same.
ADVICE = (
    ("dict.get on ", 'a conditional expression per key, e.g. 0.1 if r["k"] == "A" else 0.2 if r["k"] == "B" '
                     'else 0.0 (or r["k"] in ("A", "B") for a set)'),
    ("a look-up in ", 'a conditional expression per key, e.g. 0.1 if r["k"] == "A" else 0.2 if r["k"] == "B" '
                      'else 0.0'),
    ("try/except", "test the value before using it (if x is not None and ...) instead of catching the "
                   "error: a try block has no model"),
    ("a call of your helper ", "pass the helper the values it reads (h(r[\"x\"]) rather than h(r)): a helper "
                               "of plain values runs as Python inside the native plan; or write its "
                               "expression in the function itself, which runs natively"),
)


# Reasons the model gives that already name their construct: (start of the reason, construct)
_NAMED_BY_THE_MODEL = (("a try statement", "try/except"),)


def named(reason: str, node: ast.AST, globals_: dict) -> str:
    """`reason` with the construct at its line named, when it is a "cannot express" one, and
    the native-friendly way to write it where there is one (`ADVICE`)."""
    found = _STOPPED.match(reason or "")
    if not found:
        named_already = next((c for start, c in _NAMED_BY_THE_MODEL if (reason or "").startswith(start)), None)
        tip = advice(named_already) if named_already else None
        return reason if tip is None else f"{reason}; native-friendly: {tip}"
    construct = construct_at(node, int(found.group("line")), globals_)
    if construct is None:
        return reason
    what = found.group("what").removesuffix(" a value").removesuffix(" a condition")
    text = f"{what} with {construct}, which has no model yet{found.group('rest')} (line {found.group('line')})"
    tip = advice(construct)
    return text if tip is None else f"{text}; native-friendly: {tip}"


def advice(construct: str) -> Optional[str]:
    """The native-friendly way to write `construct` (as `construct_at` names it), or None."""
    return next((tip for start, tip in ADVICE if construct.startswith(start)), None)


def construct_at(node: ast.AST, line: int, globals_: dict) -> Optional[str]:
    """The first construct on `line` of the function `node` that the model does not know."""
    for n in sorted((n for n in ast.walk(node) if getattr(n, "lineno", None) == line),
                    key=lambda n: (n.col_offset, -getattr(n, "end_col_offset", 0))):
        text = _construct(n, globals_)
        if text is not None:
            return text
    return None


def _construct(n: ast.AST, globals_: dict) -> Optional[str]:
    if isinstance(n, ast.JoinedStr):  # constant specs and conversions have a model: look further
        for part in n.values:
            spec = part.format_spec if isinstance(part, ast.FormattedValue) else None
            if spec is not None and not all(isinstance(p, ast.Constant) for p in spec.values):
                return "an f-string with a computed format spec"
        return None
    if isinstance(n, ast.Try):  # one statement and one handler computing one expression is modelled
        return None if caught_form(n) is not None else "try/except"
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
