"""What the native lowering knows of a lowered term: its SQL text and its Python type family."""

from __future__ import annotations

import datetime
import decimal
import fractions
from dataclasses import dataclass
from typing import Optional

from pyspark.sql.types import (
    BooleanType,
    ByteType,
    DataType,
    DateType,
    DecimalType,
    DoubleType,
    FloatType,
    IntegerType,
    LongType,
    ShortType,
    StringType,
    TimestampNTZType,
)

from udflow.spark_backend import sql
from udflow.spark_backend.arrow_values import INT_MAX, INT_MIN
from udflow.spark_backend.native_spans import EPOCH, Span
from udflow.spark_backend.sql import literal, wider

EXACT_DOUBLE = 2**53
DECIMAL_DIGITS = 28  # Python's default decimal context precision
RAISES = "raise_error("  # in a term's SQL: it may raise
INT_AS_DECIMAL = (20, 0)  # a long as Spark widens it for decimal arithmetic


class NotNative(Exception):
    """The term has no exact native form here; the reason says which construct."""


@dataclass(frozen=True)
class Typed:
    """A lowered term: its SQL text, the Python type family of its values, whether it may be
    None; `decimal` is (precision, scale) of a decimal's Spark type."""

    sql: str
    family: str  # "int", "float", "decimal", "str", "bool", "date", "datetime" (naive), "none"
    nullable: bool
    leaf: bool = False  # a column or a constant as it is: an error message may show it
    decimal: Optional[tuple] = None
    span: Optional[Span] = None  # an int's values in the normal case (`native_spans`); None: unknown
    known: Optional[tuple] = None  # a constant's Python value, as (value,); None: not a constant


FAMILIES = ((BooleanType, "bool"), (ByteType, "int"), (ShortType, "int"), (IntegerType, "int"),
            (LongType, "int"), (FloatType, "float"), (DoubleType, "float"), (DecimalType, "decimal"),
            (StringType, "str"), (DateType, "date"), (TimestampNTZType, "datetime"))


def family_of(data_type: DataType) -> Optional[str]:
    for cls, family in FAMILIES:
        if isinstance(data_type, cls):
            return family
    return None


def datetime_columns(schema) -> frozenset:
    """The columns of `schema` holding naive datetimes (TIMESTAMP_NTZ)."""
    return frozenset(f.name for f in schema.fields if family_of(f.dataType) == "datetime")


def decimal_of(data_type: DataType) -> Optional[tuple]:
    return (data_type.precision, data_type.scale) if isinstance(data_type, DecimalType) else None


# -- the families of a term's operands and results ----------------------------------------


def one_family(values: list, what: str) -> str:
    """The one family of `values` (a conditional's branches, an and/or's operands), or NotNative."""
    families = {v.family for v in values} - {"none"}
    if len(families) > 1:
        raise NotNative(f"{what} {' and '.join(sorted(families))} values (the result's type would vary)")
    return families.pop() if families else "none"


def wider_decimal(family: str, a: Typed, b: Typed) -> Optional[tuple]:
    """The decimal type that holds both (for a decimal result), else None."""
    if family != "decimal":
        return None
    known = [x.decimal for x in (a, b) if x.family == "decimal"]
    out = known[0]
    for d in known[1:]:
        out = wider(out, d)
    return out


def ordered_group(a: str, b: str) -> Optional[str]:
    """How two families compare with < and the like: "float", "number", "str", "date",
    "datetime" (naive ones, chronologically, to the microsecond in both); None:
    not natively (Python raises, or compares exactly what Spark would round)."""
    numeric = {"int", "float", "decimal"}
    if {a, b} <= numeric:
        if {a, b} == {"float", "decimal"}:
            return None  # Python compares them exactly, Spark through a double
        return "float" if "float" in (a, b) else "number"
    if a == b and a in ("str", "date", "datetime"):  # a datetime here is naive (TIMESTAMP_NTZ)
        return a
    return None


def as_number(x: Typed) -> Typed:
    """A bool as Python's arithmetic, comparisons and bitwise operators see it: the int 0 or 1
    (`True + 1` is 2, `True == 1.0`, `1 / False` divides by zero). Other families unchanged."""
    if x.family != "bool":
        return x
    if x.sql in ("TRUE", "FALSE"):  # a constant stays one: the int guards skip what it cannot reach
        return constant(int(x.sql == "TRUE"), x.leaf)
    return Typed(f"CAST({x.sql} AS BIGINT)", "int", x.nullable, x.leaf, span=Span.between(0, 1))


def as_numbers(a: Typed, b: Typed) -> tuple[Typed, Typed]:
    """Both operands as numbers where a bool meets a number (or a bool): `True == 1`, `True < 2`."""
    numeric = {"int", "float", "decimal", "bool"}
    if "bool" in (a.family, b.family) and {a.family, b.family} <= numeric:
        return as_number(a), as_number(b)
    return a, b


def equal_group(a: str, b: str) -> Optional[str]:
    """How two families compare with ==: "number" or their family; None: never equal. A bool
    against a number is compared as an int (`as_numbers`) before it gets here."""
    if {a, b} == {"float", "decimal"}:  # 1.5 == Decimal("1.50"): Python compares exactly, Spark through a double
        raise NotNative("== between a float and a Decimal")
    if {a, b} <= {"int", "float", "decimal"}:
        return "number"
    return a if a == b else None


def constant(v, leaf: bool = True) -> Typed:
    """A Python constant as a native term; NotNative where no column type holds it exactly."""
    if v is None:
        return Typed("NULL", "none", True, True, known=(v,))
    if isinstance(v, bool):
        return Typed(literal(v), "bool", False, True, known=(v,))
    if isinstance(v, int):
        if not INT_MIN <= v <= INT_MAX:
            raise NotNative(f"the constant {v} does not fit 64 bits")
        return Typed(literal(v), "int", False, leaf, span=Span.between(v, v), known=(v,))
    if isinstance(v, float):
        return Typed(literal(v), "float", False, True, known=(v,))
    if isinstance(v, decimal.Decimal):
        if not isinstance(v.as_tuple().exponent, int):
            raise NotNative(f"the constant {v!r}")
        precision, scale = sql.decimal_type(v)
        if precision > sql.MAX_PRECISION:
            raise NotNative(f"the constant {v!r} needs more than 38 digits")
        exact = fractions.Fraction(v)  # a span's bounds are exact: no context rounds them
        return Typed(literal(v), "decimal", False, True, (precision, scale), Span.between(exact, exact), known=(v,))
    if isinstance(v, str):
        if not _utf8(v):
            raise NotNative(f"the constant {v!r} holds a lone surrogate (a Spark string is UTF-8)")
        return Typed(literal(v), "str", False, True, known=(v,))
    if isinstance(v, datetime.datetime):
        if v.tzinfo is not None:  # a column of naive datetimes (TIMESTAMP_NTZ) meets it with TypeError
            raise NotNative(f"the aware datetime constant {v!r}")
        micros = (v - EPOCH) // datetime.timedelta(microseconds=1)  # a naive datetime's span (`native_spans`)
        return Typed(f"TIMESTAMP_NTZ '{v.isoformat(sep=' ')}'", "datetime", False, True, span=Span.between(micros, micros),
                     known=(v,))
    if isinstance(v, datetime.date):
        return Typed(literal(v), "date", False, True)
    raise NotNative(f"constant {v!r}")


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
        return True
    except UnicodeEncodeError:
        return False
