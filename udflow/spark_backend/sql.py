"""Spark SQL expression text: the form native terms take on their way to Catalyst.

A native operator is built as SQL text and handed to Spark in one call
(`selectExpr`, `filter`, `F.expr`), not as a tree of PySpark `Column` objects:
each `Column` method is a round trip to the JVM (`F.col` alone costs about a
millisecond), and a lowered function with its guards has hundreds of nodes.
The text parses to the same Catalyst expressions.

Literals are written so that they mean exactly the Python value, whatever the
session's parser settings: numbers through a cast from their decimal text,
strings with a quote, a backslash or a control character as UTF-8 bytes.

    ident("l_shipdate")            `l_shipdate`
    literal(date(1995, 1, 1))      DATE '1995-01-01'
    literal(1.5)                   CAST('1.5' AS DOUBLE)
    case([("x > 0", "1")], "0")    CASE WHEN x > 0 THEN 1 ELSE 0 END
"""

from __future__ import annotations

import datetime
import decimal
import math
import re
from typing import Any, Optional

MAX_PRECISION = 38  # Spark's widest decimal
MIN_ADJUSTED_SCALE = 6  # DecimalPrecision: a result wider than 38 digits keeps at least this scale
_INT_LITERAL = re.compile(r"CAST\((-?\d+) AS BIGINT\)")  # what `literal` writes for an int
_FLOAT_LITERAL = re.compile(r"CAST\('([^']*)' AS DOUBLE\)")  # ... and for a float


def ident(name: str) -> str:
    """A column by its exact name (dots, spaces and backticks included)."""
    return "`" + name.replace("`", "``") + "`"


def string(text: str) -> str:
    """A string literal that means `text` under either setting of `spark.sql.parser.escapedStringLiterals`."""
    if all(c.isprintable() and c not in "'\\" for c in text):
        return "'" + text + "'"
    return f"decode(X'{text.encode('utf-8').hex()}', 'UTF-8')"


def literal(value: Any) -> str:
    """The SQL literal of a Python constant (None, bool, int, float, Decimal, str, date)."""
    if value is None:
        return "NULL"
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, int):
        return f"CAST({value} AS BIGINT)"
    if isinstance(value, float):
        return f"CAST('{_float_text(value)}' AS DOUBLE)"
    if isinstance(value, decimal.Decimal):
        precision, scale = decimal_type(value)
        return f"CAST('{value}' AS DECIMAL({precision},{scale}))"
    if isinstance(value, str):
        return string(value)
    if isinstance(value, datetime.date) and not isinstance(value, datetime.datetime):
        return f"DATE '{value.isoformat()}'"
    raise TypeError(f"no SQL literal for {value!r}")


def int_of_literal(text: str) -> Optional[int]:
    """The int that `literal` wrote as `text`; None for any other SQL."""
    constant = _INT_LITERAL.fullmatch(text)
    return int(constant[1]) if constant is not None else None


def float_of_literal(text: str) -> Optional[float]:
    """The float that `literal` wrote as `text`; None for any other SQL."""
    constant = _FLOAT_LITERAL.fullmatch(text)
    return float(constant[1].replace("Infinity", "inf")) if constant is not None else None


def _float_text(value: float) -> str:
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    return repr(value)  # round-trips exactly through Java's Double.parseDouble


def decimal_type(value: decimal.Decimal) -> tuple[int, int]:
    """(precision, scale) of the narrowest decimal type holding `value` exactly."""
    _, digits, exponent = value.as_tuple()
    scale = max(0, -exponent)
    precision = max(len(digits) + max(0, exponent), scale, 1)
    return precision, scale


def call(name: str, *args: str) -> str:
    return f"{name}({', '.join(args)})"


def case(branches: list, otherwise: str) -> str:
    """CASE WHEN c1 THEN v1 WHEN ... ELSE otherwise END (the first true condition decides).
    A branch whose condition is the literal FALSE is never taken, and one whose condition is
    TRUE is taken whenever it is reached: neither is written (each is a tree Spark's analyser
    and optimizer would walk, and fold, on every query)."""
    live = []
    for c, v in branches:
        if c == "TRUE":
            otherwise = v
            break
        if c != "FALSE":
            live.append((c, v))
    if not live:
        return otherwise
    whens = " ".join(f"WHEN {c} THEN {v}" for c, v in live)
    return f"CASE {whens} ELSE {otherwise} END"


def cast(text: str, type_name: str) -> str:
    return f"CAST({text} AS {type_name})"


def conjunction(op: str, parts: list[str]) -> str:
    """`parts` joined by AND or OR, without the operator's identity (TRUE for AND, FALSE for
    OR: in SQL's three-valued logic `x AND TRUE` is x, null included). An absorbing literal
    (FALSE in AND) is kept: the other parts may raise, and Spark evaluates them."""
    identity = "TRUE" if op == "AND" else "FALSE"
    kept = [p for p in parts if p != identity]
    if not kept:
        return identity
    if len(kept) == 1 and kept[0] in ("TRUE", "FALSE"):
        return kept[0]
    return "(" + f" {op} ".join(kept) + ")"


def negation(text: str) -> str:
    """NOT text; the other literal where text is TRUE or FALSE."""
    return {"TRUE": "FALSE", "FALSE": "TRUE"}.get(text, f"(NOT {text})")


# -- decimal result types, as Spark's DecimalPrecision rule gives them ------------------------


def added(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """The exact type of a + b or a - b (before Spark bounds it to 38 digits)."""
    scale = max(a[1], b[1])
    return max(a[0] - a[1], b[0] - b[1]) + scale + 1, scale


def multiplied(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """The exact type of a * b (before Spark bounds it to 38 digits)."""
    return a[0] + b[0] + 1, a[1] + b[1]


def wider(a: tuple[int, int], b: tuple[int, int]) -> tuple[int, int]:
    """The type both branches of a CASE are cast to."""
    scale = max(a[1], b[1])
    return min(max(a[0] - a[1], b[0] - b[1]) + scale, MAX_PRECISION), scale


def spark_result(exact: tuple[int, int]) -> Optional[tuple[int, int]]:
    """The type Spark gives a result whose exact type is `exact`, or None when Spark would
    round it to a smaller scale (`spark.sql.decimalOperations.allowPrecisionLoss`, the
    default): then its values are not Python's."""
    precision, scale = exact
    if precision <= MAX_PRECISION:
        return exact
    integral = precision - scale
    adjusted = max(MAX_PRECISION - integral, min(scale, MIN_ADJUSTED_SCALE))
    return (MAX_PRECISION, scale) if adjusted >= scale else None
