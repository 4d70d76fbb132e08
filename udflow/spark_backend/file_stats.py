"""What a DataFrame source's Parquet files prove of its int and Decimal columns, read from their footers.

A `dataframe=` source (`uf.from_spark`'s, or the user's own `spark.read.parquet(...)`)
carries no statistics of its own; Spark's plan does say where a column comes from. A
column of the DataFrame whose attribute is, unchanged, the attribute of a Parquet
relation at a leaf of the analysed plan (Catalyst gives a value a new attribute id
wherever an operator computes it) holds only values of that file column: its row groups'
minima and maxima bound it (`field_types.FieldType.magnitude`), as for a `path=` source.

    spark.read.parquet(p).filter("fare > 0").select("pickup_ts")   pickup_ts: the files' column
    spark.read.parquet(p).withColumn("pickup_ts", col("pickup_ts") * 1000)   computed: nothing

Local files only (a `file:` or plain path that pyarrow opens); a Spark Connect DataFrame,
or any plan the walk does not read, proves nothing.
"""

from __future__ import annotations

from typing import Optional

from udflow.field_types import MAGNITUDES, FieldType, parquet_magnitudes, source_field_types
from udflow.plan import Source
from udflow.spark_backend import connect


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
