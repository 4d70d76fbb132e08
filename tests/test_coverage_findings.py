"""What the coverage corpus (`bench/coverage.py`) found where Spark and Python differed,
each now the same on both engines or refused with a named error."""

import decimal

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
