"""A DataFrame's native expressions between its Python UDFs, as operators of the flow.

`df.withColumn("y", udf("x")).filter(F.col("y") > 1).withColumn("z", udf2("y"))` has a
native condition between two UDFs. It keeps Spark's semantics (null comparisons,
NaN largest, ANSI errors) by running on Spark as Spark's own expression, re-read by
name over the columns below it:

    SparkFilter[(y > CAST(1 AS DOUBLE))]     df.filter(F.expr(condition))
    SparkColumns[w = (x * 2)]                df.select("*", F.expr(sql).alias(name), ...)

Both are `Custom` operators (`udflow.plan.OperatorType`) with exact properties: a
filter reads its condition's columns and writes nothing; a projection reads its
expressions' columns and writes its new ones. No rule moves a Python function across
them yet, so they keep their place in the plan. The reference interpreter runs them on
Spark too (a small DataFrame of the bag's referenced columns, and each record's
position): the semantics are Spark's on both engines.
"""

from __future__ import annotations

from typing import Callable

from udflow.analysis.properties import UdfProperties
from udflow.errors import UdflowError
from udflow.plan import OperatorType

INDEX = "__udflow_position"


class NativeStepError(UdflowError):
    """Spark raised evaluating a DataFrame's own native expression."""


def _session():
    from pyspark.sql import SparkSession

    active = SparkSession.getActiveSession()
    if active is not None:
        return active
    from udflow.spark_backend import get_session

    return get_session()


def _through_spark(bag: list, types: tuple, run: Callable) -> list:
    """`run(df)` over a DataFrame of the bag's columns `types` ((name, Spark type), ...) and each
    record's position; the rows it returns."""
    if not bag:
        return []
    schema = ", ".join(f"`{c}` {t}" for c, t in types) + f", `{INDEX}` bigint"
    rows = [tuple(r.get(c) for c, _ in types) + (i,) for i, r in enumerate(bag)]
    try:
        return run(_session().createDataFrame(rows, schema))
    except Exception as err:  # noqa: BLE001 - Spark's error, in its own words, without a Java trace
        message = str(err).strip().splitlines()[0] if str(err).strip() else type(err).__name__
        raise NativeStepError(f"Spark raised evaluating the DataFrame's native expression: {message}") from None


# -- a native condition ------------------------------------------------------------------------

def _filter_reference(bags: list, params: dict) -> list:
    from pyspark.sql import functions as F

    bag = bags[0]
    kept = _through_spark(bag, params["types"],
                          lambda df: df.filter(F.expr(params["condition"])).select(INDEX).collect())
    positions = {row[0] for row in kept}
    return [r for i, r in enumerate(bag) if i in positions]


def _filter_spark(dataframes: list, params: dict):
    from pyspark.sql import functions as F

    return dataframes[0].filter(F.expr(params["condition"]))


def _filter_properties(input_fields: tuple, params: dict) -> UdfProperties:
    reads = frozenset(c for c, _ in params["types"])
    return UdfProperties(kind="custom", reads=reads, writes=frozenset(), emits=(0, 1), card_reads=reads,
                         copy=True, pure=True, output_fields=frozenset(input_fields[0]) if input_fields[0] else None,
                         side_reads=(reads,), origin="annotation", location=f"filter {params['condition']}")


SPARK_FILTER = OperatorType(
    name="SparkFilter", arity=1, reference=_filter_reference,
    output_fields=lambda inputs, params: inputs[0], properties=_filter_properties, spark=_filter_spark,
)


# -- native columns ----------------------------------------------------------------------------

def _columns_reference(bags: list, params: dict) -> list:
    from pyspark.sql import functions as F

    bag = bags[0]
    columns = params["columns"]
    rows = _through_spark(bag, params["types"], lambda df: df.select(
        INDEX, *(F.expr(sql).alias(name) for name, sql in columns)).collect())
    values = {row[0]: row[1:] for row in rows}
    return [{**r, **dict(zip((name for name, _ in columns), values[i]))} for i, r in enumerate(bag)]


def _columns_spark(dataframes: list, params: dict):
    from pyspark.sql import functions as F

    df = dataframes[0]
    return df.select("*", *(F.expr(sql).alias(name) for name, sql in params["columns"]))


def _columns_properties(input_fields: tuple, params: dict) -> UdfProperties:
    reads = frozenset(c for c, _ in params["types"])
    writes = frozenset(name for name, _ in params["columns"])
    carried = frozenset(input_fields[0]) | writes if input_fields[0] else None
    return UdfProperties(kind="custom", reads=reads, writes=writes, emits=(1, 1), card_reads=frozenset(),
                         copy=True, pure=True, output_fields=carried, side_reads=(reads,),
                         origin="annotation", location="columns " + ", ".join(n for n, _ in params["columns"]))


def _columns_fields(inputs: tuple, params: dict):
    return inputs[0] | frozenset(name for name, _ in params["columns"]) if inputs[0] is not None else None


SPARK_COLUMNS = OperatorType(
    name="SparkColumns", arity=1, reference=_columns_reference,
    output_fields=_columns_fields, properties=_columns_properties, spark=_columns_spark,
)
