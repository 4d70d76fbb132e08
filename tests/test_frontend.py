"""`uf.from_spark` (issue 30): a PySpark DataFrame with Python UDFs opened as a flow.

Every test compares three answers: the user's DataFrame as Spark runs it, the flow on
the reference interpreter, and the optimized flow back on Spark (`to_spark`).
"""

from __future__ import annotations

import datetime
import decimal
import math
import re

import pytest

import udflow as uf
from udflow import spark_results
from udflow.frontend import FrontendError, open_dataframe

pytestmark = pytest.mark.spark

RATE = 2


def double_it(x):
    if x is None:
        return None
    return x * RATE


def tokens(s):
    return s.split()


def shout(s):
    """Several returns, a local, a loop: inlined line for line."""
    if s is None:
        return None
    out = ""
    for c in s:
        out += c.upper()
    return out + "!"


def sign_label(x):
    if x is None:
        return "none"
    elif x > 0:
        return "positive"
    return "non-positive"


def _rows(df_or_rows, columns):
    rows = df_or_rows.collect() if hasattr(df_or_rows, "collect") else df_or_rows
    out = []
    for r in rows:
        d = r.asDict() if hasattr(r, "asDict") else r
        out.append(tuple(_plain(d[c]) for c in columns))
    return sorted(out, key=repr)


def _plain(v):
    if isinstance(v, float):
        return "NaN" if math.isnan(v) else round(v, 9)
    return v


def _same_three_ways(df, **options):
    """The DataFrame, the flow on the reference interpreter, the optimized flow on Spark: one bag."""
    opened = open_dataframe(df, **options)
    expected = _rows(df, df.columns)
    assert _rows(opened.flow.collect(engine="reference") if _takes_engine(opened.flow) else
                 opened.flow.collect(), df.columns) == expected
    optimized = uf.optimize(opened.flow)
    assert _rows(optimized.best.to_spark(fields=list(df.columns)), df.columns) == expected
    return opened, optimized


def _takes_engine(flow) -> bool:
    import inspect

    return "engine" in inspect.signature(flow.collect).parameters


@pytest.fixture(scope="module")
def frames(spark):
    from pyspark.sql import functions as F, types as T

    docs = spark.createDataFrame(
        [(1, "a b", 2.0), (2, "c", None), (3, "d e f", 0.5), (4, "", -1.0), (5, "ü ß", 3.0)],
        "id long, text string, x double")
    names = spark.createDataFrame([(1, "z"), (3, "w"), (5, "z")], "oid long, name string")
    udfs = {
        "double_it": F.udf(double_it, T.DoubleType()),
        "tokens": F.udf(tokens, T.ArrayType(T.StringType())),
        "keep": F.udf(lambda v: v is not None and v > 0.5, T.BooleanType()),
        "shout": F.udf(shout, T.StringType()),
        "sign_label": F.udf(sign_label, T.StringType()),
    }
    return docs, names, udfs


def test_a_whole_pipeline_opens_runs_natively_and_gives_the_dataframes_rows(frames):
    from pyspark.sql import functions as F

    docs, names, u = frames
    df = (docs.withColumn("y", u["double_it"]("x")).filter(u["keep"]("y"))
          .select("id", "y", F.explode(u["tokens"]("text")).alias("tok"))
          .join(names, F.col("id") == F.col("oid"))
          .groupBy("name").agg(F.sum("y").alias("s"), F.count("*").alias("n"), F.max("tok").alias("last")))
    opened, optimized = _same_three_ways(df)
    assert not opened.kept
    steps = optimized.best.physical().lines()
    assert all("Python" not in line for line in steps), steps
    assert [name for name, _ in opened.udfs] == ["double_it", "<lambda>", "tokens"]


def test_udfs_with_several_returns_loops_and_globals_keep_python_semantics(frames):
    docs, _, u = frames
    df = docs.select("id", u["shout"]("text").alias("loud"), u["sign_label"]("x").alias("sign"))
    opened, _ = _same_three_ways(df)
    assert not opened.kept


def test_the_analysis_sees_the_users_lines(frames):
    docs, _, u = frames
    opened = open_dataframe(docs.withColumn("y", u["double_it"]("x")))
    (op,) = [n for n in opened.flow.operators if n.label.startswith("Map(double_it")]
    code = op.fn.__code__
    assert code.co_filename.startswith(__file__)
    assert code.co_firstlineno == double_it.__code__.co_firstlineno - 1  # the def above the user's


def test_a_non_deterministic_udf_stays_where_it_is_and_explain_says_so(frames):
    from pyspark.sql import functions as F, types as T

    docs, _, u = frames
    noisy = F.udf(lambda x: x, T.DoubleType()).asNondeterministic()
    df = docs.withColumn("y", noisy("x")).filter(u["keep"]("y"))
    opened, optimized = _same_three_ways(df)
    (kept,) = opened.kept
    assert "non-deterministic" in kept.reason
    assert "stays as written" in optimized.explain()


def test_native_conditions_and_columns_between_udfs_keep_sparks_semantics(frames, spark):
    """NaN is larger than any number in Spark (a Python comparison says False), null fails a
    condition (Python would raise): the native steps run as Spark's own expressions."""
    from pyspark.sql import functions as F

    _, _, u = frames
    docs = spark.createDataFrame([(1, "a b", 2.0), (2, "c", None), (4, None, float("nan")), (6, "q", float("nan"))],
                                 "id long, text string, x double")
    df = (docs.withColumn("y", u["double_it"]("x")).filter(F.col("y") > 1).withColumn("loud", u["shout"]("text"))
          .filter(F.length("loud") > 0)
          .select("id", "y", "loud", (F.col("y") * 10).alias("ten"), F.length("loud").alias("n")))
    opened, _ = _same_three_ways(df)
    assert not opened.kept
    labels = [n.label for n in opened.flow.operators]
    assert "where y > 1.0" in labels  # a udflow filter: NaN > 1.0 in Spark's order
    assert "Spark filter (length(loud) > 0)" in labels and "Spark columns ten, n" in labels
    assert {r["id"] for r in df.collect()} == {1, 6}


def test_simple_native_conditions_become_filters_the_rules_move(frames):
    from pyspark.sql import functions as F

    docs, _, u = frames
    df = (docs.withColumn("loud", u["shout"]("text"))
          .filter(F.col("text").isNotNull() & (F.col("id") != 3) & (F.col("x") >= -1.0)))
    opened, optimized = _same_three_ways(df)
    labels = [n.label for n in opened.flow.operators]
    assert {"where text is not None", "where id != 3", "where x >= -1.0"} <= set(labels)
    assert optimized.chosen.certificates  # a filter that reads no field the UDF writes moves below it


def test_a_udf_inside_a_native_expression_keeps_that_part_as_written(frames):
    from pyspark.sql import functions as F

    docs, _, u = frames
    df = docs.withColumn("n", F.length(u["shout"]("text"))).filter(u["keep"]("x"))
    opened, _ = _same_three_ways(df)
    (kept,) = opened.kept
    assert "calls a Python UDF inside a native expression" in kept.reason


def test_a_function_without_source_is_called_as_it_is(frames, spark):
    from pyspark.sql import types as T, functions as F

    namespace = {}
    exec("def triple(x):\n    return None if x is None else x * 3\n", namespace)
    df = frames[0].withColumn("t", F.udf(namespace["triple"], T.DoubleType())("x"))
    opened, _ = _same_three_ways(df)
    (op,) = [n for n in opened.flow.operators if "triple" in n.label]
    assert op.fn.__code__.co_filename.startswith("udflow-from-spark/")


def test_a_filter_udf_moves_below_a_map_it_does_not_read(frames):
    docs, _, u = frames
    df = docs.withColumn("loud", u["shout"]("text")).filter(u["keep"]("x"))
    _, optimized = _same_three_ways(df)
    top = optimized.best.root
    assert "shout" in top.label or "project" in top.label, str(optimized.best.root)
    assert optimized.chosen.certificates, "the filter should move below the Map it does not read"


def test_a_udf_raising_names_the_users_function_file_and_line(frames):
    from pyspark.sql import types as T, functions as F

    def ratio(x):
        return 1 / x

    df = frames[0].withColumn("r", F.udf(ratio, T.DoubleType())("x"))
    flow = uf.from_spark(df)
    with pytest.raises(uf.UdflowError) as err:
        uf.optimize(flow).best.to_spark().collect()
    text = str(err.value)
    assert "ratio" in text and __file__.split("/")[-1] in text
    assert f"line {ratio.__code__.co_firstlineno + 1}" in text


def test_keys_naming_an_unknown_source_are_refused_with_the_closest_name(frames):
    docs, names, u = frames
    from pyspark.sql import functions as F

    df = docs.withColumn("y", u["double_it"]("x")).join(names, F.col("id") == F.col("oid"))
    with pytest.raises(FrontendError, match="did you mean 'source'"):
        uf.from_spark(df, keys={"sourse": ["id"]})


def test_a_dataframe_whose_parts_share_a_column_name_is_refused_with_a_way_out(frames):
    from pyspark.sql import functions as F

    docs, _, u = frames
    twice = docs.join(docs.select("id", "x"), "id").withColumn("y", u["double_it"]("text"))
    with pytest.raises(FrontendError, match="two columns of one name"):
        uf.from_spark(twice)


# -- what Spark makes of a UDF's value --------------------------------------------------------

VALUES = {"int": 3, "zero": 0, "float": 2.5, "whole": 3.0, "fzero": 0.0, "big": 2 ** 40, "tiny": 1e-7,
          "str": "x", "true": True, "false": False, "none": None, "dec": decimal.Decimal("1.50"),
          "date": datetime.date(2020, 1, 2), "e20": 1e20}
TYPES = {"double": "double", "bigint": "bigint", "int": "int", "string": "string", "boolean": "boolean"}


@pytest.mark.parametrize("regime", ["arrow", "pickled"])
def test_the_conversion_table_is_what_spark_does(spark, regime):
    """Every (value, declared type) udflow converts gives Spark's own value (one job per regime)."""
    from pyspark.sql import functions as F

    columns, expected = [], []
    for declared in TYPES:
        convert = spark_results.conversion(regime, declared)
        for name, value in VALUES.items():
            try:
                want = convert(value)
            except spark_results.SparkConversionError:
                continue
            fn = F.udf(lambda _, v=value: v, declared, useArrow=(regime == "arrow"))
            columns.append(fn("id").alias(f"{declared}_{name}"))
            expected.append(want)
    (row,) = spark.range(1).select(*columns).collect()
    got = list(row)
    assert len(got) > 30
    for col, want, value in zip(row.__fields__, expected, got):
        assert type(value) is type(want) and (value == want or value != value and want != want), col


@pytest.mark.parametrize("name", sorted(spark_results.CONVERSIONS))
def test_a_lists_items_convert_as_each_item_does(name):
    """`ItemsConverted` (an exploded UDF's array) is the conversion item by item, its errors
    too, on lists of one type and of mixed ones (str subclasses are no strs to Spark)."""
    class Text(str):
        pass

    convert = spark_results.CONVERSIONS[name]
    items = spark_results.ITEMS[convert]
    pools = [[v] * 3 for v in VALUES.values()] + [list(VALUES.values()), ["a", None, Text("b")], [1.5, None, 2]]
    for values in pools:
        try:
            want = [convert(x) for x in values]
        except spark_results.SparkConversionError as err:
            with pytest.raises(spark_results.SparkConversionError, match=re.escape(str(err))):
                items(iter(values))
            continue
        got = items(iter(values))
        assert [type(x) for x in got] == [type(x) for x in want] and got == want, values


def test_a_value_spark_cannot_convert_raises_on_both_sides(spark):
    from pyspark.sql import functions as F

    with pytest.raises(Exception):
        spark.range(1).select(F.udf(lambda _: 2 ** 40, "int")("id")).collect()
    with pytest.raises(spark_results.SparkConversionError, match="outside 32 bits"):
        spark_results.arrow_int(2 ** 40)


def test_a_pickled_udf_returning_an_int_for_a_double_gives_null_as_spark_does(frames):
    from pyspark.sql import functions as F

    count = F.udf(lambda s: len(s) if s is not None else None, "double", useArrow=False)
    df = frames[0].withColumn("n", count("text"))
    _same_three_ways(df)
    assert {r["n"] for r in df.collect()} == {None}


# -- uf.suggest ---------------------------------------------------------------------------------


def label(x):
    return "big" if x > 1 else "small"


def test_suggest_gives_native_columns_equal_to_the_udfs_and_says_why_not(frames, spark):
    """Each suggested Column, put in place of its UDF, gives the UDF's values (errors too)."""
    from pyspark.sql import functions as F

    docs, _, u = frames
    df = (docs.withColumn("y", u["double_it"]("x")).filter(u["keep"]("y"))
          .withColumn("loud", u["shout"]("text"))
          .select("id", "y", "x", F.explode(u["tokens"]("text")).alias("tok")))
    by_udf = {s.udf: s for s in uf.suggest(df)}
    assert set(by_udf) == {"double_it", "<lambda>", "shout", "tokens"}
    assert by_udf["shout"].code is None and "a loop (line" in by_udf["shout"].reason
    code = {name: eval(s.code.split("  #")[0], {"F": F}) for name, s in by_udf.items() if s.code}
    assert set(code) == {"double_it", "<lambda>"}
    assert "higher-order function" in by_udf["tokens"].reason
    assert _rows(docs.withColumn("y", code["double_it"]), ["id", "y"]) == \
        _rows(docs.withColumn("y", u["double_it"]("x")), ["id", "y"])
    with_y = docs.withColumn("y", u["double_it"]("x"))
    assert _rows(with_y.filter(code["<lambda>"]), ["id"]) == _rows(with_y.filter(u["keep"]("y")), ["id"])
    # where Python raises, the suggested Column raises Python's words
    labelled = uf.suggest(docs.withColumn("l", F.udf(label, "string")("x")))[0]
    with pytest.raises(Exception, match="not supported between instances of 'NoneType' and 'int'"):
        docs.withColumn("l", eval(labelled.code, {"F": F})).collect()


def words(s):
    """The words of s (a docstring, then the explosion: still Spark's split and explode)."""
    return s.split()


def test_an_explode_udf_with_a_docstring_still_explodes_natively(frames):
    from pyspark.sql import functions as F

    docs, _, _ = frames
    df = docs.select("id", F.explode(F.udf(words, "array<string>")("text")).alias("w"))
    step = open_dataframe(df).flow.physical().root
    assert step.native, step


def kept_words(text):
    out = []
    for w in text.split():
        if len(w) > 1:
            out.append(w.upper() if w.startswith("b") else None)
    return out


def test_an_explode_of_a_udfs_list_explodes_natively_and_keeps_sparks_null_semantics(frames, spark):
    """`F.explode(udf(...))` of a UDF that builds its list: the UDF runs in Python once per row,
    as the user's own, and Spark explodes its list: a null list gives no row, a None item a
    row with null."""
    from pyspark.sql import functions as F

    docs = spark.createDataFrame([(1, "bb cc d"), (2, None), (3, ""), (4, "bx by")], "id bigint, text string")
    u = F.udf(lambda t: None if t is None else kept_words(t), "array<string>")
    df = docs.select("id", F.explode(u("text")).alias("w"))
    opened = open_dataframe(df)
    step = opened.flow.physical().root
    assert step.native and "your helper" in step.describe(), step.describe()
    _same_three_ways(df)


def test_a_join_on_keys_spark_widens_opens(frames, spark):
    """`CAST(k AS BIGINT) = oid` (an int column joined with a bigint one) is an equi-join on the
    values: the join, and the UDF below it, open."""
    from pyspark.sql import functions as F

    _, names, u = frames
    ints = spark.createDataFrame([(1, 2.0), (3, None), (4, 1.0)], "k int, x double")
    df = ints.withColumn("y", u["double_it"]("x")).join(names, F.col("k") == F.col("oid"))
    opened, _ = _same_three_ways(df)
    assert not opened.kept and [n for n, _ in opened.udfs] == ["double_it"]


def test_a_part_kept_after_its_inputs_were_opened_lists_only_itself(frames):
    """`first()` is not translated: the aggregate stays as written with everything below it, and
    the explanation names that one part, not the parts made below it on the way."""
    from pyspark.sql import functions as F, types as T

    docs, _, u = frames
    noisy = F.udf(lambda x: x, T.DoubleType()).asNondeterministic()
    df = docs.withColumn("y", noisy("x")).groupBy("text").agg(F.first("y").alias("f"))
    opened = open_dataframe(df)
    (kept,) = opened.kept
    assert kept.node == "Aggregate" and "first" in kept.reason and kept.source == "source"
    assert not opened.udfs


def _halve(batches):
    for batch in batches:
        yield batch.assign(x=batch["x"] / 2)


def test_a_batch_function_stays_as_written_and_explain_names_it(frames):
    """`mapInPandas` (a batch function with its declared schema) is not opened: its part runs as
    the user wrote it, a source of the flow, named in the explanation."""
    docs, _, u = frames
    df = docs.withColumn("y", u["double_it"]("x")).mapInPandas(_halve, docs.schema.add("y", "double"))
    opened, optimized = _same_three_ways(df)
    (kept,) = opened.kept
    assert kept.node == "MapInPandas" and "MapInPandas" in optimized.explain()


def test_the_plan_is_read_in_few_round_trips_and_says_what_a_walk_says(frames, spark):
    """`catalyst._output` (two round trips per node) and `Reader.has_udf` (Catalyst's pattern
    bits, one) give what reading each attribute, and walking each node, over py4j gives."""
    from pyspark.sql import functions as F

    from udflow.frontend import catalyst as cat

    docs, names, u = frames
    df = (docs.withColumn("y", u["double_it"]("x")).join(names, F.col("id") == F.col("oid"))
          .groupBy("name").agg(F.sum("y").alias("s")))
    reader = cat.Reader(spark)

    def walk(j):
        yield j
        for c in cat._seq(j.children()):
            yield from walk(c)

    nodes = list(walk(df._jdf.queryExecution().analyzed()))
    assert len(nodes) > 4
    for j in nodes:
        assert cat._output(j) == tuple(cat._attr(a) for a in cat._seq(j.output()))
        assert reader.has_udf(j) == cat._walked_has_udf(j)
        for e in cat._seq(j.expressions()):
            assert reader.has_udf(e) == cat._walked_has_udf(e)
    assert reader.has_udf(nodes[0]) and not all(reader.has_udf(j) for j in nodes)


def test_the_plan_read_by_names_and_texts_is_the_plan_read_field_by_field(frames, spark):
    """The reader knows an attribute by the `name#id` it prints, and a projection's plain
    columns from one text of its list (`Reader.attr`, `Reader.outs`): the same tree as reading
    each attribute's fields over py4j, for kept, renamed and computed columns, names holding
    `#`, ` AS `, spaces and non-ASCII letters, a join, an aggregate and an explode. A node's
    `nodeName` is its class's simple name, which the reader dispatches on."""
    from pyspark.sql import functions as F

    from udflow.frontend import catalyst as cat

    docs, names, u = frames

    class FieldByField(cat.Reader):
        def attr(self, j):
            return cat._attr(j)

        def outs(self, jlist, output):
            return tuple(self.out(e) for e in cat._seq(jlist))

    odd = (docs.withColumnRenamed("text", "a#1 AS b").withColumnRenamed("x", "größe x")
           .withColumn("y", u["double_it"]("größe x"))
           .select("id", "a#1 AS b", F.col("größe x").alias("x2"), "y", (F.col("id") + 1).alias("id1"),
                   F.col("y").alias("y#7")))
    frames_read = [
        odd.filter(u["keep"]("y")),
        odd.join(names, F.col("id") == F.col("oid")).groupBy("name").agg(F.sum("y").alias("s"), F.count("*")),
        docs.select("id", F.explode(u["tokens"]("text")).alias("word")).withColumn("w", u["shout"]("word")),
    ]
    for df in frames_read:
        assert cat.Reader(spark).read(df) == FieldByField(spark).read(df)

        def walk(j):
            yield j
            for e in cat._seq(j.expressions()) if hasattr(j, "expressions") else []:
                yield from walk_expression(e)
            for c in cat._seq(j.children()):
                yield from walk(c)

        def walk_expression(e):
            yield e
            for c in cat._seq(e.children()):
                yield from walk_expression(c)

        for j in walk(df._jdf.queryExecution().analyzed()):
            assert cat._cls(j) == j.getClass().getSimpleName()


def capped_words(text):
    out = []
    for w in text.split():
        if len(out) < 2:  # reads the list: not a plain appending loop
            out.append(w)
    return out


def test_a_udf_appending_to_the_list_it_returns_explodes_as_a_native_loop(frames, spark):
    """`out = []; for ...: out.append(E); return out` under `F.explode` is the explosion
    `for ...: yield {..., "w": E}` (`analysis.edited._appended`): no Python at all, the same
    rows, a None item a row with null; a UDF that reads its list otherwise stays Python's."""
    from pyspark.sql import functions as F

    docs = spark.createDataFrame([(1, "bb cc d"), (3, ""), (4, "bx by ü")], "id bigint, text string")
    df = docs.select("id", F.explode(F.udf(kept_words, "array<string>")("text")).alias("w"))
    step = open_dataframe(df).flow.physical().root
    assert step.describe() == "native", step.describe()
    _same_three_ways(df)
    capped = docs.select("id", F.explode(F.udf(capped_words, "array<string>")("text")).alias("w"))
    assert "your helper" in open_dataframe(capped).flow.physical().root.describe()
    _same_three_ways(capped)


def test_opening_a_dataframe_again_gives_the_same_functions_until_a_value_they_read_changes(frames, monkeypatch):
    """The record functions are made once per UDF, columns, shape and the values the UDF reads
    from outside: a job that opens its DataFrame again keeps their analyses (`double_it`, a
    module's function, comes back from the plan as itself; a lambda is pickled by value and
    comes back anew). `RATE` rebound, `double_it` is made (and analysed) anew and the flow
    computes with the new value."""
    import sys

    docs, _, u = frames

    def opened():
        flow = open_dataframe(docs.withColumn("y", u["double_it"]("x")).filter(u["keep"]("y"))).flow
        return flow, next(n.fn for n in flow.root.walk() if "double_it" in getattr(getattr(n, "fn", None), "__name__", ""))

    _, first = opened()
    assert opened()[1] is first
    monkeypatch.setattr(sys.modules[__name__], "RATE", 3)
    flow, rebound = opened()
    assert rebound is not first
    assert sorted(r["y"] for r in flow.collect()) == [1.5, 6.0, 9.0]
