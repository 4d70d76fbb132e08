"""In-memory rows reach Spark as a LocalRelation built through Arrow (`read.rows_frame`): the
JVM reads them without Python workers, and every value comes back as the list's path gives it."""

import datetime
import decimal

import pytest

import udflow as uf
from udflow.spark_backend.read import rows_frame
from udflow.spark_backend.schema import rows_schema

pytestmark = pytest.mark.spark

UTC = datetime.timezone.utc
ROWS = [
    dict(b=True, i=2**63 - 1, f=-0.0, s="é\u0000x\U0001f600", d=decimal.Decimal("-1.50"),
         n=datetime.datetime(1, 1, 1, 0, 0, 0, 1), a=datetime.datetime(9999, 12, 31, 23, 59, 59, 999999, tzinfo=UTC),
         dt=datetime.date(1, 1, 1), by=b"\x00\xff", z=None),
    dict(b=None, i=-(2**63), f=float("nan"), s="", d=None, n=None, a=datetime.datetime(1970, 1, 1, tzinfo=UTC),
         dt=None, by=bytearray(b"ab"), z=None),
    dict(b=False, i=None, f=float("-inf"), s=None, d=decimal.Decimal("12345.6789"),
         n=datetime.datetime(2024, 2, 29, 12), a=None, dt=datetime.date(9999, 12, 31), by=None, z=None),
]
FIELDS = tuple(ROWS[0])


def _data(rows, schema):
    return [tuple(r[f] for f in schema.fieldNames()) for r in rows]


def test_every_type_of_an_in_memory_source_comes_back_as_the_list_path_gives_it(spark):
    schema = rows_schema("t", FIELDS, ROWS)
    data = _data(ROWS, schema)
    through_arrow, through_list = rows_frame(spark, data, schema), spark.createDataFrame(data, schema)
    assert through_arrow.schema == through_list.schema == schema
    for got, expected in zip(through_arrow.collect(), through_list.collect()):
        assert [repr(v) for v in got] == [repr(v) for v in expected]


def test_the_rows_are_read_by_the_jvm_and_the_terms_above_them_run_in_tasks(spark):
    frame = rows_frame(spark, [(1, "a"), (2, "b")], rows_schema("t", ("k", "s"), [{"k": 1, "s": "a"}]))
    assert "LocalTableScan" in frame._jdf.queryExecution().executedPlan().toString()
    projected = frame.selectExpr("k + 1 AS k1")._jdf.queryExecution().optimizedPlan().toString()
    assert "Project" in projected  # not folded into a LocalRelation by the driver


def test_a_value_arrow_will_not_convert_takes_the_list_path(spark):
    schema = rows_schema("t", ("s",), [{"s": "x"}])
    frame = rows_frame(spark, [("\ud800",)], schema)  # a lone surrogate is not UTF-8
    assert "ExistingRDD" in frame._jdf.queryExecution().executedPlan().toString()


def test_a_flow_over_rows_gives_the_reference_interpreters_records(spark):
    def scaled(r):
        return {**r, "g": r["i"] // 2 if r["i"] is not None else None, "t": r["s"] + "!" if r["s"] else r["s"]}

    flow = uf.source("t", rows=ROWS).map(scaled)
    key = lambda r: repr(r["i"])  # noqa: E731
    got, expected = sorted(flow.collect(spark=spark), key=key), sorted(flow.collect(engine="reference"), key=key)
    assert [_comparable(r) for r in got] == [_comparable(r) for r in expected]


def _comparable(record):
    """The record with NaN made equal to itself, an aware datetime as its UTC instant (Spark
    gives timezone.utc back as ZoneInfo('UTC'), the same zone) and a bytearray as bytes."""
    def one(v):
        if isinstance(v, float) and v != v:
            return "nan"
        if isinstance(v, datetime.datetime) and v.tzinfo is not None:
            return ("aware", v.astimezone(UTC).replace(tzinfo=None))
        v = bytes(v) if isinstance(v, bytearray) else v
        return type(v).__name__, v

    return sorted((f, one(v)) for f, v in record.items())


def test_an_int_past_64_bits_is_refused_naming_its_field(spark):
    with pytest.raises(uf.UdflowError, match="field 'i' holds 18446744073709551616, an int past 64 bits"):
        uf.source("t", rows=[{"i": 2**64}]).collect(spark=spark)


def test_a_value_the_column_would_not_hold_exactly_is_refused_as_pyspark_refuses_it(spark):
    from pyspark.sql.types import LongType, StructField, StructType

    schema = StructType([StructField("i", LongType(), True)])
    from pyspark.errors import PySparkTypeError

    with pytest.raises(PySparkTypeError, match="can not accept object 1.5"):  # not pyarrow's truncation to 1
        rows_frame(spark, [(1.5,)], schema).collect()
