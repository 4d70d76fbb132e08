"""`round(x, n)` of a float runs natively and gives Python's value on every row (issue 29,
item 3): Python rounds the exact binary value half to even (round(2.675, 2) is 2.67, where
Spark's `bround` of the decimal text gives 2.68). The native form rounds x * 10**n with
`rint` where that product is clearly off a tie, and hands the rows near a tie to Python
(`native_math.lower_round_to`)."""

import math
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import udflow as uf
from udflow.errors import UdfRuntimeError

pytestmark = pytest.mark.spark

DIGITS = (-2, -1, 0, 1, 2, 3, 6)
EDGES = [2.675, 2.665, 1.005, 0.125, 0.375, -2.675, -0.001, 0.0, -0.0, 1e300, -1e300, 1e16, 123456.785,
         math.nan, math.inf, -math.inf, 2.5, 3.5, 1234.5, -1234.5, 0.1, 5e-324, 4503599627370495.5, 1.15,
         1.25, 1.35, 2.0**52, 2.0**53 + 2, 17.0, 0.5, -0.5, 1e-7, 9.995, 99.995, 0.045, 250.0, 150.0]


def rounded(r):
    x = r["x"]
    return {"i": r["i"], "m2": round(x, -2), "m1": round(x, -1), "z": round(x, 0), "d1": round(x, 1),
            "d2": round(x, 2), "d3": round(x, 3), "d6": round(x, 6)}


def _check(spark, values):
    rows = [{"i": i, "x": v} for i, v in enumerate(values)]
    flow = uf.source("t", rows=rows).map(rounded)
    assert flow.physical().root.describe().startswith("native, with Python for round")  # near a tie
    got = {r["i"]: r for r in flow.collect(engine="spark", spark=spark)}
    for row in rows:
        want = rounded(row)
        # repr: -0.0 is not 0.0, nan is nan
        assert {k: repr(v) for k, v in got[row["i"]].items()} == {k: repr(v) for k, v in want.items()}, row


def test_round_with_digits_is_pythons_on_ties_and_edges(spark):
    generated = random.Random(29)
    near_ties = [k / 1000 + 0.0005 for k in range(-2000, 2000, 7)]  # x.xxx5: a tie in the text only
    three_places = [round(generated.uniform(-1e4, 1e4), 3) for _ in range(800)]
    _check(spark, EDGES + near_ties + three_places)


@settings(max_examples=6, deadline=None, derandomize=True, suppress_health_check=list(HealthCheck))
@given(st.lists(st.floats(allow_nan=True, allow_infinity=True), min_size=100, max_size=300))
def test_round_with_digits_is_pythons_on_any_float(spark, values):
    _check(spark, values)


def test_round_of_none_raises_pythons_type_error(spark):
    flow = uf.source("t", rows=[{"i": 0, "x": None}]).map(lambda r: {"y": round(r["x"], 2)})
    with pytest.raises(UdfRuntimeError, match="TypeError: type NoneType doesn't define __round__ method"):
        flow.collect(engine="spark", spark=spark)


def test_round_of_an_int_with_digits_is_the_int(spark):
    rows = [{"n": 7}, {"n": -(2**63)}, {"n": 0}]
    flow = uf.source("t", rows=rows).map(lambda r: {"y": round(r["n"], 2)})
    got = sorted((r["y"], type(r["y"])) for r in flow.collect(engine="spark", spark=spark))
    assert got == sorted((round(r["n"], 2), int) for r in rows)


def basket(r):
    return {"avg": round(r["revenue"] / r["orders"], 2) if r["orders"] else 0.0}


def test_a_divisor_a_condition_proves_non_zero_never_raises_where_the_rows_are_told_apart(spark):
    """The flag handing Python the rows near a tie is computed on every row, where `orders`
    may be 0: lowered knowing nothing the condition proves (`on_every_row`), it would carry a
    zero guard, so the call runs as Python whole instead of raising Spark's DIVIDE_BY_ZERO."""
    rows = [{"revenue": 10.0, "orders": 3}, {"revenue": 5.0, "orders": 0}, {"revenue": 2.675, "orders": 1}]
    flow = uf.source("t", rows=rows).map(basket)
    assert sorted(map(repr, flow.collect(engine="spark", spark=spark))) == sorted(map(repr, map(basket, rows)))


def test_round_of_an_int_or_a_bool_to_tens_is_half_to_even_and_past_the_longs_python(spark):
    ints = [{"n": n} for n in (25, 35, -25, -35, 5, 0, 9223372036854775800, -9223372036854775800)]
    tens = uf.source("t", rows=ints).map(lambda r: {"y": round(r["n"], -1), "h": round(r["n"], -2)})
    assert sorted(r["y"] for r in tens.collect(engine="spark", spark=spark)) == sorted(round(r["n"], -1) for r in ints)
    bools = uf.source("t", rows=[{"b": True}, {"b": False}]).map(lambda r: {"y": round(r["b"], -1), "z": round(r["b"], 1)})
    assert sorted(map(repr, bools.collect(engine="spark", spark=spark))) == ["{'y': 0, 'z': 0}", "{'y': 0, 'z': 1}"]
