"""A Reduce run natively from its model (`udflow.analysis.model.ReduceModel`).

    groupBy(key).agg(one column per aggregate, first(struct(fields of rows[0])))
        -> the model's cases over that one row per group (`native_ops.run_map`)

    def revenue(rows):                          groupBy(s_suppkey)
        rows = list(rows)                         .agg(sum(price * (1 - disc)) AS agg0,
        total = sum(r["price"] * (1 - r["disc"])       first(struct(*)) AS first)
                    for r in rows)                .select(first.*, agg0)
        yield {**rows[0], "total": total}         .withColumn(total, agg0)

The fields of `rows[0]` come from one struct, so they all come from one and the
same record, as in Python (one `first()` per column could mix records); a key
field (not a float) is the group's key column itself, and a Reduce reading
only key fields of `rows[0]` needs no struct, which Spark cannot hash-aggregate.

Each aggregate with Python's semantics, or `NotNative`:

    len(rows), len([r for r in rows if c])   count: never None, never raises
    sum over ints (and bools)                 an exact sum (decimal(38,0)); past 64 bits raises
                                              (Python's ints are unbounded; a long column is not)
    sum over floats, no `if`                  Spark's `sum`: equal to Python's up to association
                                              (the float contract below)
    sum over Decimals, no `if`                Spark's exact decimal sum; raises where a running
                                              total needs more than Python's 28 digits
    min/max over int, str, date, Decimal, bool  min/max
    min/max over floats                       min/max: a value Python returns for some order of
                                              the group (NaN, 0.0 and -0.0 below)
    min/max over tuples of those, never None   min/max of named_struct(_0, a, _1, b, ...); an item
                                              that may be None, or a float, is Python
    None among the values                     sum: TypeError; min/max: TypeError unless it is the
                                              only value (then it is the result)
    `if` leaves no value                      min/max: ValueError; sum over floats or Decimals
                                              gives Python's int 0: not native

The float contract. A group's records reach a Reduce in no defined order (on Spark,
shuffle order; `docs/native.md`), so Python's own result is that of *some* order:

- `max` keeps the first value no later one is greater than: NaN if the first value is NaN,
  otherwise the largest other value, the first of 0.0 and -0.0 when they tie. Spark's `max`
  orders NaN above every number and 0.0 with -0.0: NaN when there is one (Python's result
  when NaN comes first), else the largest, 0.0 or -0.0 (Python's in the order that puts that
  one first). `min` alike, NaN least likely: Spark's is Python's for an order that does not
  start with NaN, or NaN when every value is NaN. Exact: a result Python gives.
- `sum` is a left fold in Python 3.11 (compensated from 3.12), partial sums added in any
  association on Spark. No order of the fold gives Spark's sum in general, so floats sums
  are *equal up to association*: within 2 (n - 1) 2**-53 * sum(|x|) of each other for n
  finite values whose magnitudes sum to a finite float (both are within (n - 1) 2**-53 *
  sum(|x|) of the exact sum); where a running total overflows, one may be infinite or NaN
  and the other not. ints and Decimals stay exact. `FLOAT_SUM_ULPS` states the bound the
  differential tests use.

An aggregate's own errors (None, no value, overflow) are raised where the
model uses its value, since Python raises where it computes it. The per-record
terms are evaluated inside the aggregation, for every group: an aggregate
whose per-record terms may raise is native only when Python computes it for
every group too (`ReduceModel.eager`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Optional

from pyspark.sql import DataFrame

from udflow.analysis.model import Case, Emit, GroupFilterModel, RecordModel, ReduceModel, case_terms, fields_read
from udflow.analysis.terms import never_raises
from udflow.expr import Agg, BoolOp, Cmp, Expr, Field, First, GroupRows, IfElse, Lit, Tuple, transform
from udflow.spark_backend import functions, native_spans, nullness
from udflow.spark_backend.memo import select_expr
from udflow.spark_backend.native import NativeLowering, NotNative, Typed, family_of
from udflow.spark_backend.native_calls import power_of_ten
from udflow.spark_backend.native_ops import run_map
from udflow.spark_backend.native_spans import NormalCase, Span, normal_case
from udflow.spark_backend.native_types import DECIMAL_DIGITS, INT_MAX, INT_MIN, datetime_columns
from udflow.spark_backend.python_calls import PythonCalls
from udflow.spark_backend.sql import ident, literal

FIRST = "__udflow_first"
MIN_MAX_FAMILIES = ("int", "str", "date", "decimal", "bool", "float")
TUPLE_ITEM_FAMILIES = ("int", "str", "date", "decimal", "bool")
# The float contract's bound on |native sum - Python's sum|, in units of 2**-53 * sum(|x|):
# 2 (n - 1) for n values (`float_sums_agree`)
FLOAT_SUM_ULPS = 2
# Python's words for a None among a group's values depend on where the order puts it; these
# are the words for a None after the first value (`2 + None`, `None > 2`), whatever Spark's order
SUM_TOTALS = {"int": "int", "bool": "int", "float": "float", "decimal": "decimal.Decimal"}  # the running total
TYPE_NAMES = {"int": "int", "bool": "bool", "float": "float", "str": "str", "date": "datetime.date",
              "decimal": "decimal.Decimal"}


@dataclass(frozen=True)
class Aggregated:
    """One aggregate's columns in groupBy().agg: its value, and the errors it raises where used."""

    alias: str
    columns: tuple  # ((name, SQL aggregate expression), ...) for .agg(...)
    checks: tuple  # ((condition over the aggregated row, message[, its `native_spans.Limit`]), ...)
    nonnull: bool
    span: Optional[Span] = None  # an int value's, from its records' (`native_spans.group_sum`)


@dataclass(frozen=True)
class Reduced:
    """A Reduce run natively: its records, the fields known never None, and the normal case
    of its guards of what the native form holds (`native_spans`), per-record terms' and
    cases' alike, None where no bound is needed (or none helps). Its columns are the input's
    (a group's records bound its aggregates: `native_spans.group_sum`; a field of `rows[0]`
    is one of them) or the aggregated row's (`aggregated`, one per group: an aggregate
    whose span is unknown)."""

    frame: DataFrame
    nonnull: frozenset
    normal: Optional[NormalCase] = None
    aggregated: Optional[DataFrame] = None
    magnitudes: dict = field(default_factory=dict)  # field -> the magnitude its span proves
    nonzero: frozenset = frozenset()  # fields never 0 (a group's count of its records)


def run_reduce(df: DataFrame, key: tuple, model: ReduceModel, where: str, nonnull: frozenset,
               determined: frozenset = frozenset(), magnitudes: Optional[dict] = None,
               assumed: Optional[NormalCase] = None) -> Reduced:
    """The Reduce natively, and its output's fields known never None; NotNative when an
    aggregate or a term has no exact native form. `determined`: fields the key determines
    (`grouping`), grouped by rather than taken from one record; `magnitudes`: the int and
    Decimal fields' largest magnitudes the data proves (`nullness.magnitudes_of`); `assumed`:
    the normal case every group of `df` lies in, records and aggregated row (`native_spans.Limits`)."""
    schema = df.schema
    model = _one_count_per_condition(model)
    rows = NativeLowering(schema, where, nonnull, shown=fields_read(model) | set(key), pinned=False,
                          magnitudes=magnitudes, limits=native_spans.Limits(assumed))
    aggs = model.aggregates()
    nonempty = used_where_nonempty(model)
    lowered = [_aggregate(rows, agg, f"__udflow_agg{i}", agg in model.eager, agg in nonempty)
               for i, agg in enumerate(aggs)]
    copies = any(isinstance(c.emit, Emit) and c.emit.copies_input for c in model.cases)
    read = {t.name for _, term in case_terms(model) for t in term.walk() if isinstance(t, First)}
    overwritten = _overwritten(model)
    firsts = [n for n in schema.names if n not in overwritten or n in read] if copies else sorted(read)
    columns = [f"{text} AS {name}" for a in lowered for name, text in a.columns]
    exact_determined = _exact_key_fields(schema, tuple(determined))
    also = tuple(n for n in firsts if n in exact_determined)
    from_key = _exact_key_fields(schema, key + also)  # rows[0][k] is the group's own key value
    from_struct = [n for n in firsts if n not in from_key]
    if from_struct:
        fields = ", ".join(f"{literal(n)}, {ident(n)}" for n in from_struct)
        columns.append(f"first(named_struct({fields})) AS {FIRST}")
    keys = [functions.expr(ident(k)) for k in key + also]
    grouped = df.groupBy(*keys).agg(*[functions.expr(c) for c in columns]) if columns else df.groupBy(*keys).count()
    helper = [name for a in lowered for name, _ in a.columns]
    one_row = _one_row(grouped, firsts, from_key, helper)
    checks = {a.alias: [(ident(check[0]), *check[1:]) for check in a.checks] for a in lowered}
    # an error after the aggregation shows the group's key (as the Python path does), not the
    # copied record: a struct no one selects must stay prunable
    over_one_row = _over_one_row(model, {agg: a.alias for agg, a in zip(aggs, lowered)})
    groups = NativeLowering(
        one_row.schema, where, frozenset(nonnull & set(firsts)) | {a.alias for a in lowered if a.nonnull},
        checked=checks, shown=set(key) | set(also), python_calls=PythonCalls(df.sparkSession),
        computed_at=over_one_row.computed_at, limits=rows.limits,
        spans={**{n: rows.spans.get(n) for n in firsts}, **{a.alias: a.span for a in lowered if a.span}},
        # a group is never empty (a Reduce has a key): `len(rows)` is at least 1
        nonzero=frozenset(a.alias for agg, a in zip(aggs, lowered) if agg.fn == "count" and agg.rows.where is None),
    )
    out, known = run_map(one_row, over_one_row, groups)
    return Reduced((out.drop(*helper) if copies else out), known - set(helper),
                   normal_case(rows.limits, datetime_columns(schema) | datetime_columns(one_row.schema)), one_row,
                   native_spans.emitted_magnitudes(over_one_row, groups.spans, out.schema),
                   native_spans.emitted_nonzero(over_one_row, groups.nonzero))


def _one_row(grouped: DataFrame, firsts: list, from_key: tuple, helper: list) -> DataFrame:
    """Per group, its copied fields (a key's own column, or the first record's struct field) and
    the aggregates' helper columns; `grouped` itself where those are just its columns (every
    copied field a key), which spares Spark an analysis."""
    if all(n in from_key for n in firsts) and sorted(grouped.columns) == sorted([*firsts, *helper]):
        return grouped
    return select_expr(grouped, [ident(n) if n in from_key else f"{FIRST}.{ident(n)} AS {ident(n)}" for n in firsts]
                       + [ident(c) for c in helper])


def _one_count_per_condition(model: ReduceModel) -> ReduceModel:
    """The model with `len([r["x"] for r in rows if c])` as `len([r for r in rows if c])`
    wherever computing `r["x"]` never raises: the same count (a list's length does not depend
    on its values). One column per condition then, so a test of one (`if xs`, `len(xs) > 0`)
    proves the divisor of the other not 0 (`sum(xs) / len(xs) if xs else None`: no zero
    guard, whose error would carry the group's record into the plan)."""

    def leaf(t: Expr) -> Expr:
        if isinstance(t, Agg) and t.fn == "count" and t.rows.elem is not None and never_raises(t.rows.elem):
            return Agg("count", GroupRows(None, t.rows.where))
        return t

    cases, computed_at = _transformed(model, leaf)
    return ReduceModel(cases, model.line, frozenset(leaf(a) for a in model.eager), computed_at)


def _transformed(model: ReduceModel, leaf) -> tuple[tuple, tuple]:
    """The model's cases and `computed_at` with `leaf` applied to every term of them."""

    def emit(e):
        return Emit(tuple((n, transform(v, leaf)) for n, v in e.fields), e.copies_input) if isinstance(e, Emit) else e

    cases = tuple(Case(transform(c.guard, leaf), emit(c.emit), c.line) for c in model.cases)
    return cases, tuple((transform(t, leaf), line) for t, line in model.computed_at)


def _overwritten(model: ReduceModel) -> frozenset:
    """Fields of `rows[0]` that every case copying it sets anew (`{**rows[0], "ip": ...}`):
    the copy need not fetch them (they then come after the copied columns: fields are
    compared by name, not by position)."""
    copying = [frozenset(n for n, _ in c.emit.fields) for c in model.cases
               if isinstance(c.emit, Emit) and c.emit.copies_input]
    return frozenset.intersection(*copying) if copying else frozenset()


def _exact_key_fields(schema, key: tuple) -> frozenset:
    """Key fields whose every record in a group holds the group's key value exactly: not floats
    (Spark groups 0.0 with -0.0 and every NaN together). These need no `first(struct(...))`,
    which Spark cannot hash-aggregate."""
    types = {f.name: f.dataType for f in schema.fields}
    return frozenset(k for k in key if family_of(types[k]) in ("int", "str", "date", "decimal", "bool"))


def _over_one_row(model: ReduceModel, names: dict) -> RecordModel:
    """The cases with each aggregate a column of the aggregated row and rows[0][f] its field f."""

    def leaf(t: Expr) -> Expr:
        if isinstance(t, Agg):
            return Field(names[t])
        return Field(t.name) if isinstance(t, First) else t

    cases, computed_at = _transformed(model, leaf)
    return RecordModel(cases, model.line, computed_at)


def _aggregate(rows: NativeLowering, agg: Agg, alias: str, eager: bool, nonempty: bool) -> Aggregated:
    """The aggregate's columns over the group's records, with Python's semantics. `nonempty`:
    the model uses its value only where its list holds a value (see `used_where_nonempty`)."""
    before = rows.guards_made
    cond = rows.predicate(agg.rows.where) if agg.rows.where is not None else None
    elem = agg.rows.elem
    # the element is computed only on records its `if` keeps (`CASE WHEN kept THEN x END`),
    # so what the condition proves not None there needs no None count (`if r["tip"] is not None`)
    proven = nullness.when_true(agg.rows.where) if agg.rows.where is not None else frozenset()
    with rows.assuming(proven):
        if isinstance(elem, Tuple):  # each item lowered, left to right as Python builds the tuple
            x = tuple(rows.lower(item) for item in elem.items)
        else:
            x = rows.lower(elem) if elem is not None else None
    if rows.guards_made > before and not eager:
        raise NotNative(f"{agg} may raise on a record and Python computes it on some paths only")
    kept = cond if cond is not None else "TRUE"
    if isinstance(x, tuple):
        if agg.fn not in ("min", "max"):
            raise NotNative(f"{agg} has no native form")
        return _tuple_min_max(agg, x, cond, kept, alias)
    if agg.fn == "count":
        counted = "count(1)" if kept == "TRUE" else f"count(CASE WHEN {kept} THEN 1 END)"
        return Aggregated(alias, ((alias, counted),), (), True, native_spans.group_count())
    if agg.fn == "sum":
        summed = _sum(agg, x, cond if not nonempty else None, kept, alias)
        counts = _ones(agg, x) is not None
        span = native_spans.group_count() if counts else native_spans.group_sum(x.span) \
            if x.family in ("int", "bool") else None
        return replace(summed, span=span)
    if agg.fn in ("min", "max"):
        return replace(_min_max(agg, x, cond, kept, alias), span=x.span if x.family == "int" else None)
    if agg.fn in ("any", "all") and x is not None:
        return _any_all(agg, rows.truth(x), kept, alias)
    raise NotNative(f"{agg} has no native form")


def _any_all(agg: Agg, truth: str, kept: str, alias: str) -> Aggregated:
    """any/all: Python's truthiness of each value; no values: any is False, all is True."""
    pick, empty = ("max", "FALSE") if agg.fn == "any" else ("min", "TRUE")
    return Aggregated(alias, ((alias, f"coalesce({pick}(CASE WHEN {kept} THEN {truth} END), {empty})"),), (), True)


def _sum(agg: Agg, x: Typed, cond, kept: str, alias: str) -> Aggregated:
    """`cond` is None where no record's `if` matters: none is given, or the value is used
    only where a value is kept (then Python's int 0 for nothing never shows)."""
    nulls, null_check = _null_count(x, kept, alias, "TypeError: unsupported operand type(s) for +: "
                                    f"'{SUM_TOTALS.get(x.family, 'int')}' and 'NoneType'")
    ones = _ones(agg, x)
    if ones is not None:  # a count: no overflow to watch, no DECIMAL(38,0) running total
        return Aggregated(alias, ((alias, f"count(CASE WHEN ({kept}) AND ({ones}) THEN 1 END)"),), (), True)
    if x.family in ("int", "bool"):
        fits = native_spans.fits_long(native_spans.group_sum(x.span))
        total, overflow = _long_total(x, kept) if fits.on_the_data else _exact_total(x, kept)
        return Aggregated(alias, ((alias, f"CASE WHEN {overflow} THEN NULL ELSE CAST({total} AS BIGINT) END"),
                                  (alias + "_big", overflow), *nulls),
                          ((alias + "_big", native_spans.OVERFLOW + " in sum", fits), *null_check), True)
    if cond is not None:
        raise NotNative(f"{agg}: with an `if` that may leave no value Python's sum is the int 0")
    if x.family == "float":  # equal to Python's up to association (the float contract)
        values = x.sql if kept == "TRUE" else f"CASE WHEN {kept} THEN {x.sql} END"
        total = f"coalesce(sum(CAST({values} AS DOUBLE)), CAST(0.0 AS DOUBLE))"
        return Aggregated(alias, ((alias, total), *nulls), tuple(null_check), True)
    if x.family == "decimal":
        return _decimal_sum(x, kept, alias, nulls, null_check)
    raise NotNative(f"sum over {x.family} values")


def _exact_total(x: Typed, kept: str) -> tuple[str, str]:
    """An int sum and its overflow past 64 bits, exactly: a DECIMAL(38,0) running total (a
    partial sum may leave 64 bits and come back, as Python's int does)."""
    total = f"coalesce(sum(CAST(CASE WHEN {kept} THEN CAST({x.sql} AS BIGINT) END AS DECIMAL(38,0))), CAST(0 AS DECIMAL(38,0)))"
    return total, f"({total} > {INT_MAX} OR {total} < {INT_MIN})"


def _long_total(x: Typed, kept: str) -> tuple[str, str]:
    """The same where the data's bounds keep every partial sum within 64 bits (`group_sum`: a
    group of at most 2**31 records, each within the bound): a BIGINT running total, which
    `try_sum` makes NULL, never wrapped, where those bounds fail; that is the overflow, whose
    guard stays written (as a source's statistics' do) and raises. A decimal running total
    costs documents' 1.9 million words several times a long one."""
    values = f"CASE WHEN {kept} THEN CAST({x.sql} AS BIGINT) END"
    total = f"coalesce(try_sum({values}), CAST(0 AS BIGINT))"
    return total, f"(try_sum({values}) IS NULL AND count({values}) > 0)"


def float_sums_agree(native: float, python: float, values: list) -> bool:
    """The float contract for sums: `native` and `python` sum the same `values` in two
    associations. With a NaN among them both are NaN; where the magnitudes overflow (an
    infinity among the values, or running totals past the largest float) any IEEE result
    agrees; otherwise they agree within FLOAT_SUM_ULPS (n - 1) 2**-53 sum(|x|)."""
    if any(math.isnan(v) for v in values):
        return math.isnan(native) and math.isnan(python)
    magnitude = sum(abs(v) for v in values)
    if not math.isfinite(magnitude):
        return True
    return abs(native - python) <= FLOAT_SUM_ULPS * (len(values) - 1) * 2.0 ** -53 * magnitude


def _ones(agg: Agg, x: Typed):
    """For a sum that counts, `sum(1 for r in rows if c)` or `sum(b for ...)` over a bool
    column never None: the condition under which a value is 1 (else 0); None otherwise."""
    elem = agg.rows.elem
    if isinstance(elem, Lit) and elem.value in (1, True) and type(elem.value) in (int, bool):
        return "TRUE"
    if x.family == "bool" and x.leaf and not x.nullable:
        return x.sql
    return None


def _decimal_sum(x: Typed, kept: str, alias: str, nulls: tuple, null_check: tuple) -> Aggregated:
    """Exact while every running total fits Python's 28 digits. Spark sums decimal(p, s) as
    decimal(p + 10, s) (at most 38 digits): the scale is kept.

    Python's order of a group's records is unspecified, so the exact sum is Python's when
    some order keeps every running total within 28 digits. Where every value fits them
    (p <= 28: a guarded Decimal result has that type, `native_calls._decimal_op`), one does
    exactly when the sum does: add a negative value while the total is not negative and a
    positive one while it is, as long as both remain, and the total stays within the largest
    |x|; then it moves straight to the sum. Otherwise the bound is the sum of |x|."""
    scale = x.decimal[1]
    limit = power_of_ten(DECIMAL_DIGITS - scale, scale)
    values = x.sql if kept == "TRUE" else f"CASE WHEN {kept} THEN {x.sql} END"
    bound = f"abs(sum({values}))" if x.decimal[0] <= DECIMAL_DIGITS else f"sum(abs({values}))"
    wide = f"coalesce({bound} >= {limit}, TRUE)"  # null: Spark's own overflow
    return Aggregated(alias, ((alias, f"sum({values})"), (alias + "_wide", wide), *nulls),
                      ((alias + "_wide", "a Decimal sum past 28 digits (Python's context would round it)"),
                       *null_check), True)


def _min_max(agg: Agg, x: Typed, cond, kept: str, alias: str) -> Aggregated:
    if x.family not in MIN_MAX_FAMILIES:
        raise NotNative(f"{agg.fn} over {x.family} values")
    count = f"count(CASE WHEN {kept} THEN 1 END)"
    columns = [(alias, f"{agg.fn}(CASE WHEN {kept} THEN {x.sql} END)")]
    checks = []
    if x.nullable:
        nulls = f"count(CASE WHEN {kept} AND {x.sql} IS NULL THEN 1 END)"
        columns.append((alias + "_none", f"({nulls} > 0 AND {count} > 1)"))
        op, name = (">" if agg.fn == "max" else "<"), TYPE_NAMES.get(x.family, x.family)
        checks.append((alias + "_none", f"TypeError: '{op}' not supported between instances of 'NoneType' and '{name}'"))
    if cond is not None:
        columns.append((alias + "_empty", f"({count} = 0)"))
        checks.append((alias + "_empty", f"ValueError: {agg.fn}() arg is an empty sequence"))
    return Aggregated(alias, tuple(columns), tuple(checks), not x.nullable)


def _tuple_min_max(agg: Agg, items: tuple, cond, kept: str, alias: str) -> Aggregated:
    """min/max of tuples as min/max of a struct `_0, _1, ...`: Spark orders structs field by
    field, as Python orders tuples, when no item can be None (Python raises only where a
    comparison reaches a None: no native form) and none is a float (NaN compares False in
    Python, largest in Spark; 0.0 == -0.0 keeps the first in Python). Each position is one
    column type, so Python compares like with like: ints, bools, dates, Decimals of one
    scale, and strs (UTF-8 byte order is code point order). Equal structs are equal in every
    item, so which one Spark keeps is the value Python keeps. No value: ValueError where used."""
    for i, x in enumerate(items):
        if x.nullable:
            raise NotNative(f"{agg}: item {i} may be None (Python raises only where a comparison reaches it)")
        if x.family not in TUPLE_ITEM_FAMILIES:
            raise NotNative(f"{agg}: item {i} is a {x.family} (Python's order of NaN and -0.0 differs)")
    struct = ", ".join(f"{literal(f'_{i}')}, {x.sql}" for i, x in enumerate(items))
    columns = [(alias, f"{agg.fn}(CASE WHEN {kept} THEN named_struct({struct}) END)")]
    checks = []
    if cond is not None:
        columns.append((alias + "_empty", f"(count(CASE WHEN {kept} THEN 1 END) = 0)"))
        checks.append((alias + "_empty", f"ValueError: {agg.fn}() arg is an empty sequence"))
    return Aggregated(alias, tuple(columns), tuple(checks), True)


def _null_count(x: Typed, kept: str, alias: str, message: str) -> tuple:
    if not x.nullable:
        return (), ()
    flag = f"(count(CASE WHEN {kept} AND {x.sql} IS NULL THEN 1 END) > 0)"
    return ((alias + "_none", flag),), ((alias + "_none", message),)


# -- sums over an `if` that the model uses only where their list holds a value ---------------


def used_where_nonempty(model: ReduceModel) -> frozenset:
    """The `sum`s over a filtered list whose every use the model reaches only where that list
    holds a value (`sum(xs) / len(xs) if xs else None`): there Python's int 0 for an empty
    list never shows, and the native sum over the kept values is exact. A use is covered by
    a test `len(list) > 0` (or `>= 1`, `!= 0`) in a conditional's test, an earlier `and`
    operand, or the case's guard."""
    covered: dict = {}

    def visit(term: Expr, known: frozenset) -> None:
        if isinstance(term, Agg):
            if term.fn == "sum" and term.rows.where is not None:
                covered[term] = covered.get(term, True) and term.rows.where in known
            return  # its parts are per-record terms
        if isinstance(term, IfElse):
            visit(term.test, known)
            visit(term.body, known | _nonempty_lists(term.test))
            visit(term.orelse, known)
            return
        if isinstance(term, BoolOp) and term.op == "and":
            for value in term.values:
                visit(value, known)
                known = known | _nonempty_lists(value)
            return
        for child in term.children():
            visit(child, known)

    for c in model.cases:
        visit(c.guard, frozenset())
        if isinstance(c.emit, Emit):
            for _, term in c.emit.fields:
                visit(term, _nonempty_lists(c.guard))
    return frozenset(agg for agg, ok in covered.items() if ok)


def _nonempty_lists(test: Expr) -> frozenset:
    """The `where`s of the filtered lists that `test` being truthy proves non-empty."""
    if isinstance(test, BoolOp) and test.op == "and":
        return frozenset().union(*[_nonempty_lists(v) for v in test.values])
    if isinstance(test, Cmp) and isinstance(test.left, Agg) and test.left.fn == "count" \
            and isinstance(test.right, Lit) and type(test.right.value) is int \
            and (test.op, test.right.value) in ((">", 0), (">=", 1), ("!=", 0)):
        return frozenset({test.left.rows.where})
    return frozenset()


# -- a Reduce that keeps or drops each group whole -------------------------------------------

KEPT_KEY = "__udflow_kept_key{}"


def run_group_filter(df: DataFrame, key: tuple, model: GroupFilterModel, where: str, nonnull: frozenset,
                     broadcast: bool = False, magnitudes: Optional[dict] = None) -> Reduced:
    """The groups whose predicate holds, every record of them as it is: the predicate runs as
    a Reduce emitting the kept groups' keys (`run_reduce`), and a left semi join on the key
    (null-safe where the key may be None: None keys form a group, as in Python) keeps their
    records. `broadcast`: the cost model's choice (hint "broadcast_kept") to broadcast the
    kept keys; Spark's own size estimate of them is the product of the inputs' sizes when
    the filter's input is a join, and would shuffle every record of it. The predicate's
    normal case is the filter's: the groups outside it run in Python (`general_case`).

        def buying(rows):                       df.join(
            rows = list(rows)                      df.groupBy(sid).agg(max(action = 'buy') AS a0)
            if any(r["action"] == "buy"              .where(coalesce(a0, FALSE)).select(sid AS k0),
                   for r in rows):                 sid <=> k0, "left_semi")
                yield from rows
    """
    if isinstance(model.predicate, Lit):  # `yield from rows`: every group, or none, whole
        return Reduced(df if model.predicate.value else df.where("FALSE"), nonnull)
    names = [KEPT_KEY.format(i) for i in range(len(key))]
    kept = _keys_with_any(df, key, model.predicate, where, nonnull, names)
    if kept is None:
        emit = Emit(tuple((n, First(k)) for n, k in zip(names, key)), copies_input=False)
        keys = ReduceModel((Case(model.predicate, emit, model.line),), model.line)
        kept = run_reduce(df, key, keys, where, nonnull, magnitudes=magnitudes)
    else:
        kept = Reduced(kept, frozenset())
    # `=` where the key is never None: the same rows as `<=>`, and a join Spark partitions
    # on the key itself, which a Reduce on it above then needs not shuffle again
    nullable = {f.name for f in df.schema.fields if f.nullable} - nonnull
    on = " AND ".join(f"{ident(k)} {'<=>' if k in nullable else '='} {ident(n)}" for k, n in zip(key, names))
    right = functions.broadcast(kept.frame) if broadcast else kept.frame
    return Reduced(df.join(right, functions.expr(on), "left_semi"), nonnull, kept.normal, kept.aggregated)


def _keys_with_any(df: DataFrame, key: tuple, predicate, where: str, nonnull: frozenset, names: list):
    """For `any(p(r) for r in rows if w(r))`, where neither `p` nor `w` can raise: the keys of
    the records where both hold, distinct. The same groups as the aggregate's `max`, and a
    filter Spark can push into the scan (`action = 'buy'`), shuffling only the keys it keeps.
    None for any other predicate."""
    if not (isinstance(predicate, Agg) and predicate.fn == "any" and predicate.rows.elem is not None):
        return None
    rows = NativeLowering(df.schema, where, nonnull, pinned=False)
    holds = rows.predicate(predicate.rows.elem)
    if predicate.rows.where is not None:
        holds = f"({rows.predicate(predicate.rows.where)}) AND ({holds})"
    if rows.guards_made:
        return None
    return select_expr(df.where(holds), [f"{ident(k)} AS {ident(n)}" for k, n in zip(key, names)]).distinct()


def run(df: DataFrame, key: tuple, model, where: str, nonnull: frozenset,
        determined: frozenset = frozenset(), hint: str | None = None, magnitudes: Optional[dict] = None,
        assumed: Optional[NormalCase] = None) -> Reduced:
    """The Reduce natively from its model (`Reduced`); NotNative when it has no exact native
    form. `hint`: a Reduce's hint (`spark_backend.hints`), or None; `assumed`: the normal case
    of its groups (`run_reduce`; a group filter writes every guard)."""
    if isinstance(model, GroupFilterModel):
        return run_group_filter(df, key, model, where, nonnull, hint == "broadcast_kept", magnitudes)
    if isinstance(model, ReduceModel):
        return run_reduce(df, key, model, where, nonnull, determined, magnitudes, assumed)
    raise NotNative(f"no native form for a {type(model).__name__}")
