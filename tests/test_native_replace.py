"""`d.replace(day=1)` and `ts.replace(second=0, microsecond=0)` run natively (issue 29,
item 3): the parts Python may set to a constant without ever making an invalid date (a
day up to 28, a month with it, any time part) move the value by their difference, exact
on every date and naive datetime from year 1 to 9999. None raises Python's
AttributeError; a day past 28, a year, or a time part of a date has no native form."""

import datetime as dt
import itertools

import pytest

import udflow as uf
from udflow.analysis import analyze
from udflow.expr import Call, Field, Lit, evaluate
from tests.both_engines import native_records_on_both_engines, raised_on_both_engines
from tests.test_native_differential import native_error
from tests.frames import jvm_frame

pytestmark = pytest.mark.spark

MOMENTS = [dt.datetime(2024, 2, 29, 13, 45, 59, 999999), dt.datetime(1, 1, 1), dt.datetime(9999, 12, 31, 23, 59, 59, 999999),
           dt.datetime(1969, 12, 31, 23, 59, 59, 1), dt.datetime(1970, 1, 1), dt.datetime(2023, 3, 26, 2, 30, 0, 500000),
           dt.datetime(2000, 1, 31, 0, 0, 0, 123456)]
DATES = [dt.date(2024, 2, 29), dt.date(1, 1, 1), dt.date(9999, 12, 31), dt.date(2023, 1, 31), dt.date(1970, 1, 1)]
TIME_PARTS = [{"second": 0, "microsecond": 0}, {"minute": 0, "second": 0, "microsecond": 0}, {"microsecond": 0},
              {"second": 30}, {"microsecond": 999999}, {"hour": 23, "minute": 59}, {"hour": 0}]
DATE_PARTS = [{"day": 1}, {"day": 28}, {"month": 1, "day": 1}, {"month": 12, "day": 15}, {"month": 2, "day": 28}]


def term(parts: dict) -> Call:
    return Call("date.replace", (Field("x"), *[Lit(v) for k, x in parts.items() for v in (k, x)]))


def check(spark, values, data_type, part_sets):
    from pyspark.sql import functions as F
    from pyspark.sql.types import LongType, StructField, StructType

    from udflow.spark_backend.native import NativeLowering

    rows = [(i, v) for i, v in enumerate(values + [None])]
    frame = jvm_frame(spark, rows, StructType([StructField("id", LongType(), False),
                                                    StructField("x", data_type, True)]))
    lowering = NativeLowering(frame.schema, "m (t.py:1)")
    terms = [term(p) for p in part_sets]
    columns = [F.expr(lowering.lower(t).sql) for t in terms]
    got = {r[0]: r[1:] for r in frame.where("x IS NOT NULL").select("id", *columns).collect()}
    for i, x in rows[:-1]:
        for k, t in enumerate(terms):
            assert got[i][k] == evaluate(t, {"x": x}), (t, x, got[i][k])
    assert "AttributeError: 'NoneType' object has no attribute 'replace'" in native_error(frame, columns[0], len(values))


def test_every_time_and_day_replacement_of_a_naive_datetime_is_pythons(spark):
    from pyspark.sql.types import TimestampNTZType

    combined = [{**d, **t} for d, t in itertools.product(DATE_PARTS[:3], TIME_PARTS[:3])]
    check(spark, MOMENTS, TimestampNTZType(), TIME_PARTS + DATE_PARTS + combined)


def test_every_day_and_month_replacement_of_a_date_is_pythons(spark):
    from pyspark.sql.types import DateType

    check(spark, DATES, DateType(), DATE_PARTS)


def minute_bucket(r):
    return {**r, "bucket": r["ts"].replace(second=0, microsecond=0)}


def month_start(r):
    return {**r, "month": r["day"].replace(day=1)}


def late_in_month(r):
    return {**r, "month": r["day"].replace(day=31)}


def test_an_invalid_or_unbounded_replacement_has_no_term():
    assert analyze(late_in_month, ["day"]).model is None
    written = dict(analyze(minute_bucket, ["ts"]).model.cases[0].emit.fields)
    assert str(written["bucket"]) == "r['ts'].replace(second=0, microsecond=0)"


def test_a_flow_of_truncations_runs_natively_with_pythons_records(spark):
    rows = [{"id": i, "ts": m, "day": d} for i, (m, d) in enumerate(zip(MOMENTS, DATES))]
    for fn in (minute_bucket, month_start):
        spark_rows, python_rows = native_records_on_both_engines(uf.source("events", rows=rows).map(fn), spark)
        assert spark_rows == python_rows


def test_a_time_part_of_a_date_raises_pythons_type_error_on_both_engines():
    said = raised_on_both_engines(uf.source("events", rows=[{"id": 1, "ts": dt.date(2024, 1, 5)}]).map(minute_bucket))
    assert said[0] == said[1] and said[0].startswith("TypeError: "), said
