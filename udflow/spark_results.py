"""What Spark makes of a Python UDF's value: the conversion to the UDF's declared return type.

A PySpark UDF declares its result type, and Spark converts what the function returns
to it. `uf.from_spark` runs the function as Python and then this conversion, so that
the operators after it see what they saw in the user's job. Spark 4 has two regimes,
by the UDF's eval type, measured on pyspark 4.3 (`tests/test_frontend.py` checks every
row of this table against Spark itself):

    returned   declared    Arrow-batched UDF (default)       pickled UDF (useArrow=False)
    int        double      float(v)                          null
    Decimal    double      not reproduced (Arrow's rounding) null
    bool       double      1.0 / 0.0                         null
    float      bigint/int  truncated toward 0 (error: NaN,   null
                           inf, out of range)
    bool       bigint/int  error                             null
    int        int         error outside 32 bits             wrapped to 32 bits
    bool, int  string      'true'/'false', str(v)            'true'/'false', str(v)
    float      string      str(v) (Python's repr)            Java's Double.toString: not reproduced
    int, float boolean     v != 0                            null
    None       any         null                              null

A value of the declared type passes as it is. A combination udflow does not reproduce
(a str parsed as a number by Arrow, a date, a float written by Java) raises a
`SparkConversionError` saying so, never a value Spark would not give.

Each conversion is one function of `CONVERSIONS`, named `spark.<regime>.<type>`, a call
the expression IR knows (`udflow.expr_functions.FUNCTIONS`): natively the identity where the value
already has the declared type.
"""

from __future__ import annotations

import decimal
import math
from dataclasses import dataclass
from typing import Any, Callable

from udflow.errors import UdflowError

INT64 = (-(2 ** 63), 2 ** 63 - 1)
INT32 = (-(2 ** 31), 2 ** 31 - 1)
# the declared types udflow converts to, as Spark's simpleString writes them
DECLARED = ("double", "bigint", "int", "string", "boolean")
OUTSIDE = {"bigint": "64 bits", "int": "32 bits"}


class SparkConversionError(UdflowError, TypeError):
    """The UDF returned a value whose conversion to its declared type udflow does not reproduce,
    or Spark refuses."""


def _refuse(value: Any, declared: str, regime: str, spark_raises: bool = False) -> None:
    what = f"{type(value).__name__} {value!r}"
    if spark_raises:
        raise SparkConversionError(f"returned {what} for its declared type {declared}, which Spark cannot "
                                   f"convert ({regime} UDF)")
    raise SparkConversionError(f"returned {what} for its declared type {declared}; udflow does not reproduce "
                               f"Spark's conversion of it ({regime} UDF): return a {declared} value")


def _in(value: int, bounds: tuple) -> bool:
    return bounds[0] <= value <= bounds[1]


# -- Arrow-batched UDFs (eval type 101, Spark 4's default) ------------------------------------

def arrow_double(v):
    if v is None or type(v) is float:
        return v
    if type(v) is bool:
        return 1.0 if v else 0.0
    if type(v) is int and _in(v, INT64):
        return float(v)
    # a Decimal: Arrow's decimal-to-double cast is not shown to round as float() does
    return _refuse(v, "double", "Arrow", spark_raises=type(v) is int)


def _arrow_integral(v, bounds: tuple, declared: str):
    if v is None:
        return v
    if type(v) is int:
        if not _in(v, bounds):
            raise SparkConversionError(f"returned an int outside {OUTSIDE[declared]} for its declared type "
                                       f"{declared}, which Spark cannot convert (Arrow UDF)")
        return v
    if type(v) is float:
        if math.isfinite(v) and _in(int(v), bounds):
            return int(v)
        return _refuse(v, declared, "Arrow", spark_raises=True)
    if type(v) is decimal.Decimal and v.is_finite() and _in(int(v), bounds):
        return int(v)
    return _refuse(v, declared, "Arrow", spark_raises=type(v) is bool)


def arrow_bigint(v):
    return _arrow_integral(v, INT64, "bigint")


def arrow_int(v):
    return _arrow_integral(v, INT32, "int")


def arrow_string(v):
    if v is None or type(v) is str:
        return v
    if type(v) is bool:
        return "true" if v else "false"
    if type(v) in (int, float, decimal.Decimal):
        return str(v)
    return _refuse(v, "string", "Arrow")


def arrow_boolean(v):
    if v is None or type(v) is bool:
        return v
    if type(v) in (int, float):
        return v != 0  # NaN too is True, as Arrow casts it
    return _refuse(v, "boolean", "Arrow", spark_raises=type(v) is str)


# -- pickled UDFs (eval type 100): a value of another type is null ----------------------------

def pickled_double(v):
    return v if type(v) is float else None


def pickled_bigint(v):
    if type(v) is not int:
        return None
    return v if _in(v, INT64) else _refuse(v, "bigint", "pickled")


def pickled_int(v):
    if type(v) is not int:
        return None
    if not _in(v, INT64):
        return _refuse(v, "int", "pickled")
    return (v - INT32[0]) % 2 ** 32 + INT32[0]  # Java's long-to-int: the low 32 bits


def pickled_string(v):
    if v is None or type(v) is str:
        return v
    if type(v) is bool:
        return "true" if v else "false"
    if type(v) is int:
        return str(v)
    return _refuse(v, "string", "pickled")


def pickled_boolean(v):
    return v if type(v) is bool else None


CONVERSIONS: dict[str, Callable] = {
    f"spark.{regime}.{declared}": globals()[f"{regime}_{declared}"]
    for regime in ("arrow", "pickled") for declared in DECLARED
}
NAMES = {id(fn): name for name, fn in CONVERSIONS.items()}


@dataclass(frozen=True)
class ItemsConverted:
    """`[convert(x) for x in values]` (an exploded UDF's array, item by item), with no call per
    item where each is None or of a type `unchanged` that the conversion passes as it is: the
    usual list, its types seen in one pass at C speed."""

    convert: Callable
    unchanged: frozenset

    def __call__(self, values) -> list:
        items = list(values)
        if set(map(type, items)) <= self.unchanged:
            return items
        return [self.convert(x) for x in items]


PASSED = {"double": float, "string": str, "boolean": bool}  # the type a conversion to each returns unchanged


def _items_converted(regime: str, declared: str) -> tuple[Callable, ItemsConverted]:
    convert = conversion(regime, declared)
    passed = PASSED.get(declared)
    return convert, ItemsConverted(convert, frozenset({passed, type(None)}) if passed else frozenset())


def conversion(regime: str, declared: str) -> Callable:
    """The conversion of a UDF's value to `declared` under `regime` ("arrow" or "pickled")."""
    return CONVERSIONS[f"spark.{regime}.{declared}"]


# each conversion's `ItemsConverted` (an exploded array's, `frontend.synthesize.items_helper`)
ITEMS = dict(_items_converted(regime, declared) for regime in ("arrow", "pickled") for declared in DECLARED)
