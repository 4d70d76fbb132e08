"""What Spark's Arrow UDFs run on the Python workers, in a module that imports no more than they need.

A UDF's function is pickled with the module-level names it calls, and a worker imports
each of their modules before its first batch. The lowering's own modules (`scalar`,
`python_calls`, and through them the native forms and the analysis) cost a fresh worker
about 0.4 s more than these functions need (`python -X importtime`); a worker is fresh on
a session's first query, on every executor of a cluster, and after any task that fails.
So what runs on the workers lives here, beside `udf` (the batch path's), and imports
pyarrow, the value checks and the term compiler only:

    scalar.predicate / struct_map / exploded_map   ->  predicate_on_arrays, map_on_arrays,
                                                        exploded_on_arrays
    python_calls.PythonCalls (a term's column)      ->  over_arrays(of_record(term, ...))
"""

from __future__ import annotations

import base64
import datetime
from typing import TYPE_CHECKING, Callable, Optional

import pyarrow as pa

from udflow.spark_backend.arrow_values import INT_MAX, INT_MIN, OVERFLOW, exact_array, holds_exactly
from udflow.spark_backend.udf import Encoder, Udf
from udflow.term_code import python_function

if TYPE_CHECKING:
    from udflow.pieces import Pieces

EMITTED = "__udflow_emitted"


# -- a Python term's column (`python_calls`): struct<ok, value, error> per row ------------------

# a helper's result, by its exact Python type: the family whose column holds it unchanged (a
# naive datetime as TIMESTAMP_NTZ, which no time zone shifts)
HELPER_FAMILIES = {str: "str", int: "int", float: "float", bool: "bool", datetime.date: "date",
                   datetime.datetime: "datetime"}
RESULT_FIELDS = ("ok", "value", "error")


def naive(value):
    """strptime's value where it is naive (a format without %z gives one); an aware one would
    be shifted by its column (TIMESTAMP_NTZ holds naive datetimes only)."""
    if value.tzinfo is not None:
        raise TypeError("strptime gave an aware datetime here, where udflow typed the call's column "
                        "as naive datetimes (run the flow with native=False)")
    return value


def of_family(value, expected: type, family: str) -> bool:
    """None, or a value of the family's own type (a naive datetime for "datetime")."""
    return value is None or type(value) is expected and not (family == "datetime" and value.tzinfo is not None)


def items_of(family: str) -> Callable:
    """A check that makes a value the list of its items as Python's `for` takes them (`for x in
    None` raises TypeError: 'NoneType' object is not iterable), each None or the sampled
    family's own type, an int within 64 bits: any other raises (udflow types the column by
    the sample) instead of being converted."""
    expected = next(t for t, f in HELPER_FAMILIES.items() if f == family)
    # items of these types need no look one by one (a datetime's zone, an int's size do)
    plain = frozenset({expected, type(None)}) if family not in ("datetime", "int") else frozenset()

    def check(value):
        items = list(value)
        if set(map(type, items)) <= plain:  # the usual list: its types seen at C speed
            return items
        for x in items:
            if not of_family(x, expected, family):
                raise TypeError(f"an item {x!r} here, where the items were {expected.__name__}s on the records "
                                f"udflow sampled to type them (run the flow with native=False)")
            if family == "int" and x is not None and not INT_MIN <= x <= INT_MAX:
                raise OverflowError(OVERFLOW)
        return items

    return check


def of_type(name: str, family: str) -> Callable:
    """A check that a helper's value is None or the sampled family's own type: a value of
    another type raises (udflow types the column by the sample) instead of being converted."""
    expected = next(t for t, f in HELPER_FAMILIES.items() if f == family)

    def check(value):
        if not of_family(value, expected, family):
            raise TypeError(f"{name} returned {value!r} here, where it returned a {expected.__name__} on "
                            f"the records udflow sampled to type it (run the flow with native=False)")
        return value

    return check


def of_record(term, names: list, check=None) -> Callable:
    """The term computed by Python from the values of the fields `names`, by the operations
    `expr.evaluate` performs (compiled to one function, `term_code`: the UDF runs it on every
    row), checked by `check` where given."""
    run = python_function(term, names)
    if not names:  # its one column is the constant that makes it run once per row (`PythonCalls._term`)
        return lambda _constant: run() if check is None else check(run())
    if check is None:
        return run
    return lambda *values: check(run(*values))


def on_flagged_rows(run: Callable) -> Callable:
    """`run` of a row's values where its flag (the first argument) is true; None elsewhere."""
    return lambda flag, *values: run(*values) if flag else None


def over_arrays(run: Callable, arrow_type, lines: Optional[Callable] = None) -> Callable:
    """`run` over Arrow columns, row by row: struct<ok, value, error> (see `python_calls`).
    A batch where no row raises and every value fits its column (the usual one) is one list
    comprehension and three conversions; otherwise it runs again row by row (the term is
    pure: running it twice changes nothing), each error kept for its row."""

    def udf(*arrays: pa.Array) -> pa.Array:
        columns = [a.to_pylist() for a in arrays]
        try:
            values = list(map(run, *columns))
            column = pa.array(values, arrow_type)
        except Exception:  # noqa: BLE001 - some row raises, or a value does not fit: row by row
            return _row_by_row(run, list(zip(*columns)), arrow_type, lines)
        fine = pa.array([True] * len(values), pa.bool_())
        return pa.StructArray.from_arrays([fine, column, pa.nulls(len(values), pa.string())],
                                          names=list(RESULT_FIELDS))

    return udf


def _row_by_row(run: Callable, rows: list, arrow_type, lines: Optional[Callable] = None) -> pa.Array:
    """struct<ok, value, error> of `run` over `rows`, each row's error caught (followed by
    " (line N)" where `lines` names it from the row's values), and a value its column
    cannot hold exactly (an int past 64 bits, a lone surrogate) an error too."""
    ok, values, errors = [], [], []
    for args in rows:
        try:
            values.append(run(*args))
            ok.append(True)
            errors.append(None)
        except Exception as exc:  # noqa: BLE001 - Python's error, raised where the model evaluates it
            ok.append(False)
            values.append(None)
            errors.append(_encoded(exc, lines(*args) if lines is not None else ""))
    try:
        column = pa.array(values, arrow_type)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        for i, value in enumerate(values):
            if ok[i] and not holds_exactly(value, arrow_type):
                ok[i], values[i] = False, None
                errors[i] = _encoded(OverflowError(OVERFLOW) if isinstance(value, int)
                                     else ValueError(f"{value!r} has no exact Spark value"),
                                     lines(*rows[i]) if lines is not None else "")
        column = pa.array(values, arrow_type)
    return pa.StructArray.from_arrays([pa.array(ok, pa.bool_()), column, pa.array(errors, pa.string())],
                                      names=list(RESULT_FIELDS))


def _encoded(exc: Exception, at: str = "") -> str:
    return base64.b64encode(f"{type(exc).__name__}: {exc}{at}".encode()).decode("ascii")


def raising_lines(pieces: Pieces, names: list) -> Callable:
    """The text naming the line where the list raises on a row's values (`Pieces.raising_line`)."""
    def at(*values) -> str:
        line = pieces.raising_line(dict(zip(names, values))) or pieces.line
        return f" (line {line})" if line else ""
    return at


# -- a Python Map or filter as a scalar UDF (`scalar`) ----------------------------------------


def predicate_on_arrays(udf: Udf, columns: list[str]) -> Callable:
    def run(*arrays: pa.Array) -> pa.Array:
        rows = pa.RecordBatch.from_arrays(list(arrays), names=columns).to_pylist()
        return pa.array([udf.test(row) for row in rows], pa.bool_())

    return run


def map_on_arrays(udf: Udf, columns: list[str], names: list[str], types: list) -> Callable:
    def run(*arrays: pa.Array) -> pa.Array:
        rows = pa.RecordBatch.from_arrays(list(arrays), names=columns).to_pylist()
        emitted, values = [], {n: [] for n in names}
        for row in rows:
            out = udf.on_row(row, row)
            emitted.append(bool(out))
            for n in names:
                values[n].append(_field(udf, out[0], n, row) if out else None)
        parts = [pa.array(emitted, pa.bool_())]
        for n, t in zip(names, types):
            parts.append(_typed(udf, n, values[n], t))
        return pa.StructArray.from_arrays(parts, names=[EMITTED, *names])

    return run


def exploded_on_arrays(udf: Udf, columns: list[str], written: Encoder) -> Callable:
    """Per row, the `written` fields of the records the function emits, as array<struct>; a
    field an emitted record lacks is None there, as the batch path encodes it, and a value its
    column cannot hold fails as there, naming the record."""
    names = written.schema.names

    def run(*arrays: pa.Array) -> pa.Array:
        rows = pa.RecordBatch.from_arrays(list(arrays), names=columns).to_pylist()
        offsets, emitted = [0], []
        for row in rows:
            out = udf.on_row(row, row)
            emitted.extend(out)
            offsets.append(offsets[-1] + len(out))
        try:
            fields = [exact_array([r.get(n) for r in emitted], t) for n, t in zip(names, written.schema.types)]
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            raise written.misfit(emitted) from None
        return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), pa.StructArray.from_arrays(fields, names=names))

    return run


def _field(udf: Udf, record: dict, name: str, row: dict):
    if name not in record:
        raise udf.fail(f"emitted a record without field {name!r}, which its other records have", row)
    return record[name]


def _typed(udf: Udf, name: str, values: list, arrow_type) -> pa.Array:
    try:
        return exact_array(values, arrow_type)
    except (pa.ArrowException, TypeError, ValueError, OverflowError):
        bad = next((v for v in values if not holds_exactly(v, arrow_type)), None)
        raise udf.fail(f"set field {name!r} to {bad!r}, which does not fit {arrow_type}, the type a sample "
                       "of its output gave; declare its type with @udflow.spark_backend.output_types", {name: bad}) from None
