"""Test tables as the JVM holds them: `read.rows_frame`, the path of udflow's own in-memory rows.

`spark.createDataFrame(list)` scans a Python RDD, so each query of a differential test starts
Python workers, and each query that is meant to fail (a native term's error on one row) takes
them down for the next: half a second a query. The values must already be of the schema's
types, as they are for a list `createDataFrame` accepts."""

from udflow.spark_backend.read import rows_frame


def jvm_frame(spark, data, schema):
    """`data` (tuples) as a LocalRelation of `schema`, a StructType or a DDL string."""
    if isinstance(schema, str):
        schema = spark.createDataFrame([], schema).schema
    return rows_frame(spark, [tuple(row) for row in data], schema)
