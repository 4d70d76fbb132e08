"""udflow's own flows on a Spark Connect session (issue 30, item 4): no SparkContext, no JVM.

Each flow runs on a remote session of a real Connect server (`connect_spark`, one server for
this module: `tests/connect_server.py`) and is compared with the reference interpreter. The
server's Python workers have neither udflow's checkout nor this module on their path: udflow
arrives as a session artifact, this module's functions by value (`spark_backend.ship`).
"""

import os
import sys
from collections import Counter

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

import udflow as uf
from udflow import reference
from udflow.errors import UdflowError, UdfRuntimeError
from udflow.frontend import open_dataframe
from udflow.spark_backend import frames

pytestmark = pytest.mark.spark

ROWS = [{"k": i % 3 if i % 5 else None, "v": i, "s": f"s{i}"} for i in range(12)]
NAMES = [{"nk": 0, "name": "zero"}, {"nk": 1, "name": "one"}, {"nk": 1, "name": "uno"}, {"nk": 7, "name": "seven"}]


def bag(rows):
    return Counter(frozenset(r.items()) for r in rows)


def same_as_reference(flow, spark):
    got = flow.collect(spark=spark)
    assert bag(got) == bag(reference.run(flow.root))
    return got


def rows():
    return uf.source("t", rows=ROWS)


# -- user functions ---------------------------------------------------------------


def big(r):
    return r["v"] > 3


def doubled(r):
    return {**r, "w": r["v"] * 2 + 1}


def spelled(v):  # a helper call: no model, so the Map runs in Python
    return "-".join(reversed(str(v)))


def with_spelling(r):
    return {**r, "spelled": spelled(r["v"])}


def last_field(r):  # iterates over the record's fields: no model, the whole Map in Python
    out = dict(r)
    for key in sorted(r):
        out["last"] = key
    yield out


def per_key(group):
    group = list(group)
    yield {"k": group[0]["k"], "n": len(group), "names": ",".join(sorted(r["name"] for r in group))}


def fails_on_seven(r):
    if r["v"] == 7:
        raise ValueError("no sevens here")
    return {**r, "spelled": spelled(r["v"])}


# -- tests --------------------------------------------------------------------------


def test_native_maps_and_filters(connect_spark):
    flow = rows().filter(big).map(doubled)
    assert all(step.how in ("native", "scan") for step in flow.physical().steps)
    assert len(same_as_reference(flow, connect_spark)) == 8


def test_python_functions_without_a_model_run_over_arrow(connect_spark):
    """A whole function in Python (over Arrow batches), and a helper call inside a native Map
    (an Arrow scalar UDF inside the plan)."""
    whole = rows().map(last_field)
    assert whole.physical().root.how == "batches"
    assert {r["last"] for r in same_as_reference(whole, connect_spark)} == {"v"}
    helper = rows().map(with_spelling)
    assert helper.physical().root.python_terms
    got = same_as_reference(helper, connect_spark)
    assert next(r for r in got if r["v"] == 11)["spelled"] == "1-1"


def test_a_match_and_a_python_reduce(connect_spark):
    flow = rows().match(uf.source("n", rows=NAMES), on=("k", "nk")).reduce("k", per_key)
    assert len(same_as_reference(flow, connect_spark)) == 2


def test_to_spark_gives_a_connect_dataframe(connect_spark):
    from pyspark.sql.connect.dataframe import DataFrame as ConnectDataFrame

    flow = rows().map(with_spelling)
    df = flow.to_spark(spark=connect_spark)
    assert isinstance(df, ConnectDataFrame)
    assert bag(r.asDict() for r in df.collect()) == bag(reference.run(flow.root))


def test_a_user_error_names_the_function_not_a_grpc_trace(connect_spark):
    with pytest.raises(UdfRuntimeError) as err:
        rows().map(fails_on_seven).collect(spark=connect_spark)
    text = str(err.value)
    assert "Map(fails_on_seven)" in text and "ValueError: no sevens here" in text
    assert f"{os.path.basename(__file__)}:" in text and "'v': 7" in text
    assert "JVM stacktrace" not in text and "grpc" not in text.lower()


def test_write_and_a_failed_write_leaves_nothing(connect_spark, tmp_path):
    out = str(tmp_path / "out")
    rows().map(doubled).write(out, spark=connect_spark)
    assert bag(reference.run(uf.source("back", path=out).root)) == bag(reference.run(rows().map(doubled).root))
    with pytest.raises(UdflowError, match="already there"):
        rows().write(out, spark=connect_spark)
    never = str(tmp_path / "never")
    with pytest.raises(UdfRuntimeError, match="fails_on_seven"):
        rows().map(fails_on_seven).write(never, spark=connect_spark)
    assert not os.path.exists(never)


def test_size_estimates_come_from_the_plans_statistics(connect_spark, tmp_path):
    """No `_jdf` on Connect: the statistics EXPLAIN COST prints, by the classic path's rules."""
    path = str(tmp_path / "t.parquet")
    pq.write_table(pa.table({"a": list(range(1000)), "b": [str(i) for i in range(1000)]}), path)
    parquet = connect_spark.read.parquet(path)
    assert frames.size_estimate(parquet.select("a"))[0] == 1000  # the footers of a projected file
    assert frames.size_estimate(connect_spark.range(100)) == (100, 800)
    local = connect_spark.createDataFrame([(1, "x"), (2, "y")], "a long, b string")
    assert frames.size_estimate(local)[0] == 2


def test_a_session_outside_connect_mode_is_refused_by_name(connect_spark, monkeypatch):
    """PySpark builds Connect columns only in Connect mode: a session made around it would
    meet classic columns deep in the lowering."""
    monkeypatch.delenv("SPARK_CONNECT_MODE_ENABLED")
    with pytest.raises(UdflowError, match="SparkSession.builder.remote"):
        rows().map(doubled).collect(spark=connect_spark)


# ---------------------------------------------------------------------------
# uf.from_spark on a Connect DataFrame (issue 30, item 4): the client's plan is read (no JVM),
# the UDFs open as on a classic session, and the flow runs on the same server. The server's
# Python workers import nothing of this checkout, so this module's functions travel by value
# (`cloudpickle.register_pickle_by_value`), as a user's script's do.
# ---------------------------------------------------------------------------

FRONTEND_ROWS = [(1, "a b", 2.0, "x"), (2, "c", None, "y"), (3, "d e f", 0.5, "x"), (4, None, float("nan"), "y"),
        (5, "g", 3.0, "x")]


def double_it(x):
    if x is None:
        return None
    return x * 2


def tokens(s):
    return s.split()


def shout(s):
    return None if s is None else s.upper() + "!"


@pytest.fixture
def remote(connect_spark):
    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    yield connect_spark
    cloudpickle.unregister_pickle_by_value(sys.modules[__name__])


def _frontend_rows(rows, columns):
    out = []
    for r in rows:
        d = r.asDict() if hasattr(r, "asDict") else r
        out.append(tuple("NaN" if isinstance(d[c], float) and d[c] != d[c] else d[c] for c in columns))
    return sorted(out, key=repr)


def test_a_connect_dataframe_opens_and_runs_on_its_server(remote):
    from pyspark.sql import functions as F

    docs = remote.createDataFrame(FRONTEND_ROWS, "id long, text string, x double, g string")
    names = remote.createDataFrame([(1, "z"), (3, "w"), (5, "z")], "oid long, name string")
    df = (docs.withColumn("y", F.udf(double_it, "double")("x"))
          .filter(F.col("text").isNotNull() & (F.col("y") > 1))
          .withColumnRenamed("g", "group")
          .select("id", "y", "group", F.explode(F.udf(tokens, "array<string>")("text")).alias("tok"))
          .join(names, F.col("id") == F.col("oid"))
          .groupBy("name", "group").agg(F.sum("y").alias("s"), F.count("*").alias("n"), F.max("tok").alias("last")))
    opened = open_dataframe(df)
    assert not opened.kept, opened.kept
    labels = [n.label for n in opened.flow.operators]
    assert {"where text is not None", "where y > 1.0"} <= set(labels)
    expected = _frontend_rows(df.collect(), df.columns)
    assert _frontend_rows(opened.flow.collect(engine="reference"), df.columns) == expected
    fast = uf.optimize_dataframe(df)
    assert type(fast).__module__.startswith("pyspark.sql.connect")
    assert _frontend_rows(fast.collect(), df.columns) == expected


def test_a_native_column_between_udfs_keeps_its_part_as_written_on_connect(remote):
    from pyspark.sql import functions as F

    docs = remote.createDataFrame(FRONTEND_ROWS, "id long, text string, x double, g string")
    df = (docs.withColumn("y", F.udf(double_it, "double")("x")).withColumn("z", F.col("y") + 1)
          .withColumn("loud", F.udf(shout, "string")("text")))
    opened = open_dataframe(df)
    assert any("no SQL text to re-read" in k.reason for k in opened.kept), opened.kept
    assert _frontend_rows(uf.optimize_dataframe(df).collect(), df.columns) == _frontend_rows(df.collect(), df.columns)


def test_suggest_on_connect_gives_columns_equal_to_the_udfs(remote):
    """`uf.suggest` on a Connect DataFrame: each suggested Column, evaluated on the server in
    place of its UDF, gives the UDF's values, and where Python raises it raises Python's words."""
    from pyspark.sql import functions as F

    docs = remote.createDataFrame(FRONTEND_ROWS, "id long, text string, x double, g string")
    df = (docs.withColumn("y", F.udf(double_it, "double")("x")).filter(F.udf(lambda y: y > 1, "boolean")("y"))
          .withColumn("loud", F.udf(shout, "string")("text")))
    by_udf = {s.udf: s for s in uf.suggest(df)}
    assert set(by_udf) == {"double_it", "<lambda>", "shout"}
    assert by_udf["shout"].code is None and by_udf["shout"].reason
    doubled = eval(by_udf["double_it"].code, {"F": F})
    with_y = docs.withColumn("y", F.udf(double_it, "double")("x"))
    assert _frontend_rows(docs.withColumn("y", doubled).collect(), ["id", "y"]) == \
        _frontend_rows(with_y.collect(), ["id", "y"])
    kept = with_y.filter(eval(by_udf["<lambda>"].code, {"F": F}))
    assert not any("<<udflow:" in s.code for s in by_udf.values() if s.code)  # plain raise_error to paste
    with pytest.raises(Exception, match="not supported between instances of 'NoneType' and 'int'"):
        kept.collect()  # y is None on row 2: `None > 1` raises in Python, and so does the Column
