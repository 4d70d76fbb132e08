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
from pyspark.sql import functions as F

from udflow.analysis.model import RAISES, Emit, FilterModel, RecordModel, fields_read
from udflow.spark_backend.native import NativeLowering, NotNative

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
    if copies:
        return kept.withColumns(values) if values else kept
    return kept.select(*[values[n].alias(n) for n in names])


def _keep(lowering: NativeLowering, model: RecordModel):
    """Whether a row's first matching case emits a record (a case that raises, raises)."""
    if len(model.cases) == 1 and isinstance(model.cases[0].emit, Emit):
        lowering.line = model.cases[0].line
        return lowering.predicate(model.cases[0].guard)
    keep = None
    for case in model.cases:
        lowering.line = case.line
        outcome = lowering.error("TypeError: the function returned None, expected a dict") \
            if case.emit == RAISES else F.lit(isinstance(case.emit, Emit))
        test = lowering.predicate(case.guard)
        keep = F.when(test, outcome) if keep is None else keep.when(test, outcome)
    return keep.otherwise(F.lit(False))


def _field_value(lowering: NativeLowering, model: RecordModel, emitting, name: str):
    typed = []
    for _, case in emitting:
        lowering.line = case.line
        typed.append((case, lowering.lower(dict(case.emit.fields)[name])))
    families = {t.family for _, t in typed} - {"none"}
    if len(families) > 1:
        raise NotNative(f"field {name} gets values of types {', '.join(sorted(families))}")
    if len(typed) == 1 and len(model.cases) == 1:
        return typed[0][1].column
    value = None
    for case, t in typed:  # guards again: the first matching case among those kept emits
        lowering.line = case.line
        test = lowering.predicate(case.guard)
        value = F.when(test, t.column) if value is None else value.when(test, t.column)
    return value


def run(df: DataFrame, model, where: str, nonnull: frozenset = frozenset()) -> DataFrame:
    """The operator natively; NotNative when the model has no exact native form. `nonnull`:
    fields the data proves never None (`udflow.field_types`), whatever Spark's schema says."""
    lowering = NativeLowering(df.schema, where, nonnull, shown=fields_read(model))
    if isinstance(model, FilterModel):
        return run_filter(df, model, lowering)
    if isinstance(model, RecordModel):
        return run_map(df, model, lowering)
    raise NotNative(f"no native form for a {type(model).__name__}")

