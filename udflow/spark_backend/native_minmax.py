"""`min(a, b, ...)` and `max(a, b, ...)` of scalars natively.

    max(a, b)  of ints, strs, dates, naive datetimes, Decimals   greatest(a, b)
    max(a, b)  of floats                                          CASE WHEN b > a AND NOT isnan(b) THEN b ELSE a END

Python keeps the first of equal arguments, so arguments of mixed families (`max(1, 1.0)`
is 1, `max(1.0, 1)` is 1.0) have no native form: the result's type would vary by row.
None raises Python's TypeError, in its words (`python_words`).
"""

from __future__ import annotations

from udflow.spark_backend import python_words, sql
from udflow.spark_backend.native_types import NotNative, Typed
from udflow.spark_backend.sql import call


FLOAT_FOLD = 4  # the most floats a min/max folds: each step repeats the one before


def min_max(name: str):
    def make(low, args):
        floats = 2 <= len(args) <= FLOAT_FOLD and all(a.family == "float" for a in args)
        if not floats and (len(args) < 2 or len({a.family for a in args}) != 1
                           or args[0].family not in ("int", "decimal", "str", "date", "datetime")):
            raise NotNative("min/max of values of different types (Python keeps the first of equals)")
        run = python_words.smallest if name == "least" else python_words.largest
        guards = low.none_guard("min()/max()", *args, run=run)
        if floats:
            return Typed(low.guarded(guards, _float_fold(name, args)), "float", False)
        dec = None
        if args[0].family == "decimal":
            dec = args[0].decimal
            for a in args[1:]:
                dec = sql.wider(dec, a.decimal)
        return Typed(low.guarded(guards, call(name, *[a.sql for a in args])), args[0].family, False, decimal=dec)
    return make


def _float_fold(name: str, args: list) -> str:
    """max/min of floats as Python computes them: the first argument, replaced by each later
    one that is greater (max) or smaller (min) than the best so far. A comparison with NaN is
    False in Python, where Spark orders NaN above every number, so NaN is tested apart:
    max(nan, 1.0) is nan and max(1.0, nan) is 1.0. -0.0 and 0.0 are equal in both, so
    the first of them is kept."""
    best = args[0].sql
    for a in args[1:]:
        if name == "greatest":
            replaces = f"({a.sql} > {best} AND NOT isnan({a.sql}))"
        else:
            replaces = f"({a.sql} < {best} AND NOT isnan({best}))"
        best = f"CASE WHEN {replaces} THEN {a.sql} ELSE {best} END"
    return best
