"""The `try` statements whose meaning is one term, `udflow.caught.Caught`: one statement that
computes one expression, and one handler that is the same statement with another.

    try:                                     the statement      x = <CAUGHT>
        x = float(r["a"])                    the body           float(r["a"])
    except (TypeError, ValueError):          caught             ('TypeError', 'ValueError')
        x = None                             the fallback       None

The statement is `name = E`, `return E`, or `return {...}` (a dict display whose entries
other than E are names and constants, which raise nothing: so whichever of them Python
evaluates again in the handler gives what it gave in the body). No `else`, `finally`, or
`except ... as e`. A handler names builtin exception classes only (`caught.exception_class`;
the frame checks that the names are not rebound); a bare `except:` is `Exception`.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass
from typing import Optional

from udflow.caught import exception_class

PLACEHOLDER = "__udflow_caught"


@dataclass(frozen=True)
class CaughtForm:
    statement: ast.stmt  # the body's statement with the expression made PLACEHOLDER
    body: ast.expr
    catches: tuple  # (name node or None for a bare except, ...)
    fallback: ast.expr


def caught_form(s: ast.Try) -> Optional[CaughtForm]:
    """The form of `s` (module docstring), or None."""
    if s.orelse or s.finalbody or len(s.handlers) != 1 or len(s.body) != 1:
        return None
    handler = s.handlers[0]
    if handler.name or len(handler.body) != 1:
        return None
    catches = _caught_names(handler.type)
    split = _varying(s.body[0], handler.body[0])
    if catches is None or split is None:
        return None
    statement, body, fallback = split
    return CaughtForm(statement, body, catches, fallback)


def _caught_names(node) -> Optional[tuple]:
    if node is None:
        return (None,)
    names = node.elts if isinstance(node, ast.Tuple) else [node]
    if not names or not all(isinstance(n, ast.Name) and exception_class(n.id) for n in names):
        return None
    return tuple(names)


def _varying(body: ast.stmt, handler: ast.stmt) -> Optional[tuple]:
    """(the statement with its varying expression made PLACEHOLDER, the body's expression, the
    handler's), where the two statements differ in that expression only."""
    if isinstance(body, ast.Assign) and isinstance(handler, ast.Assign):
        if len(body.targets) != 1 or not isinstance(body.targets[0], ast.Name) or \
                ast.dump(body.targets[0]) != ast.dump(handler.targets[0]) or len(handler.targets) != 1:
            return None
        return _with_placeholder(body, "value"), body.value, handler.value
    if not (isinstance(body, ast.Return) and isinstance(handler, ast.Return)) or body.value is None \
            or handler.value is None:
        return None
    if isinstance(body.value, ast.Dict) and isinstance(handler.value, ast.Dict):
        return _dict_varying(body, handler.value)
    return _with_placeholder(body, "value"), body.value, handler.value


def _dict_varying(body: ast.Return, other: ast.Dict) -> Optional[tuple]:
    mine = body.value
    if len(mine.keys) != len(other.keys) or any(not _same(a, b) for a, b in zip(mine.keys, other.keys)):
        return None
    differ = [k for k, (a, b) in enumerate(zip(mine.values, other.values)) if not _same(a, b)]
    if len(differ) != 1 or mine.keys[differ[0]] is None:
        return None
    k = differ[0]
    if not all(isinstance(v, (ast.Name, ast.Constant)) for i, v in enumerate(mine.values) if i != k) or \
            not all(k_ is None or isinstance(k_, ast.Constant) for k_ in mine.keys):
        return None
    statement = copy.deepcopy(body)
    statement.value.values[k] = ast.copy_location(ast.Name(PLACEHOLDER, ast.Load()), mine.values[k])
    return statement, mine.values[k], other.values[k]


def _with_placeholder(stmt: ast.stmt, attribute: str) -> ast.stmt:
    statement = copy.copy(stmt)
    setattr(statement, attribute, ast.copy_location(ast.Name(PLACEHOLDER, ast.Load()), getattr(stmt, attribute)))
    return statement


def _same(a, b) -> bool:
    if a is None or b is None:
        return a is b
    return ast.dump(a) == ast.dump(b)
