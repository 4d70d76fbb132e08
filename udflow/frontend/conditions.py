"""A DataFrame's simple native conditions as Python filters with Spark's semantics.

A filter keeps a row where its condition is true; Spark drops it where the condition
is false or null. A top-level conjunct of one of these shapes has an exact Python
form (Spark's null: the row is dropped; Spark's NaN: larger than every number and
equal to itself), and so becomes a udflow filter that the rules may move like any other:

    Spark                      Python (a: the column's value)
    a IS NOT NULL              a is not None
    a IS NULL                  a is None
    a = L, a != L              a is not None and a == L     (!= likewise)
    a < L, a <= L              a is not None and a < L      (NaN < L is false in both)
    a > L, a >= L              a is not None and a > L      over ints, strs, dates;
                               a is not None and (a != a or a > L) over floats (NaN > L)

with L a literal of the column's own type (an int literal compared with a double column
is cast by Spark, `CAST(1 AS DOUBLE)`, and read as 1.0). Strings compare alike: Spark
compares UTF-8 bytes, whose order is the code points' order. Anything else stays a
`SparkFilter` (Spark's own expression).
"""

from __future__ import annotations

import datetime
from dataclasses import dataclass
from typing import Any, Optional

COMPARISONS = {"EqualTo": "==", "LessThan": "<", "LessThanOrEqual": "<=", "GreaterThan": ">",
               "GreaterThanOrEqual": ">="}
FLIPPED = {"==": "==", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}
INTEGRAL = ("tinyint", "smallint", "int", "bigint")
ORDERED = INTEGRAL + ("double", "float", "string", "date")
EPOCH = datetime.date(1970, 1, 1)


@dataclass(frozen=True)
class Atom:
    """`column op literal` (op "is None" / "is not None": no literal)."""

    column: str
    op: str
    literal: Any = None
    float_column: bool = False

    def python(self, row: str) -> str:
        a = f"{row}[{self.column!r}]"
        if self.op in ("is None", "is not None"):
            return f"{a} {self.op}"
        literal = _python_literal(self.literal)
        if self.float_column and self.op in (">", ">="):
            return f"({a} is not None and ({a} != {a} or {a} {self.op} {literal}))"
        return f"({a} is not None and {a} {self.op} {literal})"

    def __str__(self) -> str:
        if self.op in ("is None", "is not None"):
            return f"{self.column} {self.op}"
        return f"{self.column} {self.op} {_python_literal(self.literal)}"


def _python_literal(value) -> str:
    if isinstance(value, datetime.date):
        return f"date({value.year}, {value.month}, {value.day})"
    return repr(value)


def atom_of(j, cls, attr) -> Optional[Atom]:
    """The `Atom` of JVM expression `j`, or None. `cls(j)`: its class name; `attr(j)`: its Attr."""
    kind = cls(j)
    if kind in ("IsNotNull", "IsNull"):
        child = j.child()
        if cls(child) != "AttributeReference":
            return None
        return Atom(attr(child).name, "is not None" if kind == "IsNotNull" else "is None")
    negated = kind == "Not" and cls(j.child()) == "EqualTo"
    if negated:
        j, kind = j.child(), "EqualTo"
    if kind not in COMPARISONS:
        return None
    op = "!=" if negated else COMPARISONS[kind]
    left, right = j.left(), j.right()
    if cls(left) != "AttributeReference":
        left, right, op = right, left, FLIPPED[op]
    if cls(left) != "AttributeReference":
        return None
    column = attr(left)
    if column.type not in ORDERED:
        return None
    literal = _literal(right, cls, column.type)
    if literal is _NONE:
        return None
    return Atom(column.name, op, literal, float_column=column.type in ("double", "float"))


_NONE = object()


def _literal(j, cls, column_type: str):
    """The Python value of literal `j` of the column's own type (an integral literal cast to a
    double column: its float), or _NONE."""
    if cls(j) == "Cast" and cls(j.child()) == "Literal" and column_type in ("double", "float") + INTEGRAL:
        value = _literal(j.child(), cls, str(j.child().dataType().simpleString()))
        if not isinstance(value, int) or isinstance(value, bool):
            return _NONE
        return float(value) if column_type in ("double", "float") else value
    if cls(j) != "Literal" or j.value() is None:
        return _NONE
    literal_type = str(j.dataType().simpleString())
    if literal_type != column_type and not (literal_type in INTEGRAL and column_type in INTEGRAL):
        return _NONE
    value = j.value()
    if literal_type in INTEGRAL:
        return int(value)
    if literal_type in ("double", "float"):
        value = float(value)
        return value if value == value else _NONE  # a NaN literal: Spark's order, not Python's
    if literal_type == "string":
        return str(value.toString())
    if literal_type == "date":
        return EPOCH + datetime.timedelta(days=int(value))
    return _NONE
