"""Operators run natively from their function's model (`udflow.analysis.model`).

    FilterModel(p)                  df.filter(truth(p))
    RecordModel(cases)              one CASE picks each row's case (a case that raises
                                    raises there), rows whose case emits no record are
                                    dropped, each written field is a CASE over the cases

        def shipped(r):             df.withColumn(case, CASE WHEN lo <= d <= hi THEN 0 ELSE -1 END)
            if lo <= r["d"] <= hi:    .where(case >= 0)
                yield r               .drop(case)

Every term goes through `NativeLowering` (Python's semantics or `NotNative`);
a model whose cases emit records of different fields, or give a field values of
different types, is `NotNative` too: a DataFrame has one schema.
"""

from __future__ import annotations

from pyspark.sql import DataFrame

from udflow.analysis.model import RAISES, Emit, FilterModel, RecordModel, fields_read
from udflow.spark_backend.native import NativeLowering, NotNative
from udflow.spark_backend.sql import case, ident, literal

CASE = "__udflow_case"


def run_filter(df: DataFrame, model: FilterModel, lowering: NativeLowering) -> DataFrame:
    lowering.line = model.line
    return df.filter(lowering.predicate(model.predicate))


def run_map(df: DataFrame, model: RecordModel, lowering: NativeLowering) -> DataFrame:
    """Rows whose first matching case emits are kept (a plain predicate where there is one
    emitting case, which Spark can push into a scan); each written field is its case's term."""
    emitting = [(k, c) for k, c in enumerate(model.cases) if isinstance(c.emit, Emit)]
    shape = {(tuple(n for n, _ in c.emit.fields), c.emit.copies_input) for _, c in emitting}
    if len(shape) > 1:
        raise NotNative("its cases emit records of different fields")
    kept = df.filter(_keep(lowering, model))
    if not emitting:
        return kept
    names, copies = next(iter(shape))
    values = {name: _field_value(lowering, model, emitting, name) for name in names}
    if not values:
        return kept
    if copies:  # the input's columns in place, a written one replaced, new ones after
        columns = [f"{values.pop(c)} AS {ident(c)}" if c in values else ident(c) for c in df.columns]
        return kept.selectExpr(*columns, *[f"{v} AS {ident(n)}" for n, v in values.items()])
    return kept.selectExpr(*[f"{values[n]} AS {ident(n)}" for n in names])


def _keep(lowering: NativeLowering, model: RecordModel) -> str:
    """Whether a row's first matching case emits a record (a case that raises, raises)."""
    if len(model.cases) == 1 and isinstance(model.cases[0].emit, Emit):
        lowering.line = model.cases[0].line
        return lowering.predicate(model.cases[0].guard)
    branches = []
    for c in model.cases:
        lowering.line = c.line
        outcome = lowering.error("TypeError: the function returned None, expected a dict") \
            if c.emit == RAISES else literal(isinstance(c.emit, Emit))
        branches.append((lowering.predicate(c.guard), outcome))
    return case(branches, "FALSE")


def _field_value(lowering: NativeLowering, model: RecordModel, emitting, name: str) -> str:
    typed = []
    for _, c in emitting:
        lowering.line = c.line
        typed.append((c, lowering.lower(dict(c.emit.fields)[name])))
    families = {t.family for _, t in typed} - {"none"}
    if len(families) > 1:
        raise NotNative(f"field {name} gets values of types {', '.join(sorted(families))}")
    if len(typed) == 1 and len(model.cases) == 1:
        return typed[0][1].sql
    branches = []
    for c, t in typed:  # guards again: the first matching case among those kept emits
        lowering.line = c.line
        branches.append((lowering.predicate(c.guard), t.sql))
    return case(branches[:-1], branches[-1][1]) if len(branches) == len(model.cases) else case(branches, "NULL")


def run(df: DataFrame, model, where: str, nonnull: frozenset = frozenset()) -> DataFrame:
    """The operator natively; NotNative when the model has no exact native form. `nonnull`:
    fields the data proves never None (`udflow.field_types`), whatever Spark's schema says."""
    lowering = NativeLowering(df.schema, where, nonnull, shown=fields_read(model))
    if isinstance(model, FilterModel):
        return run_filter(df, model, lowering)
    if isinstance(model, RecordModel):
        return run_map(df, model, lowering)
    raise NotNative(f"no native form for a {type(model).__name__}")
