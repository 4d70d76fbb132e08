"""What the coverage corpus (`bench/coverage.py`) found where Spark and Python differed,
each now the same on both engines or refused with a named error."""

import datetime as dt
import decimal
from datetime import date

import pytest

import udflow as uf

pytestmark = pytest.mark.spark


def flag_text(r):
    return {**r, "text": str(r["active"]), "said": f"active={r['active']}"}


def test_str_of_a_none_bool_is_none_natively(spark):
    rows = [{"k": 1, "active": True}, {"k": 2, "active": False}, {"k": 3, "active": None}]
    flow = uf.source("t", rows=rows).map(flag_text)
    assert flow.physical().root.native
    got = sorted(flow.collect(spark=spark), key=lambda r: r["k"])
    assert got == sorted(flow.collect(engine="reference"), key=lambda r: r["k"])
    assert [r["text"] for r in got] == ["True", "False", "None"]


def cancelled(r):
    return {**r, "refund": r["amount"] * 0 * -1}  # Decimal('1.50') * 0 * -1 is Decimal('-0.00')


def test_a_negative_zero_decimal_is_zero_on_spark_equal_to_pythons_as_the_contract_says(spark):
    """docs/native.md: Spark's decimals have no negative zero; the values are equal in Python
    (==, <, hash), only their str() and float() show the sign."""
    rows = [{"k": 1, "amount": decimal.Decimal("1.50")}, {"k": 2, "amount": decimal.Decimal("-0.00")}]
    flow = uf.source("t", rows=rows).map(cancelled)
    expected = sorted(flow.collect(engine="reference"), key=lambda r: r["k"])
    got = sorted(flow.collect(spark=spark), key=lambda r: r["k"])
    assert str(expected[0]["refund"]) == "-0.00" and str(got[0]["refund"]) == "0.00"
    assert got == expected and [hash(r["refund"]) for r in got] == [hash(r["refund"]) for r in expected]


def shipped_in_q1_1996(r):
    return date(1996, 1, 1) <= r["shipped"] < date(1996, 4, 1)  # the README's own example


def after_noon(r):
    return r["at"] >= dt.datetime(2000, 1, 1, 12)


def open_order(r):
    return r["status"] in {"paid", "shipped", 1}


def impossible_day(r):
    return r["shipped"] < date(2023, 2, 30)


DAYS = [{"k": i, "shipped": date(1995, 12, 30) + dt.timedelta(days=20 * i), "at": dt.datetime(2000, 1, 1, 11 + i),
         "status": s} for i, s in enumerate(["paid", "new", None, "shipped", "1", "PAID"])]


@pytest.mark.parametrize("fn", [shipped_in_q1_1996, after_noon, open_order], ids=lambda f: f.__name__)
def test_dates_built_in_the_function_and_set_literals_run_natively(spark, fn):
    flow = uf.source("t", rows=DAYS).filter(fn)
    assert flow.physical().root.native
    assert sorted(r["k"] for r in flow.collect(spark=spark)) == sorted(r["k"] for r in flow.collect(engine="reference"))


def test_a_date_python_cannot_build_stays_python_and_raises_there(spark):
    flow = uf.source("t", rows=DAYS).filter(impossible_day)
    assert flow.physical().root.in_python
    with pytest.raises(uf.UdfRuntimeError, match="ValueError: day is out of range for month"):
        flow.collect(spark=spark)
