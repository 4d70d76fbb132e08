"""`uf.from_spark` on a Spark Connect DataFrame (issue 30, item 4): the client's plan is read
(no JVM), the UDFs are opened as on a classic session, and the flow runs on the same server.

The server's Python workers import nothing of this checkout, so this module's functions
travel by value (`cloudpickle.register_pickle_by_value`), as a user's script's do.
"""

from __future__ import annotations

import sys

import pytest

import udflow as uf
from udflow.frontend import open_dataframe

pytestmark = pytest.mark.spark

ROWS = [(1, "a b", 2.0, "x"), (2, "c", None, "y"), (3, "d e f", 0.5, "x"), (4, None, float("nan"), "y"),
        (5, "g", 3.0, "x")]


def double_it(x):
    if x is None:
        return None
    return x * 2


def tokens(s):
    return s.split()


def shout(s):
    return None if s is None else s.upper() + "!"


@pytest.fixture
def remote(connect_spark):
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield connect_spark
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def _rows(rows, columns):
    out = []
    for r in rows:
        d = r.asDict() if hasattr(r, "asDict") else r
        out.append(tuple("NaN" if isinstance(d[c], float) and d[c] != d[c] else d[c] for c in columns))
    return sorted(out, key=repr)


def test_a_connect_dataframe_opens_and_runs_on_its_server(remote):
    from pyspark.sql import functions as F

    docs = remote.createDataFrame(ROWS, "id long, text string, x double, g string")
    names = remote.createDataFrame([(1, "z"), (3, "w"), (5, "z")], "oid long, name string")
    df = (docs.withColumn("y", F.udf(double_it, "double")("x"))
          .filter(F.col("text").isNotNull() & (F.col("y") > 1))
          .withColumnRenamed("g", "group")
          .select("id", "y", "group", F.explode(F.udf(tokens, "array<string>")("text")).alias("tok"))
          .join(names, F.col("id") == F.col("oid"))
          .groupBy("name", "group").agg(F.sum("y").alias("s"), F.count("*").alias("n"), F.max("tok").alias("last")))
    opened = open_dataframe(df)
    assert not opened.kept, opened.kept
    labels = [n.label for n in opened.flow.operators]
    assert {"where text is not None", "where y > 1.0"} <= set(labels)
    expected = _rows(df.collect(), df.columns)
    assert _rows(opened.flow.collect(engine="reference"), df.columns) == expected
    fast = uf.optimize_dataframe(df)
    assert type(fast).__module__.startswith("pyspark.sql.connect")
    assert _rows(fast.collect(), df.columns) == expected


def test_a_native_column_between_udfs_keeps_its_part_as_written_on_connect(remote):
    from pyspark.sql import functions as F

    docs = remote.createDataFrame(ROWS, "id long, text string, x double, g string")
    df = (docs.withColumn("y", F.udf(double_it, "double")("x")).withColumn("z", F.col("y") + 1)
          .withColumn("loud", F.udf(shout, "string")("text")))
    opened = open_dataframe(df)
    assert any("no SQL text to re-read" in k.reason for k in opened.kept), opened.kept
    assert _rows(uf.optimize_dataframe(df).collect(), df.columns) == _rows(df.collect(), df.columns)
