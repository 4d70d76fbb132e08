"""`x.quantize(exp, rounding)` of a Decimal runs natively (issue 29, item 3): Spark's decimal
of the exponent's scale holds Python's value with its places (`Decimal("1.5")` quantized to
two places is `Decimal("1.50")`, compared here by its text, not by `==`), rounded as each
of Python's roundings rounds; a result past 28 digits raises Python's InvalidOperation and
None Python's AttributeError. The one difference is the documented Decimal contract: Spark
has no negative zero."""

import decimal
from decimal import Decimal

import pytest

import udflow as uf
from udflow.analysis import analyze
from udflow.expr import Call, Field, Lit, evaluate
from tests.both_engines import native_records_on_both_engines, raised_on_both_engines
from tests.test_native_differential import native_error
from tests.frames import jvm_frame

pytestmark = pytest.mark.spark

CENTS, TENTHS, WHOLE, FINE = Decimal("0.01"), Decimal("0.1"), Decimal("1"), Decimal("0.0001")
ROUNDINGS = [None, decimal.ROUND_HALF_EVEN, decimal.ROUND_HALF_UP, decimal.ROUND_FLOOR, decimal.ROUND_CEILING,
             decimal.ROUND_DOWN, decimal.ROUND_UP]
VALUES = ["0.000", "1.005", "1.015", "1.025", "-1.005", "-1.015", "2.675", "-2.675", "9.995", "-9.995", "0.004",
          "123456.789", "-0.5", "0.5", "1.5", "2.5", "-2.5", "99999999999999.999"]
WIDE = ["9999999999999999999999999.995", "999999999999999999999999999.4", "9999999999999999999999999999.4",
        "9999999999999999999999999999.5", "-9999999999999999999999999999.5", "1.000"]


def text(value):
    """The value's text, its places included; a zero without its sign (the Decimal contract)."""
    return str(abs(value)) if isinstance(value, Decimal) and value.is_zero() else repr(value)


@pytest.fixture(scope="module")
def decimals(spark):
    from pyspark.sql.types import DecimalType, LongType, StructField, StructType

    def frame(values, precision, scale):
        rows = [(i, None if v is None else Decimal(v)) for i, v in enumerate(values)]
        schema = StructType([StructField("id", LongType(), False), StructField("x", DecimalType(precision, scale))])
        return rows, jvm_frame(spark, rows, schema)

    return {"narrow": frame(VALUES + [None], 17, 3), "wide": frame(WIDE, 31, 3)}


def outcome(term, x):
    try:
        return "value", evaluate(term, {"x": x})
    except Exception as exc:  # noqa: BLE001 - the error the native form must raise
        return "raises", f"{type(exc).__name__}: {exc}"


@pytest.mark.parametrize("exp", [CENTS, TENTHS, WHOLE, FINE])
@pytest.mark.parametrize("kind", ["narrow", "wide"])
def test_quantize_is_pythons_on_every_value_and_rounding(decimals, kind, exp):
    from pyspark.sql import functions as F

    from udflow.spark_backend.native import NativeLowering

    rows, frame = decimals[kind]
    lowering = NativeLowering(frame.schema, "m (t.py:1)")
    terms = [Call("decimal.quantize", (Field("x"), Lit(exp), Lit(r))) for r in ROUNDINGS]
    terms.append(Call("round", (Field("x"), Lit(-exp.as_tuple().exponent))))  # round(x, n): x.quantize(1E-n)
    columns = [F.expr(lowering.lower(t).sql) for t in terms]
    raising = set()
    for k, (term, column) in enumerate(zip(terms, columns)):
        expected = {i: outcome(term, x) for i, x in rows}
        fine = [i for i, (kind_, _) in expected.items() if kind_ == "value"]
        got = dict(frame.where(F.col("id").isin(fine)).select("id", column).collect())
        for i in fine:
            assert text(got[i]) == text(expected[i][1]), (term, rows[i], expected[i], got[i])
        for i, (kind_, words) in expected.items():
            if kind_ == "raises" and words not in raising:
                raising.add(words)
                assert words in native_error(frame, column, i), (term, rows[i], words)
    if kind == "narrow":
        assert "AttributeError: 'NoneType' object has no attribute 'quantize'" in raising
        assert "TypeError: type NoneType doesn't define __round__ method" in raising
    else:
        assert any(w.startswith("InvalidOperation") for w in raising), raising


def priced(r):
    return {**r, "total": (r["price"] * r["qty"]).quantize(CENTS, rounding=decimal.ROUND_HALF_UP),
            "rounded": r["price"].quantize(TENTHS)}


def half_down(r):
    return {**r, "total": r["price"].quantize(CENTS, rounding=decimal.ROUND_HALF_DOWN)}


ORDERS = [{"id": i, "price": Decimal(p), "qty": q} for i, (p, q) in
          enumerate([("1.005", 1), ("2.675", 3), ("-0.125", 2), ("19.990", 7), ("0.001", 1)])]


def test_a_flow_of_quantized_prices_runs_natively_with_pythons_records(spark):
    flow = uf.source("orders", rows=ORDERS).map(priced)
    spark_rows, python_rows = native_records_on_both_engines(flow, spark)
    assert [{k: text(v) for k, v in r.items()} for r in spark_rows] == \
        [{k: text(v) for k, v in r.items()} for r in python_rows]


def test_a_rounding_spark_lacks_is_pythons_call_and_a_number_has_no_quantize(spark):
    model = analyze(half_down, ["id", "price"]).model
    assert model is not None and "ROUND_HALF_DOWN" in str(model)
    flow = uf.source("orders", rows=ORDERS).map(half_down)
    assert flow.physical().root.python_terms or flow.physical().root.how != "native"
    assert [r["total"] for r in sorted(flow.collect(spark=spark), key=lambda r: r["id"])] == \
        [r["price"].quantize(CENTS, rounding=decimal.ROUND_HALF_DOWN) for r in ORDERS]
    said = raised_on_both_engines(uf.source("orders", rows=[{"id": 1, "price": 3, "qty": 1}]).map(priced))
    assert said[0] == said[1] and said[0].startswith("AttributeError: 'int' object has no attribute 'quantize'"), said
