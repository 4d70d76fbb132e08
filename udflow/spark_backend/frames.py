"""DataFrame and catalog-table sources: what udflow needs to know of them, without a scan.

    checked_dataframe(name, df)   the DataFrame, or an error naming the source
    catalog_table(name, "db.tbl") the table as a DataFrame of the active session
    column_types(df)              ((column, Spark type), ...) from its schema
    size_estimate(df)             (rows or None, bytes) from Catalyst's optimized-plan statistics
    head(df, n)                   its first n records as dicts, as the Spark engine returns them

Statistics for the cost model come from `size_estimate` and a bounded `head`;
nothing here runs a job over the whole DataFrame.
"""

from __future__ import annotations

from functools import lru_cache

from typing import Any, Optional

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame

from udflow.errors import FlowConstructionError
from udflow.field_types import footer_rows
from udflow.spark_backend import connect
from udflow.spark_backend.csv_read import csv_read
from udflow.spark_backend.file_stats import AS_ARROW_GIVES, parquet_read
from udflow.spark_backend.frame_files import frame_files, local_path
from udflow.spark_backend.session import get_session


def checked_dataframe(name: str, df: Any) -> DataFrame:
    if not isinstance(df, DataFrame):
        raise FlowConstructionError(
            f"source {name!r}: dataframe= must be a pyspark.sql.DataFrame, got {type(df).__name__}"
        )
    return df


def catalog_table(name: str, table: str) -> DataFrame:
    """`spark.table(table)` on the active session (or udflow's own), its absence a clear error."""
    spark = get_session()
    try:
        df = spark.table(table)
        if connect.is_connect(df):
            df.schema  # noqa: B018 - a Connect DataFrame is analysed on the server when first asked
        return df
    except AnalysisException as exc:
        first = str(exc).strip().splitlines()[0]
        raise FlowConstructionError(f"source {name!r}: cannot read table {table!r}: {first}") from None


def column_types(df: DataFrame) -> tuple[tuple[str, str], ...]:
    return tuple((f.name, f.dataType.simpleString()) for f in df.schema.fields)


def size_estimate(df: DataFrame) -> tuple[int, int]:
    """(rows, bytes) of the DataFrame as Catalyst estimates them, without running it.

    Rows come from a row-count statistic of the plan when Catalyst has one (a table
    analysed with `ANALYZE TABLE ... COMPUTE STATISTICS`); for a plan that only
    projects one leaf, from the leaf's row count (a range) or its parquet footers;
    otherwise from the plan's size estimate over its row size (exact for in-memory
    data; for other files, bytes on disk over row bytes, an underestimate). On Spark
    Connect the same statistics come from the text of `explain(mode="cost")`."""
    if connect.is_connect(df):
        return _connect_size_estimate(df)
    plan = df._jdf.queryExecution().optimizedPlan()
    stats = plan.stats()
    size = int(str(stats.sizeInBytes()))
    if stats.rowCount().isDefined():
        return int(str(stats.rowCount().get())), size
    leaf = _projected_leaf(plan)
    if leaf is not None:
        leaf_rows = leaf.stats().rowCount()
        if leaf_rows.isDefined():
            return int(str(leaf_rows.get())), size
        footers = _parquet_footer_rows(df, leaf)
        if footers is not None:
            return footers, size
    return max(1, size // (8 + int(df._jdf.schema().defaultSize()))), size


def _connect_size_estimate(df: DataFrame) -> tuple[int, int]:
    """`size_estimate` from the statistics EXPLAIN COST prints (no JVM handle on Connect): the
    same rules; bytes as printed, to three digits (`1881.9 KiB`)."""
    lines = connect.plan_lines(df)
    rows, size = connect.statistics(lines[0])
    if rows is not None:
        return rows, size
    leaf = connect.projected_leaf(lines)
    if leaf is not None:
        leaf_rows, _ = connect.statistics(leaf)
        if leaf_rows is not None:
            return leaf_rows, size
        if connect.operator(leaf) == "Relation" and connect.paths_are_local(df.sparkSession):
            footers = _parquet_footer_rows(df, None)
            if footers is not None:
                return footers, size
    return max(1, size // (8 + connect.default_size(df.schema))), size


def _projected_leaf(plan: Any) -> Any:
    """The leaf under a chain of projections (which keep the row count), else None."""
    while plan.getClass().getSimpleName() == "Project":
        plan = plan.children().apply(0)
    return plan if plan.children().size() == 0 else None


def _parquet_footer_rows(df: DataFrame, leaf: Any) -> Optional[int]:
    """The row count in the parquet footers of the files a file relation reads: on a classic
    session the relation's files as the walk kept for `df` lists them (`frame_files`), on
    Connect (`leaf` None: the caller knows it is a file relation) `df.inputFiles()`."""
    if leaf is not None:
        if leaf.getClass().getSimpleName() != "LogicalRelation":
            return None
        found = frame_files(df)
        relations = found.relations if found is not None else ()
        parquet = len(relations) == 1 and relations[0].file_format == "Parquet"
        files = relations[0].local_files() if parquet else None
    else:
        listed = df.inputFiles()
        parquet = bool(listed) and all(f.endswith(".parquet") for f in listed)
        files = [local_path(f) for f in listed] if parquet else None
        files = files if files and None not in files else None
    return footer_rows(files) if files else None  # None: not readable from the driver, fall back to bytes


def head(df: DataFrame, n: int) -> list[dict]:
    """The first `n` records, typed as the Spark engine's `collect` types them (through Arrow).
    One optimization asks for a DataFrame source's first records three times (statistics,
    sampling, output samples): the answer is kept for the DataFrame object (`_head`)."""
    return [dict(r) for r in _head(df, max(HEAD_ROWS, 1 << max(0, n - 1).bit_length()))[:n]]


HEAD_ROWS = 2048  # the optimizer asks for 2000 (statistics) and fewer (sampling)


@lru_cache(maxsize=32)
def _head(df: DataFrame, n: int) -> tuple:
    """`head` of `n` records (at least HEAD_ROWS, a power of two: the optimizer's askings for
    statistics and for sampling share one), kept per DataFrame object (DataFrames are immutable; a plan over files that
    change is read again by a new DataFrame).

    `limit(n).collect()` reads partitions one after another until it has `n` rows (Spark's
    `executeTake`); `limit(n).toArrow()` would start every partition. Columns of the types
    `collect` gives as Arrow does (numbers, bools, strings, dates, decimals) are taken as they
    are; other rows go through Arrow locally (a second job) so that timestamps (naive local
    time from `collect`), structs (Rows) and binaries (bytearrays) are what a flow's
    functions see on Spark.

    A DataFrame that is exactly the rows of local Parquet files of such types
    (`file_stats.parquet_read`) is read by pyarrow from the files' first row groups, and one
    that is exactly a small local CSV file's rows of strings and ints (`csv_read`) from the
    file: the same values, without a Spark job."""
    read = parquet_read(df)
    rows_read = read.head(n, df.schema) if read is not None else None
    if rows_read is None and (text := csv_read(df)) is not None:
        rows_read = text.head(n)
    if rows_read is not None:
        return rows_read
    rows = df.limit(n).collect()
    if all(isinstance(f.dataType, AS_ARROW_GIVES) for f in df.schema.fields):
        return tuple(r.asDict() for r in rows)
    return tuple(df.sparkSession.createDataFrame(rows, df.schema).toArrow().to_pylist())

