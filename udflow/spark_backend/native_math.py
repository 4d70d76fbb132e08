"""The `math` functions whose value Spark computes exactly as Python does: native forms.

IEEE 754 gives one correctly rounded result for a square root and none for `exp`, `log`
or `sin`, whose last bit may differ between the JVM's libraries and C's; `floor`, `ceil`
and `fabs` are exact everywhere. So these four are native, the rest run as Python inside
the native plan (`python_calls`).

    call          Python                                   native form
    ------------  ---------------------------------------  ------------------------------------
    math.sqrt(x)  float(x) ** 0.5, correctly rounded;      sqrt(CAST(x AS DOUBLE)); x < 0
                  ValueError: math domain error for x < 0  raises first (NaN is not below 0:
                  (-inf included), nan for nan, -0.0 for   sqrt(NaN) is NaN in both)
                  -0.0
    math.fabs(x)  abs(float(x)): 0.0 for -0.0, nan for     abs(CAST(x AS DOUBLE))
                  nan
    math.floor(x) an int: x itself for an int or bool;     x; for a float CAST(FLOOR(x) AS
    math.ceil(x)  ValueError for nan, OverflowError for    BIGINT) after the NaN, infinity and
                  +-inf, any size of int otherwise         64-bit guards (an int past 64 bits
                                                           raises, as everywhere)

None raises TypeError ("must be real number, not NoneType"), as Python says it; a str,
Decimal or date argument has no native form here (Python's rules for them differ).
"""

from __future__ import annotations

import math

from udflow.spark_backend import python_words
from udflow.spark_backend.native_types import INT_MIN, NotNative, Typed
from udflow.spark_backend.sql import call, cast

NUMBERS = ("int", "float", "bool")
TWO_63 = "9.223372036854775807E18"  # 2**63 as a double literal: the first double past the longs


def _number(name: str, x: Typed) -> None:
    if x.family not in NUMBERS:
        raise NotNative(f"{name} of {x.family}")


def _as_double(x: Typed) -> str:
    return x.sql if x.family == "float" else cast(x.sql, "DOUBLE")


def _none(low, name: str, x: Typed) -> list:
    return low.none_guard(name, x, run=getattr(math, name.removeprefix("math.")))


def _sqrt(low, args) -> Typed:
    (x,) = args
    _number("math.sqrt", x)
    guards = _none(low, "math.sqrt", x)
    if x.family != "bool":  # a bool is 0 or 1
        guards.append((f"({x.sql} < 0)", low.error(python_words.raised_by(math.sqrt, -1.0), x)))
    return Typed(low.guarded(guards, call("sqrt", _as_double(x))), "float", False)


def _fabs(low, args) -> Typed:
    (x,) = args
    _number("math.fabs", x)
    return Typed(low.guarded(_none(low, "math.fabs", x), call("abs", _as_double(x))), "float", False)


def _rounded(name: str, spark_name: str):
    run = getattr(math, name)

    def make(low, args) -> Typed:
        (x,) = args
        _number(f"math.{name}", x)
        guards = _none(low, f"math.{name}", x)
        if x.family != "float":
            return Typed(low.guarded(guards, cast(x.sql, "BIGINT")), "int", False)
        guards += [
            (f"isnan({x.sql})", low.error(python_words.raised_by(run, math.nan), x)),
            (f"({x.sql} IN (double('Infinity'), double('-Infinity')))", low.error(python_words.raised_by(run, math.inf), x)),
            (f"({x.sql} >= {TWO_63} OR {x.sql} < {INT_MIN}D)", low.error("int overflow past 64 bits", x)),
        ]
        return Typed(low.guarded(guards, cast(call(spark_name, x.sql), "BIGINT")), "int", False)
    return make


CALLS = {
    "math.sqrt": _sqrt,
    "math.fabs": _fabs,
    "math.floor": _rounded("floor", "floor"),
    "math.ceil": _rounded("ceil", "ceil"),
}
