"""`expr(text)` and `broadcast(df)`: PySpark's `F.expr` and `F.broadcast` in one round trip each.

PySpark's classic `F.expr(text)` finds the JVM's `functions` object and its method by
reflection on every call: three round trips to the JVM where one does. A lowering builds
dozens of such columns (a join's condition, a Reduce's keys and aggregates): at steady state,
Q7's chosen plan spent 10 ms of its 68 ms `to_spark()` in those look-ups (`bench/lowering.py`).
Here the method's handle is looked up once per SparkContext and kept on it.

    expr("`a` = `b`")     the Column F.expr("`a` = `b`") is: one call, not three
    broadcast(df)         the DataFrame F.broadcast(df) is

In PySpark's Connect mode (`is_remote()`) columns are built on the client, with no JVM:
both are PySpark's own there.
"""

from __future__ import annotations

from typing import Any

from pyspark.sql import Column, DataFrame
from pyspark.sql import functions as F

BROADCAST = "_udflow_broadcast"  # where a DataFrame keeps its broadcast-marked self


def expr(text: str) -> Column:
    """The Column `text` parses to (Spark SQL's expression syntax)."""
    method = _jvm_function("expr")
    if method is None:
        return F.expr(text)
    from pyspark.sql.classic.column import Column as ClassicColumn

    return ClassicColumn(method(text))


def broadcast(df: DataFrame) -> DataFrame:
    """`df` marked small enough to be broadcast to a join; one marked DataFrame per `df`
    (a DataFrame is immutable: a source's read, kept across lowerings by `read.file_read`,
    is marked once, not once per lowering)."""
    method = _jvm_function("broadcast")
    if method is None or not hasattr(df, "_jdf"):
        return F.broadcast(df)
    if BROADCAST not in df.__dict__:
        from pyspark.sql.classic.dataframe import DataFrame as ClassicDataFrame

        marked = ClassicDataFrame(method(df._jdf), df.sparkSession)
        if "schema" in df.__dict__:  # a hint changes no column: the schema PySpark holds is the hint's too
            marked.__dict__["schema"] = df.__dict__["schema"]
        df.__dict__[BROADCAST] = marked
    return df.__dict__[BROADCAST]


def _jvm_function(name: str) -> Any:
    """The handle of `org.apache.spark.sql.functions.<name>`, kept on the active SparkContext;
    None in Connect mode or with no SparkContext (PySpark's own function is used then)."""
    from pyspark import SparkContext
    from pyspark.sql.utils import is_remote

    context = SparkContext._active_spark_context
    if context is None or context._jvm is None or is_remote():
        return None
    handles = context.__dict__.setdefault("_udflow_functions", {})
    if name not in handles:
        handles[name] = getattr(getattr(context._jvm, "org.apache.spark.sql.functions"), name)
    return handles[name]
