"""User functions on the executors, over Arrow batches, and how their failures come home.

Every user function runs inside a wrapper that turns Arrow into dicts, checks
what the function gives back (a dict or a generator; Reduce and CoGroup must
yield), and encodes the records again, either into typed Arrow columns or, when
the output schema is not known yet, as one pickled record per row (a "blob").

A failure on an executor is raised as `MarkedFailure`, whose text carries the
finished message between two markers. Spark wraps it into a long Py4J/Python
trace; `translate` finds the markers in that text on the driver and raises the
message as a `UdfRuntimeError` instead:

    executor:  MarkedFailure("<<udflow:base64(message):udflow>>")
    driver:    PythonException / Py4JJavaError (200 lines)  ->  UdfRuntimeError(message)
"""

from __future__ import annotations

import base64
import datetime
import decimal
import inspect
import json
import math
import pickle
import re
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Callable, Iterator, Optional

import pyarrow as pa

from udflow.errors import FieldCollisionError, UdfRuntimeError, user_failure
from udflow.spark_backend.arrow_values import exact_array, holds_exactly
from udflow.sources import SourceValueError

RECORD_REPR_LIMIT = 500
BLOB = "__udflow_record"
KEY = "__udflow_key"
_OPEN, _CLOSE = "<<udflow:", ":udflow>>"
_MALFORMED = re.compile(r"Malformed records are detected in record parsing[^\n]*")  # Spark's FAILFAST CSV read


class MarkedFailure(RuntimeError):
    """A user-function failure on an executor, its message encoded for the driver."""

    def __init__(self, message: str):
        self.message = message
        super().__init__(_OPEN + base64.b64encode(message.encode()).decode() + _CLOSE)


def marked_message(text: str) -> Optional[str]:
    """The message between the markers in `text`, decoded; None where no marked message is.

    The chunks between the markers are joined by ".": a base64 text (the constant parts,
    encoded on the driver; Spark may break a long one into lines) or a JSON value as Spark's
    `to_json` wrote it (a native error's record, `native_errors`), which ends where its own
    text says, whatever it holds."""
    start = text.find(_OPEN)
    while start >= 0:
        found = _chunks(text, start + len(_OPEN))
        if found is not None:
            return "".join(found)
        start = text.find(_OPEN, start + 1)
    return None


_BASE64 = re.compile(r"[A-Za-z0-9+/=\s]*")
_JSON = json.JSONDecoder()


def _chunks(text: str, at: int) -> Optional[list]:
    chunks = []
    while True:
        if text.startswith(("{", "["), at):
            try:
                _, end = _JSON.raw_decode(text, at)
            except ValueError:
                return None
            chunks.append(text[at:end])
        else:
            end = _BASE64.match(text, at).end()
            try:
                chunks.append(base64.b64decode(re.sub(r"\s", "", text[at:end]), validate=True).decode())
            except ValueError:  # binascii.Error and UnicodeDecodeError are ValueErrors
                return None
        if text.startswith(_CLOSE, end):
            return chunks
        if not text.startswith(".", end):
            return None
        at = end + 1


# A marked message may name the UdfRuntimeError subclass the driver raises: "@Name:" first.
_TYPED = {"FieldCollisionError": FieldCollisionError}


def typed_message(error: str, message: str) -> str:
    return f"@{error}:{message}"


def _runtime_error(message: str) -> UdfRuntimeError:
    for name, cls in _TYPED.items():
        if message.startswith(f"@{name}:"):
            return cls(message[len(name) + 2:])
    return UdfRuntimeError(message)


@contextmanager
def translated() -> Iterator[None]:
    """Run a Spark action; a marked failure inside it surfaces as a UdfRuntimeError, and
    Spark's log lines about the failed task are held back (`session.quiet_task_failures`)."""
    from udflow.spark_backend.session import quiet_task_failures

    try:
        with quiet_task_failures():
            yield
    except MarkedFailure as exc:  # raised on the driver itself
        raise _runtime_error(exc.message) from None
    except Exception as exc:  # noqa: BLE001 - only marked failures are translated
        text = str(exc)
        found = marked_message(text)
        if found is None:
            found = marked_message(str(getattr(exc, "desc", "")))
        if found is not None:
            raise _runtime_error(found) from None
        malformed = _MALFORMED.search(text)
        if malformed is not None:
            raise SourceValueError(
                f"a source file holds a value its column's type does not admit ({malformed.group(0)}); "
                "declare the column's type with source(..., schema={...})"
            ) from None
        raise


# ---------------------------------------------------------------------------
# What a function is, and what it gives back
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Udf:
    """A user function as an operator calls it: `label` and `location` name it in errors.

    kind: "map" (fn(record)), "pair" (fn(left, right); `left_fields` split the
    joined row), "reduce" (fn(rows)), "cogroup" (fn(left_rows, right_rows)),
    "custom" (fn([rows]) -> rows, a record-at-a-time operator type).
    """

    label: str
    location: str
    fn: Callable
    kind: str
    left_fields: tuple[str, ...] = ()
    # the fields of the whole input record, for "did you mean" where the function is shown
    # only the columns it reads (a scalar UDF); () when not known
    input_fields: tuple[str, ...] = ()

    def fail(self, what: str, shown: Any) -> MarkedFailure:
        """`shown` is the record, or a callable describing it (built only when something failed)."""
        text = shown() if callable(shown) else repr(shown)
        if len(text) > RECORD_REPR_LIMIT:
            text = text[:RECORD_REPR_LIMIT] + "..."
        return MarkedFailure(f"{self.label}: {self.location} {what}\n  record: {text}")

    def call(self, shown: Any, fn: Callable, *args: Any) -> Any:
        """`fn(*args)`; an exception becomes a failure naming the operator and `shown`."""
        try:
            return fn(*args)
        except Exception as exc:  # noqa: BLE001 - reported with operator, function and record
            fields = self.input_fields or (shown.keys() if isinstance(shown, dict) else None)
            raise self.fail(user_failure(exc, self.fn, fields), shown) from None

    def records(self, result: Any, shown: Any) -> list[dict]:
        """The records a call produced; checks their shape."""
        if inspect.isgenerator(result):
            out = self.call(shown, list, result)
        elif self.kind in ("reduce", "cogroup"):
            raise self.fail(
                f"returned {type(result).__name__}; a {self.kind} function must yield its records", shown
            )
        elif isinstance(result, dict):
            return [result]
        else:
            raise self.fail(f"returned {type(result).__name__}, expected a dict (or yield records)", shown)
        for item in out:
            if not isinstance(item, dict):
                raise self.fail(f"yielded {type(item).__name__}, expected a dict", shown)
        return out

    # -- one call per group of the PACT ---------------------------------------

    def on_row(self, row: dict, shown: Any = None) -> list[dict]:
        if shown is not None:
            return self.records(self.call(shown, self.fn, row), shown)
        if self.kind == "pair":
            left = {f: row[f] for f in self.left_fields}
            right = {f: v for f, v in row.items() if f not in left}
            shown = lambda: f"left {left!r}, right {right!r}"  # noqa: E731
            return self.records(self.call(shown, self.fn, left, right), shown)
        return self.records(self.call(row, self.fn, row), row)

    def on_group(self, key: tuple[str, ...], rows: list[dict]) -> list[dict]:
        shown = lambda: f"group {_key_of(key, rows)!r} of {len(rows)} record(s): {rows!r}"  # noqa: E731
        return self.records(self.call(shown, self.fn, rows), shown)

    def on_cogroup(self, keys: tuple[tuple[str, ...], tuple[str, ...]], left: list[dict], right: list[dict]) -> list[dict]:
        key = _key_of(keys[0], left) if left else _key_of(keys[1], right)
        shown = lambda: f"key {tuple(key.values())!r}: left {left!r}, right {right!r}"  # noqa: E731
        return self.records(self.call(shown, self.fn, left, right), shown)

    def test(self, row: dict, shown: Any = None) -> bool:
        return bool(self.call(row if shown is None else shown, self.fn, row))


def _key_of(key: tuple[str, ...], rows: list[dict]) -> dict:
    return {k: rows[0].get(k) for k in key} if rows else {}


# ---------------------------------------------------------------------------
# Records in and out: typed Arrow columns, or pickled records ("blobs")
# ---------------------------------------------------------------------------


def read_rows(batch: pa.RecordBatch | pa.Table, blobs: bool) -> list[dict]:
    """The records of a batch: its columns as dicts, or its pickled records."""
    if not blobs:
        return batch.to_pylist()
    return [pickle.loads(b) for b in batch.column(BLOB).to_pylist()]


def group_key(values: tuple) -> bytes:
    """Bytes equal exactly when the key tuples are equal in Python (None equals None).

    Numbers are compared by value across int, float, Decimal and bool (as Python
    does: 1 == 1.0 == Decimal("1.00") == True), so their exact decimal expansion
    without trailing zeros stands for them.
    """
    return repr(tuple(_canonical(v) for v in values)).encode()


def _canonical(v: Any) -> Any:
    if v is None or isinstance(v, str):
        return v
    if isinstance(v, (bool, int, float, decimal.Decimal)):
        if isinstance(v, float) and not math.isfinite(v):
            return ("float", repr(v))
        text = format(decimal.Decimal(v), "f")
        if "." in text:
            text = text.rstrip("0").rstrip(".")
        return ("num", "0" if text in ("-0", "") else text)
    if isinstance(v, (datetime.date, datetime.datetime)):
        return (type(v).__name__, v.isoformat())
    return (type(v).__name__, repr(v))


@dataclass(frozen=True)
class Encoder:
    """Records -> an Arrow table: typed columns of `schema`, or (schema None) one pickled
    record per row, plus its `group_key` on `key` fields when a Reduce downstream asks."""

    udf: Udf
    schema: Optional[pa.Schema] = None
    key: Optional[tuple[str, ...]] = None

    def table(self, records: list[dict]) -> pa.Table:
        if self.schema is None:
            return self._blobs(records)
        names = set(self.schema.names)
        for r in records:
            if not r.keys() <= names:
                extra = sorted(set(r) - names)
                raise self.udf.fail(
                    f"emitted field {extra[0]!r}, which no record of the sample the output schema was "
                    f"inferred from had (schema: {', '.join(self.schema.names)}); emit the same fields "
                    "from every call",
                    r,
                )
        try:
            columns = [exact_array([r.get(f.name) for r in records], f.type) for f in self.schema]
            return pa.Table.from_arrays(columns, schema=self.schema)
        except (pa.ArrowException, TypeError, ValueError, OverflowError):
            raise self.misfit(records) from None

    def _blobs(self, records: list[dict]) -> pa.Table:
        columns = {BLOB: pa.array([pickle.dumps(r, protocol=pickle.HIGHEST_PROTOCOL) for r in records], pa.binary())}
        if self.key is not None:
            columns = {KEY: pa.array([group_key(tuple(r.get(k) for k in self.key)) for r in records], pa.binary()), **columns}
        return pa.table(columns)

    def batches(self, records: list[dict]) -> Iterator[pa.RecordBatch]:
        table = self.table(records)
        if table.num_rows:
            yield from table.to_batches()

    def misfit(self, records: list[dict]) -> MarkedFailure:
        """The failure naming the first value of `records` that its column cannot hold."""
        for r in records:
            for f in self.schema:
                if not holds_exactly(r.get(f.name), f.type):
                    value = r.get(f.name)
                    return self.udf.fail(
                        f"emitted {f.name}={value!r} ({type(value).__name__}), which does not fit the "
                        f"column type {f.type} inferred from a sample; give the field one type in "
                        "every record, or declare it with @udflow.spark_backend.output_types",
                        r,
                    )
        return self.udf.fail("emitted records that do not fit the output schema", records[:3])


# ---------------------------------------------------------------------------
# The functions Spark calls (mapInArrow, groupBy/cogroup applyInArrow)
# ---------------------------------------------------------------------------


def map_partitions(udf: Udf, blobs_in: bool, encoder: Encoder) -> Callable:
    """For `mapInArrow`: every record of every batch through `udf`."""

    def run(batches):
        for batch in batches:
            out: list[dict] = []
            for row in read_rows(batch, blobs_in):
                out.extend(udf.on_row(row))
            yield from encoder.batches(out)

    return run


def filter_partitions(udf: Udf, blobs_in: bool, columns: Optional[list[str]] = None) -> Callable:
    """For `mapInArrow`: keep the rows the predicate accepts; columns pass through untouched.
    With `columns` (typed input), the predicate sees only those fields of each row: the ones
    it may read. A failure still shows the whole row."""

    def run(batches):
        for batch in batches:
            if columns is None or blobs_in:
                mask = [udf.test(row) for row in read_rows(batch, blobs_in)]
            else:
                mask = [udf.test(row, _whole_row(batch, i)) for i, row in enumerate(_shown_rows(batch, columns))]
            yield batch.filter(pa.array(mask, pa.bool_()))

    return run


def _shown_rows(batch: pa.RecordBatch, columns: Optional[list[str]]) -> list[dict]:
    """The batch's rows as dicts of `columns` only (all columns when None)."""
    view = batch if columns is None else batch.select(columns)
    return view.to_pylist() if view.num_columns else [{} for _ in range(batch.num_rows)]


def _whole_row(batch: pa.RecordBatch, i: int) -> Callable[[], str]:
    """Row `i` in full, for an error message (built only when a call fails)."""
    return lambda: repr(batch.slice(i, 1).to_pylist()[0])


def forward_partitions(udf: Udf, columns: Optional[list[str]]) -> Callable:
    """For `mapInArrow`, a Map that emits its input records unchanged (analysis: pure, copy,
    no writes): each row repeated as many times as the function emits, columns untouched.
    With `columns`, the function sees only those fields of each row, the ones it may read.
    A failure still shows the whole row."""

    def run(batches):
        for batch in batches:
            taken: list[int] = []
            for i, row in enumerate(_shown_rows(batch, columns)):
                taken.extend([i] * len(udf.on_row(row, _whole_row(batch, i))))
            if taken:
                yield batch.take(pa.array(taken, pa.int64()))

    return run


def projected_map_partitions(udf: Udf, columns: list[str], shown: frozenset, encoder: Encoder) -> Callable:
    """For `mapInArrow`, a Map whose records are its input record with the fields it writes
    changed (analysis: pure, implicit copy): it is shown only `columns` (the fields it reads
    or writes, `shown`), and each record it emits is completed from its input row with the
    fields it was not shown, unchanged - only for the rows that emit."""

    def run(batches):
        for batch in batches:
            emitted: list[dict] = []
            taken: list[int] = []
            for i, row in enumerate(_shown_rows(batch, columns)):
                for record in udf.on_row(row, _whole_row(batch, i)):
                    emitted.append(record)
                    taken.append(i)
            if not emitted:
                continue
            whole = batch.take(pa.array(taken, pa.int64())).to_pylist()
            out = [{**{f: v for f, v in full.items() if f not in shown}, **record}
                   for full, record in zip(whole, emitted)]
            yield from encoder.batches(out)

    return run


def custom_partitions(udf: Udf, blobs_in: bool, encoder: Encoder) -> Callable:
    """For `mapInArrow`: a record-at-a-time operator type's `reference` over each batch."""

    def run(batches):
        for batch in batches:
            rows = read_rows(batch, blobs_in)
            out = udf.call(lambda: f"a batch of {len(rows)} record(s) starting {rows[:3]!r}", udf.fn, [rows])
            yield from encoder.batches([dict(r) for r in out])

    return run


def reduce_groups(udf: Udf, key: tuple[str, ...], blobs_in: bool, encoder: Encoder) -> Callable:
    """For `groupBy(key).applyInArrow`: one call per group."""

    def run(table: pa.Table) -> pa.Table:
        return encoder.table(udf.on_group(key, read_rows(table, blobs_in)))

    return run


def cogroup_groups(udf: Udf, keys: tuple[tuple[str, ...], tuple[str, ...]], encoder: Encoder) -> Callable:
    """For `cogroup(...).applyInArrow`: one call per key value of either side (typed inputs)."""

    def run(left: pa.Table, right: pa.Table) -> pa.Table:
        return encoder.table(udf.on_cogroup(keys, left.to_pylist(), right.to_pylist()))

    return run
