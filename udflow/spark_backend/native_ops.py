"""Operators run natively from their function's model (`udflow.analysis.model`).

    FilterModel(p)                  df.filter(truth(p))
    RecordModel(cases)              one CASE picks each row's case (a case that raises
                                    raises there), rows whose case emits no record are
                                    dropped, each written field is a CASE over the cases
                                    (with one case, a field a later one reuses is computed
                                    once, below: `_shared_below`)

        def shipped(r):             df.withColumn(case, CASE WHEN lo <= d <= hi THEN 0 ELSE -1 END)
            if lo <= r["d"] <= hi:    .where(case >= 0)
                yield r               .drop(case)

Every term goes through `NativeLowering` (Python's semantics or `NotNative`);
a model whose cases emit records of different fields, or give a field values of
different types, is `NotNative` too: a DataFrame has one schema.
"""

from __future__ import annotations

from collections import ChainMap
from contextlib import nullcontext
from dataclasses import dataclass, field
from typing import Optional

from pyspark.sql import DataFrame

from udflow.analysis.model import RAISES, Case, Emit, ExplodeModel, FilterModel, RecordModel, case_terms_of, fields_read
from udflow.expr import Field, Lit, transform
from udflow.spark_backend import native_case, native_shared, native_spans, native_splits, native_strings, nullness
from udflow.spark_backend.memo import select_expr
from udflow.spark_backend.native import NativeLowering, NotNative
from udflow.spark_backend.native_types import datetime_columns
from udflow.spark_backend.native_spans import NormalCase, normal_case
from udflow.spark_backend.python_calls import PythonCalls
from udflow.spark_backend.sql import case, ident, literal

CASE = "__udflow_case"
from udflow.spark_backend.native_shared import LET, carried, spark_type, with_calls
ELEM = "__udflow_elem"


def run_filter(df: DataFrame, model: FilterModel, lowering: NativeLowering) -> tuple[DataFrame, frozenset]:
    lowering.line = model.line
    predicate = lowering.predicate(model.predicate)
    kept = only(df.columns, with_calls(df, lowering).filter(predicate))
    return kept, lowering.nonnull | nullness.when_true(model.predicate)


def only(columns: list, df: DataFrame) -> DataFrame:
    """`df` with just `columns` (the Python calls' columns dropped), or `df` where it has no more."""
    return df if list(df.columns) == list(columns) else select_expr(df, [ident(c) for c in columns])


def run_map(df: DataFrame, model: RecordModel, lowering: NativeLowering) -> tuple[DataFrame, frozenset]:
    """Rows whose first matching case emits are kept (a plain predicate where there is one
    emitting case, which Spark can push into a scan); each written field is its case's term.
    Also the fields of the output the cases prove not None (`nullness`)."""
    columns = df.columns
    df, lowering, model = native_shared.shared_first(df, lowering, model)  # one case only: its shape holds
    emitting = [(k, c) for k, c in enumerate(model.cases) if isinstance(c.emit, Emit)]
    shape = {(tuple(n for n, _ in c.emit.fields), c.emit.copies_input) for _, c in emitting}
    if len(shape) > 1:
        raise NotNative("its cases emit records of different fields")
    reached = _reached(model)
    keep = _keep(lowering, model, reached)
    base = with_calls(df, lowering)
    kept = base if keep == "TRUE" else base.filter(keep)
    proven = [reached[k] | nullness.when_true(c.guard) for k, c in emitting]
    known = lowering.nonnull | (frozenset.intersection(*proven) if proven else frozenset())
    if not emitting:
        return only(columns, kept), known
    names, copies = next(iter(shape))
    frame, typed, raising = _written(kept, lowering, model, emitting, reached, names)
    frame = with_calls(frame, lowering)
    values = {name: text for name, (text, _) in typed.items()}
    written_nonnull = frozenset(n for n, (_, nullable) in typed.items() if not nullable)
    known = (known - set(names) if copies else frozenset()) | written_nonnull
    if not values:
        return only(columns, kept), known
    return always_computed(select_expr(frame, _select_list(columns, values, copies)), raising), known


def _written(kept: DataFrame, lowering: NativeLowering, model: RecordModel, emitting, reached: list, names):
    """The frame the written fields are selected from, each field's (SQL, nullable), and the
    fields that may raise."""
    if len(model.cases) == 1:
        shared = _shared_below(kept, lowering, model.cases[0], names)
        if shared is not None:
            return shared
    typed, raising = {}, []
    nonzero = _reached(model, nullness.nonzero_when_false)
    for name in names:
        before = lowering.guards_made
        typed[name] = _field_value(lowering, model, emitting, (reached, nonzero), name)
        if lowering.guards_made > before:
            raising.append(name)
    return kept, typed, raising


def _shared_below(kept: DataFrame, lowering: NativeLowering, only: Case, names):
    """With one case (every kept row gets every field, in order), the fields up to the last
    one whose term recurs in a later field are computed in a projection below, as hidden
    columns, and the later fields read them there instead of repeating the term:

        {**r, "m": (r["b"] - r["a"]) / 60,        .selectExpr("*", "<m> AS __udflow_let0")
              "mph": r["d"] / (m / 60)}           .selectExpr(..., "__udflow_let0 AS m",
                                                               "d / (__udflow_let0 / 60) AS mph")

    The same values and errors: each term is deterministic and computed on the same rows,
    in the same order of fields, but written, analysed and run once (Catalyst does not
    share a raising term itself: it is nondeterministic, `NativeLowering.error`). None
    where no field recurs."""
    terms = dict(only.emit.fields)
    last = _last_recurring(terms, names)
    if last is None:
        return None
    below, above = names[: last + 1], names[last + 1:]
    hidden = {name: f"{LET}{k}" for k, name in enumerate(below)}
    if set(hidden.values()) & set(kept.columns):  # a user's column of that name: keep the terms whole
        return None
    lowering.line = only.line
    limits = len(lowering.limits)
    with lowering.knowing(only.guard, True):
        lowered = {name: lowering.value(terms[name], case_terms_of(only)) for name in below}
    pending = native_shared.pending_calls(lowering)
    frame = select_expr(with_calls(kept, lowering), ["*"] + [f"{t.sql} AS {ident(hidden[n])}" for n, (t, _) in lowered.items()])
    upper = NativeLowering(frame.schema, lowering.where,
                           lowering.nonnull | {hidden[n] for n, (t, _) in lowered.items() if not t.nullable},
                           checked=lowering.checked, shown=set(lowering.shown), pinned=lowering.pinned,
                           python_calls=lowering.python_calls, computed_at=lowering.computed_at.items(),
                           spans=ChainMap({hidden[n]: t.span for n, (t, _) in lowered.items()}, carried(lowering, frame)),
                           limits=lowering.limits)
    if any(spark_type(upper, hidden[n]) != (t.family, t.decimal) for n, (t, _) in lowered.items()):
        native_shared.give_back(lowering, pending, limits)  # read back, another Python type: terms kept whole
        return None
    typed = {n: (ident(hidden[n]), t.nullable) for n, (t, _) in lowered.items()}
    raising = [n for n, (_, raises) in lowered.items() if raises]
    reads = {terms[n]: Field(hidden[n]) for n in below if not isinstance(terms[n], (Field, Lit))}
    upper.line = only.line
    with upper.knowing(only.guard, True):
        for name in above:
            t, raises = upper.value(transform(terms[name], lambda x: reads.get(x, x)), case_terms_of(only))
            typed[name] = (t.sql, t.nullable)
            if raises:
                raising.append(name)
    return frame, typed, raising


def _last_recurring(terms: dict, names) -> Optional[int]:
    """The position of the last field whose term (not a plain field or constant) is part of
    a later field's term."""
    parts = [set(terms[name].walk()) for name in names]
    recurring = [k for k, name in enumerate(names) if not isinstance(terms[name], (Field, Lit))
                 and any(terms[name] in later for later in parts[k + 1:])]
    return recurring[-1] if recurring else None


def always_computed(df: DataFrame, columns: list) -> DataFrame:
    """`df`, its `columns` computed on every row even where nothing above reads them.

    Catalyst drops a column no operator above reads, and with it the `raise_error` (or the
    Python UDF call) that computes it; Python, calling the function record by record,
    raises whether or not anything reads what it returned. A filter that reads the columns
    keeps them: always true, never simplified away, and nondeterministic
    (`spark_partition_id()`), so that Catalyst neither moves it nor merges it with another
    filter. It reads a nullable column through `isnull` (a raising column is nullable: its
    `raise_error` branch is), which costs nothing per row, and a column Spark proves never
    null through `hash(...) & 0` (no rule folds it), since `isnull` of it folds to FALSE;
    hashing is what a wide Decimal would make expensive."""
    if not columns:
        return df
    nullable = {f.name: f.nullable for f in df.schema.fields}
    reads = [f"CAST(isnull({ident(c)}) AS INT)" for c in columns if nullable[c]]
    hashed = [ident(c) for c in columns if not nullable[c]]
    if hashed:
        reads.append(f"(hash({', '.join(hashed)}) & 0)")
    return df.where(f"{' + '.join(reads)} + spark_partition_id() >= 0")


def _reached(model: RecordModel, proven=nullness.when_false) -> list:
    """Per case, the fields that reaching it proves not None (`proven`: not 0, with
    `nullness.nonzero_when_false`): every earlier guard was falsy."""
    out, known = [], frozenset()
    for c in model.cases:
        out.append(known)
        known |= proven(c.guard)
    return out


def _keep(lowering: NativeLowering, model: RecordModel, reached: list) -> str:
    """Whether a row's first matching case emits a record (a case that raises, raises)."""
    if len(model.cases) == 1 and isinstance(model.cases[0].emit, Emit):
        lowering.line = model.cases[0].line
        return lowering.predicate(model.cases[0].guard)
    branches = []
    before = lowering.guards_made
    for c, known in zip(model.cases, reached):
        lowering.line = c.line
        outcome = lowering.error("TypeError: the function returned None, expected a dict") \
            if c.emit == RAISES else literal(isinstance(c.emit, Emit))
        with lowering.assuming(known):
            branches.append((lowering.predicate(c.guard), outcome))
    every_row_emits = all(isinstance(c.emit, Emit) for c in model.cases) and model.cases[-1].guard == Lit(True)
    if every_row_emits and lowering.guards_made == before:  # no guard raises: nothing to decide
        return "TRUE"
    return case(branches, "FALSE")


def _field_value(lowering: NativeLowering, model: RecordModel, emitting, proven: tuple, name: str) -> tuple[str, bool]:
    """The written field's SQL over the emitting cases, and whether it may be None. `proven`:
    per case, the fields reaching it proves not None, and those it proves not 0 (`_reached`)."""
    reached, nonzero = proven
    typed = []
    for k, c in emitting:
        lowering.line = c.line
        with lowering.assuming(reached[k], nonzero=nonzero[k]), lowering.knowing(c.guard, True):
            typed.append((k, c, lowering.value(dict(c.emit.fields)[name], case_terms_of(c))[0]))
    families = {t.family for _, _, t in typed} - {"none"}
    if len(families) > 1:
        raise NotNative(f"field {name} gets values of types {', '.join(sorted(families))}")
    nullable = any(t.nullable for _, _, t in typed)
    if len(typed) == 1 and len(model.cases) == 1:
        return typed[0][2].sql, nullable
    branches = []
    for k, c, t in typed:  # guards again: the first matching case among those kept emits
        lowering.line = c.line
        with lowering.assuming(reached[k]):
            branches.append((lowering.predicate(c.guard), t.sql))
    if len(branches) == len(model.cases):
        return case(branches[:-1], branches[-1][1]), nullable
    return case(branches, "NULL"), nullable


def run_explode(df: DataFrame, model: ExplodeModel, lowering: NativeLowering) -> tuple[DataFrame, frozenset]:
    """One row per piece of the source string, in order (`explode` of Spark's `split`), or per
    item of the source's value (`for t in tokens(r["text"])`: `explode` of the list Python
    computes for it, `_items`):

        for g in r["genres"].split("|"):        df.selectExpr("*", "explode(split(genres, '\\|', -1)) AS elem")
            yield {**r, "genre": g}                .selectExpr(<the input's columns>, "elem AS genre")

    `split(sep)` splits on the literal separator (quoted for Java's regex) and keeps empty
    pieces (limit -1, as Python: `"".split("|")` is `[""]`); `split()` splits on runs of
    Python's whitespace and drops the empty pieces. None (or a non-str) raises AttributeError
    before any piece, as Python's `.split` does. A guard keeps the pieces whose record is
    emitted (a filter over the exploded rows), and the fields are computed knowing it held."""
    lowering.line = model.line
    pieces = _split_pieces(model, lowering) if model.split else _items(model, lowering)
    df_with_calls = with_calls(df, lowering)  # a Python call in the source, run before the split
    exploded = select_expr(df_with_calls, ["*", f"explode({pieces}) AS {ident(ELEM)}"])
    nonnull = lowering.nonnull | {ELEM} if model.split else lowering.nonnull - {ELEM}  # an item may be None
    pieces_lowering = NativeLowering(exploded.schema, lowering.where, nonnull,
                                     shown=set(lowering.shown) | {ELEM}, elem=ELEM, computed_at=model.computed_at,
                                     spans=ChainMap({ELEM: None}, carried(lowering, exploded)), limits=lowering.limits,
                                     elem_ascii=native_case.elem_ascii(model.source) if model.split else None)
    pieces_lowering.line = model.line
    exploded, pieces_lowering, model = native_shared.shared_piece(exploded, pieces_lowering, model)
    if model.guard is not None:  # the pieces whose record is emitted, before any field is computed
        exploded = exploded.filter(pieces_lowering.predicate(model.guard))
    with pieces_lowering.knowing(model.guard, True) if model.guard is not None else nullcontext():
        lowered = {name: pieces_lowering.lower_raising(term) for name, term in model.emit.fields}
    values = {name: _never_null(t) for name, (t, _) in lowered.items()}
    written_nonnull = frozenset(n for n, (t, _) in lowered.items() if not t.nullable)
    copies = model.emit.copies_input
    known = ((lowering.nonnull - set(values)) if copies else frozenset()) | written_nonnull
    raising = [name for name, (_, raises) in lowered.items() if raises]
    return always_computed(select_expr(exploded, _select_list(df.columns, values, copies)), raising), known


# a value of the family's own Spark type, never taken: `_never_null`
NEVER_TAKEN = {"str": "''", "bool": "FALSE"}


def _never_null(t) -> str:
    """`t`'s SQL, made a value Spark knows is never null where the lowering proves it (a
    `coalesce` whose default is never taken): for a nullable join key Spark infers
    `isnotnull(key)` and pushes it below the projection that computes the key, which then
    computes it twice (documents' inlined `stem`, per piece)."""
    if t.nullable or t.family not in NEVER_TAKEN:
        return t.sql
    return f"coalesce({t.sql}, {NEVER_TAKEN[t.family]})"


def _split_pieces(model: ExplodeModel, lowering: NativeLowering) -> str:
    """The array of the source string's pieces, as Python's `split(sep)` gives them."""
    source = lowering.lower(model.source)
    if source.family != "str":
        raise NotNative(f"split of a {source.family} value")
    text = lowering.guarded(native_strings.none_receiver_guards(lowering, source, "split"), source.sql)
    return native_splits.pieces(text, model.sep, source.leaf)


def _items(model: ExplodeModel, lowering: NativeLowering) -> str:
    """The array of the source's items, as Python's `for` takes them: computed by Python
    (`PythonCalls.lower_items`, a helper's list typed by the sample), whose error, None not
    iterable included, raises before any piece."""
    if lowering.python_calls is None:
        raise NotNative(f"the items of {model.source} (Python) here")
    return lowering.python_calls.lower_items(lowering, model.source).sql


def _select_list(columns: list, values: dict, copies: bool) -> list:
    """The emitted record's columns: `{**r, ...}` keeps the input's columns in place (a written
    one replaced) and adds the new ones after; a fresh dict is exactly its fields."""
    if not copies:
        return [f"{v} AS {ident(n)}" for n, v in values.items()]
    rest = dict(values)
    kept = [f"{rest.pop(c)} AS {ident(c)}" if c in rest else ident(c) for c in columns]
    return kept + [f"{v} AS {ident(n)}" for n, v in rest.items()]


@dataclass(frozen=True)
class Ran:
    """An operator run natively: its DataFrame, the fields of its output known never None, and
    the rows its native form holds (`native_spans.NormalCase`) where it may not hold all."""

    frame: DataFrame
    nonnull: frozenset
    normal: Optional[NormalCase] = None
    # field -> the largest magnitude its values take, proven by the operator (a Reduce's sums
    # and counts, `native_groups`) from the data's bounds alone, so true of rows that a
    # general case computes in Python too; read above as a source's statistics are
    magnitudes: dict = field(default_factory=dict)
    nonzero: frozenset = frozenset()  # fields never 0, proven by the operator (a group's count)


def run(df: DataFrame, model, where: str, nonnull: frozenset = frozenset(), sample: tuple = (),
        magnitudes: Optional[dict] = None, nonzero: frozenset = frozenset(),
        assumed: Optional[NormalCase] = None) -> Ran:
    """The operator natively; NotNative when the model has no exact native form. `nonnull`:
    the input's fields known never None (the data's types, `udflow.field_types`, and what the
    operators below prove), whatever Spark's schema says. `sample`: input records taken on the
    driver (`udflow.samples`), which type the results of the user's helpers. `magnitudes`: the
    int fields' largest magnitudes the data proves (`nullness.magnitudes_of`). `nonzero`: the
    input's fields the operators below prove never 0 (no zero guard divides by them).
    `assumed`: the normal case every row of `df` lies in (`native_spans.Limits`)."""
    # a call with no native form runs as Python in the plan (`python_calls`); over an
    # explosion's pieces none does: the plan's step built their list as one Python term
    # instead (`engine.pieces_in_python`), and the pieces' lowering has none
    lowering = NativeLowering(df.schema, where, nonnull, shown=fields_read(model),
                              python_calls=PythonCalls(df.sparkSession),
                              sample=sample, computed_at=getattr(model, "computed_at", ()), magnitudes=magnitudes,
                              nonzero=nonzero, limits=native_spans.Limits(assumed))
    runs = {FilterModel: run_filter, RecordModel: run_map, ExplodeModel: run_explode}
    if type(model) not in runs:
        raise NotNative(f"no native form for a {type(model).__name__}")
    frame, known = runs[type(model)](df, model, lowering)
    return Ran(frame, known, normal_case(lowering.limits, datetime_columns(df.schema)))
