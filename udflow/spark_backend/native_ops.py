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

from udflow.analysis.model import NO_RECORD, RAISES, Emit, FilterModel, RecordModel
from udflow.spark_backend.native import NativeLowering, NotNative

CASE = "__udflow_case"


def run_filter(df: DataFrame, model: FilterModel, where: str) -> DataFrame:
    return df.filter(NativeLowering(df.schema, where).predicate(model.predicate))


def run_map(df: DataFrame, model: RecordModel, where: str) -> DataFrame:
    lowering = NativeLowering(df.schema, where)
    emits = [c.emit for c in model.cases if isinstance(c.emit, Emit)]
    shape = {(tuple(n for n, _ in e.fields), e.copies_input) for e in emits}
    if len(shape) > 1:
        raise NotNative("its cases emit records of different fields")
    chosen = None
    for k, case in enumerate(model.cases):
        outcome = _outcome(lowering, k, case.emit)
        test = lowering.predicate(case.guard)
        chosen = F.when(test, outcome) if chosen is None else chosen.when(test, outcome)
    staged = df.withColumn(CASE, chosen.otherwise(F.lit(-1)) if chosen is not None else F.lit(-1))
    kept = staged.where(F.col(CASE) >= 0)
    if not emits:
        return kept.drop(CASE)
    names, copies = next(iter(shape))
    values = {name: _field_value(lowering, model, name) for name in names}
    if copies:
        return kept.withColumns(values).drop(CASE)
    return kept.select(*[values[n].alias(n) for n in names])


def _outcome(lowering: NativeLowering, k: int, emit):
    if emit == RAISES:
        return lowering.error("TypeError: the function returned None, expected a dict")
    return F.lit(k if isinstance(emit, Emit) else -1)


def _field_value(lowering: NativeLowering, model: RecordModel, name: str):
    typed = []
    for k, case in enumerate(model.cases):
        if isinstance(case.emit, Emit):
            term = dict(case.emit.fields)[name]
            typed.append((k, lowering.lower(term)))
    families = {t.family for _, t in typed} - {"none"}
    if len(families) > 1:
        raise NotNative(f"field {name} gets values of types {', '.join(sorted(families))}")
    value = None
    for k, t in typed:
        value = F.when(F.col(CASE) == k, t.column) if value is None else value.when(F.col(CASE) == k, t.column)
    return value


def run(df: DataFrame, model, where: str) -> DataFrame:
    """The operator natively; NotNative when the model has no exact native form."""
    if isinstance(model, FilterModel):
        return run_filter(df, model, where)
    if isinstance(model, RecordModel):
        return run_map(df, model, where)
    raise NotNative(f"no native form for a {type(model).__name__}")


__all__ = ["run", "run_filter", "run_map", "NotNative", NO_RECORD]
