"""What the native lowering knows of a lowered term: its SQL text and its Python type family."""

from __future__ import annotations

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
)

INT_MIN, INT_MAX = -(2**63), 2**63 - 1
EXACT_DOUBLE = 2**53
DECIMAL_DIGITS = 28  # Python's default decimal context precision
INT_AS_DECIMAL = (20, 0)  # a long as Spark widens it for decimal arithmetic


class NotNative(Exception):
    """The term has no exact native form here; the reason says which construct."""


@dataclass(frozen=True)
class Typed:
    """A lowered term: its SQL text, the Python type family of its values, whether it may be
    None; `decimal` is (precision, scale) of a decimal's Spark type."""

    sql: str
    family: str  # "int", "float", "decimal", "str", "bool", "date", "none"
    nullable: bool
    leaf: bool = False  # a column or a constant as it is: an error message may show it
    decimal: Optional[tuple] = None


FAMILIES = ((BooleanType, "bool"), (ByteType, "int"), (ShortType, "int"), (IntegerType, "int"),
            (LongType, "int"), (FloatType, "float"), (DoubleType, "float"), (DecimalType, "decimal"),
            (StringType, "str"), (DateType, "date"))


def family_of(data_type: DataType) -> Optional[str]:
    for cls, family in FAMILIES:
        if isinstance(data_type, cls):
            return family
    return None


def decimal_of(data_type: DataType) -> Optional[tuple]:
    return (data_type.precision, data_type.scale) if isinstance(data_type, DecimalType) else None
