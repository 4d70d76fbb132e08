"""Flow: the user's handle on an immutable operator tree, and `source`, where trees start.

A Flow wraps the root `Node` of a plan (see `udflow.plan`). Every builder
method returns a new Flow; nothing is ever modified in place. The tree is
checked as it is built, so a malformed pipeline fails at the line that wrote
it, with a message naming the operator and the field:

    >>> a = source("a", rows=[{"x": 1}])
    >>> a.reduce([], lambda rows: rows)
    Traceback (most recent call last):
    FlowConstructionError: Reduce(<lambda>) has an empty key ...
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import Any, Callable, Iterable, Mapping, Optional, Sequence, Union

import networkx as nx

from udflow import diagnostics, sources
from udflow.errors import FlowConstructionError, closest, surfaced
from udflow.fields import global_record, only_fields, output_fields, properties_of, read_projection  # noqa: F401
from udflow.fields import selected_fields
from udflow.plan import (
    CoGroup,
    Cross,
    Custom,
    OperatorType,
    Fields,
    ForeignKey,
    Map,
    Match,
    Node,
    Reduce,
    Source,
    draw,
)

KeySpec = Union[str, Sequence[str]]


def _as_fields(spec: Optional[KeySpec]) -> Fields:
    if spec is None:
        return ()
    if isinstance(spec, str):
        return (spec,)
    return tuple(spec)


# ---------------------------------------------------------------------------
# Construction-time checks
# ---------------------------------------------------------------------------


def field_family(node: Node, name: str) -> Optional[str]:
    """The key family (`udflow.keytypes`) of field `name` in `node`'s output, when it is known
    before running: a source's column type, carried through every operator that does not
    write the field (analysis). None: unknown (created or changed by a function). Not
    cached: nodes compare without their in-memory rows, whose values decide the family."""
    if isinstance(node, Source):
        return diagnostics.source_family(node, name)
    if isinstance(node, Custom) or name not in (output_fields(node) or ()):
        return None
    if node.function is not None:
        try:
            if name in properties_of(node).writes:
                return None
        except Exception:  # noqa: BLE001 - no analysis: the function may change anything
            return None
    carriers = [child for child in node.inputs if name in (output_fields(child) or ())]
    return field_family(carriers[0], name) if len(carriers) == 1 else None


def _check_key_types(label: str, left: Node, left_key: Fields, right: Node, right_key: Fields) -> None:
    """Join / co-group keys compare the same on both engines (`udflow.keytypes`): refused
    here when both types are known; the engines check the rest when the keys meet."""
    diagnostics.check_key_types(label, [
        (lk, field_family(left, lk), left.label, rk, field_family(right, rk), right.label)
        for lk, rk in zip(left_key, right_key)
    ])


def _check_callable(label: str, fn: Any, what: str = "function") -> None:
    if not callable(fn):
        raise FlowConstructionError(
            f"{label}: the {what} must be callable, got {type(fn).__name__} {fn!r}"
        )


def _check_key(label: str, key: Fields, child: Node, side: str = "input") -> None:
    if not key:
        raise FlowConstructionError(f"{label} has an empty key; give at least one field")
    carried = output_fields(child)
    if carried is None:
        return
    for k in key:
        if k not in carried:
            raise FlowConstructionError(
                f"{label}: key field {k!r} is not carried by its {side} {child.label};"
                f"{closest(k, carried) or ''} (fields: {', '.join(sorted(carried))})"
            )


def _check_disjoint(label: str, left: Node, right: Node) -> None:
    lf, rf = output_fields(left), output_fields(right)
    if lf is None or rf is None:
        return
    both = sorted(lf & rf)
    if both:
        raise FlowConstructionError(
            f"{label}: field {both[0]!r} is on both sides ({left.label} and {right.label}); "
            "field names are attributes of one global record, so give one side a "
            "`prefix=` or rename the field in a map"
            + (f" (also on both sides: {', '.join(both[1:])})" if len(both) > 1 else "")
        )


def _check_tree(label: str, left: Node, right: Node) -> None:
    left_sources = {n for n in left.walk() if isinstance(n, Source)}
    for n in right.walk():
        if isinstance(n, Source) and n in left_sources:
            raise FlowConstructionError(
                f"{label}: source {n.label} is used on both sides; flows must be trees. "
                "Call source(...) twice with different prefixes to use a table twice"
            )


def _warn_unknown_reads(node: Node) -> Node:
    """`diagnostics.unknown_reads` for a new operator whose inputs' fields are known."""
    carried = [output_fields(child) for child in node.inputs]
    if node.function is None or isinstance(node, Custom) or any(c is None for c in carried):
        return node
    try:
        props = properties_of(node)
    except Exception:  # noqa: BLE001 - no analysis result, nothing to check
        return node
    diagnostics.unknown_reads(node, props, frozenset().union(*carried), stacklevel=3)
    return node


def _unique_label(base: str, taken: set[str]) -> str:
    if base not in taken:
        return base
    i = 2
    while f"{base}#{i}" in taken:
        i += 1
    return f"{base}#{i}"


def _relabel(node: Node, taken: set[str]) -> Node:
    """A copy of `node`'s tree whose labels avoid `taken` (which it extends)."""
    children = [_relabel(c, taken) for c in node.inputs]
    label = _unique_label(node.label, taken)
    taken.add(label)
    rebuilt = node.with_inputs(*children) if children else node
    return dataclasses.replace(rebuilt, label=label) if label != node.label else rebuilt


def _labels(node: Node) -> set[str]:
    return {n.label for n in node.walk()}


# ---------------------------------------------------------------------------
# Flow
# ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Flow:
    """An immutable data flow. Build it with `source(...)` and the methods below.

    `hints` are physical choices for the Spark backend, keyed by operator label
    (`"broadcast_left"`, `"broadcast_right"` or `"shuffle"` for a Match or Cross;
    `"broadcast_kept"` for a Reduce that runs as a native group filter: its kept keys
    are broadcast to the semi join); the optimizer sets them, a user rarely does.
    """

    root: Node
    hints: tuple[tuple[str, str], ...] = ()
    # (label, function, `analysis.outside.snapshot`) of each function a reordered plan's
    # proofs were derived for (`uf.optimize`); running it checks they still hold
    proved_for: tuple = dataclasses.field(default=(), compare=False, repr=False)
    # ((label, `samples.OutputSample`), ...): what each operator emitted on a sample taken on
    # the driver when the flow was optimized; the Spark backend types Python output from it
    samples: tuple = dataclasses.field(default=(), compare=False, repr=False)
    # `uf.from_spark`: ((`frontend.KeptPart`, ...), (Python UDF, how it was opened), ...))
    origin: tuple = dataclasses.field(default=(), compare=False, repr=False)

    # -- building ------------------------------------------------------------

    def _label(self, base: str, name: Optional[str], *others: Node) -> str:
        taken = _labels(self.root).union(*(_labels(o) for o in others))
        if name is not None:
            if name in taken:
                raise FlowConstructionError(f"operator name {name!r} is already used in this flow")
            return name
        return _unique_label(base, taken)

    def map(self, f: Callable, *, name: Optional[str] = None) -> "Flow":
        """Map: `f(record)` returns one dict, or yields any number of dicts."""
        label = self._label(f"Map({diagnostics.lambda_label(f)})", name)
        _check_callable(label, f)
        return Flow(_warn_unknown_reads(Map(label, self.root, f)))

    def filter(self, pred: Callable, *, name: Optional[str] = None) -> "Flow":
        """A Map that emits the record unchanged iff `pred(record)` is true."""
        label = self._label(f"Filter({diagnostics.lambda_label(pred)})", name)
        _check_callable(label, pred, "predicate")
        return Flow(_warn_unknown_reads(Map(label, self.root, pred, is_filter=True)))

    def reduce(self, key: KeySpec, f: Callable, *, name: Optional[str] = None) -> "Flow":
        """Reduce: `f(rows)` is called once per group of records equal on `key`, and yields dicts."""
        key = _as_fields(key)
        label = self._label(f"Reduce[{','.join(key)}]({diagnostics.lambda_label(f)})", name)
        _check_callable(label, f)
        _check_key(label, key, self.root)
        return Flow(_warn_unknown_reads(Reduce(label, self.root, key, f)))

    def _binary_inputs(self, other: "Flow", label: str) -> Node:
        if not isinstance(other, Flow):
            raise FlowConstructionError(f"{label}: the other input must be a Flow, got {type(other).__name__}")
        _check_tree(label, self.root, other.root)
        right = other.root
        if _labels(self.root) & _labels(right):
            right = _relabel(right, set(_labels(self.root)))
        return right

    def _join_keys(self, label: str, on: Any) -> tuple[Fields, Fields]:
        try:
            left_key, right_key = on
        except (TypeError, ValueError):
            raise FlowConstructionError(
                f"{label}: on= must be a pair (left_fields, right_fields), got {on!r}"
            ) from None
        left_key, right_key = _as_fields(left_key), _as_fields(right_key)
        if len(left_key) != len(right_key):
            raise FlowConstructionError(
                f"{label}: the two sides of on= have different lengths: {left_key} vs {right_key}"
            )
        return left_key, right_key

    def match(self, other: "Flow", on: Any, f: Optional[Callable] = None, *, name: Optional[str] = None) -> "Flow":
        """Match (equi-join) on `on=(left_fields, right_fields)`; `f=None` concatenates."""
        base = f"Match({'='.join(_fmt_on(on))})" if f is None else f"Match({diagnostics.lambda_label(f)})"
        label = self._label(base, name, other.root)
        left_key, right_key = self._join_keys(label, on)
        if f is not None:
            _check_callable(label, f)
        right = self._binary_inputs(other, label)
        _check_key(label, left_key, self.root, "left input")
        _check_key(label, right_key, right, "right input")
        _check_disjoint(label, self.root, right)
        _check_key_types(label, self.root, left_key, right, right_key)
        return Flow(_warn_unknown_reads(Match(label, self.root, right, left_key, right_key, f)))

    def apply(self, op_type: OperatorType, *others: "Flow", name: Optional[str] = None, **params: Any) -> "Flow":
        """An operator of a registered type over this flow (and `others`, for binary types)."""
        if len(others) + 1 != op_type.arity:
            raise FlowConstructionError(
                f"{op_type.name} takes {op_type.arity} input(s), got {len(others) + 1}"
            )
        label = self._label(f"{op_type.name}", name, *(o.root for o in others))
        args = [self.root]
        for other in others:
            args.append(self._binary_inputs(other, label))
        if len(args) == 2 and op_type.disjoint_inputs:
            _check_disjoint(label, args[0], args[1])
        return Flow(Custom(label, op_type, tuple(args), tuple(sorted(params.items()))))

    def cross(self, other: "Flow", f: Optional[Callable] = None, *, name: Optional[str] = None) -> "Flow":
        """Cross (Cartesian product); `f(left, right)`, `f=None` concatenates."""
        label = self._label(f"Cross({diagnostics.lambda_label(f)})", name, other.root)
        if f is not None:
            _check_callable(label, f)
        right = self._binary_inputs(other, label)
        _check_disjoint(label, self.root, right)
        return Flow(_warn_unknown_reads(Cross(label, self.root, right, f)))

    def cogroup(self, other: "Flow", on: Any, f: Callable, *, name: Optional[str] = None) -> "Flow":
        """CoGroup: `f(left_rows, right_rows)` once per key value of either input."""
        label = self._label(f"CoGroup({diagnostics.lambda_label(f)})", name, other.root)
        left_key, right_key = self._join_keys(label, on)
        _check_callable(label, f)
        right = self._binary_inputs(other, label)
        _check_key(label, left_key, self.root, "left input")
        _check_key(label, right_key, right, "right input")
        _check_disjoint(label, self.root, right)
        _check_key_types(label, self.root, left_key, right, right_key)
        return Flow(_warn_unknown_reads(CoGroup(label, self.root, right, left_key, right_key, f)))

    # -- running -------------------------------------------------------------

    @surfaced
    def collect(
        self, engine: str = "spark", spark: Any = None, native: bool = True, fields: Optional[Sequence[str]] = None
    ) -> list[dict]:
        """Run the flow and return its records as a list of dicts (a bag: order is arbitrary).

        `fields` keeps only those fields of each record, in that order; on Spark the fields
        not kept are never computed where the plan allows it (Spark prunes them, down to the
        columns a scan reads). `native=False` keeps every function in Python on Spark (see
        docs/native.md)."""
        fields = selected_fields(self.root, fields)
        diagnostics.check_still_proved(self.proved_for)
        if engine == "reference":
            from udflow import reference

            return only_fields(reference.run(self.root), fields)
        if engine == "spark":
            from udflow import spark_backend

            return spark_backend.collect(self.root, self.physical(native), spark=spark, fields=fields,
                                         samples=dict(self.samples))
        raise ValueError(f"unknown engine {engine!r}; use 'spark' or 'reference'")

    @surfaced
    def to_spark(self, spark: Any = None, native: bool = True, fields: Optional[Sequence[str]] = None):
        """The flow lowered to a PySpark DataFrame, for users who continue in PySpark
        (`fields`: only these columns, as in `collect`). Lazy, as a DataFrame is: building it
        runs no Spark job (a Python function's output is typed from a sample taken on the
        driver, `udflow.samples`); the first action runs the flow."""
        from udflow import spark_backend
        from udflow.samples import output_samples

        diagnostics.check_still_proved(self.proved_for)
        samples = self.samples or output_samples(self.root)
        return spark_backend.to_dataframe(
            self.root, self.physical(native), spark=spark, fields=selected_fields(self.root, fields),
            samples=dict(samples),
        )

    @surfaced
    def write(
        self,
        path: str,
        format: str = "parquet",
        spark: Any = None,
        mode: str = "errorifexists",
        native: bool = True,
        fields: Optional[Sequence[str]] = None,
    ) -> None:
        """Run the flow on Spark and write it through Spark's committer (all or nothing);
        `fields`: only these columns, as in `collect`."""
        from udflow import spark_backend

        diagnostics.check_still_proved(self.proved_for)
        spark_backend.write(
            self.root, self.physical(native), path, format=format, spark=spark, mode=mode,
            samples=dict(self.samples),
            fields=selected_fields(self.root, fields),
        )

    # -- looking -------------------------------------------------------------

    def physical(self, native: bool = True):
        """How each operator runs on Spark (`udflow.physical.PhysicalPlan`), decided from the
        function models and the flow's hints; what `collect`, `to_spark` and `write` run.
        `native=False`: every function in Python."""
        from udflow.engine.steps import physical_plan
        from udflow.spark_backend.forms import forms_of

        return physical_plan(self.root, dict(self.hints), forms_of(native))

    @property
    def fields(self) -> Optional[frozenset[str]]:
        return output_fields(self.root)

    @property
    def operators(self) -> tuple[Node, ...]:
        return tuple(n for n in self.root.walk() if not isinstance(n, Source))

    @property
    def sources(self) -> tuple[Source, ...]:
        return tuple(n for n in self.root.walk() if isinstance(n, Source))

    def operator(self, label: str) -> Node:
        for n in self.root.walk():
            if n.label == label:
                return n
        raise KeyError(f"no operator labelled {label!r}; operators: {[n.label for n in self.root.walk()]}")

    def to_networkx(self):
        """The tree as a networkx DiGraph, edges from input to consumer (the direction data flows)."""
        import networkx as nx

        graph = nx.DiGraph()
        for n in self.root.walk():
            graph.add_node(n.label, kind=n.kind)
            for child in n.inputs:
                graph.add_edge(child.label, n.label)
        return graph

    def __str__(self) -> str:
        return draw(self.root)

    def __repr__(self) -> str:
        return f"Flow(\n{draw(self.root)}\n)"


def _fmt_on(on: Any) -> tuple[str, str]:
    try:
        left, right = on
        return ",".join(_as_fields(left)), ",".join(_as_fields(right))
    except (TypeError, ValueError):
        return (str(on), "?")


# ---------------------------------------------------------------------------
# Sources
# ---------------------------------------------------------------------------


def _prefixed(name: str, spec: Fields, columns: Fields, prefix: str, what: str) -> Fields:
    """Key fields may be given with or without the prefix."""
    fields = tuple(prefix + c for c in columns)
    out = []
    for k in spec:
        if k in fields:
            out.append(k)
        elif prefix + k in fields:
            out.append(prefix + k)
        else:
            raise FlowConstructionError(f"source {name!r}: {what} field {k!r} is not one of its fields;"
                                        f"{closest(k, fields) or ''} (fields: {', '.join(fields)})")
    return tuple(out)


def source(
    name: str,
    *,
    path: Optional[str] = None,
    rows: Optional[Iterable[Mapping]] = None,
    dataframe: Any = None,
    table: Optional[str] = None,
    fields: Optional[Sequence[str]] = None,
    schema: Union[None, str, Mapping[str, str]] = None,
    key: Optional[KeySpec] = None,
    foreign_keys: Optional[Mapping[Any, tuple[str, Any]]] = None,
    prefix: Optional[str] = None,
    format: Optional[str] = None,
) -> Flow:
    """A data set: a parquet/CSV `path`, in-memory `rows` (a list of dicts), a Spark
    `dataframe`, or a catalog `table` ("db.tbl", read through the active SparkSession).

    `schema` declares the types of a CSV's columns (`{"rating": "double"}` or a Spark DDL
    string); undeclared ones are inferred from a sample (see `udflow.sources`). `key` is its
    primary key; `foreign_keys` maps its fields to another table's key, e.g.
    `{("l_suppkey",): ("supplier", ("s_suppkey",))}`; `prefix` renames every field so one
    table can be used twice.
    """
    given = [k for k, v in (("path", path), ("rows", rows), ("dataframe", dataframe), ("table", table)) if v is not None]
    if len(given) != 1:
        raise FlowConstructionError(
            f"source {name!r}: give exactly one of path=, rows=, dataframe= or table= "
            f"(got {', '.join(given) if given else 'none'})"
        )
    if schema is not None and path is None:
        raise FlowConstructionError(f"source {name!r}: schema= declares a CSV's column types; {given[0]}= carries its own")
    if path is not None:
        found = _path_source(name, path, format, schema, fields)
    elif rows is not None:
        found = _rows_source(name, rows, fields)
    else:
        found = _spark_source(name, dataframe, table, fields)
    prefix = prefix or ""
    columns = found["columns"]
    src_fields = tuple(prefix + c for c in columns)
    if len(set(src_fields)) != len(src_fields):
        raise FlowConstructionError(f"source {name!r}: duplicate field names in {src_fields}")
    key_fields = _prefixed(name, _as_fields(key), columns, prefix, "key") if key else None
    fks = tuple(
        ForeignKey(_prefixed(name, _as_fields(local), columns, prefix, "foreign key"), target, _as_fields(target_fields))
        for local, (target, target_fields) in (foreign_keys or {}).items()
    )
    rows_list = found.get("rows")
    if rows_list is not None:
        diagnostics.check_rows_types(name, columns, rows_list)
    if rows_list is not None and prefix:
        rows_list = [{prefix + k: v for k, v in r.items()} for r in rows_list]
    label = f"Source({prefix}{name})" if prefix else f"Source({name})"
    node = Source(
        label,
        table=name,
        fields=src_fields,
        columns=columns,
        key=key_fields,
        foreign_keys=fks,
        prefix=prefix,
        path=found.get("path"),
        format=found.get("format"),
        rows=tuple(rows_list) if rows_list is not None else (),
        types=found.get("types", ()),
        dataframe=found.get("dataframe"),
        catalog_table=table,
    )
    return Flow(node)


def _path_source(name: str, path: str, format: Optional[str], schema: Any, fields: Optional[Sequence[str]]) -> dict:
    if not os.path.exists(path):
        raise FlowConstructionError(f"source {name!r}: no file or folder at {path!r}")
    fmt = sources.format_of(name, path, format)
    if fmt == "parquet":
        if schema is not None:
            raise FlowConstructionError(f"source {name!r}: schema= declares a CSV's column types; parquet carries its own")
        columns = sources.parquet_columns(name, path)
        types: tuple = ()
    else:
        columns = sources.csv_header(name, sources.data_files(path)[0])
        types = sources.csv_types(name, path, columns, schema)
    return {"path": os.path.abspath(path), "format": fmt, "columns": _projected(name, columns, fields), "types": types}


def _projected(name: str, columns: Fields, fields: Optional[Sequence[str]]) -> Fields:
    """`fields=` on a file or DataFrame keeps those of its columns (its `types` describe them all)."""
    if fields is None:
        return columns
    missing = [f for f in fields if f not in columns]
    if missing:
        raise FlowConstructionError(f"source {name!r}: fields= names {missing[0]!r}, which is not a column ({', '.join(columns)})")
    return tuple(fields)


def _rows_source(name: str, rows: Iterable[Mapping], fields: Optional[Sequence[str]]) -> dict:
    rows_list = []
    seen: dict[str, None] = {}
    for r in rows:
        if not isinstance(r, Mapping):
            raise FlowConstructionError(f"source {name!r}: rows must be dicts, got {type(r).__name__}")
        rows_list.append(dict(r))
        seen.update(dict.fromkeys(r))
    columns = tuple(fields) if fields is not None else tuple(seen)
    return {"rows": rows_list, "columns": columns}


def _spark_source(name: str, dataframe: Any, table: Optional[str], fields: Optional[Sequence[str]]) -> dict:
    """A DataFrame (or a catalog table's): its columns and Spark types, nothing read."""
    from udflow.spark_backend import frames

    df = frames.catalog_table(name, table) if table is not None else frames.checked_dataframe(name, dataframe)
    types = frames.column_types(df)
    columns = _projected(name, tuple(c for c, _ in types), fields)
    return {"dataframe": df, "format": "dataframe", "columns": columns, "types": types}
