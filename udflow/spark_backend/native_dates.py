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

A date or datetime moved by a constant timedelta (`d + timedelta(days=30)`, `ts - WINDOW`)
has a column, and is native (`shifted`):

    d + td, d - td of a date                 date_add(d, +-td.days): Python moves a date by the
                                             whole days only (`date + timedelta(hours=23)` is the
                                             same day; `- timedelta(hours=1)` too, `+
                                             timedelta(hours=-1)` the day before)
    ts + td, ts - td of a naive datetime     timestampadd(MICROSECOND, +-td's microseconds, ts)
    a result before year 1 or after 9999     OverflowError: date value out of range, tested on
                                             the operand against bounds computed here
    None: TypeError                          raised, in Python's words

and by a timedelta of a computed int, `d + timedelta(days=r["n"])` (one of days, seconds,
minutes, hours, weeks; `moved_by`): the same forms with the amount a column, the range
tested on the result, and a move of more than `MOVED_DAYS` days computed in Python.

A date's parts replaced by constants (`d.replace(day=1)`, `ts.replace(second=0,
microsecond=0)`: only those that always give a valid date, `analysis.attribute_terms.
REPLACEABLE`) move it by the difference (`replaced`): the day by date_add or DAY, the
month after it by add_months or MONTH (the day is at most 28, so nothing is clamped),
the time of a datetime by the microseconds between its parts and the constants
(`extract(SECOND FROM ts)` holds the seconds with their microseconds). A date has no
time parts (Python's TypeError: Python's call); None raises Python's AttributeError.
"""

from __future__ import annotations

import datetime
import operator

from udflow.expr import Arith, Call, Field, Lit
from udflow.spark_backend import native_spans, python_words, sql
from udflow.spark_backend.native_strings import none_receiver_guards
from udflow.spark_backend.native_types import RAISES, NotNative, Typed

DURATIONS = ("timedelta.total_seconds", "timedelta.days")
MOVES = ("timedelta",)  # a timedelta of a computed number: lowered by the move that adds it (`moved_by`)
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
            days = _floor_div(micros, DAY_US)
        return Typed(low.guarded(guards, days), "int", False)
    if a.family == "datetime":  # a limit of the native form: spans of microseconds from the epoch
        limit = native_spans.arith("-", a.span, b.span)
        beyond = low.cannot_hold("a duration beyond 2**53 microseconds has no exactly rounded native "
                                 "total_seconds()", native_spans.Limit.unknown() if limit is None
                                 else limit.within(-EXACT_US, EXACT_US))
        if beyond is not None:
            guards.append((f"(abs({micros}) > {EXACT_US})", beyond))
    return Typed(low.guarded(guards, f"(CAST({micros} AS DOUBLE) / 1000000.0D)"), "float", False)


def _floor_div(x: str, k: int) -> str:
    """x // k of a long x and a positive k, flooring toward -infinity as Python does (DIV alone
    truncates toward 0)."""
    return f"(({x} - pmod({x}, {k})) DIV {k})"


def moves(t: Arith) -> bool:
    """Whether `t` adds a timedelta (a constant, or one of a computed number) to something, or
    subtracts one from it."""
    return t.op in ("+", "-") and _delta(t.right) or t.op == "+" and _delta(t.left)


def _delta(term) -> bool:
    return isinstance(term, Lit) and isinstance(term.value, datetime.timedelta) or _computed_delta(term)


def _computed_delta(term) -> bool:
    return isinstance(term, Call) and term.name in MOVES


def shifted(low, t: Arith) -> Typed:
    """`d ± td` of a date or a naive datetime and a constant timedelta (module docstring)."""
    first = _delta(t.left)
    if _computed_delta(t.right if not first else t.left):
        return moved_by(low, t, first)
    moment, delta = (t.right, t.left.value) if first else (t.left, t.right.value)
    x = low.lower(moment)
    if x.family not in ("date", "datetime"):
        raise NotNative(f"a {x.family} {t.op} a timedelta")
    run = operator.add if t.op == "+" else operator.sub
    guards = []
    if x.nullable:
        guards.append((f"({x.sql} IS NULL)", low.error(python_words.raised_by(run, *((delta, None) if first
                                                                                     else (None, delta))))))
    if x.family == "date":
        days = delta.days if t.op == "+" else -delta.days  # date - td is date + timedelta(-td.days)
        step, smallest, largest, moved = datetime.timedelta(days=days), datetime.date.min, datetime.date.max, \
            lambda: f"date_add({x.sql}, {days})"
    else:
        micros = (delta // datetime.timedelta(microseconds=1)) * (1 if t.op == "+" else -1)
        step, smallest, largest, moved = datetime.timedelta(microseconds=micros), datetime.datetime.min, \
            datetime.datetime.max, lambda: f"timestampadd(MICROSECOND, {sql.literal(micros)}, {x.sql})"
    outside = _outside(x.sql, step, smallest, largest)
    if outside == "TRUE":  # every value leaves the range: its move is never computed
        return Typed(low.guarded(guards + [("TRUE", low.error(_OUT_OF_RANGE))], x.sql), x.family, False)
    if outside != "FALSE":
        guards.append((outside, low.error(_OUT_OF_RANGE)))
    return Typed(low.guarded(guards, moved()), x.family, False)


_OUT_OF_RANGE = python_words.raised_by(lambda: datetime.date.max + datetime.timedelta(days=1))
UNIT_US = {"weeks": 7 * DAY_US, "days": DAY_US, "hours": 3_600_000_000, "minutes": 60_000_000, "seconds": 1_000_000}
MOVED_DAYS = 3_700_000  # more days than lie between year 1 and 9999: a longer move always leaves them


def moved_by(low, t: Arith, first: bool) -> Typed:
    """`d ± timedelta(unit=n)` of a date or a naive datetime and an int n (`Call('timedelta', (unit,
    n))`), in Python's order: n None raises the constructor's TypeError, then d None the
    operator's, then a result outside years 1 to 9999 OverflowError. A move of more than
    MOVED_DAYS days (or one past timedelta's own 999999999 days, whose OverflowError names
    the value) is a limit of the native form: such rows run in Python, where n is a column.

        date + td    date_add(d, +-td.days): td.days is floor(n * unit / day); `date - td` is
                     `date + timedelta(-td.days)` (`- timedelta(hours=1)` keeps the day)
        ts + td      timestampadd(MICROSECOND, +-n * unit, ts)"""
    call = t.left if first else t.right
    unit, amount = call.args[0].value, low.lower(call.args[1])
    x = low.lower(t.right if first else t.left)
    if RAISES in x.sql and RAISES in amount.sql:  # which raises first is Python's order of operands
        raise NotNative("a date and a timedelta that both may raise")
    if x.family not in ("date", "datetime") or amount.family not in ("int", "bool"):
        raise NotNative(f"a {x.family} {t.op} a timedelta of a {amount.family}")
    n = sql.cast(amount.sql, "BIGINT") if amount.family == "bool" else amount.sql
    bound = MOVED_DAYS * DAY_US // UNIT_US[unit]
    guards = []
    if amount.nullable:
        guards.append((f"({amount.sql} IS NULL)", low.error(python_words.raised_by(lambda: datetime.timedelta(**{unit: None})))))
    guards += _within(low, call.args[1], amount, n, bound)
    sample = datetime.timedelta(**{unit: 1})
    if x.nullable:
        run = operator.add if t.op == "+" else operator.sub
        guards.append((f"({x.sql} IS NULL)", low.error(python_words.raised_by(run, *((sample, None) if first
                                                                                 else (None, sample))))))
    sign = "" if t.op == "+" else "-"
    if x.family == "date":
        if UNIT_US[unit] < DAY_US:  # td.days floors
            days = _floor_div(n, DAY_US // UNIT_US[unit])
        else:
            days = f"({n} * {UNIT_US[unit] // DAY_US})"
        moved, smallest, largest = f"date_add({x.sql}, CAST({sign}{days} AS INT))", datetime.date.min, datetime.date.max
    else:
        moved = f"timestampadd(MICROSECOND, {sign}({n} * {UNIT_US[unit]}), {x.sql})"
        smallest, largest = datetime.datetime.min, datetime.datetime.max
    guards.append((f"({moved} < {_moment(smallest)} OR {moved} > {_moment(largest)})", low.error(_OUT_OF_RANGE)))
    return Typed(low.guarded(guards, moved), x.family, False)


def _within(low, term, amount: Typed, n: str, bound: int) -> list:
    """The guard of a move past `bound` units: none where the amount's span proves it within,
    a limit on the rows of its column otherwise (Python computes those); NotNative for a
    computed amount that no span bounds."""
    limit = native_spans.Limit.unknown() if amount.span is None else amount.span.within(-bound, bound)
    if limit.never:
        return []
    if not isinstance(term, Field):
        raise NotNative("a timedelta of a computed number no bound keeps within the dates")
    # compared, not abs(n): abs(-2**63) overflows a long, which raises in ANSI mode
    condition = native_spans.RowCondition(f"({n} >= -{bound} AND {n} <= {bound})", (term.name,),
                                          f"{term.name} moves a date past years 1 to 9999")
    error = low.cannot_hold(f"a move of more than {MOVED_DAYS} days", native_spans.Limit.where(condition))
    return [] if error is None else [(f"({n} < -{bound} OR {n} > {bound})", error)]


def _outside(x: str, step: datetime.timedelta, smallest, largest) -> str:
    """SQL true where x + step leaves [smallest, largest] (the bounds computed here)."""
    if step == datetime.timedelta(0):
        return "FALSE"
    try:
        bound = (largest - step) if step > datetime.timedelta(0) else (smallest - step)
    except OverflowError:
        return "TRUE"
    return f"({x} {'>' if step > datetime.timedelta(0) else '<'} {_moment(bound)})"


def _moment(value) -> str:
    if isinstance(value, datetime.datetime):
        return f"TIMESTAMP_NTZ '{value.isoformat(sep=' ')}'"
    return sql.literal(value)


def iso_text(x: str, family: str, sep: str) -> str:
    """Python's `d.isoformat()` (`sep` "T") or `str(d)` (" ") of a date or a naive datetime:
    Spark's cast writes a date's (years 1 to 9999 at four digits, as Python); a datetime's
    microseconds follow its seconds only where they are not 0, at six digits (Spark's cast
    would trim their trailing zeros)."""
    if family == "date":
        return f"CAST({x} AS STRING)"
    fraction = f"date_format({x}, 'SSSSSS')"
    seconds = f"date_format({x}, {sql.string(f'yyyy-MM-dd{chr(39)}{sep}{chr(39)}HH:mm:ss')})"
    return f"concat({seconds}, CASE WHEN {fraction} = '000000' THEN '' ELSE concat('.', {fraction}) END)"


def isoformat(low, args) -> Typed:
    """`d.isoformat()` of a date or a naive datetime (an aware one has no column here)."""
    (x,) = args
    if x.family not in ("date", "datetime"):
        raise NotNative(f"isoformat() of a {x.family}")
    guards = none_receiver_guards(low, x, "isoformat")
    return Typed(low.guarded(guards, iso_text(x.sql, x.family, "T")), "str", False)


TIME_US = {"hour": 3_600_000_000, "minute": 60_000_000}


def replaced(low, args) -> Typed:
    """`d.replace(part=constant, ...)` of a date or a naive datetime (module docstring)."""
    x, *flat = args
    parts = {name.known[0]: value.known[0] for name, value in zip(flat[::2], flat[1::2])}
    if x.family not in ("date", "datetime") or x.family == "date" and set(parts) - {"day", "month"}:
        raise NotNative(f"replace({', '.join(parts)}) of a {x.family}")
    guards = none_receiver_guards(low, x, "replace")
    date = x.family == "date"
    value = x.sql
    if "day" in parts:
        moved = f"({parts['day']} - dayofmonth({x.sql}))"
        value = f"date_add({value}, {moved})" if date else f"timestampadd(DAY, {moved}, {value})"
    if "month" in parts:
        moved = f"({parts['month']} - month({x.sql}))"
        value = f"add_months({value}, {moved})" if date else f"timestampadd(MONTH, {moved}, {value})"
    micros = [f"({parts[p]} - {p}({x.sql})) * {TIME_US[p]}L" for p in TIME_US if p in parts]  # a long: INT overflows
    if "second" in parts or "microsecond" in parts:
        seconds = f"extract(SECOND FROM {x.sql})"  # DECIMAL(8,6): the seconds and their microseconds
        now = {"second": f"floor({seconds})", "microsecond": f"({seconds} - floor({seconds})) * 1000000L"}
        wanted = {"second": parts.get("second"), "microsecond": parts.get("microsecond")}
        micros += [f"({wanted['second']} - {now['second']}) * 1000000L" if wanted["second"] is not None else "",
                   f"({wanted['microsecond']} - {now['microsecond']})" if wanted["microsecond"] is not None else ""]
    micros = [m for m in micros if m]
    if micros:
        value = f"timestampadd(MICROSECOND, CAST({' + '.join(micros)} AS BIGINT), {value})"
    return Typed(low.guarded(guards, value), x.family, False)
