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

from typing import Any, Optional

from pyspark.errors import AnalysisException
from pyspark.sql import DataFrame

from udflow.errors import FlowConstructionError
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
        return spark.table(table)
    except AnalysisException as exc:
        first = str(exc).strip().splitlines()[0]
        raise FlowConstructionError(f"source {name!r}: cannot read table {table!r}: {first}") from None


def column_types(df: DataFrame) -> tuple[tuple[str, str], ...]:
    return tuple((f.name, f.dataType.simpleString()) for f in df.schema.fields)


def size_estimate(df: DataFrame) -> tuple[int, int]:
    """(rows, bytes) of the DataFrame as Catalyst estimates them, without running it.

    A row count comes from a statistic when Catalyst has one (a table analysed with
    `ANALYZE TABLE ... COMPUTE STATISTICS`), from the parquet footers when the plan only
    reads and projects parquet files, and otherwise from its size estimate over its
    row size (exact for in-memory data; for other files, bytes on disk over row bytes)."""
    plan = df._jdf.queryExecution().optimizedPlan()
    stats = plan.stats()
    size = int(stats.sizeInBytes().toString())
    if stats.rowCount().isDefined():
        return int(stats.rowCount().get().toString()), size
    footers = _parquet_footer_rows(df, plan)
    if footers is not None:
        return footers, size
    return max(1, size // (8 + int(df._jdf.schema().defaultSize()))), size


def _parquet_footer_rows(df: DataFrame, plan: Any) -> Optional[int]:
    """The row count in the parquet footers of the files a read-and-project plan reads."""
    kinds = set(_node_kinds(plan))
    if not kinds <= {"Project", "LogicalRelation"}:
        return None
    files = df.inputFiles()
    if not files or not all(f.endswith(".parquet") for f in files):
        return None
    import pyarrow.parquet as pq

    try:
        return sum(pq.ParquetFile(_local(f)).metadata.num_rows for f in files)
    except (OSError, ValueError):
        return None  # not readable from the driver (a remote filesystem): fall back to bytes


def _local(uri: str) -> str:
    return uri[len("file:"):] if uri.startswith("file:") else uri


def _node_kinds(plan: Any):
    """The class names of a Catalyst plan's nodes."""
    yield plan.getClass().getSimpleName()
    children = plan.children()
    for i in range(children.size()):
        yield from _node_kinds(children.apply(i))
