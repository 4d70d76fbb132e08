"""A date or naive datetime moved by a timedelta of a computed int, `d + timedelta(days=r["n"])`
(`Call('timedelta', (unit, n))`, `native_dates.moved_by`), natively: Python's value on every
row (a date moved by whole days only, `td.days` floored), Python's errors in Python's order
(the constructor's TypeError for a None amount, then the operator's for a None date, then
OverflowError out of years 1 to 9999); a move longer than the dates span runs in Python,
whose own OverflowError names the value."""

import itertools
from datetime import date, datetime, timedelta

import pytest

import udflow as uf
from udflow.expr import Arith, Call, Field, Lit
from tests.both_engines import raised_on_both_engines
from tests.test_native_closeness import check_every_row

pytestmark = pytest.mark.spark

DATES = [date(2000, 1, 1), date(1, 1, 1), date(9999, 12, 31), date(2024, 2, 29), None]
MOMENTS = [datetime(2000, 1, 1, 12, 30), datetime(1, 1, 1), datetime(9999, 12, 31, 23, 59, 59, 999999), None]
AMOUNTS = [0, 1, -1, 23, 24, -25, 1439, -86401, 3000, 10**5, -(10**5), None]  # each within the native bound
UNITS = ("days", "seconds", "minutes", "hours", "weeks")


@pytest.fixture(scope="module")
def frames(spark):
    from pyspark.sql.types import DateType, LongType, StructField, StructType, TimestampNTZType

    def frame(moments, dtype):
        rows = [(i, a, b) for i, (a, b) in enumerate(itertools.product(moments, AMOUNTS))]
        schema = StructType([StructField("id", LongType(), False), StructField("a", dtype, True),
                             StructField("b", LongType(), True)])
        return rows, spark.createDataFrame(rows, schema)

    return {"date": frame(DATES, DateType()), "datetime": frame(MOMENTS, TimestampNTZType())}


# every unit subtracted (a date keeps the day of `- timedelta(hours=1)`, floors `- timedelta(hours=-1)`),
# and the two ways of adding one
FORMS = [(unit, "-", False) for unit in UNITS] + [("hours", "+", False), ("days", "+", True)]


@pytest.mark.parametrize("unit,op,first", FORMS)
@pytest.mark.parametrize("family", ["date", "datetime"])
def test_a_move_by_a_computed_timedelta_is_pythons_on_every_row(frames, family, unit, op, first):
    rows, frame = frames[family]
    delta = Call("timedelta", (Lit(unit), Field("b")))
    term = Arith(op, delta, Field("a")) if first else Arith(op, Field("a"), delta)
    check_every_row(rows, frame, term)


def renewal(r):
    return {**r, "renews": r["start"] + timedelta(days=r["term_days"]), "reminder": r["start"] - timedelta(weeks=1)}


def from_epoch(r):
    return {**r, "ts": datetime(1970, 1, 1) + timedelta(seconds=r["epoch_s"])}


CONTRACTS = [{"id": i, "start": date(2024, 1, 1) + timedelta(days=i * 37), "term_days": n,
              "epoch_s": n * 86_400 + i} for i, n in enumerate([0, 30, 365, -10, 1000, 2_000_000])]


@pytest.mark.parametrize("fn", [renewal, from_epoch])
def test_a_flow_moving_dates_by_a_field_runs_natively_with_pythons_records(spark, fn):
    flow = uf.source("contracts", rows=CONTRACTS).map(fn)
    step = flow.physical().root
    assert step.how == "native" and not step.python_terms, step
    by_id = lambda rows: sorted(rows, key=lambda r: r["id"])  # noqa: E731
    assert by_id(flow.collect(spark=spark)) == by_id(flow.collect(engine="reference"))


@pytest.mark.parametrize("n,words", [(10**9, "OverflowError: days=1000000000; must have magnitude <= 999999999"),
                                     (4_000_000, "OverflowError: date value out of range"),
                                     (-(2**63), "OverflowError: Python int too large to convert to C int"),
                                     (None, "TypeError: unsupported type for timedelta days component: NoneType")])
def test_a_move_past_the_dates_raises_pythons_own_error_on_both_engines(n, words):
    rows = CONTRACTS[:3] + [{**CONTRACTS[3], "term_days": n}]
    said = raised_on_both_engines(uf.source("contracts", rows=rows).map(renewal))
    assert said == [f"{words} (line {renewal.__code__.co_firstlineno + 1})"] * 2, said


def test_a_timedelta_of_a_float_or_of_two_units_has_no_native_form(spark):
    def fractional(r):
        return {**r, "t": r["start"] + timedelta(days=r["term_days"] / 2)}

    def two_units(r):
        return {**r, "t": r["start"] + timedelta(days=r["term_days"], hours=1)}

    flow = uf.source("c", rows=CONTRACTS[:5]).map(fractional)  # a float amount: Python's fallback, its values
    with pytest.raises(Exception, match="timedelta of a float"):
        from udflow.spark_backend.native import NativeLowering
        from pyspark.sql.types import DateType, DoubleType, StructField, StructType
        NativeLowering(StructType([StructField("a", DateType()), StructField("b", DoubleType())]), "m (t.py:1)").lower(
            Arith("+", Field("a"), Call("timedelta", (Lit("days"), Field("b")))))
    by_id = lambda rows: sorted(rows, key=lambda r: r["id"])  # noqa: E731
    assert by_id(flow.collect(spark=spark)) == by_id(flow.collect(engine="reference"))
    assert uf.analyze(two_units, ["start", "term_days"]).model is None
