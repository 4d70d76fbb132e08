"""`math.isclose(a, b, rel_tol=..., abs_tol=...)` and `np.isnan(x)` run natively (issue 29,
item 3): each is a few IEEE operations that the JVM and C compute alike, so Spark's value is
Python's on every row, NaN, the infinities, -0.0 and the largest doubles included; None
raises Python's (or numpy's) TypeError. A tolerance Python refuses, or one that is not a
finite constant, keeps the call out of the model: Python runs it, and raises as Python."""

import itertools
import math

import numpy as np
import pytest

import udflow as uf
from udflow.expr import Call, Field, Lit, evaluate
from tests.both_engines import native_records_on_both_engines, raised_on_both_engines
from tests.test_native_differential import native_error, same
from tests.frames import jvm_frame

pytestmark = pytest.mark.spark

NAN, INF = float("nan"), float("inf")
FLOATS = [0.0, -0.0, 1.0, 1.0 + 1e-10, 1.005, 1.011, -1.0, 100.0, 101.0, NAN, INF, -INF, 1e308, -1e308,
          5e-324, 2.0**53, 2.0**53 + 2]
INTS = [0, 1, -1, 100, 101, 2**53 + 1, 2**63 - 1, -(2**63)]
# (rel_tol, abs_tol): the defaults, an absolute one, both, a relative one past 1
TOLERANCES = [(1e-09, 0.0), (0.0, 0.5), (0.05, 1.0), (2.5, 0.0)]


@pytest.fixture(scope="module")
def pairs(spark):
    from pyspark.sql.types import DoubleType, LongType, StructField, StructType

    def frame(a_values, b_values, a_type, b_type):
        rows = [(i, a, b) for i, (a, b) in enumerate(itertools.product(a_values, b_values))]
        schema = StructType([StructField("id", LongType(), False), StructField("a", a_type, True),
                             StructField("b", b_type, True)])
        return rows, jvm_frame(spark, rows, schema)

    return {"floats": frame(FLOATS + [None], FLOATS + [None], DoubleType(), DoubleType()),
            "mixed": frame(INTS + [None], FLOATS, LongType(), DoubleType())}


def outcome(term, row: dict):
    try:
        return "value", evaluate(term, row)
    except Exception as exc:  # noqa: BLE001 - the error the native form must raise
        return "raises", f"{type(exc).__name__}: {exc}"


def check_every_row(rows, frame, term):
    """The native form of `term` over `frame`'s a and b: Python's value on every row that
    has one, and Python's error on a row of each distinct error."""
    from pyspark.sql import functions as F

    from udflow.spark_backend.native import NativeLowering

    lowering = NativeLowering(frame.schema, "m (t.py:1)")  # no Python calls allowed: native or NotNative
    column = F.expr(lowering.lower(term).sql)
    expected = {i: outcome(term, {"a": a, "b": b}) for i, a, b in rows}
    fine = [i for i, (kind, _) in expected.items() if kind == "value"]
    got = {r["id"]: r["y"] for r in frame.where(F.col("id").isin(fine)).select("id", column.alias("y")).collect()}
    for i, (kind, value) in expected.items():
        if kind == "value":
            assert same(value, got[i]), (term, rows[i], value, got[i])
    raising = {text: i for i, (kind, text) in reversed(expected.items()) if kind == "raises"}
    assert raising, "the rows hold a None: Python raises on them"
    for text, i in raising.items():
        assert text in native_error(frame, column, i), (term, rows[i], text)


@pytest.mark.parametrize("rel_tol,abs_tol", TOLERANCES)
@pytest.mark.parametrize("kind", ["floats", "mixed"])
def test_isclose_is_pythons_on_every_pair(pairs, kind, rel_tol, abs_tol):
    rows, frame = pairs[kind]
    check_every_row(rows, frame, Call("math.isclose", (Field("a"), Field("b"), Lit(rel_tol), Lit(abs_tol))))


@pytest.mark.parametrize("kind", ["floats", "mixed"])
def test_numpy_isnan_is_numpys_value_and_error(pairs, kind):
    rows, frame = pairs[kind]
    check_every_row(rows, frame, Call("numpy.isnan", (Field("a"),)))


TOLERANCE = 0.01


def close_to_forecast(r):
    return math.isclose(r["actual"], r["forecast"], rel_tol=TOLERANCE)


def flagged(r):
    return {**r, "near": math.isclose(r["actual"], r["forecast"], abs_tol=0.5),
            "missing": bool(np.isnan(r["actual"]))}


def measured(r):
    return not np.isnan(r["actual"])


READINGS = [{"id": i, "actual": a, "forecast": f} for i, (a, f) in enumerate(
    [(100.0, 100.5), (100.0, 102.0), (NAN, 1.0), (INF, INF), (-0.0, 0.0), (1e308, -1e308), (3.0, 3.4)])]


@pytest.mark.parametrize("build", [lambda s: s.filter(close_to_forecast), lambda s: s.map(flagged),
                                   lambda s: s.filter(measured)])
def test_a_flow_of_isclose_and_isnan_runs_natively_with_pythons_records(spark, build):
    flow = build(uf.source("readings", rows=READINGS))
    spark_rows, python_rows = native_records_on_both_engines(flow, spark)
    assert [r["id"] for r in spark_rows] == [r["id"] for r in python_rows]
    for got, wanted in zip(spark_rows, python_rows):
        assert got.keys() == wanted.keys() and all(same(wanted[k], got[k]) for k in wanted), (got, wanted)


def negative_tolerance(r):
    return math.isclose(r["actual"], r["forecast"], rel_tol=-0.1)


def positional_tolerance(r):
    return math.isclose(r["actual"], r["forecast"], 0.1)


@pytest.mark.parametrize("fn", [negative_tolerance, positional_tolerance])
def test_a_call_python_refuses_has_no_model_and_raises_pythons_error_on_both_engines(fn):
    props = uf.analyze(fn, ["actual", "forecast"], kind="filter")
    assert props.model is None
    said = raised_on_both_engines(uf.source("readings", rows=READINGS).filter(fn))
    assert said[0] == said[1] and said[0].startswith(("ValueError", "TypeError")), said


def test_a_none_raises_pythons_type_error_on_both_engines():
    rows = READINGS + [{"id": 99, "actual": None, "forecast": 1.0}]
    said = raised_on_both_engines(uf.source("readings", rows=rows).filter(close_to_forecast))
    assert said[0] == said[1] and said[0].startswith("TypeError: must be real number"), said
