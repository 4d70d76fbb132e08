"""What a session remembers between lowerings, and `select_expr`'s single round trip
(`udflow/spark_backend/memo.py`)."""

from __future__ import annotations

import re

import pytest

import udflow as uf
from udflow.spark_backend import memo

ROWS = [{"k": i % 3, "s": ["a b", " Done ", None, "ÉTÉ"][i % 4], "t": f"2025-0{1 + i % 9}-0{1 + i % 7}"}
        for i in range(24)]


def lowered(r):
    return {**r, "low": r["s"].title() if r["s"] is not None else None}


def _month(text):
    try:
        return int(text[5:7])
    except (TypeError, ValueError) as exc:  # noqa: F841 - the error bound: no model, a helper call
        return None


def with_month(r):
    return {**r, "m": _month(r["t"])}


def test_a_table_keeps_the_most_recently_used_answers_up_to_its_limit(monkeypatch):
    class Session:  # the memory needs nothing of Spark's
        pass

    monkeypatch.setattr(memo, "LIMIT", 2)
    session, made = Session(), []

    def answer(key):
        return memo.remembered(session, "t", key, lambda: made.append(key) or key * 10)

    assert [answer(1), answer(2), answer(1)] == [10, 20, 10] and made == [1, 2]
    answer(3)  # over the limit: 2, the least recently used, is dropped, 1 kept
    assert answer(1) == 10 and made == [1, 2, 3]
    assert answer(2) == 20 and made == [1, 2, 3, 2]


@pytest.mark.spark
def test_select_expr_is_select_expr_in_two_round_trips(spark, monkeypatch):
    from py4j.clientserver import ClientServerConnection

    df = spark.createDataFrame([(1, "x"), (None, "y,z")], "a BIGINT, `odd\x00name` STRING")
    exprs = [f"a + {i} AS c{i}" for i in range(30)] + ["'.' AS dot"]
    expected = df.selectExpr(*exprs)
    sent = []
    original = ClientServerConnection.send_command
    monkeypatch.setattr(ClientServerConnection, "send_command", lambda self, c: sent.append(c) or original(self, c))
    memo.select_expr(df, ["a"])  # the splitter, looked up once per session
    sent.clear()
    got = memo.select_expr(df, exprs)
    assert len(sent) == 2
    monkeypatch.undo()
    assert got.schema == expected.schema and got.collect() == expected.collect()
    odd = memo.select_expr(df, ["`odd\x00name` AS o"])  # a NUL in the text: PySpark's own way
    assert odd.collect() == df.selectExpr("`odd\x00name` AS o").collect()


def _term_functions(df) -> set:
    return set(re.findall(r"__udflow_term_[0-9a-f]+", df._jdf.queryExecution().analyzed().toString()))


@pytest.mark.spark
def test_a_python_term_is_registered_once_per_session_a_helper_call_each_lowering(spark):
    calls = uf.source("rows", rows=ROWS).map(lowered)
    first, second = (_term_functions(calls.to_spark(spark=spark)) for _ in range(2))
    assert first and first == second
    helper = uf.source("rows", rows=ROWS).map(with_month)
    first, second = (_term_functions(helper.to_spark(spark=spark)) for _ in range(2))
    assert first and not first & second
    assert sorted(r["m"] or 0 for r in helper.collect(spark=spark)) == \
        sorted(r["m"] or 0 for r in helper.collect(engine="reference"))


@pytest.mark.spark
def test_a_helpers_type_on_a_sample_is_found_once(spark):
    flow = uf.source("rows", rows=ROWS).map(with_month)
    optimized = uf.optimize(flow).best
    optimized.to_spark(spark=spark)
    families = spark._udflow_memo["helper_families"]
    before = len(families)
    optimized.to_spark(spark=spark)
    assert len(families) == before


def _write_parquet(path, values):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"k": values, "v": [x * 10 for x in values]}), path)


@pytest.mark.spark
def test_a_file_is_read_once_while_it_is_as_it_was(spark, tmp_path):
    folder = tmp_path / "t.parquet"
    folder.mkdir()
    _write_parquet(folder / "part-0.parquet", [1, 2])
    flow = uf.source("t", path=str(folder)).filter(lambda r: r["k"] > 0)
    first, again = flow.to_spark(spark=spark), flow.to_spark(spark=spark)
    reads = spark._udflow_memo["file_reads"]
    assert len({k for k in reads if k[1] == str(folder)}) == 1
    assert sorted(r["v"] for r in again.collect()) == [10, 20]
    _write_parquet(folder / "part-1.parquet", [3])  # a new file: a new listing, a new read
    assert sorted(r["v"] for r in flow.collect(spark=spark)) == [10, 20, 30]
    assert len({k for k in reads if k[1] == str(folder)}) == 2
    assert sorted(r["v"] for r in first.collect()) == [10, 20]  # a DataFrame keeps its own listing


@pytest.mark.spark
def test_two_sources_over_one_file_in_a_plan_read_it_each(spark, tmp_path):
    path = str(tmp_path / "t.parquet")
    _write_parquet(path, [1, 2, 3])
    left = uf.source("l", path=path)
    right = uf.source("r", path=path).map(lambda r: {"k2": r["k"], "v2": r["v"]})
    flow = left.match(right, ("k", "k2"), lambda a, b: {"k": a["k"], "w": a["v"] + b["v2"]})
    for _ in range(2):
        assert sorted(r["w"] for r in flow.collect(spark=spark)) == [20, 40, 60]


@pytest.mark.spark
def test_expr_and_broadcast_are_pysparks_in_one_round_trip_each(spark, monkeypatch):
    from py4j.clientserver import ClientServerConnection
    from pyspark.sql import functions as F

    from udflow.spark_backend import functions

    df = spark.createDataFrame([(1, "x"), (None, "y")], "a BIGINT, b STRING")
    functions.expr("a")  # the handle, looked up once per SparkContext
    sent = []
    original = ClientServerConnection.send_command
    monkeypatch.setattr(ClientServerConnection, "send_command", lambda self, c: sent.append(c) or original(self, c))
    column = functions.expr("coalesce(a, 0) + 1")
    assert len(sent) == 1
    monkeypatch.undo()
    assert df.select(column).collect() == df.select(F.expr("coalesce(a, 0) + 1")).collect()
    df.schema  # noqa: B018 - held by PySpark, it is handed on to the marked DataFrame
    marked = functions.broadcast(df)
    assert functions.broadcast(df) is marked and marked.schema == df.schema
    assert "broadcast" in marked._jdf.queryExecution().analyzed().toString().lower()
    assert sorted(marked.collect(), key=str) == sorted(df.collect(), key=str)


def test_a_parquet_files_footers_are_read_once_per_version(tmp_path):
    from udflow import field_types

    folder = tmp_path / "t.parquet"
    folder.mkdir()
    _write_parquet(folder / "part-0.parquet", [1, 2])
    source = uf.source("t", path=str(folder)).root
    misses = field_types._parquet_types_read.cache_info().misses
    first = field_types.source_field_types(source)
    assert field_types.source_field_types(source) == first
    assert field_types._parquet_types_read.cache_info().misses == misses + 1
    assert first["k"].magnitude == 2 and not first["k"].nullable
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"k": [None, -7], "v": [0, 0]}), folder / "part-1.parquet")  # a new version
    again = field_types.source_field_types(source)
    assert again["k"].magnitude == 7 and again["k"].nullable
