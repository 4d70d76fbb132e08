"""`try`/`except` of one expression, as a term.

    def to_float(text):
        try:
            return float(text)                    Caught(Call('float', (Field('text'),)),
        except (TypeError, ValueError):                  ('TypeError', 'ValueError'),
            return None                                  Lit(None))

    try:
        placed = datetime.strptime(r["at"], F)    placed: Caught(Call('datetime.strptime', ...),
    except ValueError:                                           ('ValueError',), Lit(None))
        placed = None

The analysis makes one where a `try` holds one statement that computes one expression
(`x = E`, `return E`, `return {**r, "k": E}`) and its one handler the same statement with
another (`analysis.statements.caught_form`).

Meaning, Python's: the body's value; where evaluating it raises an exception of one of the
classes named (a subclass included, as `except` matches), the fallback's value, which may
raise in turn. An exception of another class is raised as it is. A bare `except:` is
`Exception` here: a term raises nothing else.

None semantics: the body's; `float(None)` raises TypeError, which a handler of TypeError
catches.
"""

from __future__ import annotations

import builtins
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from udflow.expr import Expr


def exception_class(name: str):
    """The builtin exception class `name`, or None where it is not one."""
    value = getattr(builtins, name, None)
    return value if isinstance(value, type) and issubclass(value, Exception) else None


@dataclass(frozen=True)
class Caught(Expr):
    """`body`, or `fallback` where computing `body` raises one of `catches` (builtin exception
    class names, in the handler's order)."""

    body: Expr
    catches: tuple
    fallback: Expr

    def __post_init__(self):
        unknown = [c for c in self.catches if exception_class(c) is None]
        if unknown or not self.catches:
            raise TypeError(f"not builtin exception classes: {unknown or '(none)'}")

    def classes(self) -> tuple:
        return tuple(exception_class(c) for c in self.catches)

    def evaluated(self, record: Mapping[str, Any], evaluate: Callable) -> Any:
        try:
            return evaluate(self.body, record)
        except self.classes():
            return evaluate(self.fallback, record)

    def __str__(self) -> str:
        caught = self.catches[0] if len(self.catches) == 1 else f"({', '.join(self.catches)})"
        return f"(try {self.body} except {caught}: {self.fallback})"
