"""Native forms of the bitwise terms (`udflow.bits`): `& | ^ << >>` and `~` on ints and bools.

Python's ints are unbounded two's complement; a Spark long is the same 64 bits of it, so
where Python's value fits a long the two agree bit for bit, and where it does not the native
form raises, as every int operation does (`int overflow past 64 bits`). The traps:

    trap                                   native form
    ------------------------------------   -----------------------------------------------
    None operand                           raise_error (TypeError, Python's words)
    float, Decimal, str, date operand      NotNative (Python raises TypeError on every row)
    & | ^ of two bools is a bool           & | on the bools as 0 and 1, then = 1; != for ^
    both operands computed (no short       (SQL's AND and OR skip a right side that would
    circuit: True | (1 > None) raises)     raise; Spark's bitwise ops compute both)
    & | ^ ~ on longs                       exact: never outside 64 bits (~x is -x - 1)
    negative shift count                   raise_error (ValueError: negative shift count),
                                           after the None guard, as Python checks types first
    x << n past 64 bits                    raise_error (int overflow past 64 bits): n >= 64 with
                                           x != 0, or shifting back does not give x again; with
                                           a constant n < 64, a limit: the rows whose x passes
                                           the normal case's bound run in Python (`general_case`);
                                           with x and n columns or constants, the rows where the
                                           shift leaves 64 bits run in Python (a row condition)
    0 << n for any n >= 0                  0 (Python too, however large n)
    Java masks a shift count to 6 bits     counts >= 63 never reach shiftright: x >> n is
    (shiftright(x, 64) is x)               -1 or 0 by x's sign there, as Python's floor
    a long count cast to Spark's int       cast only once the count is within [0, 63]
                                           (a larger one fails under ANSI, wraps without)

Spark's `shiftright` is arithmetic (Java's `>>`): floor division by 2**n, as Python's `>>`.
"""

from __future__ import annotations

import operator
from typing import Optional

from udflow.bits import BITS, SHIFTS, Bits, Invert
from udflow.expr import Field, Lit
from udflow.spark_backend import native_spans, python_words, sql
from udflow.spark_backend.native_spans import OVERFLOW
from udflow.spark_backend.native_types import NotNative, Typed, as_number
from udflow.spark_backend.sql import literal

INTEGRAL = ("int", "bool")
NEGATIVE_COUNT = python_words.raised_by(operator.lshift, 1, -1)  # Python's own words
WIDTH = 64


def bits(low, t: Bits) -> Typed:
    left, right = low.lower(t.left), low.lower(t.right)
    if left.family not in INTEGRAL or right.family not in INTEGRAL:
        raise NotNative(f"{t.op} on {left.family} and {right.family} (Python: ints and bools only)")
    guards = low.none_guard(f"'{t.op}'", left, right, run=BITS[t.op])
    if t.op not in SHIFTS and left.family == right.family == "bool":  # True & False is False
        # Python computes both operands of `|` and `&` (`True | (1 > None)` raises); SQL's OR and
        # AND stop at a deciding left side, so the bools meet as 0 and 1 in Spark's bitwise ops
        value = {"&": "((CAST({} AS INT) & CAST({} AS INT)) = 1)", "|": "((CAST({} AS INT) | CAST({} AS INT)) = 1)",
                 "^": "({} != {})"}[t.op].format(left.sql, right.sql)
        return Typed(low.guarded(guards, value), "bool", False)
    x, n = as_number(left), as_number(right)
    if t.op not in SHIFTS:
        return Typed(low.guarded(guards, f"({x.sql} {t.op} {n.sql})"), "int", False)
    count = sql.int_of_literal(n.sql)  # a constant count needs only the cases it can reach
    if count is None or count < 0:
        guards.append((f"({n.sql} < 0)", low.error(NEGATIVE_COUNT)))
    if t.op == "<<":
        cases, value = _left_shift(low, x, n, count, _fits_where(t, x, n, count))
    else:
        cases, value = _right_shift(low, x, n, count)
    return Typed(low.guarded(guards + cases, value), "int", False, span=_shifted_span(t.op, x, count))


def _shifted_span(op: str, x: Typed, count) -> Optional[native_spans.Span]:
    """`x << k` is x * 2**k, `x >> k` is x // 2**k, for a constant count k in [0, 64)."""
    if count is None or not 0 <= count < WIDTH:
        return None
    return native_spans.arith("*" if op == "<<" else "//", x.span, native_spans.Span.between(2**count, 2**count))


def _left_shift(low, x: Typed, n: Typed, count, fits: Optional[native_spans.RowCondition]) -> tuple[list, str]:
    """The cases of `x << n` for n >= 0, and the value past them: 0 stays 0; else n >= 64
    leaves the longs, and a smaller n does where shifting back does not give x again (a bit
    shifted out, or into the sign). With a constant count below 64 that guard is a limit of
    what the native form holds (`native_spans`): the rows past it run in Python. Otherwise
    the rows where `fits` fails do, where there is such a condition."""
    beyond = native_spans.Limit.where(fits) if fits is not None else native_spans.Limit.unknown()
    cases = [(f"({x.sql} = 0)", literal(0))]
    if count is None or count >= WIDTH:
        past = low.cannot_hold(OVERFLOW, beyond)  # None: no row given has x << n past 64 bits
        if past is not None:
            cases.append((f"({n.sql} >= {WIDTH})", past))
        if count is not None:
            return cases, literal(0)  # not reached: every row took a case
    shifted = f"shiftleft({x.sql}, {_narrow(n, count)})"
    limit = native_spans.fits_long(_shifted_span("<<", x, count)) if count is not None else beyond
    overflow = low.cannot_hold(OVERFLOW, limit)
    if overflow is not None:
        cases.append((f"(shiftright({shifted}, {_narrow(n, count)}) != {x.sql})", overflow))
    return cases, shifted


def _fits_where(t: Bits, x: Typed, n: Typed, count) -> Optional[native_spans.RowCondition]:
    """The rows where `x << n`, by a count that is not a constant below 64, fits a long, as a
    condition on the input row; None unless both operands are read as they are (columns and
    constants, whose SQL never raises). A None operand is a normal row (Python's TypeError
    is raised natively); so is a negative count (its ValueError). The CASE casts the count
    to an INT only where it is in [0, 63]."""
    operands = (t.left, t.right)
    if not (x.leaf and n.leaf and all(isinstance(e, (Field, Lit)) for e in operands)) \
            or count is not None and count < WIDTH:
        return None
    reads = tuple(e.name for e in operands if isinstance(e, Field))
    if count is not None:
        sql = f"({x.sql} = 0)"
    else:
        k = f"CAST({n.sql} AS INT)"
        sql = (f"CASE WHEN {x.sql} = 0 OR {n.sql} < 0 THEN TRUE WHEN {n.sql} >= {WIDTH} THEN FALSE "
               f"ELSE shiftright(shiftleft({x.sql}, {k}), {k}) = {x.sql} END")
    shown = [e.name if isinstance(e, Field) else repr(e.value) for e in operands]
    return native_spans.RowCondition(sql, reads, f"{shown[0]} << {shown[1]} leaves 64 bits")


def _right_shift(low, x: Typed, n: Typed, count) -> tuple[list, str]:
    """The cases of `x >> n` for n >= 0: past 62 every long is 0 or -1, by its sign (Java
    would shift by n mod 64 instead)."""
    sign = sql.case([(f"({x.sql} < 0)", literal(-1))], literal(0))
    if count is not None and count >= WIDTH - 1:
        return [], sign
    cases = [(f"({n.sql} >= {WIDTH - 1})", sign)] if count is None else []
    return cases, f"shiftright({x.sql}, {_narrow(n, count)})"


def _narrow(n: Typed, count) -> str:
    """The count as Spark's shift functions take it (an INT), read only where it is in [0, 63]."""
    return str(count) if count is not None else f"CAST({n.sql} AS INT)"


def invert(low, t: Invert) -> Typed:
    """`~x`: Spark's `~` on the long (or on the bool as 0 or 1: `~True` is -2)."""
    x = low.lower(t.operand)
    if x.family not in INTEGRAL:
        raise NotNative(f"~ on {x.family} (Python: ints and bools only)")
    guards = low.none_guard("unary ~", x, run=operator.invert)
    return Typed(low.guarded(guards, f"(~ {as_number(x).sql})"), "int", False)
