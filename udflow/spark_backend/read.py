"""Reading a Source into a DataFrame: parquet, CSV with its types, a DataFrame or table, rows."""

from __future__ import annotations

import os
from typing import Optional

from pyspark.sql import DataFrame, SparkSession
from pyspark.sql.types import DoubleType, StructType

from udflow import sources
from udflow.plan import Source
from udflow.spark_backend import connect
from udflow.spark_backend.memo import remembered, select_expr
from udflow.spark_backend.parquet_schema import inferred_schema
from udflow.spark_backend.schema import rows_schema
from udflow.spark_backend.sql import ident


def read_source(spark: SparkSession, node: Source, taken: Optional[set] = None) -> DataFrame:
    """The source's records as a DataFrame, each column renamed with the source's prefix.

    A file source read again gives the DataFrame of its first read while its files are as
    they were (`file_read`); `taken` (one lowering's) holds the reads handed out already, so
    that two sources over the same files in one plan get DataFrames of their own."""
    if node.in_memory:
        schema = rows_schema(node.label, node.fields, list(node.rows))
        doubles = {f.name for f in schema.fields if isinstance(f.dataType, DoubleType)}
        data = [
            tuple(float(r.get(f)) if f in doubles and r.get(f) is not None else r.get(f) for f in node.fields)
            for r in node.rows
        ]
        return rows_frame(spark, data, schema)
    if node.is_dataframe:
        return _dataframe_read(node, taken)
    key = file_read(spark, node)
    if key is None or (taken is not None and key in taken):
        return _read_file(spark, node)
    if taken is not None:
        taken.add(key)
    return remembered(spark, "file_reads", key, lambda: _read_file(spark, node))


def rows_frame(spark: SparkSession, data: list[tuple], schema: StructType) -> DataFrame:
    """In-memory rows as a DataFrame the JVM holds (a LocalRelation), built through Arrow.

    `createDataFrame` of a list on a classic session is a scan of a Python RDD: every job over
    it starts Python workers to unpickle the rows, and a job that fails (a native term's
    `raise_error`) takes its workers down with it, so the next job forks new ones. An Arrow
    table becomes a LocalRelation, read by the JVM alone. Its values are the list's for every
    type `rows_schema` gives (tests/test_read_rows.py). Each column is converted by
    `arrow_values.exact_array`, which refuses a conversion that would change a value (pyarrow
    truncates a float into an int column); a value refused, or one Arrow cannot convert (a
    lone surrogate in a str), takes the list's path, which reports it as PySpark does. Spark
    Connect builds a LocalRelation from a list itself."""
    if connect.is_connect(spark) or not schema.fields:  # no columns: an Arrow table would lose the row count
        return spark.createDataFrame(data, schema)
    import pyarrow as pa
    from pyspark.sql.pandas.types import to_arrow_schema

    from udflow.spark_backend.arrow_values import exact_array

    arrow_schema = to_arrow_schema(schema, timezone="UTC")
    try:
        columns = [exact_array([row[i] for row in data], field.type) for i, field in enumerate(arrow_schema)]
    except (pa.ArrowException, OverflowError, TypeError, ValueError):
        return spark.createDataFrame(data, schema)
    return spark.createDataFrame(pa.Table.from_arrays(columns, schema=arrow_schema), schema)


def _read_file(spark: SparkSession, node: Source) -> DataFrame:
    df = _read_csv(spark, node) if node.format == "csv" else _read_parquet(spark, _path(spark, node.path))
    if not node.prefix and list(node.columns) == df.columns:
        return df  # a fresh read of a file with the source's columns: a projection costs an analysis
    return _renamed(df, node)


def _dataframe_read(node: Source, taken: Optional[set]) -> DataFrame:
    """A DataFrame source's records: its DataFrame itself where its columns are the source's
    (no prefix, the same names in order) and this lowering has not handed it out already;
    else a renaming projection, whose new attribute ids keep two uses of one DataFrame in a
    plan (a self-join) apart."""
    df = node.dataframe
    key = ("dataframe", id(df))
    if taken is not None and key not in taken and not node.prefix and list(node.columns) == df.columns:
        taken.add(key)
        return df
    return _renamed(df, node)


def _renamed(df: DataFrame, node: Source) -> DataFrame:
    return select_expr(df, [f"{ident(c)} AS {ident(node.prefix + c)}" for c in node.columns])


def file_read(spark: SparkSession, node: Source) -> Optional[tuple]:
    """What a read of the source depends on: its format, columns, prefix and declared types,
    and every entry under its path as it is now (name, size, modification time, inode), or
    None where that is not known here (a remote file system, a Connect session, a tree
    over `sources.MAX_LISTED` entries).

    Each `collect()` or `to_spark()` lowers its plan afresh, and `spark.read` costs a
    round of JVM calls and a file listing per source (TPC-H Q7 reads six). A DataFrame is
    immutable and its reads take the files as they were listed: while the listing is the
    same, the same DataFrame reads the same data."""
    if connect.is_connect(spark) or "://" in node.path or not _paths_are_local(spark):
        return None
    listing = sources.listing(node.path)
    if listing is None:
        return None
    types = tuple(node.types) if node.format == "csv" else ()
    return (node.format, os.path.abspath(node.path), listing, tuple(node.columns), node.prefix, types)


def _read_parquet(spark: SparkSession, path: str) -> DataFrame:
    """Spark's own read, given the schema it would infer when udflow can tell it from the
    footers (Spark then skips inferring it: `parquet_schema`)."""
    schema = inferred_schema(path) if _paths_are_local(spark) else None
    return (spark.read.schema(schema) if schema is not None else spark.read).parquet(path)


def _paths_are_local(spark: SparkSession) -> bool:
    """Whether Spark reads a path without a scheme from the local file system, where udflow
    reads the footers (not so where the default file system is HDFS, say)."""
    if connect.is_connect(spark):  # no Hadoop configuration here: the server must be this machine
        return connect.paths_are_local(spark)
    # asked once per session (two round trips, for each source of each lowering): the default
    # file system is the cluster's, set before the session starts
    return remembered(spark, "paths_local", None, lambda: default_fs_is_local(spark))


def default_fs_is_local(spark: SparkSession) -> bool:
    """Whether the Hadoop configuration's default file system is the local one, as it is now."""
    return (spark.sparkContext._jsc.hadoopConfiguration().get("fs.defaultFS") or "file:///").startswith("file:")


def _read_csv(spark: SparkSession, node: Source) -> DataFrame:
    """A CSV read with the source's types (declared or inferred when it was built), as the
    reference interpreter reads it: RFC 4180 quotes, quoted newlines, a value the type
    does not admit an error (FAILFAST), an empty field None. Spark reads a file with
    `multiLine` in one task (it cannot split it where a record might continue): only
    where a quoted field may hold a newline (`may_hold_quoted_newlines`)."""
    multiline = not _paths_are_local(spark) or any(_scanned(spark, f) for f in sources.data_files(node.path))
    return (
        spark.read.schema(sources.ddl(node.types))
        .option("header", "true")
        .option("mode", "FAILFAST")
        .option("multiLine", str(multiline).lower())
        .option("escape", '"')
        .option("nanValue", "NaN").option("positiveInf", "Inf").option("negativeInf", "-Inf")
        .option("dateFormat", "yyyy-MM-dd")
        .csv(_path(spark, node.path))
    )


def _path(spark: SparkSession, path: str) -> str:
    """The path as Spark should read it: a Connect server runs in a folder of its own."""
    return connect.server_path(spark, path) if connect.is_connect(spark) else path


CHUNK = 64 * 1024 * 1024
SCANNED_BYTES = 1024**3  # a larger file is read with multiLine: no scan on the driver


def _scanned(spark: SparkSession, path: str) -> bool:
    """`may_hold_quoted_newlines`, remembered by the session for the file as it is now (its
    size, modification time and inode): a large file takes a tenth of a second or more to
    scan, and each `to_spark()` reads the source again."""
    try:
        stat = os.stat(path)
    except OSError:
        return True
    key = (os.path.abspath(path), stat.st_size, stat.st_mtime_ns, stat.st_ino)
    return remembered(spark, "newline_scans", key, lambda: may_hold_quoted_newlines(path))


def may_hold_quoted_newlines(path: str) -> bool:
    """Whether a newline of the file may stand inside a quoted field (RFC 4180: an escaped
    quote is two quotes, so a newline is inside quotes exactly where the quotes before it
    are odd in number). True for a compressed file, one that cannot be read here or one
    over SCANNED_BYTES; a plain file is scanned at memory speed, chunk by chunk."""
    import numpy as np

    if path.lower().endswith((".gz", ".bz2", ".zip", ".xz", ".zst")):
        return True
    try:
        if os.path.getsize(path) > SCANNED_BYTES:
            return True
        with open(path, "rb") as fh:
            before = 0  # quotes in the chunks read so far
            while chunk := fh.read(CHUNK):
                if before % 2 == 0 and b'"' not in chunk:  # no quote open, none opened (memchr speed)
                    continue
                data = np.frombuffer(chunk, dtype=np.uint8)
                quotes = np.flatnonzero(data == ord('"'))
                breaks = np.flatnonzero((data == ord("\n")) | (data == ord("\r")))
                if np.any((np.searchsorted(quotes, breaks) + before) & 1):
                    return True
                before += len(quotes)
    except OSError:
        return True
    return False
