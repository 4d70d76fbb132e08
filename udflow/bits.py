"""Bitwise terms of the expression IR: `& | ^ << >>` and `~`, with Python's semantics.

    r["flags"] & 4            Bits('&', Field('flags'), Lit(4))
    r["mask"] >> r["n"]       Bits('>>', Field('mask'), Field('n'))
    ~r["x"]                   Invert(Field('x'))

Python's law, which `evaluate` follows by running the operator itself:

- ints are unbounded and behave as infinite two's complement: `-6 & 3` is 2, `~x` is
  `-x - 1`, `1 << 70` is 2**70 (a 64-bit native form raises there: it cannot hold it),
  `0 << n` is 0 for any count, `1 << 2**62` raises MemoryError;
- `x >> n` is floor(x / 2**n): -5 >> 1 is -3, and a count past the width gives 0 or -1;
- a negative count raises ValueError("negative shift count"), after the operands' types
  are checked (`None << -1` is a TypeError);
- bool is an int: `True & False` is the bool False (`&`, `|`, `^` of two bools are bools),
  `True & 3` and `True << 1` are ints, `~True` is -2 (deprecated
  from Python 3.12, the value unchanged);
- None, a float, a Decimal, a str or a date operand raises TypeError
  ("unsupported operand type(s) for &: 'float' and 'int'", "bad operand type for unary ~:
  'NoneType'"), before any value is looked at (a float NaN or 0.0 alike).

The terms live here, beside `udflow.expr`, as `udflow.tables` does: `expr.evaluate` calls a
node's own `evaluated` for nodes defined outside it.
"""

from __future__ import annotations

import operator
from dataclasses import dataclass
from typing import Any, Callable, Mapping

from udflow.expr import Expr

BITS = {"&": operator.and_, "|": operator.or_, "^": operator.xor, "<<": operator.lshift, ">>": operator.rshift}
SHIFTS = ("<<", ">>")


@dataclass(frozen=True)
class Bits(Expr):
    """`left op right`, op in BITS (`& | ^ << >>`), as Python computes it on ints and bools. None,
    float, Decimal, str or date operands raise TypeError; a negative shift count raises
    ValueError; ints never overflow; two bools give a bool for `& | ^`, anything else an int."""

    op: str
    left: Expr
    right: Expr

    def __post_init__(self):
        if self.op not in BITS:
            raise ValueError(f"not a bitwise operator: {self.op}")

    def evaluated(self, record: Mapping[str, Any], evaluate: Callable) -> Any:
        return BITS[self.op](evaluate(self.left, record), evaluate(self.right, record))

    def __str__(self) -> str:
        return f"({self.left} {self.op} {self.right})"


@dataclass(frozen=True)
class Invert(Expr):
    """`~operand`: `-x - 1` of an int or a bool (`~True` is -2), never overflowing. None and
    non-ints raise TypeError ("bad operand type for unary ~")."""

    operand: Expr

    def evaluated(self, record: Mapping[str, Any], evaluate: Callable) -> Any:
        return ~evaluate(self.operand, record)

    def __str__(self) -> str:
        return f"(~{self.operand})"
