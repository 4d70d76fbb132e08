"""What a DataFrame source's Parquet files prove of its int and Decimal columns, read from their footers.

A `dataframe=` source (`uf.from_spark`'s, or the user's own `spark.read.parquet(...)`)
carries no statistics of its own; Spark's plan does say where a column comes from. A
column of the DataFrame whose attribute is, unchanged, the attribute of a Parquet
relation at a leaf of the analysed plan (Catalyst gives a value a new attribute id
wherever an operator computes it) holds only values of that file column: its row groups'
minima and maxima bound it (`field_types.FieldType.magnitude`), as for a `path=` source.

    spark.read.parquet(p).filter("fare > 0").select("pickup_ts")   pickup_ts: the files' column
    spark.read.parquet(p).withColumn("pickup_ts", col("pickup_ts") * 1000)   computed: nothing

A DataFrame that is exactly a Parquet read (`parquet_read`: a relation under projections
that keep or rename its columns) is read by pyarrow where udflow needs its first records
or the distinct values of a key: the files' own values, with no Spark job.

Local files only (a `file:` or plain path that pyarrow opens); a Spark Connect DataFrame,
or any plan the walk does not read, proves nothing.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from functools import lru_cache
from typing import Optional

from pyspark.sql.types import (BooleanType, ByteType, DateType, DecimalType, DoubleType, FloatType, IntegerType,
                               LongType, ShortType, StringType)

from udflow.field_types import MAGNITUDES, FieldType, distinct_in_files, parquet_magnitudes, source_field_types
from udflow.plan import Source
from udflow.spark_backend import connect
from udflow.spark_backend.parquet_schema import file_schema

# the types whose values `collect()` gives exactly as Arrow's `to_pylist` does
AS_ARROW_GIVES = (BooleanType, ByteType, ShortType, IntegerType, LongType, FloatType, DoubleType, StringType,
                  DateType, DecimalType)


def source_types(source: Source) -> dict[str, FieldType]:
    """`field_types.source_field_types`, with the magnitudes a DataFrame source's Parquet files
    prove (`dataframe_magnitudes`)."""
    types = source_field_types(source)
    if not source.is_dataframe or source.dataframe is None:
        return types
    proven = dataframe_magnitudes(source.dataframe)
    for field, column in zip(source.fields, source.columns):
        t = types.get(field)
        if t is not None and t.family in MAGNITUDES and column in proven:
            types[field] = FieldType(t.family, t.nullable, proven[column])
    return types


def dataframe_magnitudes(df) -> dict[str, int]:
    """Column -> the largest magnitude the footers of the Parquet files it is read from prove."""
    if connect.is_connect(df):
        return {}
    try:
        plan = df._jdf.queryExecution().analyzed()
        output = {a.name(): a.exprId().id() for a in _seq(plan.output())}
        read = {}  # attribute id -> (file paths, file column)
        for leaf in _seq(plan.collectLeaves()):
            files = _parquet_files(leaf)
            if files:
                read.update({a.exprId().id(): (files, a.name()) for a in _seq(leaf.output())})
    except Exception:  # noqa: BLE001 - a plan this walk does not read proves nothing
        return {}
    out = {}
    for name, attribute in output.items():
        if attribute in read:
            files, column = read[attribute]
            magnitude = parquet_magnitudes(files).get(column)
            if magnitude is not None:
                out[name] = magnitude
    return out


@dataclass(frozen=True)
class ParquetRead:
    """A DataFrame that is exactly the rows of local Parquet files: a relation over them,
    under projections that keep or rename its columns (no filter, no computed column, no
    partition column), so its records are the files' records, in the files' values."""

    files: tuple  # local paths, in Spark's listing order
    columns: tuple  # (DataFrame column, file column), in the DataFrame's order

    def head(self, n: int, schema) -> Optional[tuple]:
        """The first `n` records, read by pyarrow from the footers' first row groups; None
        unless every column's Spark type is one whose values `collect()` gives exactly as
        Arrow's `to_pylist` does (AS_ARROW_GIVES) and is the type Spark maps the file's
        column to (`parquet_schema`)."""
        if not _same_plain_types(self, schema):
            return None
        try:
            return self._first(n)
        except (OSError, ValueError):  # not readable here after all (pyarrow's errors are ValueErrors)
            return None

    def _first(self, n: int) -> tuple:
        import pyarrow.parquet as pq

        wanted = [column for _, column in self.columns]
        rows: list = []
        for path in self.files:
            for batch in pq.ParquetFile(path).iter_batches(batch_size=max(1, min(n - len(rows), 65536)),
                                                          columns=wanted):
                rows.extend(batch.to_pylist()[: n - len(rows)])
                if len(rows) >= n:
                    break
            if len(rows) >= n:
                break
        return tuple({name: r[column] for name, column in self.columns} for r in rows)

    def distinct(self, name: str) -> Optional[int]:
        """The distinct non-None values of the DataFrame's column `name`, counted in the files."""
        column = dict(self.columns).get(name)
        if column is None:
            return None
        try:
            versions = tuple(os.stat(p).st_mtime_ns for p in self.files)
        except OSError:
            return None
        try:
            return distinct_in_files(self.files, "parquet", column, versions)
        except (OSError, ValueError, NotImplementedError):  # pyarrow's errors: not countable here
            return None  # the caller estimates


@lru_cache(maxsize=32)
def parquet_read(df) -> Optional[ParquetRead]:
    """`ParquetRead` of `df`, or None where its plan is anything else (or a Connect plan);
    kept per DataFrame object, as `frames._head` is (statistics, sampling and the lowering
    each ask)."""
    if connect.is_connect(df):
        return None
    try:
        plan = df._jdf.queryExecution().analyzed()
        output = [(a.name(), a.exprId().id()) for a in _seq(plan.output())]
        renamed = {}  # attribute id -> the id of the attribute it renames
        while plan.getClass().getSimpleName() == "Project":
            for e in _seq(plan.projectList()):
                kind = e.getClass().getSimpleName()
                if kind == "Alias" and e.child().getClass().getSimpleName() == "AttributeReference":
                    renamed[e.exprId().id()] = e.child().exprId().id()
                elif kind != "AttributeReference":
                    return None  # a computed column
            plan = plan.child()
        files = _parquet_files(plan)
        if not files or not plan.relation().partitionSchema().isEmpty():
            return None
        in_files = {a.exprId().id(): a.name() for a in _seq(plan.output())}
    except Exception:  # noqa: BLE001 - a plan this walk does not read is read by Spark
        return None
    columns = tuple((name, in_files.get(_followed(renamed, attribute))) for name, attribute in output)
    return ParquetRead(files, columns) if all(c is not None for _, c in columns) else None


def _followed(renamed: dict, attribute: int) -> int:
    while attribute in renamed:
        attribute = renamed[attribute]
    return attribute


def _same_plain_types(read: ParquetRead, schema) -> bool:
    wanted = {f.name: f.dataType for f in schema.fields}
    if any(not isinstance(t, AS_ARROW_GIVES) for t in wanted.values()):
        return False
    try:
        in_files = [dict(file_schema(p) or ()) for p in read.files]
    except Exception:  # noqa: BLE001 - an unreadable footer: Spark reads it, in its own words
        return False
    return all(in_file.get(column) == wanted[name] for in_file in in_files for name, column in read.columns)


def _seq(scala_seq) -> list:
    return [scala_seq.apply(i) for i in range(scala_seq.size())]


def _parquet_files(leaf) -> Optional[tuple]:
    if leaf.getClass().getSimpleName() != "LogicalRelation":
        return None
    relation = leaf.relation()
    if relation.getClass().getSimpleName() != "HadoopFsRelation" or str(relation.fileFormat()) != "Parquet":
        return None
    paths = tuple(relation.location().inputFiles())
    local = tuple(p[len("file:"):] if p.startswith("file:") else p for p in paths)
    return local if local and all(p.startswith("/") for p in local) else None
