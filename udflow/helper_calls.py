"""Calls of the user's own helper functions, as terms of a model.

    def _parse_ts(text):
        try:
            return datetime.strptime(text.strip(), "%Y-%m-%d %H:%M:%S")
        except ValueError:
            return None

    placed = _parse_ts(r["ordered_at"])      HelperCall('_parse_ts', <function>, (Field('ordered_at'),))
    placed is not None and placed.month      BoolOp('and', (IsNone(<that>, negated=True),
                                                            Call('date.month', (<that>,))))

The analysis follows a helper when it interprets the function (its reads, its writes, its
errors), and refuses a function whose helper does anything but compute from its
arguments (`analysis.calls.Calls.invoke`): where a model holds a `HelperCall`, the helper
is pure. Its value is the helper's own, so evaluating the term calls it; the native plan
runs the call alone as Python over its arguments' values (`spark_backend.python_calls`),
and the terms around it natively.

None semantics: the helper's own; it raises where it raises.
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping

from udflow.expr import Expr


@dataclass(frozen=True)
class HelperCall(Expr):
    """`name(*args)`: a call of the user's pure function `fn` (a module-level or closure
    function with source), with the arguments' terms."""

    name: str
    fn: Callable = field(compare=False, repr=False)
    args: tuple = ()
    fn_id: int = field(default=0, repr=False)  # equal calls call the same function object

    def __post_init__(self):
        if not isinstance(self.fn, types.FunctionType):
            raise TypeError(f"not a plain Python function: {self.fn!r}")
        object.__setattr__(self, "fn_id", id(self.fn))

    def evaluated(self, record: Mapping[str, Any], evaluate: Callable) -> Any:
        return self.fn(*(evaluate(a, record) for a in self.args))

    def __str__(self) -> str:
        return f"{self.name}({', '.join(str(a) for a in self.args)})"
