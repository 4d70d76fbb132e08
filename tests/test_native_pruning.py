"""A field no later operator reads is still computed where computing it raises (issue 12,
item 4: where Python raises, udflow raises).

Catalyst drops a column no operator above reads, and with it the `raise_error` or the
Python UDF call that computes it; the Python function, run record by record, raises
whether or not anything reads what it returned. The native lowering therefore makes
every field that may raise (and every Python UDF column) read by a filter of its own
operator, which Catalyst cannot drop.

Also `collect(fields=...)`: only the named fields come back, and Spark prunes what
computes only the others (down to the columns a scan reads), but never an error.
"""

import re

import pytest

import udflow as uf
from udflow.errors import FlowConstructionError, UdfRuntimeError

ROWS = [{"k": i % 3, "d": i % 4, "s": None if i == 5 else f"w{i}", "v": i} for i in range(12)]


def divided(r):
    return {**r, "x": 12 // r["d"]}  # ZeroDivisionError where d == 0


def overwritten(r):
    return {**r, "x": 0}


def key_only(r):
    return {"k": r["k"]}


def titled(r):
    return {**r, "t": r["s"].title()}  # str.title: Python (a scalar UDF); None raises


def dropped_t(r):
    return {"k": r["k"], "v": r["v"]}


def total_v(rows):
    rows = list(rows)
    yield {"k": rows[0]["k"], "total": sum(r["v"] for r in rows)}


def _raises_like_python(flow, spark, **kwargs):
    with pytest.raises(UdfRuntimeError):
        flow.collect(engine="reference", **kwargs)
    with pytest.raises(UdfRuntimeError) as raised:
        flow.collect(spark=spark, **kwargs)
    return str(raised.value)


@pytest.mark.parametrize("above", [overwritten, key_only], ids=["overwritten", "dropped"])
def test_a_raising_field_a_later_map_drops_still_raises(spark, above):
    flow = uf.source("t", rows=ROWS).map(divided).map(above)
    said = _raises_like_python(flow, spark)
    assert "divided" in said and "ZeroDivisionError" in said


def test_a_raising_field_a_reduce_does_not_read_still_raises(spark):
    flow = uf.source("t", rows=ROWS).map(divided).reduce(["k"], total_v)
    assert "ZeroDivisionError" in _raises_like_python(flow, spark)


def summed_quotients(rows):
    rows = list(rows)
    yield {"k": rows[0]["k"], "q": sum(12 // r["d"] for r in rows)}


def quotient_of_pair(a, b):
    return {"k": a["k"], "q": a["v"] // b["w"]}


def test_a_raising_aggregate_a_later_map_drops_still_raises(spark):
    flow = uf.source("t", rows=ROWS).reduce(["k"], summed_quotients).map(key_only)
    assert "ZeroDivisionError" in _raises_like_python(flow, spark)


def test_a_raising_field_of_a_match_function_a_later_map_drops_still_raises(spark):
    other = uf.source("o", rows=[{"k2": i, "w": i % 2} for i in range(3)])
    flow = uf.source("t", rows=ROWS).match(other, on=("k", "k2"), f=quotient_of_pair).map(key_only)
    assert "ZeroDivisionError" in _raises_like_python(flow, spark)


def test_a_python_udf_column_a_later_map_drops_still_runs(spark):
    flow = uf.source("t", rows=ROWS).map(titled).map(dropped_t)
    assert "AttributeError" in _raises_like_python(flow, spark)


def test_a_raising_field_left_out_of_collect_fields_still_raises(spark):
    flow = uf.source("t", rows=ROWS).map(divided)
    assert "ZeroDivisionError" in _raises_like_python(flow, spark, fields=["k", "v"])


def test_collect_fields_returns_those_fields_in_order(spark):
    flow = uf.source("t", rows=[r for r in ROWS if r["d"]]).map(divided)
    want = [{"v": r["v"], "x": r["x"]} for r in flow.collect(engine="reference")]
    for native in (True, False):
        got = flow.collect(spark=spark, native=native, fields=("v", "x"))
        assert sorted(got, key=lambda r: r["v"]) == sorted(want, key=lambda r: r["v"])
        assert all(list(r) == ["v", "x"] for r in got)
    assert flow.to_spark(spark, fields=["x", "k"]).columns == ["x", "k"]


@pytest.mark.parametrize("fields", [["k", "nope"], ["k", "k"], []])
def test_collect_fields_refuses_unknown_or_repeated_fields(spark, fields):
    flow = uf.source("t", rows=ROWS).map(key_only)
    with pytest.raises(FlowConstructionError, match="fields="):
        flow.collect(spark=spark, fields=fields)


def test_q15_on_its_select_list_hash_aggregates_and_reads_four_lineitem_columns(spark, tpch_dir):
    """Q15 copies a whole lineitem record into each result (`{**rows[0], ...}`): taking one
    record needs `first(struct(...))`, which Spark only sort-aggregates, over every column of
    lineitem. On the select list, Spark drops the copy: a hash aggregate over the four
    columns the query reads."""
    from examples import tpch_q15

    flow = uf.optimize(tpch_q15.build_flow(tpch_dir)).chosen.flow
    df = flow.to_spark(spark, fields=tpch_q15.SELECT_LIST)
    plan = df._jdf.queryExecution().executedPlan().toString()
    assert "SortAggregate" not in plan and "HashAggregate" in plan
    scan = next(line for line in plan.splitlines() if "FileScan parquet" in line and "l_shipdate" in line)
    read = scan[scan.index("ReadSchema: struct<") + len("ReadSchema: struct<"):].split(">")[0]
    assert sorted(re.findall(r"(\w+):", read)) == [
        "l_discount", "l_extendedprice", "l_shipdate", "l_suppkey"]
    full = flow.to_spark(spark)._jdf.queryExecution().executedPlan().toString()
    assert "l_comment" in full  # the whole record, when it is asked for


@pytest.mark.parametrize("column", [
    "CASE WHEN id = 2 THEN raise_error('boom') ELSE id END",  # nullable: read through isnull
    "coalesce(CASE WHEN id = 2 THEN raise_error('boom') ELSE id END, 0)",  # never null: hashed
], ids=["nullable", "never-null"])
def test_always_computed_keeps_a_raising_column_nothing_reads(spark, column):
    from pyspark.errors import PySparkException

    from udflow.spark_backend.native_ops import always_computed

    df = spark.range(4).selectExpr("id", f"{column} AS x")
    assert df.select("id").count() == 4  # without it, Catalyst drops x and nothing raises
    with pytest.raises(PySparkException, match="boom"):
        always_computed(df, ["x"]).select("id").collect()
    assert always_computed(df.where("id != 2"), ["x"]).select("id").count() == 3
