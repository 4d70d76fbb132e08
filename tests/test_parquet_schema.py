"""The schema udflow gives Spark for a parquet source is the one Spark infers itself, or none."""

from __future__ import annotations

import datetime
import os
from decimal import Decimal

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from udflow.spark_backend.parquet_schema import inferred_schema

pytestmark = pytest.mark.spark

MAPPED = {
    "bool": (pa.bool_(), [True, None]),
    "int8": (pa.int8(), [-128, None]),
    "int16": (pa.int16(), [-3, None]),
    "int32": (pa.int32(), [2**31 - 1, None]),
    "int64": (pa.int64(), [-(2**63), None]),
    "float32": (pa.float32(), [1.5, None]),
    "float64": (pa.float64(), [float("nan"), None]),
    "string": (pa.string(), ["é", None]),
    "large_string": (pa.large_string(), ["x", None]),
    "date32": (pa.date32(), [datetime.date(1, 1, 1), None]),
    "decimal_5_2": (pa.decimal128(5, 2), [Decimal("-1.25"), None]),
    "decimal_15_2": (pa.decimal128(15, 2), [Decimal("1.25"), None]),
    "decimal_38_10": (pa.decimal128(38, 10), [Decimal("1.25"), None]),
}
LEFT_TO_SPARK = {
    "uint8": (pa.uint8(), [255, None]),
    "uint32": (pa.uint32(), [2**32 - 1, None]),
    "uint64": (pa.uint64(), [2**64 - 1, None]),
    "binary": (pa.binary(), [b"\x00", None]),
    "timestamp_utc": (pa.timestamp("us", tz="UTC"), [datetime.datetime(2020, 1, 1), None]),
    "timestamp_local": (pa.timestamp("us"), [datetime.datetime(2020, 1, 1), None]),
    "list": (pa.list_(pa.int64()), [[1, 2], None]),
    "struct": (pa.struct([("a", pa.int64())]), [{"a": 1}, None]),
}


def write(path, columns: dict, **options) -> str:
    table = pa.table({name: pa.array(values, type=t) for name, (t, values) in columns.items()})
    pq.write_table(table, str(path), **options)
    return str(path)


def spark_schema(spark, path):
    return spark.read.parquet(str(path)).schema


def test_the_tpch_tables_get_the_schema_spark_infers(spark, tpch_dir):
    tables = sorted(f for f in os.listdir(tpch_dir) if f.endswith(".parquet"))
    assert len(tables) == 8
    for table in tables:
        path = os.path.join(tpch_dir, table)
        assert inferred_schema(path) == spark_schema(spark, path), table


@pytest.mark.parametrize("name", sorted(MAPPED))
def test_each_plain_type_maps_as_spark_maps_it(spark, tmp_path, name):
    path = write(tmp_path / f"{name}.parquet", {name: MAPPED[name]})
    assert inferred_schema(path) == spark_schema(spark, path)


def test_decimals_stored_as_integers_map_as_spark_maps_them(spark, tmp_path):
    columns = {n: MAPPED[n] for n in ("decimal_5_2", "decimal_15_2")}
    path = write(tmp_path / "ints.parquet", columns, store_decimal_as_integer=True)
    physical = {pq.ParquetFile(path).schema.column(i).physical_type for i in range(2)}
    assert physical == {"INT32", "INT64"}
    assert inferred_schema(path) == spark_schema(spark, path)


@pytest.mark.parametrize("name", sorted(LEFT_TO_SPARK))
def test_any_other_type_is_left_to_spark(tmp_path, name):
    columns = {"id": MAPPED["int64"], name: LEFT_TO_SPARK[name]}
    assert inferred_schema(write(tmp_path / f"{name}.parquet", columns)) is None


def test_a_folder_of_files_with_one_schema_maps_and_anything_else_is_left_to_spark(spark, tmp_path):
    folder = tmp_path / "same"
    folder.mkdir()
    for i in range(2):
        write(folder / f"part-{i}.parquet", {"a": MAPPED["int64"], "b": MAPPED["string"]})
    (folder / "_SUCCESS").write_text("")
    write(folder / "part-2.parquet._COPYING_", {"a": MAPPED["string"]})  # skipped by Spark too
    assert inferred_schema(str(folder)) == spark_schema(spark, folder)

    hidden_only = tmp_path / "hidden_only"
    hidden_only.mkdir()
    write(hidden_only / ".part-0.parquet", {"a": MAPPED["int64"]})
    assert inferred_schema(str(hidden_only)) is None  # Spark: unable to infer a schema

    differing = tmp_path / "differing"
    differing.mkdir()
    write(differing / "part-0.parquet", {"a": MAPPED["int64"]})
    write(differing / "part-1.parquet", {"a": MAPPED["int32"]})
    assert inferred_schema(str(differing)) is None

    partitioned = tmp_path / "partitioned"
    (partitioned / "day=1").mkdir(parents=True)
    write(partitioned / "day=1" / "part-0.parquet", {"a": MAPPED["int64"]})
    assert inferred_schema(str(partitioned)) is None

    summarized = tmp_path / "summarized"
    summarized.mkdir()
    write(summarized / "part-0.parquet", {"a": MAPPED["int64"]})
    write(summarized / "_common_metadata", {"a": MAPPED["int64"]})
    assert inferred_schema(str(summarized)) is None

    assert inferred_schema(str(folder / "*.parquet")) is None
    assert inferred_schema(str(tmp_path / "missing.parquet")) is None


def test_columns_differing_only_in_case_are_left_to_spark(tmp_path):
    path = write(tmp_path / "case.parquet", {"a": MAPPED["int64"], "A": MAPPED["int64"]})
    assert inferred_schema(path) is None


def test_a_source_read_with_the_schema_gives_spark_s_rows(spark, tmp_path):
    path = write(tmp_path / "all.parquet", MAPPED)
    schema = inferred_schema(path)
    assert schema is not None
    given = spark.read.schema(schema).parquet(path).collect()
    assert repr(given) == repr(spark.read.parquet(path).collect())  # repr: NaN equals itself


def test_no_schema_is_given_where_a_plain_path_is_not_on_the_local_file_system(spark):
    from udflow.spark_backend.read import _paths_are_local, default_fs_is_local

    hadoop = spark.sparkContext._jsc.hadoopConfiguration()
    before = hadoop.get("fs.defaultFS")
    assert _paths_are_local(spark) and default_fs_is_local(spark)
    hadoop.set("fs.defaultFS", "hdfs://namenode:8020")
    try:  # the session's answer is read once (the default file system is set before it starts)
        assert not default_fs_is_local(spark)
    finally:
        hadoop.set("fs.defaultFS", before) if before is not None else hadoop.unset("fs.defaultFS")
    assert default_fs_is_local(spark)


def _jobs_in(spark, run):
    """`run()`'s value and the Spark jobs it started."""
    group = f"udflow-test-{id(run)}"
    spark.sparkContext.setLocalProperty("spark.jobGroup.id", group)
    try:
        value = run()
    finally:
        spark.sparkContext.setLocalProperty("spark.jobGroup.id", None)
    return value, list(spark.sparkContext.statusTracker().getJobIdsForGroup(group))


SHAPES = {  # how the DataFrame takes the file's columns: as they are, reordered, renamed
    "as_written": lambda df: df,
    "reordered": lambda df: df.select("k", "c"),
    "renamed": lambda df: df.withColumnRenamed("c", "renamed").select("k", "renamed"),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
@pytest.mark.parametrize("name", sorted(MAPPED))
def test_a_parquet_read_gives_its_first_records_without_a_job_as_spark_collects_them(spark, tmp_path, name, shape):
    from udflow.spark_backend import file_stats, frames

    path = write(tmp_path / "t.parquet", {"c": MAPPED[name], "k": (pa.int64(), [1, 2])})
    df = SHAPES[shape](spark.read.parquet(path))
    assert file_stats.parquet_read(df) is not None
    got, jobs = _jobs_in(spark, lambda: frames.head(df, 10))
    assert not jobs
    assert repr(got) == repr([r.asDict() for r in df.collect()])


@pytest.mark.parametrize("make", [
    lambda df: df.filter("k > 1"),  # fewer rows than the files'
    lambda df: df.withColumn("k", df["k"] + 1),  # a computed column
])
def test_any_other_plan_over_parquet_is_read_by_spark(spark, tmp_path, make):
    from udflow.spark_backend import file_stats, frames

    path = write(tmp_path / "t.parquet", {"k": (pa.int64(), [1, 2])})
    df = make(spark.read.parquet(path))
    assert file_stats.parquet_read(df) is None
    got, jobs = _jobs_in(spark, lambda: frames.head(df, 10))
    assert jobs and got == [r.asDict() for r in df.collect()]


def test_a_parquet_read_of_other_types_is_read_by_spark_and_its_keys_counted_in_the_files(spark, tmp_path):
    from udflow.spark_backend import file_stats, frames

    stamp = LEFT_TO_SPARK["timestamp_utc"]
    path = write(tmp_path / "t.parquet", {"t": stamp, "k": (pa.int64(), [7, 7])})
    df = spark.read.parquet(path)
    read = file_stats.parquet_read(df)
    assert read is not None and read.head(10, df.schema) is None  # a timestamp: Spark's values
    got, jobs = _jobs_in(spark, lambda: frames.head(df, 10))
    assert jobs and [r["k"] for r in got] == [7, 7]
    assert read.distinct("k") == 1 and read.distinct("t") == 1 and read.distinct("nothing") is None
