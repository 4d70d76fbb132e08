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
    sum over floats, no `if`                  the left fold Python 3.11's `sum` performs, over the
                                              group's values (aggregate(collect_list)); Spark's
                                              `sum` adds partial sums in another order
    sum over Decimals, no `if`                Spark's exact decimal sum; raises where a running
                                              total needs more than Python's 28 digits
    min/max over int, str, date, Decimal, bool  min/max; floats are Python (NaN)
    None among the values                     sum: TypeError; min/max: TypeError unless it is the
                                              only value (then it is the result)
    `if` leaves no value                      min/max: ValueError; sum over floats or Decimals
                                              gives Python's int 0: not native

An aggregate's own errors (None, no value, overflow) are raised where the
model uses its value, since Python raises where it computes it. The per-record
terms are evaluated inside the aggregation, for every group: an aggregate
whose per-record terms may raise is native only when Python computes it for
every group too (`ReduceModel.eager`).
"""

from __future__ import annotations

import sys
from dataclasses import dataclass

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

from udflow.analysis.model import Case, Emit, RecordModel, ReduceModel, case_terms, fields_read
from udflow.expr import Agg, Expr, Field, First, transform
from udflow.spark_backend.native import (
    DECIMAL_DIGITS,
    INT_MAX,
    INT_MIN,
    NativeLowering,
    NotNative,
    Typed,
    col,
    family_of,
)
from udflow.spark_backend.native_ops import run_map

FIRST = "__udflow_first"
MIN_MAX_FAMILIES = ("int", "str", "date", "decimal", "bool")


@dataclass(frozen=True)
class Aggregated:
    """One aggregate's columns in groupBy().agg: its value, and the errors it raises where used."""

    alias: str
    columns: tuple  # Column expressions aliased, for .agg(...)
    checks: tuple  # ((condition over the aggregated row, message), ...)
    nonnull: bool


def run_reduce(df: DataFrame, key: tuple, model: ReduceModel, where: str, nonnull: frozenset) -> DataFrame:
    """The Reduce natively; NotNative when an aggregate or a term has no exact native form."""
    rows = NativeLowering(df.schema, where, nonnull, shown=fields_read(model) | set(key), pinned=False)
    aggs = model.aggregates()
    lowered = [_aggregate(df, rows, agg, f"__udflow_agg{i}", agg in model.eager) for i, agg in enumerate(aggs)]
    copies = any(isinstance(c.emit, Emit) and c.emit.copies_input for c in model.cases)
    firsts = list(df.columns) if copies else sorted({t.name for _, term in case_terms(model) for t in term.walk() if isinstance(t, First)})
    columns = [c for a in lowered for c in a.columns]
    from_key = _exact_key_fields(df, key)  # rows[0][k] is the group's own key value
    from_struct = [n for n in firsts if n not in from_key]
    if from_struct:
        columns.append(F.first(F.struct(*[col(n) for n in from_struct])).alias(FIRST))
    grouped = df.groupBy(*[col(k) for k in key]).agg(*columns) if columns else df.groupBy(*[col(k) for k in key]).count()
    helper = [c for c in grouped.columns if c.startswith("__udflow_agg")]
    one_row = grouped.select(*[col(n) if n in from_key else F.col(f"{FIRST}.`{n}`").alias(n) for n in firsts],
                             *[col(c) for c in helper])
    checks = {a.alias: [(F.col(cond), message) for cond, message in a.checks] for a in lowered}
    groups = NativeLowering(
        one_row.schema, where, frozenset(nonnull & set(firsts)) | {a.alias for a in lowered if a.nonnull},
        checked=checks,
    )
    names = {agg: a.alias for agg, a in zip(aggs, lowered)}
    out = run_map(one_row, _over_one_row(model, names), groups)
    return out.drop(*helper) if copies else out


def _exact_key_fields(df: DataFrame, key: tuple) -> frozenset:
    """Key fields whose every record in a group holds the group's key value exactly: not floats
    (Spark groups 0.0 with -0.0 and every NaN together). These need no `first(struct(...))`,
    which Spark cannot hash-aggregate."""
    types = {f.name: f.dataType for f in df.schema.fields}
    return frozenset(k for k in key if family_of(types[k]) in ("int", "str", "date", "decimal", "bool"))


def _over_one_row(model: ReduceModel, names: dict) -> RecordModel:
    """The cases with each aggregate a column of the aggregated row and rows[0][f] its field f."""

    def leaf(t: Expr) -> Expr:
        if isinstance(t, Agg):
            return Field(names[t])
        return Field(t.name) if isinstance(t, First) else t

    def emit(e):
        return Emit(tuple((n, transform(v, leaf)) for n, v in e.fields), e.copies_input) if isinstance(e, Emit) else e

    cases = tuple(Case(transform(c.guard, leaf), emit(c.emit), c.line) for c in model.cases)
    return RecordModel(cases, model.line)


def _aggregate(df: DataFrame, rows: NativeLowering, agg: Agg, alias: str, eager: bool) -> Aggregated:
    """The aggregate's columns over the group's records, with Python's semantics."""
    before = rows._guards_made
    cond = rows.predicate(agg.rows.where) if agg.rows.where is not None else None
    x = rows.lower(agg.rows.elem) if agg.rows.elem is not None else None
    if rows._guards_made > before and not eager:
        raise NotNative(f"{agg} may raise on a record and Python computes it on some paths only")
    kept = cond if cond is not None else F.lit(True)
    if agg.fn == "count":
        return Aggregated(alias, (F.count(F.when(kept, F.lit(1))).alias(alias),), (), True)
    if agg.fn == "sum":
        scale = df.select(x.column.alias("x")).schema["x"].dataType.scale if x.family == "decimal" else 0
        return _sum(agg, x, cond, kept, alias, scale)
    return _min_max(agg, x, cond, kept, alias)


def _sum(agg: Agg, x: Typed, cond, kept: Column, alias: str, scale: int) -> Aggregated:
    nulls, null_check = _null_count(x, kept, alias, "TypeError: None in sum (0 + None)")
    if x.family in ("int", "bool"):
        total = F.coalesce(F.sum(F.when(kept, x.column.cast("long")).cast("decimal(38,0)")),
                           F.lit(0).cast("decimal(38,0)"))
        overflow = (total > INT_MAX) | (total < INT_MIN)
        return Aggregated(alias, (F.when(overflow, F.lit(None)).otherwise(total.cast("long")).alias(alias),
                                  overflow.alias(alias + "_big"), *nulls),
                          ((alias + "_big", "int overflow past 64 bits in sum"), *null_check), True)
    if cond is not None:
        raise NotNative(f"{agg}: with an `if` that may leave no value Python's sum is the int 0")
    if x.family == "float":
        if sys.version_info >= (3, 12):
            raise NotNative("Python 3.12's sum of floats compensates rounding (no native form)")
        fold = F.aggregate(F.collect_list(x.column), F.lit(0.0).cast("double"), lambda acc, v: acc + v)
        return Aggregated(alias, (fold.alias(alias), *nulls), tuple(null_check), True)
    if x.family == "decimal":
        return _decimal_sum(x, scale, alias, nulls, null_check)
    raise NotNative(f"sum over {x.family} values")


def _decimal_sum(x: Typed, scale: int, alias: str, nulls: tuple, null_check: tuple) -> Aggregated:
    """Exact while every running total fits Python's 28 digits: bounded by the sum of |x|."""
    limit = F.lit(str(10 ** (DECIMAL_DIGITS - scale))).cast("decimal(38,0)")
    wide = F.coalesce(F.sum(F.abs(x.column)) >= limit, F.lit(True))  # null: Spark's own overflow
    return Aggregated(alias, (F.sum(x.column).alias(alias), wide.alias(alias + "_wide"), *nulls),
                      ((alias + "_wide", "a Decimal sum past 28 digits (Python's context would round it)"),
                       *null_check), True)


def _min_max(agg: Agg, x: Typed, cond, kept: Column, alias: str) -> Aggregated:
    if x.family not in MIN_MAX_FAMILIES:
        raise NotNative(f"{agg.fn} over {x.family} values")
    pick = F.min if agg.fn == "min" else F.max
    count = F.count(F.when(kept, F.lit(1)))
    columns = [pick(F.when(kept, x.column)).alias(alias)]
    checks = []
    if x.nullable:
        nulls = F.count(F.when(kept & x.column.isNull(), F.lit(1)))
        columns.append(((nulls > 0) & (count > 1)).alias(alias + "_none"))
        checks.append((alias + "_none", f"TypeError: None compared in {agg.fn}()"))
    if cond is not None:
        columns.append((count == 0).alias(alias + "_empty"))
        checks.append((alias + "_empty", f"ValueError: {agg.fn}() arg is an empty sequence"))
    return Aggregated(alias, tuple(columns), tuple(checks), not x.nullable)


def _null_count(x: Typed, kept: Column, alias: str, message: str) -> tuple:
    if not x.nullable:
        return (), ()
    flag = (F.count(F.when(kept & x.column.isNull(), F.lit(1))) > 0).alias(alias + "_none")
    return (flag,), ((alias + "_none", message),)
