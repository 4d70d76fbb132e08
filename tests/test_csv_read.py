"""A DataFrame that is exactly a small local CSV file's rows gives its first records without a
Spark job, as Spark collects them (`udflow/spark_backend/csv_read.py`); anything else is read by Spark."""

from __future__ import annotations

import pytest

from tests.test_parquet_schema import _jobs_in
from udflow.spark_backend import frames
from udflow.spark_backend.csv_read import csv_read

TEXT = 'id,name,n\n1,ann,10\n2,,-7\n3,x,\n-4,"b,c",9223372036854775807\n5,"say \'hi\'",0\n'
SCHEMA = "id int, name string, n bigint"


def _csv(tmp_path, text: str = TEXT) -> str:
    path = tmp_path / "t.csv"
    path.write_text(text)
    return str(path)


SEMICOLONS = TEXT.replace(",", ";").replace('"b;c"', '"b,c"')


@pytest.mark.parametrize("text, make", [
    (TEXT, lambda spark, p: spark.read.option("header", "true").schema(SCHEMA).csv(p)),
    (TEXT, lambda spark, p: spark.read.option("header", "true").schema(SCHEMA).csv(p).select("n", "id")),
    (TEXT, lambda spark, p: spark.read.option("header", "true").option("inferSchema", "true").csv(p)),
    (SEMICOLONS, lambda spark, p: spark.read.options(header="true", sep=";").schema(SCHEMA).csv(p)),
], ids=["schema", "projected", "inferred", "sep"])
def test_a_csv_read_gives_its_first_records_without_a_job_as_spark_collects_them(spark, tmp_path, text, make):
    """An empty field is None, a quoted one holds the separator, as Spark reads them."""
    df = make(spark, _csv(tmp_path, text))
    assert csv_read(df) is not None
    got, jobs = _jobs_in(spark, lambda: frames.head(df, 10))
    assert not jobs
    assert repr(got) == repr([r.asDict() for r in df.collect()])


@pytest.mark.parametrize("text, schema", [
    ("id,name\n1,ann\n2\n", "id int, name string"),  # a short row: Spark fills nulls
    ("id,name\nx,ann\n", "id int, name string"),  # not an int: Spark reads null
    ("id,d\n1,2024-01-02\n", "id int, d date"),  # a date: left to Spark
    ('id,name\n1,"say ""hi"""\n2,""\n', "id int, name string"),  # Spark keeps it as written; "" is None
    ('id,name\n1,"a\\"b"\n', "id int, name string"),  # the escape character
], ids=["short-row", "not-an-int", "a-date", "doubled-quotes", "escaped"])
def test_a_file_pyarrow_reads_otherwise_is_read_by_spark(spark, tmp_path, text, schema):
    df = spark.read.option("header", "true").schema(schema).csv(_csv(tmp_path, text))
    got, jobs = _jobs_in(spark, lambda: frames.head(df, 10))
    assert jobs and repr(got) == repr([r.asDict() for r in df.collect()])


def test_any_other_plan_over_csv_is_read_by_spark(spark, tmp_path):
    df = spark.read.option("header", "true").schema(SCHEMA).csv(_csv(tmp_path)).filter("id > 1")
    assert csv_read(df) is None
    got, jobs = _jobs_in(spark, lambda: frames.head(df, 10))
    assert jobs and got == [r.asDict() for r in df.collect()]
