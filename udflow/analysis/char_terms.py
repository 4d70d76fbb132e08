"""`"".join(c for c in s if <tests of c>)` as one term (`udflow.kept_chars`):

    "".join(ch for ch in r["phone"] if ch.isdigit())       Call('chars.keep', (r['phone'], 'and', 'isdigit', ''))
    "".join([c for c in s if c.isalnum() or c in "-_"])    Call('chars.keep', (s, 'or', 'isalnum', '', 'in', '-_'))
    "".join(c for c in s if c not in string.punctuation)   Call('chars.keep', (s, 'and', 'not in', '!"#...'))

The loop's one variable is tested by str methods of one character (`CHAR_TESTS`), by
`unicodedata.combining(c)`, by
membership in a constant str (a literal, a module-level constant, `string.digits`), each
maybe negated with `not`, joined by one `and` or `or` (several `if`s: `and`). Anything
else in the comprehension (another element, a second loop, a test of something else, a
joiner other than "") is not this term: None.
"""

from __future__ import annotations

import ast
import string
import unicodedata
from typing import Callable, Optional

from udflow.analysis.resolved import names_object
from udflow.expr import Call, Expr, Lit
from udflow.kept_chars import CHAR_TESTS


def kept_chars_of(frame, node, child: Callable, is_str: Callable) -> Optional[Expr]:
    if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "join"
            and len(node.args) == 1 and not node.keywords and isinstance(node.args[0], (ast.GeneratorExp, ast.ListComp))):
        return None
    joiner = node.func.value
    if not (isinstance(joiner, ast.Constant) and joiner.value == ""):
        return None
    comprehension = node.args[0]
    if len(comprehension.generators) != 1:
        return None
    loop = comprehension.generators[0]
    if loop.is_async or not isinstance(loop.target, ast.Name) or not loop.ifs \
            or not (isinstance(comprehension.elt, ast.Name) and comprehension.elt.id == loop.target.id):
        return None
    text = child(frame, loop.iter)
    tests = _tests(frame, loop.ifs, loop.target.id)
    if text is None or not is_str(text) or tests is None:
        return None
    op, flat = tests
    return Call("chars.keep", (text, Lit(op), *map(Lit, flat)))


def _tests(frame, conditions: list, var: str) -> Optional[tuple[str, list]]:
    """(op, the flat tests) of the comprehension's conditions, or None."""
    if len(conditions) == 1 and isinstance(conditions[0], ast.BoolOp):
        op = "and" if isinstance(conditions[0].op, ast.And) else "or"
        clauses = conditions[0].values
    else:
        op, clauses = "and", conditions
    flat = []
    for clause in clauses:
        test = _clause(frame, clause, var)
        if test is None:
            return None
        flat += test
    return op, flat


def _clause(frame, node, var: str) -> Optional[tuple[str, str]]:
    """(test, arg) of one test of the variable `var`, or None."""
    negated = isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not)
    node = node.operand if negated else node
    prefix = "not " if negated else ""
    if isinstance(node, ast.Call) and not node.args and not node.keywords and isinstance(node.func, ast.Attribute) \
            and _is_var(node.func.value, var) and node.func.attr in CHAR_TESTS:
        return prefix + node.func.attr, ""
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords and _is_var(node.args[0], var) \
            and names_object(frame, node.func, unicodedata.combining):  # its int's truth
        return prefix + "combining", ""
    if isinstance(node, ast.Compare) and _is_var(node.left, var) and len(node.ops) == 1 \
            and isinstance(node.ops[0], (ast.In, ast.NotIn)):
        chars = _constant_text(frame, node.comparators[0])
        if chars is None:
            return None
        inside = isinstance(node.ops[0], ast.In) != negated
        return ("in" if inside else "not in"), chars
    return None


def _is_var(node, var: str) -> bool:
    return isinstance(node, ast.Name) and node.id == var


def _constant_text(frame, node) -> Optional[str]:
    """The str a literal, a name bound to a constant str, or `string.<constant>` holds."""
    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.Attribute) and names_object(frame, node.value, string):
        value = getattr(string, node.attr, None)
        return value if isinstance(value, str) else None
    if isinstance(node, ast.Name):
        try:
            const = frame.lookup(node.id, node).const()
        except Exception:  # noqa: BLE001 - not a name the analysis resolves
            return None
        return const.value if const is not None and isinstance(const.value, str) else None
    return None
