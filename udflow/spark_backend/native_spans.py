"""The normal case of a native operator: the rows its native form holds, told apart before it runs.

A native int term raises where Python's value leaves what the native form holds: an
int past 64 bits (`x + 1` at 2**63 - 1), an `int / int` past 2**53. Python returns a
value there, so udflow must too (issue 29, item 4). Like Tuplex's normal case, the
operator assumes its int columns small, proves under that assumption that no such
guard fires, and sends the rows outside it to the function run as Python:

    def f(r):                               normal = |a| <= 2**31 (or None)
        return {**r, "y": r["a"] * 3 - 1}   df.filter(normal)      -> the native Map
                                          ∪ df.filter(NOT normal)  -> the function, in Python

`Span` is interval arithmetic over the int terms, run for a few candidate bounds at
once (`CANDIDATES`): per candidate, the lowest and highest value a term takes where
every int column it reads lies within the bound, and which columns that needs (a
column whose type holds only smaller values needs none: an `int` column's sum with
another fits 64 bits whatever the data). Each guard of such a limit records a `Limit`:
per candidate, whether the spans prove it never fires. `normal_case` picks the
largest bound under which the most guards hold. A guard that holds with no column
assumed never fires at all, and is not written (`NativeLowering.cannot_hold`).

The guards of Python's own errors (None, a zero divisor) are not limits: every row
meets them as Python would, natively.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Callable, Optional

import datetime
import decimal
import math
from fractions import Fraction

from pyspark.sql.types import (ByteType, DataType, DecimalType, DoubleType, FloatType, IntegerType, IntegralType,
                               LongType, ShortType, TimestampNTZType)

from udflow.analysis.model import Emit
from udflow.expr import Expr, Field, IfElse, Lit

from udflow.spark_backend.arrow_values import INT_MAX, INT_MIN, OVERFLOW  # noqa: F401 - OVERFLOW: the native forms name it from here
from udflow.spark_backend.sql import conjunction, ident, literal

# the bounds on an int column's magnitude the normal case may assume, largest first: every
# power of two, so that the bound chosen is the largest the terms allow (a sum of two fits
# 64 bits under 2**62, a difference divided exactly under 2**52, a product of two under 2**31)
CANDIDATES = tuple(2**k for k in range(62, 7, -1))
EXACT_DOUBLE = 2**53

TYPE_RANGES = ((ByteType, 2**7), (ShortType, 2**15), (IntegerType, 2**31), (LongType, 2**63),
               (TimestampNTZType, 2**58), (FloatType, math.inf), (DoubleType, math.inf))
# a naive datetime's span is in microseconds from the epoch (year 1 to 9999 lie within 2**58)
EPOCH = datetime.datetime(1970, 1, 1)

NONE = frozenset()
# in a span's assumptions: the data's own bound (a source's statistics), true of the data read
# when the plan was lowered. Such a limit needs no other rows, but its guard stays written: data
# changed since then raises there, as before, instead of giving a wrong value
DATA = ("the data",)


@dataclass(frozen=True)
class Span:
    """Per candidate bound: the least and greatest value of an int term, and the columns
    whose bound it assumes."""

    lows: tuple
    highs: tuple
    columns: tuple  # a frozenset of column names per candidate

    @staticmethod
    def between(lo: int, hi: int) -> "Span":
        n = len(CANDIDATES)
        return Span((lo,) * n, (hi,) * n, (NONE,) * n)

    @staticmethod
    def column(name: str, data_type: DataType, magnitude: Optional[int] = None) -> Optional["Span"]:
        """An int, float, Decimal or naive datetime column's values (None for another type):
        under each candidate bound, its type's range where that is smaller (nothing assumed),
        else the data's largest `magnitude` where known and smaller (the data assumed unchanged:
        `DATA`), else the bound (the column assumed within it)."""
        top = next((limit for cls, limit in TYPE_RANGES if isinstance(data_type, cls)), None)
        if isinstance(data_type, DecimalType):  # |d| < 10**(p - s); not an int: `top` itself bounds it
            top = 10 ** (data_type.precision - data_type.scale)
        if top is None:
            return None
        highest = top if isinstance(data_type, DecimalType) else top - 1
        if magnitude is not None and not isinstance(magnitude, int):
            magnitude = Fraction(magnitude)  # a Decimal's, exact: no context rounds a bound
        lows, highs, columns = [], [], []
        for b in CANDIDATES:
            if top <= b:  # never for a float: NaN and the infinities lie outside any bound
                low, high, assumed = -top, highest, NONE
            elif magnitude is not None and magnitude <= b:
                low, high, assumed = -magnitude, magnitude, frozenset({DATA})
            else:
                low, high, assumed = -b, b, frozenset({name})
            lows.append(low), highs.append(high), columns.append(assumed)
        return Span(tuple(lows), tuple(highs), tuple(columns))

    def map(self, other: Optional["Span"], extremes: Callable) -> Optional["Span"]:
        """The span of `extremes(lo, hi, lo2, hi2)` over this and `other` (None: unknown)."""
        if other is None:
            return None
        pairs = [extremes(a, b, c, d) for a, b, c, d in zip(self.lows, self.highs, other.lows, other.highs)]
        return Span(tuple(p[0] for p in pairs), tuple(p[1] for p in pairs),
                    tuple(x | y for x, y in zip(self.columns, other.columns)))

    def union(self, other: Optional["Span"]) -> Optional["Span"]:
        return self.map(other, lambda a, b, c, d: (min(a, c), max(b, d)))

    def within(self, lo: int, hi: int) -> "Limit":
        """The limit `lo <= value <= hi`: held where the span lies inside it."""
        return Limit(tuple(lo <= a and b <= hi for a, b in zip(self.lows, self.highs)), self.columns)

    def excludes(self, value: int) -> "Limit":
        return Limit(tuple(not a <= value <= b for a, b in zip(self.lows, self.highs)), self.columns)


class ColumnSpans(Mapping):
    """Column name -> `Span.column` of it, each computed when first read: an operator over a
    wide input (Q7's 48 joined columns) reads few of them, and a span costs 55 candidates'
    arithmetic. `given` spans (a computed column's; the operator's input's) come first."""

    def __init__(self, fields: dict, magnitudes: Mapping, given: Mapping):
        self._fields, self._magnitudes, self._given = fields, magnitudes, given
        self._made: dict = {}

    def __getitem__(self, name: str) -> Optional[Span]:
        if name in self._given:
            return self._given[name]
        if name not in self._made:
            field = self._fields[name]  # KeyError for no such column, as a dict's
            self._made[name] = Span.column(name, field.dataType, self._magnitudes.get(name))
        return self._made[name]

    def __iter__(self):
        return iter(dict.fromkeys([*self._fields, *self._given]))

    def __len__(self) -> int:
        return len(dict.fromkeys([*self._fields, *self._given]))


class Restricted(Mapping):
    """`spans` read for `names` only, lazily (`ColumnSpans` computes what is read)."""

    def __init__(self, spans: Mapping, names):
        self._spans, self._names = spans, frozenset(names)

    def __getitem__(self, name: str) -> Optional[Span]:
        if name not in self._names:
            raise KeyError(name)
        return self._spans.get(name)

    def __iter__(self):
        return iter(self._names)

    def __len__(self) -> int:
        return len(self._names)


def either(a: Optional[Span], b: Optional[Span]) -> Optional[Span]:
    """The span of a value that is one of two terms' (a conditional's branches, `a or b`)."""
    return None if a is None else a.union(b)


def float_arith(op: str, left: Optional[Span], right: Optional[Span]) -> Optional[Span]:
    """The span of `left op right` on floats (+, -, *): the real interval widened outward, for
    the roundings of IEEE arithmetic; None for any other operation or an unknown side."""
    if op not in ("+", "-", "*"):
        return None
    exact = arith(op, left, right)
    if exact is None:
        return None
    return Span(tuple(_outward(x, -1) for x in exact.lows), tuple(_outward(x, 1) for x in exact.highs), exact.columns)


def _outward(x, direction: int):
    return x + direction * (abs(x) * 2.0**-40 + 1.0)


def to_int(x: Optional[Span]) -> Optional[Span]:
    """The ints a float in `x` rounds to (round, floor, ceil): one more either side."""
    if x is None or not all(map(math.isfinite, x.lows + x.highs)):
        return None
    return Span(tuple(math.floor(v) - 1 for v in x.lows), tuple(math.ceil(v) + 1 for v in x.highs), x.columns)


def _products(a, b, c, d):
    corners = (a * c, a * d, b * c, b * d)
    return min(corners), max(corners)


def _magnitude(a, b) -> int:
    return max(abs(a), abs(b))


EXTREMES = {
    "+": lambda a, b, c, d: (a + c, b + d),
    "-": lambda a, b, c, d: (a - d, b - c),
    "*": _products,
    # |a // b| <= |a| for an int b != 0 (b = 0 raises before); -2**63 // -1 is a limit of its own
    "//": lambda a, b, c, d: (-_magnitude(a, b), _magnitude(a, b)),
    # Python's remainder has the divisor's sign and is smaller than it
    "%": lambda a, b, c, d: (min(0, c + 1), max(0, d - 1)),
}


def arith(op: str, left: Optional[Span], right: Optional[Span]) -> Optional[Span]:
    """The span of `left op right` on ints; None where either is unknown."""
    if left is None or op not in EXTREMES:
        return None
    return left.map(right, EXTREMES[op])


def negated(x: Optional[Span]) -> Optional[Span]:
    return None if x is None else Span(tuple(-b for b in x.highs), tuple(-a for a in x.lows), x.columns)


def absolute(x: Optional[Span]) -> Optional[Span]:
    if x is None:
        return None
    lows = tuple(0 if a <= 0 <= b else min(abs(a), abs(b)) for a, b in zip(x.lows, x.highs))
    return Span(lows, tuple(_magnitude(a, b) for a, b in zip(x.lows, x.highs)), x.columns)


# The records a group may hold, for the spans of its aggregates: assumed, as the data's own
# bounds are (`DATA`: the guards that assume it stay written, and raise in a larger group)
GROUP_ROWS = 2**31


def group_count() -> Span:
    """A group's count of records (or of those an `if` keeps): 0 to GROUP_ROWS."""
    n = len(CANDIDATES)
    return Span((0,) * n, (GROUP_ROWS,) * n, (frozenset({DATA}),) * n)


def group_sum(x: Optional[Span]) -> Optional[Span]:
    """The sum of an int term over a group's records, from the term's span: at most
    GROUP_ROWS times its extremes, under the same columns' bounds."""
    if x is None:
        return None
    return Span(tuple(min(0, lo) * GROUP_ROWS for lo in x.lows), tuple(max(0, hi) * GROUP_ROWS for hi in x.highs),
                tuple(c | {DATA} for c in x.columns))


@dataclass(frozen=True)
class RowCondition:
    """Where a guard the spans cannot bound never fires: `sql`, over the operator's input
    columns `reads`, true on such rows (it never raises; null counts as true: a None operand
    raises Python's TypeError natively). `says` is the guard in words, for `describe`."""

    sql: str
    reads: tuple
    says: str

    def holds(self) -> str:
        return f"coalesce({self.sql}, TRUE)"


@dataclass(frozen=True)
class Limit:
    """A guard of what the native form holds: per candidate, whether the spans prove it never
    fires, and the columns whose bound that assumes; or, for a guard no bound proves (`x << n`
    with n a column), the `condition` on the rows where it never fires."""

    held: tuple
    columns: tuple
    condition: Optional[RowCondition] = None

    @staticmethod
    def where(condition: RowCondition) -> "Limit":
        """Held under every bound on the rows where `condition` holds; the others run in Python."""
        n = len(CANDIDATES)
        return Limit((True,) * n, (NONE,) * n, condition)

    @staticmethod
    def unknown() -> "Limit":
        n = len(CANDIDATES)
        return Limit((False,) * n, (NONE,) * n)

    @staticmethod
    def never_fires() -> "Limit":
        n = len(CANDIDATES)
        return Limit((True,) * n, (NONE,) * n)

    @property
    def never(self) -> bool:
        """It holds whatever the data: under some candidate with no column's bound assumed (a
        smaller bound only narrows the spans)."""
        return self.condition is None and any(held and not columns for held, columns in zip(self.held, self.columns))

    @property
    def on_the_data(self) -> bool:
        """It holds where the data's own bounds do (`DATA`: a source's statistics, a group of at
        most GROUP_ROWS records): under some candidate assuming no column's bound beyond them."""
        return self.condition is None and any(held and columns <= {DATA}
                                              for held, columns in zip(self.held, self.columns))

    def both(self, other: "Limit") -> "Limit":
        assert self.condition is None and other.condition is None, "a row condition combines with no bound"
        return Limit(tuple(a and b for a, b in zip(self.held, other.held)),
                     tuple(x | y for x, y in zip(self.columns, other.columns)))

    def either(self, other: "Limit") -> "Limit":
        """Held where one of the two is (the cheaper assumption where both are)."""
        assert self.condition is None and other.condition is None, "a row condition combines with no bound"
        held = tuple(a or b for a, b in zip(self.held, other.held))
        columns = tuple(min((c for h, c in ((a, x), (b, y)) if h), key=len, default=x | y)
                        for a, b, x, y in zip(self.held, other.held, self.columns, other.columns))
        return Limit(held, columns)


def fits_decimal(x: Optional[Span], digits: int, scale: int) -> Limit:
    """The limit of a Decimal result at `scale`: Python keeps `digits` significant digits, so
    its value is exact while |x| < 10**(digits - scale), i.e. at most that less one step of
    the scale (the result is a multiple of it)."""
    if x is None:
        return Limit.unknown()
    top = Fraction(10) ** (digits - scale) - Fraction(1, 10**scale)
    return x.within(-top, top)


def proven_magnitude(x: Optional[Span]):
    """The largest magnitude `x` proves of its values whatever the data beyond what it was
    read from: the least, over the candidates that assume no column (only `DATA`), of its
    extremes; None where every candidate assumes one (or the span is unknown). An operator
    above reads it as a source's statistics (`Span.column`), its guards written as for them."""
    if x is None:
        return None
    found = [max(-lo, hi) for lo, hi, assumed in zip(x.lows, x.highs, x.columns) if assumed <= {DATA}]
    return min(found) if found else None


def emitted_magnitudes(model: RecordModel, spans, schema) -> dict:
    """The int and Decimal fields every emitting case writes as an aggregate (or a constant)
    whose span proves a magnitude (`proven_magnitude`): the largest of the
    cases'. An operator above reads them as the data's bounds (`sum(score) / count(*)`
    after a Reduce is exact in a double when the scores are small: no general case)."""
    emits = [dict(c.emit.fields) for c in model.cases if isinstance(c.emit, Emit)]
    found = {}
    for f in schema.fields:
        if not isinstance(f.dataType, (IntegralType, DecimalType)) or not emits:
            continue
        per_case = [_term_magnitude(e.get(f.name), spans) for e in emits]
        if None not in per_case:
            found[f.name] = max(per_case)
    return found


def emitted_nonzero(model: RecordModel, nonzero: frozenset) -> frozenset:
    """The fields every emitting case writes as one of the `nonzero` fields (a group's count
    of its records, `len(rows)`: a group is never empty) or a number other than 0: an
    operator above divides by them with no zero guard (`sum(score) / count(*)`)."""
    emits = [dict(c.emit.fields) for c in model.cases if isinstance(c.emit, Emit)]
    if not emits:
        return frozenset()
    return frozenset(name for name in emits[0] if all(never_zero(e.get(name), nonzero) for e in emits))


def never_zero(term: Optional[Expr], nonzero: frozenset) -> bool:
    """A term that is never 0: a constant other than 0 (True included: it is 1), or one of the
    `nonzero` fields (a group's `len(rows)`; a field a condition proves not 0)."""
    if isinstance(term, Field):
        return term.name in nonzero
    return isinstance(term, Lit) and isinstance(term.value, (int, float, decimal.Decimal)) and term.value != 0


def _term_magnitude(term: Optional[Expr], spans):
    """What bounds `term`'s magnitude (None: nothing known); None, a value, bounds nothing."""
    if isinstance(term, Lit) and (term.value is None or type(term.value) is int):
        return abs(term.value or 0)
    if isinstance(term, IfElse):  # `sum(xs) if xs else None`
        sides = (_term_magnitude(term.body, spans), _term_magnitude(term.orelse, spans))
        return None if None in sides else max(sides)
    return proven_magnitude(spans.get(term.name)) if isinstance(term, Field) else None


def fits_long(x: Optional[Span]) -> Limit:
    return Limit.unknown() if x is None else x.within(INT_MIN, INT_MAX)


def exact_in_double(x: Optional[Span]) -> Limit:
    return Limit.unknown() if x is None else x.within(-EXACT_DOUBLE, EXACT_DOUBLE)


def not_int_min(x: Optional[Span]) -> Limit:
    return Limit.unknown() if x is None else x.excludes(INT_MIN)


def not_minus_one(x: Optional[Span]) -> Limit:
    return Limit.unknown() if x is None else x.excludes(-1)


@dataclass(frozen=True)
class NormalCase:
    """The rows the native form holds: every column of `columns` None or within ±`bound` (a
    naive datetime: within `bound` microseconds of the epoch), and every row condition of a
    guard no bound proves true (`conditions`). `held` of the operator's `limits` guards never
    fire on them."""

    bound: int
    columns: tuple
    held: int
    limits: int
    datetimes: tuple = ()  # those of `columns` that hold naive datetimes
    conditions: tuple = ()  # `RowCondition`s

    @property
    def reads(self) -> tuple:
        """The input columns telling the normal rows apart."""
        return tuple(dict.fromkeys([*self.columns, *(r for c in self.conditions for r in c.reads)]))

    def rows(self) -> str:
        """SQL true on the normal rows, false on the others (never null). A NaN is outside."""
        return conjunction("AND", [f"({ident(c)} IS NULL OR {ident(c)} BETWEEN {self._limits(c)})"
                                   for c in self.columns] + [c.holds() for c in self.conditions])

    def _limits(self, column: str) -> str:
        if column not in self.datetimes:
            return f"{literal(-self.bound)} AND {literal(self.bound)}"
        reach = datetime.timedelta(microseconds=self.bound)
        low = EPOCH - reach if EPOCH - datetime.datetime.min > reach else datetime.datetime.min
        high = EPOCH + reach if datetime.datetime.max - EPOCH > reach else datetime.datetime.max
        return f"TIMESTAMP_NTZ '{low.isoformat(' ')}' AND TIMESTAMP_NTZ '{high.isoformat(' ')}'"

    def other_rows(self) -> str:
        return f"(NOT {self.rows()})"

    def proves(self, limit: "Limit") -> bool:
        """Whether `limit`'s guard never fires on these rows: it holds under this bound on
        columns this case bounds (not on the data's own statistics, `DATA`, whose guards stay
        written), and its row condition, where it has one, is one of this case's."""
        k = CANDIDATES.index(self.bound)
        return (limit.held[k] and DATA not in limit.columns[k] and limit.columns[k] <= frozenset(self.columns)
                and (limit.condition is None or limit.condition in self.conditions))

    def describe(self) -> str:
        return f"rows {self.where()} run in Python ({self.held} of {self.limits} native limits hold on the others)"

    def where(self) -> str:
        """The rows outside, in words: "where a, b lie beyond ±2**31", "where x << n passes 64 bits"."""
        parts = [f"where {c.says}" for c in self.conditions]
        if self.columns:
            unit = " (a datetime: microseconds from 1970)" if self.datetimes else ""
            parts.insert(0, f"where {', '.join(self.columns)} lie beyond ±2**{self.bound.bit_length() - 1}{unit}")
        return ", or ".join(parts)


class Limits(list):
    """The guards of what one operator's native form holds (`Limit`s, shared by the lowerings
    of its parts), and the normal case its input rows are known to lie in (`assumed`): the
    native side of a split (`general_case.split`) is lowered over those rows only, where a
    guard the case proves never fires is not written (documents' check that each word of an
    ASCII text is ASCII). Every guard is still listed, so that the normal case chosen from
    them is the one chosen without the assumption."""

    def __init__(self, assumed: Optional[NormalCase] = None):
        super().__init__()
        self.assumed = assumed

    def needs_guard(self, limit: "Limit") -> bool:
        """`limit` listed; whether its guard must be written (it may fire on the rows given)."""
        self.append(limit)
        return self.assumed is None or not self.assumed.proves(limit)


def normal_case(limits: list, datetimes: frozenset = frozenset()) -> Optional[NormalCase]:
    """The largest candidate bound under which the most of `limits` hold, with the columns it
    bounds; None where no limit needs a column's bound to hold (the native form holds every row,
    or no bound helps)."""
    live = [limit for limit in limits if not limit.never]
    if not live:
        return None
    scores = [sum(limit.held[k] for limit in live) for k in range(len(CANDIDATES))]
    k = scores.index(max(scores))
    columns = frozenset().union(*(limit.columns[k] for limit in live if limit.held[k])) - {DATA}
    conditions = tuple(dict.fromkeys(limit.condition for limit in live if limit.condition is not None))
    if not scores[k] or not columns and not conditions:
        return None
    return NormalCase(CANDIDATES[k], tuple(sorted(columns)), scores[k], len(live),
                      tuple(sorted(columns & datetimes)), conditions)
