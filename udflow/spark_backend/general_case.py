"""The general case of a native Map, filter or join function: the rows its native form cannot hold, run in Python.

Tuplex's split, on Spark (issue 29, item 4). `native_ops.run` gives the operator's
native form and, where a guard of what that form holds could fire (an int past 64
bits, an `int / int` past 2**53), the normal case that proves it does not
(`native_spans.NormalCase`: the int columns it reads within a bound). Then

    normal rows:  df.filter(|a| <= B or a is None)  -> the native form (its limits never fire)
    other rows:   df.filter(NOT ...)                 -> the user's function, record by record
    result:       the union of the two, by name

so every row gets what Python gives it: its value, or its error in Python's words. The
bound is a comparison with constants, which Spark pushes into a Parquet scan: row groups
whose statistics lie inside it are skipped by the general side without being read. The
general side costs one more pass over the operator's input where that input is not a
scan (the sides do not share it), so it is taken only where a limit could fire.

The other rows cross to Python as the columns the function reads (a pure filter, or a Map
that copies its record, `{**r, ...}`: a scalar UDF, `scalar.exploded_map`), the fields it
only copies staying in the JVM: documents' tokenizer over its texts beyond ASCII once
sent each text back through Arrow once per word it emitted. Other functions see whole
records (`mapInArrow`).

A Match's or Cross's function splits the joined pairs the same way (its model is a Map's
over the concatenated pair); the join itself runs for both sides.

A Reduce splits by group (`split_groups`): a group runs in Python, whole, where one of its
records lies outside the normal case of the terms computed per record, or where its
aggregated row lies outside the normal case of the terms computed from the aggregates
(`sum(xs) / len(xs)` past 2**53):

    python groups:  keys of df.filter(NOT rows normal), then keys of the other groups'
                    aggregated rows (NOT groups normal)
    native:         df.join(python groups, key <=> key, left_anti)  -> the Reduce natively
    general:        df.join(python groups, key <=> key, left_semi)  -> groupBy(key).applyInArrow(fn)

(`<=>`: None keys form one group, as in Python.) The aggregation runs once more to find
the groups, so this too is taken only where a limit could fire.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Callable, Optional

from pyspark.sql import DataFrame
from pyspark.sql.types import StructType

from udflow.fields import properties_of
from udflow.plan import Cross, Map, Match, Reduce
from udflow.spark_backend import functions, scalar
from udflow.spark_backend import udf as executor
from udflow.spark_backend.memo import remembered, select_expr
from udflow.spark_backend.native_groups import Reduced
from udflow.spark_backend.native_ops import Ran
from udflow.spark_backend.native_spans import NormalCase
from udflow.spark_backend.sql import ident
from udflow.spark_backend.udf import Encoder, Udf

PYTHON_KEY = "__udflow_python_key{}"


def split(node: Map | Match | Cross, df: DataFrame, run: Callable[..., Ran], udf: Udf,
          encoder: Callable[[object], Encoder], model=None) -> Ran:
    """`run(df)` (the node natively over `df`), with the rows outside its normal case computed
    by `udf` in Python where there is one; its `normal` is the split's, None where there is
    none. `encoder(schema)` encodes records of a Spark schema. `run(rows, normal)` lowers the
    node over rows known to lie in `normal`, where the guards it proves need not be written.

    The normal case is known only once the node is lowered, and lowering it twice (over
    `df`, then over its normal rows) is most of a `to_spark()` of a plan with a split. So the
    session remembers the normal case last found for the same `model` over the same columns
    and lowers the node over those rows first: where that lowering finds the same normal case
    (the form it gave holds on every row it is given), it is the native side; else the two
    lowerings, as without a guess."""
    guess = _remembered_normal(df, model)
    if guess[0] is not None and set(guess[0].reads) <= set(df.columns):
        native = run(df.filter(guess[0].rows()), guess[0])
        if native.normal == guess[0]:
            return _with_general(node, df, native, guess[0], udf, encoder)
    ran = run(df)
    normal = guess[0] = ran.normal
    if normal is None or not set(normal.reads) <= set(df.columns):
        return Ran(ran.frame, ran.nonnull)  # no split: its limits raise where they fire
    return _with_general(node, df, run(df.filter(normal.rows()), normal), normal, udf, encoder)


def _remembered_normal(df: DataFrame, model) -> list:
    """The session's box holding the normal case last found for `model` over `df`'s columns
    (a fresh one where the model cannot be a key: a constant of an unhashable value)."""
    key = (model, df.schema.json())
    try:
        hash(key)
    except TypeError:
        return [None]
    return remembered(df.sparkSession, "normal_cases", key, lambda: [None])


def _with_general(node: Map | Match | Cross, df: DataFrame, native: Ran, normal: NormalCase, udf: Udf,
                  encoder: Callable[[object], Encoder]) -> Ran:
    """`native` (the node over the rows of `df` within `normal`) and the other rows run by `udf`
    in Python, as one DataFrame."""
    others = df.filter(normal.other_rows())
    if not normal.conditions:  # rows past a bound are rare: one task; a row condition's may be many
        others = others.coalesce(1)
    general = _in_python(node, others, native.frame, udf, encoder)
    return Ran(native.frame.unionByName(general), native.nonnull, normal)


def _in_python(node: Map | Match | Cross, others: DataFrame, native: DataFrame, udf: Udf,
               encoder: Callable[[object], Encoder]) -> DataFrame:
    """`others` through the node's function in Python, as the columns of its `native` side.
    A filter, or a Map that copies its record, is a scalar UDF over the fields it reads
    (and writes), the rest of the row staying native (`scalar`); any other function sees
    whole records (`mapInArrow`)."""
    props = properties_of(node) if isinstance(node, Map) else None
    if props is not None and node.is_filter:
        shown = props.read_projection()
        columns = [c for c in others.columns if shown is not None and c in shown]
        if columns:
            return others.filter(scalar.predicate(node, udf, columns))
        return others.mapInArrow(executor.filter_partitions(udf, False), others.schema)
    if props is not None:
        written = StructType([f for f in native.schema.fields if f.name in props.writes])
        general = scalar.exploded_map(props, udf, others, written, encoder(written), native.columns)
        if general is not None:
            return general
    schema = native.schema
    return others.mapInArrow(executor.map_partitions(udf, False, encoder(schema)), schema)


@dataclass(frozen=True)
class GroupsNormal:
    """The groups a native Reduce holds: every record within `rows`, its aggregated row within
    `groups` (either None where it needs no bound)."""

    rows: Optional[NormalCase]
    groups: Optional[NormalCase]

    def describe(self) -> str:
        if not (self.rows and self.rows.conditions or self.groups and self.groups.conditions):
            bound = (self.rows or self.groups).bound
            parts = [f"holding a record where {', '.join(self.rows.columns)}" if self.rows else "",
                     "whose aggregated values" if self.groups else ""]
            return f"groups {' or '.join(p for p in parts if p)} lie beyond ±2**{bound.bit_length() - 1} run in Python"
        parts = [f"holding a record {self.rows.where()}" if self.rows else "",
                 f"whose aggregated row is {self.groups.where()}" if self.groups else ""]
        return f"groups {' or '.join(p for p in parts if p)} run in Python"


def split_groups(node: Reduce, df: DataFrame, run: Callable[..., Reduced], udf: Udf,
                 encoder: Callable[[object], Encoder]) -> Ran:
    """`run(df)` (the Reduce natively over `df`), with the groups outside its normal case
    computed by `udf` in Python, whole; its `normal` a `GroupsNormal`, None where no group
    needs Python. The normal case's input columns bound every record of a group; the others
    are the aggregated row's. The groups with a record outside go first: aggregating them
    natively could raise where Python does not. `run(groups, normal)` lowers the Reduce over
    groups known to lie in `normal`."""
    reduced = run(df)
    normal = reduced.normal
    if normal is None:
        return Ran(reduced.frame, reduced.nonnull, magnitudes=reduced.magnitudes, nonzero=reduced.nonzero)
    inputs = tuple(c for c in normal.columns if c in df.columns)
    aggregated = tuple(c for c in normal.columns if c not in df.columns)
    per_record = tuple(c for c in normal.conditions if set(c.reads) <= set(df.columns))
    per_group = tuple(c for c in normal.conditions if c not in per_record)
    if not set(aggregated) | {r for c in per_group for r in c.reads} <= set(reduced.aggregated.columns):
        return Ran(reduced.frame, reduced.nonnull, magnitudes=reduced.magnitudes,  # no split: limits raise
                   nonzero=reduced.nonzero)
    rows = replace(normal, columns=inputs, datetimes=tuple(c for c in normal.datetimes if c in inputs),
                   conditions=per_record) if inputs or per_record else None
    groups = replace(normal, columns=aggregated, datetimes=tuple(c for c in normal.datetimes if c in aggregated),
                     conditions=per_group) if aggregated or per_group else None
    keys = _GroupKeys(node.key)
    python_keys = [keys.of(df.filter(rows.other_rows()))] if rows is not None else []
    if groups is not None:
        inside = keys.without(df, python_keys[0]) if python_keys else df
        python_keys.append(keys.of(run(inside).aggregated.filter(groups.other_rows())))
    python = python_keys[0] if len(python_keys) == 1 else python_keys[0].unionByName(python_keys[1])
    native = run(keys.without(df, python), normal)  # every group within: its proven guards unwritten
    schema = native.frame.schema
    general = keys.within(df, python).groupBy(*[functions.expr(ident(k)) for k in node.key]).applyInArrow(
        executor.reduce_groups(udf, node.key, False, encoder(schema)), schema)
    # the magnitudes assume no column's bound, only the data's, and a count of a group's records
    # is no less in Python: Python's groups keep them too
    return Ran(native.frame.unionByName(general), native.nonnull, GroupsNormal(rows, groups), native.magnitudes,
               native.nonzero)


@dataclass(frozen=True)
class _GroupKeys:
    """A Reduce's key: the distinct keys of some rows, and the rows of a frame whose key is
    (not) among them, None keys alike (`<=>`), as Python groups them."""

    key: tuple

    def of(self, frame: DataFrame) -> DataFrame:
        return select_expr(frame, [f"{ident(k)} AS {ident(n)}" for k, n in zip(self.key, self._names)])

    def without(self, frame: DataFrame, keys: DataFrame) -> DataFrame:
        return frame.join(keys.distinct(), self._on(), "left_anti")

    def within(self, frame: DataFrame, keys: DataFrame) -> DataFrame:
        return frame.join(keys.distinct(), self._on(), "left_semi")

    @property
    def _names(self) -> list:
        return [PYTHON_KEY.format(i) for i in range(len(self.key))]

    def _on(self):
        return functions.expr(" AND ".join(f"{ident(k)} <=> {ident(n)}" for k, n in zip(self.key, self._names)))
