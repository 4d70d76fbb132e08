"""A float NaN in a key is one value on every engine (`udflow.reference`, docstring).

Spark groups NaN keys together and matches NaN with NaN in a join; the reference
interpreter once grouped by Python's `==`, under which NaN equals nothing (each NaN
record a group of its own, or not, by object identity), so the two engines returned
different bags for the same flow.
"""

import math

import pytest

import udflow as uf

KEYED = [(1, math.nan, 1.0), (2, math.nan, 2.0), (3, 0.0, 3.0), (4, -0.0, 4.0), (5, None, 1.0), (6, None, 2.0)]


def per_key(rows):
    rows = list(rows)
    yield {"g": rows[0]["g"], "n": len(rows), "s": sum(r["v"] for r in rows)}


def both_sides(left, right):
    yield {"n": len(left) + len(right)}


def _bag(rows):
    """Records comparable as a bag: NaN as a string, -0.0 as 0.0 (a group's first record may be either)."""
    return sorted(repr({k: ("nan" if isinstance(v, float) and math.isnan(v) else v + 0.0 if isinstance(v, float) else v)
                        for k, v in r.items()}) for r in rows)


@pytest.mark.parametrize("native", [True, False])
def test_nan_keys_group_together_on_every_engine(spark, native):
    frame = spark.createDataFrame(KEYED, "k long, g double, v double")
    flow = uf.source("t", dataframe=frame).reduce(["g"], per_key)
    expected = _bag([{"g": math.nan, "n": 2, "s": 3.0}, {"g": 0.0, "n": 2, "s": 7.0}, {"g": None, "n": 2, "s": 3.0}])
    assert _bag(flow.collect(engine="reference")) == expected
    assert _bag(flow.collect(spark=spark, native=native)) == expected


def test_nan_keys_match_each_other_on_every_engine(spark):
    left = uf.source("l", dataframe=spark.createDataFrame([(1, math.nan), (2, -0.0), (3, None)], "a long, x double"))
    right = uf.source("r", dataframe=spark.createDataFrame([(1, math.nan), (2, 0.0), (3, None)], "b long, y double"))
    joined = left.match(right, on=("x", "y"))
    assert _bag(joined.collect(engine="reference")) == _bag(joined.collect(spark=spark))
    assert sorted(r["a"] for r in joined.collect(engine="reference")) == [1, 2]
    cogrouped = left.cogroup(right, on=("x", "y"), f=both_sides)
    assert sorted(r["n"] for r in cogrouped.collect(engine="reference")) == [2, 2, 2]
    assert sorted(r["n"] for r in cogrouped.collect(spark=spark)) == [2, 2, 2]
