"""`math.sqrt`, `math.fabs`, `math.floor` and `math.ceil` run natively (issue 29, item 3):
IEEE 754 rounds a square root correctly, and the others are exact, so Spark's value is
Python's on every row; Python's errors (None, a negative root, NaN or an infinity made an
int) are raised in Python's words; an int past 64 bits raises the documented guard."""

import math

import pytest

import udflow as uf
from udflow.expr import Call, Field, evaluate
from tests.test_native_differential import same

pytestmark = pytest.mark.spark

FLOATS = [0.0, -0.0, 1.5, -1.5, 2.5, -2.5, 4.0, 2.0, 1e-310, 1e308, float("nan"), float("inf"),
          float("-inf"), 2.0**53 + 2, 9.2e18, 2.0**63, -(2.0**63), -9.3e18, 123456789.987654321, None]
INTS = [0, 1, -1, 7, 2**53 + 1, 2**63 - 1, -(2**63), None]
BOOLS = [True, False, None]
NAMES = ("math.sqrt", "math.fabs", "math.floor", "math.ceil")


def outcome(name, value):
    try:
        return "value", evaluate(Call(name, (Field("x"),)), {"x": value})
    except Exception as exc:  # noqa: BLE001 - the error the native form must raise
        return "raises", f"{type(exc).__name__}: {exc}"


@pytest.fixture(scope="module")
def frames(spark):
    from pyspark.sql.types import BooleanType, DoubleType, LongType, StructField, StructType

    def frame(values, dtype):
        schema = StructType([StructField("id", LongType(), False), StructField("x", dtype, True)])
        return spark.createDataFrame(list(enumerate(values)), schema)

    return {"float": (FLOATS, frame(FLOATS, DoubleType())), "int": (INTS, frame(INTS, LongType())),
            "bool": (BOOLS, frame(BOOLS, BooleanType()))}


@pytest.mark.parametrize("family", ["float", "int", "bool"])
@pytest.mark.parametrize("name", NAMES)
def test_the_native_call_gives_pythons_value_or_error_on_every_row(frames, name, family):
    from pyspark.sql import functions as F

    from tests.test_native_differential import native_error
    from udflow.spark_backend.native import NativeLowering

    values, frame = frames[family]
    lowering = NativeLowering(frame.schema, "m (t.py:1)")  # no Python calls allowed: native or NotNative
    column = F.expr(lowering.lower(Call(name, (Field("x"),))).sql)
    expected = {i: outcome(name, v) for i, v in enumerate(values)}
    fine = [i for i, (kind, v) in expected.items() if kind == "value" and not _past_64_bits(v)]
    got = {r["id"]: r["y"] for r in frame.where(F.col("id").isin(fine)).select("id", column.alias("y")).collect()}
    for i in fine:
        assert same(expected[i][1], got[i]), (name, values[i], expected[i][1], got[i])
    # one row per distinct error (a Spark job each): Python's, and past 64 bits the guard's
    raising = {text: i for i, (kind, text) in reversed(expected.items()) if kind == "raises"}
    raising.update({"int overflow past 64 bits": i for i, (kind, v) in expected.items()
                    if kind == "value" and _past_64_bits(v)})
    for text, i in raising.items():
        error = native_error(frame, column, i)
        assert text in error, (name, values[i], text, error[:300])


def _past_64_bits(value) -> bool:
    return isinstance(value, int) and not -(2**63) <= value < 2**63


def rooted(r):
    return {**r, "root": math.sqrt(r["area"]), "whole": math.floor(r["price"]), "up": math.ceil(r["price"]),
            "size": math.fabs(r["delta"])}


def test_a_function_of_math_calls_runs_natively_with_pythons_records(spark):
    rows = [{"area": 2.0, "price": 9.99, "delta": -0.5}, {"area": 0.0, "price": -0.01, "delta": -0.0}]
    flow = uf.source("t", rows=rows).map(rooted)
    assert flow.physical().root.describe() == "native"
    got, expected = flow.collect(spark=spark), flow.collect(engine="reference")
    key = lambda r: r["area"]  # noqa: E731
    for a, b in zip(sorted(got, key=key), sorted(expected, key=key)):
        assert a.keys() == b.keys() and all(same(b[f], a[f]) for f in a)


def test_a_negative_root_raises_pythons_value_error_on_spark(spark):
    flow = uf.source("t", rows=[{"area": -4.0, "price": 1.0, "delta": 1.0}]).map(rooted)
    with pytest.raises(uf.UdfRuntimeError, match="raised ValueError: math domain error"):
        flow.collect(spark=spark)
