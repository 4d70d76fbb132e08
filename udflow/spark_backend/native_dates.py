"""Durations: `(a - b).total_seconds()` and `(a - b).days` of two naive datetimes or two dates.

A `timedelta` has no column of its own here: the subtraction is lowered only as the
argument of one of these calls, to its length in microseconds (a long), and the call
reads what Python reads of it.

    Python                                   native form
    ---------------------------------------  -------------------------------------------------
    a - b, two datetimes: timedelta          timestampdiff(MICROSECOND, b, a): exact, and on
                                             TIMESTAMP_NTZ free of any time zone or DST
    a - b, two dates                         datediff(a, b) days
    None on either side: TypeError           raised, in Python's words
    a date and a datetime: TypeError         not native (Python raises it)
    td.total_seconds(): microseconds / 10**6 the same division of doubles, exactly rounded while
    (int / int, correctly rounded)           |us| <= 2**53 (285 years); beyond, it raises
                                             (the documented `beyond 2**53` guard)
    td.days: floor(microseconds / 86400e6)   integer floor division (pmod), exact
"""

from __future__ import annotations

import operator

from udflow.expr import Arith
from udflow.spark_backend import native_spans
from udflow.spark_backend.native_types import NotNative, Typed

DURATIONS = ("timedelta.total_seconds", "timedelta.days")
DAY_US = 86_400_000_000
EXACT_US = 2**53


def duration(low, call) -> Typed:
    """The native form of `call` (one of DURATIONS) over a subtraction of two datetimes or two
    dates; NotNative for any other argument."""
    (arg,) = call.args
    if not (isinstance(arg, Arith) and arg.op == "-"):
        raise NotNative(f"{call.name} of a value that is not a difference of two dates")
    a, b = low.lower(arg.left), low.lower(arg.right)
    if a.family != b.family or a.family not in ("date", "datetime"):
        raise NotNative(f"{a.family} - {b.family} (Python raises TypeError or has no date)")
    guards = low.none_guard("-", a, b, run=operator.sub)
    if a.family == "datetime":
        micros = f"timestampdiff(MICROSECOND, {b.sql}, {a.sql})"
    else:
        micros = f"(CAST(datediff({a.sql}, {b.sql}) AS BIGINT) * {DAY_US})"
    if call.name == "timedelta.days":
        days = micros if a.family == "datetime" else f"CAST(datediff({a.sql}, {b.sql}) AS BIGINT)"
        if a.family == "datetime":
            days = f"(({micros} - pmod({micros}, {DAY_US})) DIV {DAY_US})"
        return Typed(low.guarded(guards, days), "int", False)
    if a.family == "datetime":  # a limit of the native form: spans of microseconds from the epoch
        limit = native_spans.arith("-", a.span, b.span)
        beyond = low.cannot_hold("a duration beyond 2**53 microseconds has no exactly rounded native "
                                 "total_seconds()", native_spans.Limit.unknown() if limit is None
                                 else limit.within(-EXACT_US, EXACT_US))
        if beyond is not None:
            guards.append((f"(abs({micros}) > {EXACT_US})", beyond))
    return Typed(low.guarded(guards, f"(CAST({micros} AS DOUBLE) / 1000000.0D)"), "float", False)
