"""One meaning for datetimes and numbers on both engines (issue 29, item 5).

A naive `datetime` stays naive on Spark (a TIMESTAMP_NTZ column), so what a function
compares, subtracts or reads of it is what the reference interpreter sees; an aware one is
an instant (a TIMESTAMP column), given back in UTC. A field holding ints on some records
and floats on others is returned exactly where no column is needed, and refused with a
named error where one is (a double column would give the ints back as floats)."""

import datetime as dt
import re

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import udflow as uf
from udflow.errors import UdflowError

NAIVE = [{"k": 1, "at": dt.datetime(1999, 5, 1, 12, 30)}, {"k": 2, "at": dt.datetime(2001, 1, 1)},
         {"k": 3, "at": None}]
UTC = dt.timezone.utc


def before_2000(r):
    return r["at"] is not None and r["at"] < dt.datetime(2000, 1, 1)


def since_1990(r):
    return {**r, "secs": (r["at"] - dt.datetime(1990, 1, 1)).total_seconds() if r["at"] is not None else None}


def hour_of(r):
    return {**r, "h": r["at"].hour if r["at"] else -1}


def by_key(rows):
    return sorted(rows, key=lambda r: r["k"])


def typed(rows):
    """Records with each value's type, so that 1 and 1.0, or a naive and an aware datetime, differ."""
    return [{f: (type(v).__name__, v, getattr(v, "tzinfo", None)) for f, v in r.items()} for r in by_key(rows)]


@pytest.mark.parametrize("build", [lambda f: f.filter(before_2000), lambda f: f.map(since_1990),
                                   lambda f: f.map(hour_of)], ids=["compare", "subtract", "hour"])
def test_naive_datetimes_stay_naive_on_spark(spark, build):
    flow = build(uf.source("t", rows=NAIVE))
    expected = flow.collect(engine="reference")
    assert typed(flow.collect(spark=spark)) == typed(expected)


def test_a_naive_timestamp_column_of_parquet_reads_naive(spark, tmp_path):
    path = str(tmp_path / "t.parquet")
    pq.write_table(pa.table({"k": [1, 2], "at": pa.array([dt.datetime(1999, 5, 1, 12), None], pa.timestamp("us"))}),
                   path)
    flow = uf.source("t", path=path).filter(before_2000)
    assert typed(flow.collect(spark=spark)) == typed(flow.collect(engine="reference"))


def test_an_aware_utc_datetime_comes_back_as_the_same_instant_in_utc(spark):
    rows = [{"k": 1, "at": dt.datetime(1999, 5, 1, 12, 30, tzinfo=UTC)}]
    (got,) = uf.source("t", rows=rows).map(hour_of).collect(spark=spark)
    assert got["at"] == rows[0]["at"] and got["at"].utcoffset() == dt.timedelta(0) and got["h"] == 12


def test_an_aware_datetime_in_another_zone_is_refused_naming_the_field(spark):
    plus2 = dt.timezone(dt.timedelta(hours=2))
    flow = uf.source("t", rows=[{"k": 1, "at": dt.datetime(1999, 5, 1, 12, tzinfo=plus2)}]).map(hour_of)
    with pytest.raises(UdflowError, match=r"field 'at' holds an aware datetime at UTC\+0200.*astimezone"):
        flow.collect(spark=spark)


def test_naive_and_aware_datetimes_in_one_field_are_refused_for_both_engines():
    rows = [{"k": 1, "at": dt.datetime(1999, 5, 1)}, {"k": 2, "at": dt.datetime(1999, 5, 1, tzinfo=UTC)}]
    with pytest.raises(UdflowError, match="field 'at' holds naive and aware datetimes"):
        uf.source("t", rows=rows)


def test_naive_and_aware_datetime_keys_are_refused_as_python_never_matches_them():
    left = uf.source("l", rows=[{"lk": dt.datetime(2000, 1, 1), "a": 1}])
    right = uf.source("r", rows=[{"rk": dt.datetime(2000, 1, 1, tzinfo=UTC), "b": 2}])
    with pytest.raises(UdflowError, match="timestamp"):
        left.match(right, on=("lk", "rk"))


def test_ints_and_floats_in_one_source_field_are_refused_for_both_engines_not_turned_into_floats():
    with pytest.raises(UdflowError, match=re.escape("field 'x' holds ints and floats (1 and 2.5)")):
        uf.source("t", rows=[{"k": 1, "x": 1}, {"k": 2, "x": 2.5}])


def test_a_source_of_another_kind_with_ints_and_floats_in_one_field_is_refused_on_spark(spark):
    """A sample of a Python operator's output typed into columns: the same refusal, named."""
    from udflow.spark_backend.schema import unify

    with pytest.raises(UdflowError, match=re.escape("Map(f): field 'x' holds ints and floats (1 and 2.5)")):
        unify("Map(f)", "x", [1, 2.5])


def halved_when_odd(r):
    return {"k": r["k"], "y": r["k"] / 2 if str(r["k"]).center(1) in ("1", "3") else r["k"]}  # center: Python


def halved_when_odd_natively(r):
    return {"k": r["k"], "y": r["k"] / 2 if r["k"] % 2 else r["k"]}


def test_a_native_field_of_ints_and_floats_comes_back_exactly(spark):
    flow = uf.source("t", rows=[{"k": k} for k in range(1, 5)]).map(halved_when_odd_natively)
    assert flow.physical().root.native
    assert typed(flow.collect(spark=spark)) == typed(flow.collect(engine="reference"))


def test_a_python_field_of_ints_and_floats_comes_back_exactly_or_is_refused_where_a_column_is_needed(spark):
    flow = uf.source("t", rows=[{"k": k} for k in range(1, 5)]).map(halved_when_odd)
    assert flow.physical().root.in_python
    expected = flow.collect(engine="reference")
    assert typed(flow.collect(spark=spark)) == typed(expected)  # pickled records: no column needed
    with pytest.raises(UdflowError, match="field 'y' holds ints and floats"):
        flow.to_spark(spark=spark).collect()
