"""Python values into Arrow columns, refusing every conversion that would change a value.

A Python function's output reaches Spark as Arrow columns whose types come from a sample
of its output (or `@output_types`). pyarrow converts what it is given to the column's
type, and some of those conversions lose the value without a word:

    pa.array([1.5], pa.int64())                       [1]              (truncated)
    pa.array([Decimal("1.5")], pa.int64())            [1]
    pa.array([datetime(2020, 1, 1, 5)], pa.date32())  [date(2020, 1, 1)]
    pa.array([1e300], pa.float32())                   [inf]

A function that returned ints for the sample and 1.5 later would have run on as 1. Here
each value must be of a Python type the column holds exactly (an int in a float or
decimal column, whose conversion pyarrow checks, included; a bool in a number column not,
since Spark would store it as a number), as `schema.fits` asks of Spark types, or
`exact_array` raises `ValueError`, which the callers report as the function's error,
naming the field.
"""

from __future__ import annotations

import datetime
import decimal
import math
import struct

import pyarrow as pa

INT_MIN, INT_MAX = -(2**63), 2**63 - 1  # what a long column holds
OVERFLOW = "int overflow past 64 bits"  # the words of the 64-bit limit, wherever the native form has it


def exact_array(values: list, arrow_type: pa.DataType) -> pa.Array:
    """`pa.array(values, arrow_type)`, where every value keeps its value, else ValueError.
    The Python types present are collected first (at C speed); values are looked at one by
    one only when a type outside the column's plain ones appears (a subclass, a float32)."""
    types = set(map(type, values))
    types.discard(type(None))
    if not types <= _plain_types(arrow_type):
        for v in values:
            if v is not None and not _of_column_type(v, arrow_type):
                raise ValueError(f"{v!r} ({type(v).__name__}) is not a {arrow_type} value")
    return pa.array(values, arrow_type)


def _plain_types(arrow_type: pa.DataType) -> frozenset:
    """Python types whose every value an `arrow_type` column holds exactly, no check needed
    (the range of an int in a float or decimal column pyarrow checks itself)."""
    for is_kind, types in _PLAIN:
        if is_kind(arrow_type):
            return types
    return frozenset()


_PLAIN = (
    (pa.types.is_boolean, frozenset({bool})),
    (pa.types.is_integer, frozenset({int})),
    (pa.types.is_float64, frozenset({float, int})),
    (pa.types.is_decimal, frozenset({decimal.Decimal, int})),
    (pa.types.is_string, frozenset({str})),
    (pa.types.is_binary, frozenset({bytes})),
    (pa.types.is_date, frozenset({datetime.date})),
)  # a timestamp is checked value by value: naive in a column without a zone, aware in one with


def holds_exactly(value, arrow_type: pa.DataType) -> bool:
    """Whether `value` goes into an `arrow_type` column unchanged."""
    try:
        exact_array([value], arrow_type)
        return True
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        return False


def _of_column_type(v, arrow_type: pa.DataType) -> bool:
    """Whether v's Python type is one `arrow_type` holds exactly (pyarrow checks the range of
    an int in a float or decimal column, and a Decimal's digits); nested types unchecked."""
    number = not isinstance(v, bool)
    if pa.types.is_boolean(arrow_type):
        return isinstance(v, bool)
    if pa.types.is_integer(arrow_type):
        return number and isinstance(v, int)
    if pa.types.is_float32(arrow_type):
        return number and isinstance(v, (float, int)) and _float32_exact(v)
    if pa.types.is_floating(arrow_type):
        return number and isinstance(v, (float, int))
    if pa.types.is_decimal(arrow_type):
        return number and isinstance(v, (decimal.Decimal, int))
    if pa.types.is_string(arrow_type) or pa.types.is_large_string(arrow_type):
        return isinstance(v, str)
    if pa.types.is_binary(arrow_type) or pa.types.is_large_binary(arrow_type):
        return isinstance(v, (bytes, bytearray))
    if pa.types.is_date(arrow_type):
        return isinstance(v, datetime.date) and not isinstance(v, datetime.datetime)
    if pa.types.is_timestamp(arrow_type):  # pyarrow would shift a naive value into a zone, or drop one
        return isinstance(v, datetime.datetime) and (v.tzinfo is None) == (arrow_type.tz is None)
    return True


def _float32_exact(v) -> bool:
    x = float(v)
    if x != x or x in (math.inf, -math.inf):
        return True
    try:
        return struct.unpack("f", struct.pack("f", x))[0] == x
    except OverflowError:  # beyond float32's range
        return False
