"""A term computed once per record (or per piece) as a hidden column that the guard and fields read.

Catalyst does not share a term that may raise between the expressions that read it: a
`raise_error` is nondeterministic (`NativeLowering.error`), so a term written in a
filter's condition and again in a projection is computed once in each, per row. Where a
term is the first thing Python evaluates for a record (`first_evaluated`) and the guard
and fields read it again, computing it first, in a projection of its own, gives the same
values and the same errors (every record computes it, and a record that raises raises it
first) and computes it once:

    status = r["status"].strip().upper()      .selectExpr("*", "upper(TRIM(... status)) AS __udflow_let")
    if status == "COMPLETED" and ...:         .where(<__udflow_let <=> 'COMPLETED' AND ...>)
        yield {**r, "status": status}         .selectExpr(..., "__udflow_let AS status")

`shared_first` does it for a Map's one case, `shared_piece` for an explosion's pieces.
"""

from __future__ import annotations

from collections import ChainMap, Counter
from dataclasses import replace
from typing import Optional

from pyspark.sql import DataFrame
from pyspark.sql.types import StructType

from udflow.analysis.model import Emit, ExplodeModel, RecordModel
from udflow.expr import (Arith, BoolOp, Call, Cmp, Elem, Evaluated, Field, IfElse, IsNone, Lit, Neg, Not, Slice,
                         Truth, transform)
from udflow.spark_backend import native_spans
from udflow.spark_backend.memo import select_expr
from udflow.spark_backend.native import RAISES, NativeLowering, NotNative
from udflow.spark_backend.native_types import decimal_of, family_of
from udflow.spark_backend.sql import ident

LET = "__udflow_let"  # a hidden column holding a term computed once


def with_calls(df: DataFrame, lowering: NativeLowering) -> DataFrame:
    """`df` with the Python calls lowered so far as columns (`PythonCalls.with_calls`)."""
    return df if lowering.python_calls is None else lowering.python_calls.with_calls(df)


def carried(lowering: NativeLowering, frame: DataFrame) -> native_spans.Restricted:
    """The spans of `frame`'s columns as the operator's input gave them (`native_spans`): a
    column computed on the way (a Python call's) has none of its own."""
    return native_spans.Restricted(lowering.spans, frame.columns)


def pending_calls(low: NativeLowering) -> Optional[list]:
    """The Python calls lowered but not yet added to a frame (`with_calls` takes them)."""
    return list(low.python_calls.pending) if low.python_calls is not None else None


def give_back(low: NativeLowering, pending: Optional[list], limits: int) -> None:
    """Undo a hidden column given up after its frame was made: the Python calls that frame
    took are pending again (their columns are known by term, and a frame built later must
    add them), and the limits its term added are dropped (the term is lowered again)."""
    if pending is not None:
        low.python_calls.pending = pending
    del low.limits[limits:]


def spark_type(lowering: NativeLowering, column: str) -> tuple:
    data_type = lowering.fields[column].dataType
    return family_of(data_type), decimal_of(data_type)


def shared_first(df: DataFrame, low: NativeLowering, model: RecordModel):
    """A Map of one emitting case: the frame with the term it computes first and reads again
    as LET, a lowering over that frame and the model reading LET; the three unchanged where
    no term recurs so."""
    if len(model.cases) != 1 or not isinstance(model.cases[0].emit, Emit) or LET in df.columns:
        return df, low, model
    only = model.cases[0]
    term = recurring_first([only.guard] + [t for _, t in only.emit.fields], Field)
    if term is None:
        return df, low, model
    low.line = only.line
    limits, calls = len(low.limits), len(pending_calls(low) or ())
    typed = low.lower(term)
    if len(pending_calls(low) or ()) > calls:  # the term's Python calls go below: the record's others too
        _register_calls(low, [only.guard] + [t for _, t in only.emit.fields])
    pending = pending_calls(low)
    frame = select_expr(with_calls(df, low), ["*", f"{pinned(typed.sql, only.guard, term)} AS {ident(LET)}"])
    shared = NativeLowering(frame.schema, low.where, low.nonnull | ({LET} if not typed.nullable else set()),
                            checked=low.checked, shown=set(low.shown), pinned=low.pinned, python_calls=low.python_calls,
                            sample=low.sample, computed_at=low.computed_at.items(), nonzero=low.nonzero,
                            spans=ChainMap({LET: typed.span}, carried(low, frame)), limits=low.limits)
    if spark_type(shared, LET) != (typed.family, typed.decimal):  # read back, another Python type
        give_back(low, pending, limits)
        return df, low, model
    swap = _reading(term)
    case = replace(only, guard=transform(only.guard, swap),
                   emit=Emit(tuple((n, transform(t, swap)) for n, t in only.emit.fields), only.emit.copies_input))
    return frame, shared, replace(model, cases=(case,))


def _register_calls(low: NativeLowering, terms: list) -> None:
    """The Python calls of `terms` registered with `low`'s, so that their columns are added
    with the shared term's and every call of the record runs in one Python pass (the terms
    are lowered for that alone, with limits of their own, and lowered again over LET)."""
    dry = NativeLowering(StructType(list(low.fields.values())), low.where, low.nonnull, checked=low.checked,
                         shown=set(low.shown), pinned=low.pinned, python_calls=low.python_calls, sample=low.sample,
                         computed_at=low.computed_at.items(), nonzero=low.nonzero,
                         spans=native_spans.Restricted(low.spans, list(low.fields)), limits=native_spans.Limits())
    for term in terms:
        try:
            dry.lower(term)
        except NotNative:  # lowered over LET it may still be native, or say so then
            pass


def shared_piece(exploded: DataFrame, low: NativeLowering, model: ExplodeModel):
    """The term the pieces compute first and read again, computed once per piece as a hidden
    column that the guard and the fields read (the exploded frame, its lowering and the model
    reading it); the three unchanged where there is none:

        for raw in text.split():                  .selectExpr("*", "lower(trim(... elem)) AS __udflow_let")
            word = raw.strip(P).lower()           .where(<word and word not in STOP over __udflow_let>)
            if word and word not in STOP:         .selectExpr(..., <stem(word) over __udflow_let> AS token)
                yield {..., "token": stem(word)}
    """
    terms = ([model.guard] if model.guard is not None else []) + [t for _, t in model.emit.fields]
    term = recurring_first(terms, Elem)
    if term is None or LET in exploded.columns:
        return exploded, low, model
    typed = low.lower(term)
    frame = select_expr(exploded, ["*", f"{pinned(typed.sql, model.guard, term)} AS {ident(LET)}"])
    shared = NativeLowering(frame.schema, low.where, low.nonnull | ({LET} if not typed.nullable else set()),
                            shown=set(low.shown), elem=low.elem, computed_at=low.computed_at.items(),
                            spans=ChainMap({LET: typed.span, low.elem: None}, carried(low, frame)), limits=low.limits,
                            elem_ascii=low.elem_ascii)
    shared.line = low.line
    if spark_type(shared, LET) != (typed.family, typed.decimal):
        return exploded, low, model  # read back, the column would be another Python type
    swap = _reading(term)
    fields = tuple((name, transform(t, swap)) for name, t in model.emit.fields)
    guard = transform(model.guard, swap) if model.guard is not None else None
    return frame, shared, replace(model, guard=guard, emit=Emit(fields, model.emit.copies_input))


def pinned(sql: str, guard, term) -> str:
    """The shared term's SQL, made nondeterministic where the `guard` (a filter's condition)
    reads the `term` and it is not already (a raise makes it so, `NativeLowering.error`):
    Catalyst pushes a filter through a deterministic projection by writing the projected
    term into its condition, which would compute it again per row. Both branches are the
    term itself, so its type and nullability stay (Spark folds an IF of equal branches only
    under a deterministic condition). Where no filter reads it, it stays deterministic, so
    that a later filter still reaches the scan."""
    if RAISES in sql or guard is None or not any(t == term for t in guard.walk()):
        return sql
    return f"IF(spark_partition_id() < 0, {sql}, {sql})"


def _reading(term):
    """A rewrite reading LET where `term` stood."""
    return lambda t: Field(LET) if t == term else t


def recurring_first(terms: list, reads: type) -> Optional[object]:
    """The largest term on the chain Python evaluates first (the first of `terms`:
    `first_evaluated`) that reads a `reads` (a field, a piece) and recurs in `terms`."""
    if not terms:
        return None
    try:
        counts = Counter(t for term in terms for t in term.walk() if not isinstance(t, (Field, Lit, Elem)))
        return next((t for t in first_evaluated(terms[0])
                     if counts.get(t, 0) > 1 and any(isinstance(x, reads) for x in t.walk())), None)
    except TypeError:  # a term holding a constant of an unhashable value: nothing is shared
        return None


# the terms whose first child Python evaluates whole before any other part of them
_LEFT_FIRST = (BoolOp, Truth, Not, IfElse, Cmp, Arith, Call, Evaluated, IsNone, Slice, Neg)


def first_evaluated(term) -> list:
    """`term` and, down its first children, the terms Python evaluates before any other part of
    the terms above them: `word and w not in S` -> [the and, word, word's receiver, ...]."""
    chain = [term]
    while isinstance(chain[-1], _LEFT_FIRST) and chain[-1].children():
        chain.append(chain[-1].children()[0])
    return chain
