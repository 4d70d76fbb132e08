"""Sources: typed CSV (inferred or declared) read alike by both engines, bad files refused by
name, DataFrame and catalog-table sources, and what the executors are sent."""

from __future__ import annotations

import ast
import csv
import datetime
import pathlib
import sys
import textwrap
from collections import Counter
from decimal import Decimal

import pytest

import udflow as uf
from udflow import reference
from udflow.engine.statistics import scaled_distinct, source_statistics
from udflow.sources import SourceError, SourceValueError

ROOT = pathlib.Path(__file__).resolve().parent.parent


def bag(rows):
    return Counter(tuple(sorted((k, repr(v)) for k, v in r.items())) for r in rows)


def write_csv(path, rows):
    with open(path, "w", newline="") as fh:
        csv.writer(fh).writerows(rows)
    return str(path)


TYPED_ROWS = [
    ["id", "name", "score", "day", "ok", "note"],
    ["1", "ann", "1.5", "2020-01-02", "true", "a, quoted comma"],
    ["2", "", "2", "2021-03-04", "False", 'say "hi"'],
    ["-3", "bob", "1e3", "", "TRUE", "two\nlines"],
    ["4", "cy", "NaN", "1999-12-31", "", ""],
]


# ---------------------------------------------------------------------------
# CSV types (pure Python)
# ---------------------------------------------------------------------------


def test_csv_types_are_inferred_from_a_sample(tmp_path):
    src = uf.source("t", path=write_csv(tmp_path / "t.csv", TYPED_ROWS)).root
    assert dict(src.types) == {"id": "bigint", "name": "string", "score": "double", "day": "date",
                               "ok": "boolean", "note": "string"}
    rows = reference.run(src)
    assert rows[0] == {"id": 1, "name": "ann", "score": 1.5, "day": datetime.date(2020, 1, 2), "ok": True,
                       "note": "a, quoted comma"}
    assert rows[1]["name"] is None and rows[1]["ok"] is False and rows[1]["note"] == 'say "hi"'
    assert rows[2]["id"] == -3 and rows[2]["score"] == 1000.0 and rows[2]["note"] == "two\nlines"


def test_csv_types_can_be_declared_as_a_dict_or_a_ddl_string(tmp_path):
    path = write_csv(tmp_path / "t.csv", TYPED_ROWS)
    as_dict = uf.source("t", path=path, schema={"id": "string", "score": "float"}).root
    as_ddl = uf.source("t", path=path, schema="id STRING, score FLOAT").root
    assert as_dict.types == as_ddl.types
    assert dict(as_dict.types)["day"] == "date"  # the undeclared columns are still inferred
    first = reference.run(as_ddl)[0]
    assert first["id"] == "1" and first["score"] == 1.5
    money = write_csv(tmp_path / "m.csv", [["price"], ["1.5"], ["2.345"]])
    prices = reference.run(uf.source("m", path=money, schema="`price` DECIMAL(10, 2)").root)
    assert [r["price"] for r in prices] == [Decimal("1.50"), Decimal("2.35")]
    with pytest.raises(SourceError, match="'nope'"):
        uf.source("t", path=path, schema={"nope": "int"})
    with pytest.raises(SourceError, match="timestamp"):
        uf.source("t", path=path, schema={"day": "timestamp"})


def test_a_value_the_inferred_type_does_not_admit_is_an_error_naming_file_line_and_column(tmp_path, monkeypatch):
    from udflow import sources

    monkeypatch.setattr(sources, "INFER_ROWS", 2)
    path = write_csv(tmp_path / "t.csv", [["k"], ["1"], ["2"], ["three"]])
    src = uf.source("t", path=path).root
    assert dict(src.types) == {"k": "bigint"}
    with pytest.raises(SourceValueError) as err:
        reference.run(src)
    assert "t.csv:4" in str(err.value) and "'k'" in str(err.value) and "'three'" in str(err.value)


def test_bad_files_give_named_errors(tmp_path):
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    header_only = write_csv(tmp_path / "header.csv", [["a", "b"]])
    mixed = tmp_path / "mixed"
    mixed.mkdir()
    write_csv(mixed / "part-0.csv", [["a"], ["1"]])
    (mixed / "notes.txt").write_text("not data")
    wrong = write_csv(tmp_path / "data.txt", [["a"], ["1"]])
    parquet_named_csv = tmp_path / "really.csv"
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"a": [1]}), str(parquet_named_csv))
    csv_named_parquet = write_csv(tmp_path / "really.parquet", [["a"], ["1"]])
    cases = {
        str(empty): "is empty",
        header_only: "header but no records",
        str(mixed): "mixes files of different formats",
        wrong: "cannot tell the format",
        str(parquet_named_csv): "not a CSV text file",
        csv_named_parquet: "not a parquet file",
    }
    for path, message in cases.items():
        with pytest.raises(SourceError, match=message):
            uf.source("x", path=path)
    # a header-only CSV with declared types is an empty table
    declared = uf.source("x", path=header_only, schema="a bigint, b string")
    assert reference.run(declared.root) == []


def test_json_sources_are_refused_with_the_way_to_read_them(tmp_path):
    path = tmp_path / "events.jsonl"
    path.write_text('{"a": 1}\n')
    with pytest.raises(SourceError, match=r"dataframe=spark\.read\.json"):
        uf.source("events", path=str(path))


def test_a_source_takes_exactly_one_origin(tmp_path):
    with pytest.raises(uf.FlowConstructionError, match="exactly one of path=, rows=, dataframe= or table="):
        uf.source("x", rows=[{"a": 1}], table="t")
    with pytest.raises(uf.FlowConstructionError, match="exactly one"):
        uf.source("x")
    with pytest.raises(uf.FlowConstructionError, match="must be a pyspark.sql.DataFrame"):
        uf.source("x", dataframe=[{"a": 1}])


def test_distinct_counts_scale_from_a_sample():
    assert scaled_distinct(list(range(100)), 10_000) == 1000  # all distinct: sqrt(100) * 100
    assert scaled_distinct([i % 5 for i in range(100)], 10_000) == 5  # every value repeated: no more
    assert scaled_distinct([1, 2, 2], 3) == 2  # the sample is everything


# ---------------------------------------------------------------------------
# The import structure and what executors are sent (pure Python)
# ---------------------------------------------------------------------------


def test_the_spark_backend_never_imports_flow_py():
    for path in (ROOT / "udflow" / "spark_backend").glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom):
                assert node.module != "udflow.flow", f"{path.name} imports udflow.flow"
                assert not (node.module == "udflow" and any(a.name == "flow" for a in node.names)), path.name


def test_modules_of_user_functions_are_found_transitively(tmp_path, monkeypatch):
    from udflow.spark_backend import ship

    (tmp_path / "loose_helper_mod.py").write_text("def double(x):\n    return 2 * x\n")
    (tmp_path / "loose_pipeline_mod.py").write_text(textwrap.dedent("""
        import json
        from loose_helper_mod import double

        def f(r):
            return {**r, "y": double(r["x"]), "s": json.dumps(r)}
    """))
    monkeypatch.syspath_prepend(str(tmp_path))
    import loose_pipeline_mod

    try:
        names = {m.__name__ for m in ship.user_modules([loose_pipeline_mod.f])}
        assert names == {"loose_pipeline_mod", "loose_helper_mod"}  # json is installed, not the user's
        assert ship.user_modules([len, csv.reader]) == []
    finally:
        sys.modules.pop("loose_pipeline_mod", None)
        sys.modules.pop("loose_helper_mod", None)


# ---------------------------------------------------------------------------
# On Spark
# ---------------------------------------------------------------------------


def test_typed_csv_is_read_alike_by_both_engines(spark, tmp_path):
    flow = uf.source("t", path=write_csv(tmp_path / "t.csv", TYPED_ROWS))
    got, expected = flow.collect(spark=spark), reference.run(flow.root)
    assert len(expected) == 4
    nan_free = lambda rows: [{**r, "score": None if r["score"] != r["score"] else r["score"]} for r in rows]  # noqa: E731
    assert bag(nan_free(got)) == bag(nan_free(expected))
    df = flow.to_spark(spark=spark)
    assert {f.name: f.dataType.simpleString() for f in df.schema.fields}["day"] == "date"


def test_a_csv_key_joins_a_parquet_key_on_both_engines(spark, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    pq.write_table(pa.table({"pk": pa.array([0, 1, 2], pa.int64()), "label": ["a", "b", "c"]}), tmp_path / "p.parquet")
    keys = uf.source("k", path=write_csv(tmp_path / "k.csv", [["ck", "w"], ["0", "x"], ["2", "y"], ["2", "z"]]))
    flow = keys.match(uf.source("p", path=str(tmp_path / "p.parquet")), on=("ck", "pk"))
    expected = reference.run(flow.root)
    assert len(expected) == 3  # "0" != 0 would have found none
    assert bag(flow.collect(spark=spark)) == bag(expected)


def test_a_bad_csv_value_on_spark_is_a_named_error(spark, tmp_path, monkeypatch):
    from udflow import sources

    monkeypatch.setattr(sources, "INFER_ROWS", 2)
    flow = uf.source("t", path=write_csv(tmp_path / "t.csv", [["k"], ["1"], ["2"], ["three"]]))
    with pytest.raises(SourceValueError, match="schema=") as on_spark:
        flow.collect(spark=spark)
    # the same message as the reference interpreter's: file, line, column and the value itself
    # (Spark's FAILFAST read names none of them, and shows the value as null; issue 31)
    with pytest.raises(SourceValueError) as on_reference:
        flow.collect(engine="reference")
    assert str(on_spark.value) == str(on_reference.value)
    assert "t.csv:4: column 'k' holds 'three', which is not a bigint" in str(on_spark.value)
    with pytest.raises(SourceValueError) as written:
        flow.write(str(tmp_path / "out"), spark=spark)
    assert str(written.value) == str(on_reference.value)


def people(spark):
    return spark.createDataFrame(
        [(1, "ann", 34, datetime.date(1990, 1, 2)), (2, "bob", 17, None), (3, "cy", 51, datetime.date(1973, 5, 6))],
        "id bigint, name string, age int, born date",
    )


def adults(r):
    return r["age"] >= 18


def greet(r):
    return {**r, "greeting": "hello " + r["name"]}


def test_a_dataframe_source_takes_its_fields_and_types_from_the_schema(spark):
    src = uf.source("people", dataframe=people(spark), key="id", prefix="p_")
    assert src.root.fields == ("p_id", "p_name", "p_age", "p_born")
    assert dict(src.root.types) == {"id": "bigint", "name": "string", "age": "int", "born": "date"}
    flow = src.filter(lambda r: r["p_age"] >= 18)
    assert bag(flow.collect(spark=spark)) == bag(reference.run(flow.root))
    assert len(reference.run(flow.root)) == 2


def test_one_dataframe_read_by_two_sources_joins_with_itself(spark):
    """A DataFrame source is lowered as the DataFrame itself where its columns are the source's
    (no renaming projection): two sources over one DataFrame, or over two projections of it,
    still give the reference interpreter's rows."""
    df = people(spark)
    itself = uf.source("a", dataframe=df, key="id").cross(uf.source("b", dataframe=df, prefix="r_"))
    assert bag(itself.collect(spark=spark)) == bag(reference.run(itself.root))
    assert len(reference.run(itself.root)) == 9
    halves = uf.source("ids", dataframe=df.select("id", "age")).match(
        uf.source("names", dataframe=df.select(df["id"].alias("person"), "name")), on=("id", "person"))
    assert bag(halves.collect(spark=spark)) == bag(reference.run(halves.root))
    assert len(reference.run(halves.root)) == 3


def test_a_flow_result_composes_with_pyspark(spark, tmp_path):
    flow = uf.source("people", dataframe=people(spark), key="id").filter(adults).map(greet)
    df = flow.to_spark(spark=spark)
    cities = spark.createDataFrame([(1, "Paris"), (3, "Oslo")], "pid bigint, city string")
    joined = df.join(cities, df["id"] == cities["pid"]).select("name", "city", "greeting")
    assert sorted(tuple(r) for r in joined.collect()) == [("ann", "Paris", "hello ann"), ("cy", "Oslo", "hello cy")]
    df.createOrReplaceTempView("udflow_greeted")
    assert spark.sql("select count(*) as n, max(age) as oldest from udflow_greeted").collect()[0].asDict() == {
        "n": 2, "oldest": 51}
    target = str(tmp_path / "greeted")
    df.write.parquet(target)
    back = spark.read.parquet(target)
    assert sorted(r["greeting"] for r in back.collect()) == ["hello ann", "hello cy"]
    assert bag([r.asDict() for r in back.collect()]) == bag(reference.run(flow.root))


def test_a_catalog_table_is_a_source(spark):
    people(spark).createOrReplaceTempView("udflow_people")
    flow = uf.source("people", table="udflow_people", key="id").filter(adults)
    assert flow.sources[0].catalog_table == "udflow_people"
    assert bag(flow.collect(spark=spark)) == bag(reference.run(flow.root))
    with pytest.raises(uf.FlowConstructionError, match="cannot read table 'no_such_db.no_such_table'"):
        uf.source("missing", table="no_such_db.no_such_table")


def test_the_reference_interpreter_refuses_a_large_dataframe(spark):
    from udflow.reference import MAX_DATAFRAME_ROWS

    small = uf.source("small", dataframe=spark.range(10))
    assert sorted(r["id"] for r in reference.run(small.root)) == list(range(10))
    large = uf.source("large", dataframe=spark.range(MAX_DATAFRAME_ROWS + 1))
    with pytest.raises(uf.UdflowError, match="more than 100,000 rows") as err:
        reference.run(large.root)
    assert "engine='spark'" in str(err.value)


def test_dataframe_statistics_come_from_the_plan_and_a_bounded_sample(spark, tpch_dir):
    from pyspark.sql import functions as F

    # A full scan would reach ids past 50,000 and fail; a bounded sample stays in the first partition.
    guarded = spark.range(0, 100_000, 1, 4).withColumn(
        "k", F.when(F.col("id") > 50_000, F.raise_error(F.lit("scanned past the sample"))).otherwise(F.col("id") % 7)
    )
    stats = source_statistics(uf.source("g", dataframe=guarded, key="id").root, ["k", "id"])
    assert stats.rows == 100_000
    assert stats.distinct_of("id") == 100_000 and stats.distinct_of("k") == 7
    nation = spark.read.parquet(str(pathlib.Path(tpch_dir) / "nation.parquet"))
    assert source_statistics(uf.source("nation", dataframe=nation).root).rows == 25  # the parquet footers


def test_a_parquet_dataframe_s_keys_are_counted_in_its_files(spark, tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    # skewed: most of the first records share a few values, so a sample's estimate would
    # take the many values seen once for a much larger domain
    values = [i % 5 if i % 10 else 5 + i // 10 for i in range(20_000)]
    pq.write_table(pa.table({"k": values}), str(tmp_path / "t.parquet"))
    df = spark.read.parquet(str(tmp_path / "t.parquet"))
    assert source_statistics(uf.source("t", dataframe=df).root, ["k"]).distinct_of("k") == len(set(values))
    filtered = df.filter("k < 1000")  # not exactly the files' rows: estimated from its first records
    assert source_statistics(uf.source("f", dataframe=filtered).root, ["k"]).distinct_of("k") != len(set(values))


def test_udflow_run_on_a_pipeline_folder_without_init(spark, tmp_path, capsys, monkeypatch):
    from udflow import cli

    folder = tmp_path / "pipelines"
    folder.mkdir()
    (folder / "taxi.py").write_text(textwrap.dedent("""
        import udflow as uf

        FARE_PER_KM = 2.5

        def fare(km):
            return round(km * FARE_PER_KM, 2)

        def priced(r):
            return {**r, "fare": fare(r["km"])}

        def long_trip(r):
            return r["km"] > 3

        flow = uf.source("trips", rows=[{"trip": i, "km": float(i)} for i in range(10)]).map(priced).filter(long_trip)
    """))
    monkeypatch.chdir(tmp_path)
    code = cli.main(["run", "pipelines/taxi.py::flow", "--master", "local[2]", "--no-cache"])
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "6 rows on local[2]" in out.out
    assert "'fare': 22.5" in out.out


def test_a_csv_is_read_with_multiline_only_where_a_quoted_field_may_hold_a_newline(tmp_path, monkeypatch):
    """multiLine makes Spark read a file in one task; a file whose quotes hold no newline splits."""
    from udflow.spark_backend import read

    plain = write_csv(tmp_path / "plain.csv", [["a", "b"], ["1", 'say "hi", twice'], ["2", ""]])
    broken = write_csv(tmp_path / "broken.csv", TYPED_ROWS)
    crlf = tmp_path / "crlf.csv"
    crlf.write_bytes(b'a,b\r\n1,"x\r\ny"\r\n')
    assert not read.may_hold_quoted_newlines(plain)
    assert read.may_hold_quoted_newlines(broken) and read.may_hold_quoted_newlines(str(crlf))
    long_quote = tmp_path / "long.csv"  # a chunk with no quote of its own, inside an open one
    long_quote.write_bytes(b'a,b\n1,"xxxxxxxxxxxx\nyyy"\n')
    unquoted = tmp_path / "unquoted.csv"
    unquoted.write_bytes(b"a,b\n1,2\n3,4\n")
    monkeypatch.setattr(read, "CHUNK", 5)  # a quote and its newline in different chunks
    assert read.may_hold_quoted_newlines(broken) and not read.may_hold_quoted_newlines(plain)
    assert read.may_hold_quoted_newlines(str(long_quote)) and not read.may_hold_quoted_newlines(str(unquoted))


def test_a_csv_scan_is_remembered_by_the_session_until_the_file_changes(tmp_path):
    from udflow.spark_backend import read

    class Session:  # the scan needs nothing of Spark's: a plain object holds the memory
        pass

    session, path = Session(), tmp_path / "t.csv"
    path.write_bytes(b"a,b\n1,2\n")
    assert not read._scanned(session, str(path)) and len(session._udflow_memo["newline_scans"]) == 1
    path.write_bytes(b'a,b\n1,"x\ny"\n')  # another size: scanned again
    assert read._scanned(session, str(path)) and len(session._udflow_memo["newline_scans"]) == 2
    assert read._scanned(session, str(tmp_path / "missing.csv"))  # unreadable: multiLine, as before


@pytest.mark.spark
def test_csv_files_with_and_without_quoted_newlines_read_as_the_reference_reads_them(tmp_path, spark):
    for name, rows in (("plain.csv", [["a", "b"], ["1", 'say "hi", twice'], ["2", ""]]), ("t.csv", TYPED_ROWS)):
        flow = uf.source(name.split(".")[0], path=write_csv(tmp_path / name, rows))
        assert bag(flow.collect(spark=spark)) == bag(flow.collect(engine="reference"))


def test_a_parquet_source_reads_its_fields_in_their_order_with_its_prefix_on_both_engines(spark, tmp_path):
    """The reference reads only the columns `fields=` keeps, in that order, renamed by the
    prefix; a column the file lost since the source was made is None in every record."""
    import datetime
    import decimal

    import pyarrow as pa
    import pyarrow.parquet as pq

    path = str(tmp_path / "t.parquet")
    pq.write_table(pa.table({"a": [1, None, 3], "b": ["x", "y", None],
                             "c": [datetime.date(2024, 2, 29), None, datetime.date(1, 1, 1)],
                             "d": pa.array([decimal.Decimal("1.50"), None, decimal.Decimal("-0.01")],
                                           pa.decimal128(5, 2))}), path)
    flow = uf.source("t", path=path, fields=["d", "a", "c"], prefix="p_")
    records = flow.collect(engine="reference")
    assert [list(r) for r in records] == [["p_d", "p_a", "p_c"]] * 3
    assert records == [{"p_d": decimal.Decimal("1.50"), "p_a": 1, "p_c": datetime.date(2024, 2, 29)},
                       {"p_d": None, "p_a": None, "p_c": None},
                       {"p_d": decimal.Decimal("-0.01"), "p_a": 3, "p_c": datetime.date(1, 1, 1)}]
    assert sorted(map(repr, flow.collect(spark=spark))) == sorted(map(repr, records))
    pq.write_table(pa.table({"a": [7], "b": ["z"]}), path)  # "c" and "d" gone from the file
    assert flow.collect(engine="reference") == [{"p_d": None, "p_a": 7, "p_c": None}]
