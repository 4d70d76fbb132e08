"""The reference interpreter: the bag semantics of the five PACTs, in plain Python.

This module is the oracle every other part of udflow is tested against, so it
is written to be obviously right rather than fast, and it shares no code with
the Spark backend or the optimizer. Paper, section 2.3, with R = [r1..rN] and
S = [s1..sM]:

    Map(R, f)            = f(r1) ++ ... ++ f(rN)
    Filter(R, p)         = [r | r in R, p(r)]
    Reduce(R, f, K)      = f(R_k1) ++ ... ++ f(R_kl)    one group per value of K in R
                                                        (None is a value: None keys group together)
    Cross(R, S, f)       = [f(r, s) | r in R, s in S]
    Match(R, S, K, F, f) = [f(r, s) | r in R, s in S, r.K = s.F]
                                                        (SQL equality: a None key matches nothing)
    CoGroup(R, S, K, F, f) = f(R_k, S_k) for every k in K(R) u F(S)  (None groups together)

A float NaN in a key is one value, as Spark treats it (NaN keys group together and
match each other; Python's `==` would make every NaN record a group of its own, or
not, by object identity), and 0.0 and -0.0 are one value in both.

`f(x)` contributes one record when it returns a dict and every record it
yields when it is a generator; Reduce and CoGroup functions must yield. `f=None`
in Match and Cross is the concatenation `{**r, **s}`, refused (`FieldCollisionError`) where the
two records share a field: which value to keep would be a guess. Records are plain dicts;
a bag is a list whose order means nothing.
"""

from __future__ import annotations

import inspect
from typing import Any, Callable, Iterable, Iterator

from udflow import keytypes, sources
from udflow.errors import FieldCollisionError, KeyTypeError, UdflowError, UdfRuntimeError, collision_message, from_user_frame, user_failure
from udflow.plan import CoGroup, Cross, Custom, Map, Match, Node, Reduce, Source, function_location

Record = dict
RECORD_REPR_LIMIT = 500
MAX_DATAFRAME_ROWS = 100_000  # a DataFrame source the reference interpreter will collect


def run(node: Node) -> list[Record]:
    """The bag of records `node` produces."""
    if isinstance(node, Source):
        return read_source(node)
    if isinstance(node, Custom):
        return [dict(r) for r in node.op_type.reference([run(c) for c in node.inputs], node.param_dict)]
    if isinstance(node, Map):
        return run_filter(node, run(node.input)) if node.is_filter else run_map(node, run(node.input))
    if isinstance(node, Reduce):
        return run_reduce(node, run(node.input))
    if isinstance(node, Match):
        return run_match(node, run(node.left), run(node.right))
    if isinstance(node, Cross):
        return run_cross(node, run(node.left), run(node.right))
    if isinstance(node, CoGroup):
        return run_cogroup(node, run(node.left), run(node.right))
    raise TypeError(f"the reference interpreter does not know {type(node).__name__} ({node.label})")


# ---------------------------------------------------------------------------
# Sources: every record carries every field of the source (absent = None)
# ---------------------------------------------------------------------------


def read_source(node: Source) -> list[Record]:
    if node.in_memory:
        rows: Iterable[dict] = node.rows  # already prefixed by `source(...)`
        fields = node.fields
        # a record that has exactly the fields, in order, is copied at C speed (a sample's
        # records, read once per operator above them, mostly are)
        return [dict(r) if tuple(r) == fields else {f: r.get(f) for f in fields} for r in rows]
    if node.is_dataframe:
        raw = read_dataframe(node)
    elif node.format == "csv":
        raw = sources.csv_rows(node.table, node.path, node.types)
    else:
        return read_parquet(node.path, node.columns, node.prefix)
    return _named(raw, node.columns, node.prefix)


def _named(rows: Iterable[dict], columns: tuple[str, ...], prefix: str) -> list[dict]:
    """`rows` as records of exactly `columns`, named `prefix` + column (absent = None)."""
    return [{prefix + c: r.get(c) for c in columns} for r in rows]


def read_parquet(path: str, columns: tuple[str, ...], prefix: str = "") -> list[dict]:
    """The records of a parquet file or folder, one field per column (named `prefix` + the
    column; None where the file has no such column); dates are `datetime.date`, decimals
    `Decimal`. Only those columns are read, and Arrow builds the records under their names
    (Q7's six tables at scale 0.01: 1.04 s, against 1.2 s when every column was read and
    each record rebuilt in Python)."""
    import pyarrow.dataset as ds

    dataset = ds.dataset(path, format="parquet")
    if not set(columns) <= set(dataset.schema.names):  # a file changed since the source was made
        return _named(dataset.to_table().to_pylist(), columns, prefix)
    table = dataset.to_table(columns=list(columns))
    return table.rename_columns([prefix + c for c in columns]).to_pylist()


def read_dataframe(node: Source) -> list[dict]:
    """A DataFrame's rows, collected through Arrow as the Spark engine collects them; one
    larger than MAX_DATAFRAME_ROWS is refused rather than pulled into the driver."""
    rows = node.dataframe.limit(MAX_DATAFRAME_ROWS + 1).toArrow().to_pylist()
    if len(rows) > MAX_DATAFRAME_ROWS:
        what = f"table {node.catalog_table!r}" if node.catalog_table else "DataFrame"
        raise UdflowError(
            f"{node.label}: the reference interpreter runs in this Python process and collects its "
            f"sources; this {what} has more than {MAX_DATAFRAME_ROWS:,} rows. Run the flow on "
            "Spark (engine='spark'), or give the reference a sample: source(..., dataframe=df.limit(n))"
        )
    return rows


# ---------------------------------------------------------------------------
# The five PACTs
# ---------------------------------------------------------------------------


def run_map(node: Map, records: list[Record]) -> list[Record]:
    out: list[Record] = []
    for r in records:
        out.extend(emitted(node, lambda r=r: node.fn(dict(r)), r))
    return out


def run_filter(node: Map, records: list[Record]) -> list[Record]:
    return [r for r in records if call(node, lambda r=r: node.fn(dict(r)), r)]


def run_reduce(node: Reduce, records: list[Record]) -> list[Record]:
    out: list[Record] = []
    for key, rows in groups(records, node.key).items():
        shown = lambda key=key, rows=rows: _group_repr(node.key, key, rows)  # noqa: E731
        out.extend(yielded(node, lambda rows=rows: node.fn([dict(r) for r in rows]), shown))
    return out


def run_match(node: Match, left: list[Record], right: list[Record]) -> list[Record]:
    check_key_types(node, left, right)
    by_key = groups(right, node.right_key)
    out: list[Record] = []
    for l in left:
        key = key_of(l, node.left_key)
        if any(v is None for v in key):
            continue  # SQL: None equals nothing
        for r in by_key.get(key, ()):
            out.extend(_pair(node, l, r))
    return out


def run_cross(node: Cross, left: list[Record], right: list[Record]) -> list[Record]:
    return [rec for l in left for r in right for rec in _pair(node, l, r)]


def run_cogroup(node: CoGroup, left: list[Record], right: list[Record]) -> list[Record]:
    check_key_types(node, left, right)
    lg, rg = groups(left, node.left_key), groups(right, node.right_key)
    out: list[Record] = []
    for key in list(lg) + [k for k in rg if k not in lg]:
        ls, rs = lg.get(key, []), rg.get(key, [])
        shown = lambda key=key, ls=ls, rs=rs: f"key {key!r}: left {ls!r}, right {rs!r}"  # noqa: E731
        out.extend(
            yielded(node, lambda ls=ls, rs=rs: node.fn([dict(r) for r in ls], [dict(r) for r in rs]), shown)
        )
    return out


def check_key_types(node: Match | CoGroup, left: list[Record], right: list[Record]) -> None:
    """Keys whose types the engines compare differently are refused, not compared
    (`udflow.keytypes`): Python finds `0 != "0"` where Spark casts and matches."""
    for lk, rk in zip(node.left_key, node.right_key):
        lf = keytypes.of_values(r.get(lk) for r in left)
        rf = keytypes.of_values(r.get(rk) for r in right)
        clash = next(((a, b) for a in sorted(lf) for b in sorted(rf) if not keytypes.compatible(a, b)), None)
        if clash:
            raise KeyTypeError(
                f"{node.label}: key field {lk!r} holds {clash[0]} values and key field {rk!r} holds "
                f"{clash[1]} values; the engines would compare them differently, so "
                f"{keytypes.advice(*clash)}"
            )


def _pair(node: Match | Cross, l: Record, r: Record) -> list[Record]:
    if node.fn is None:
        shared = l.keys() & r.keys()
        if shared:
            raise FieldCollisionError(collision_message(node.label, min(shared)))
        return [{**l, **r}]
    return emitted(node, lambda: node.fn(dict(l), dict(r)), lambda: f"left {l!r}, right {r!r}")


def groups(records: list[Record], key: tuple[str, ...]) -> dict[tuple, list[Record]]:
    """Records by their value on `key`, in order of first appearance; None is a value."""
    out: dict[tuple, list[Record]] = {}
    for r in records:
        out.setdefault(key_of(r, key), []).append(r)
    return out


class _NaN:
    """The one value every float NaN in a key stands for."""

    def __repr__(self) -> str:
        return "nan"


NAN_KEY = _NaN()


def key_of(record: Record, key: tuple[str, ...]) -> tuple:
    """The record's value on `key`, each NaN as `NAN_KEY`."""
    if len(key) == 1:  # most keys: without a generator (it runs per record of every Match and Reduce)
        v = record.get(key[0])
        return (NAN_KEY,) if isinstance(v, float) and v != v else (v,)
    return tuple(NAN_KEY if isinstance(v, float) and v != v else v for v in (record.get(f) for f in key))


def _group_repr(key_fields: tuple[str, ...], key: tuple, rows: list[Record]) -> str:
    return f"group {dict(zip(key_fields, key))!r} of {len(rows)} record(s): {rows!r}"


# ---------------------------------------------------------------------------
# Calling user functions: their errors name the operator, function and record
# ---------------------------------------------------------------------------


def call(node: Node, thunk: Callable[[], Any], record: Any) -> Any:
    try:
        return thunk()
    except Exception as exc:  # noqa: BLE001 - re-raised with the operator and record named
        fields = record.keys() if isinstance(record, dict) else None
        raise UdfRuntimeError(_failure(node, user_failure(exc, node.fn, fields), record)) \
            from from_user_frame(exc, node.fn)


def emitted(node: Node, thunk: Callable[[], Any], record: Any) -> list[Record]:
    """A Map/Match/Cross call's output: the dict it returns, or what it yields."""
    result = call(node, thunk, record)
    if inspect.isgenerator(result):
        return _drain(node, result, record)
    if isinstance(result, dict):
        return [result]
    raise UdfRuntimeError(
        _failure(node, f"returned {type(result).__name__}, expected a dict (or yield records)", record)
    )


def yielded(node: Node, thunk: Callable[[], Any], record: Any) -> list[Record]:
    """A Reduce/CoGroup call's output: it must be a generator."""
    result = call(node, thunk, record)
    if not inspect.isgenerator(result):
        raise UdfRuntimeError(
            _failure(node, f"returned {type(result).__name__}; a {node.kind} function must yield its records", record)
        )
    return _drain(node, result, record)


def _drain(node: Node, gen: Iterator, record: Any) -> list[Record]:
    out = call(node, lambda: list(gen), record)
    for item in out:
        if not isinstance(item, dict):
            raise UdfRuntimeError(_failure(node, f"yielded {type(item).__name__}, expected a dict", record))
    return out


def _failure(node: Node, what: str, record: Any) -> str:
    """The message: operator, function, what went wrong, and the record (or a callable
    describing it, so that a group is only printed when something failed)."""
    shown = record() if callable(record) else repr(record)
    if len(shown) > RECORD_REPR_LIMIT:
        shown = shown[:RECORD_REPR_LIMIT] + "..."
    # inspect.unwrap: the optimizer samples a function through a counting wrapper
    # (functools.wraps); the message names the user's function, not the wrapper.
    fn = inspect.unwrap(node.fn) if callable(node.fn) else node.fn
    return f"{node.label}: {function_location(fn)} {what}\n  record: {shown}"
