"""Which session a DataFrame belongs to, and the reader of its plan (classic or Spark Connect)."""

from __future__ import annotations

from typing import Any

from udflow.frontend.catalyst import FrontendError, Reader


def is_connect(df: Any) -> bool:
    return type(df).__module__.startswith("pyspark.sql.connect")


def session_of(df: Any):
    spark = getattr(df, "sparkSession", None)
    if spark is None or not (hasattr(df, "_jdf") or is_connect(df)):
        raise FrontendError(f"from_spark takes a PySpark DataFrame, got {type(df).__name__}")
    if df.isStreaming:
        raise FrontendError("from_spark takes a batch DataFrame; this one is streaming")
    return spark


def reader_of(df: Any, spark):
    if is_connect(df):
        from udflow.frontend.connect_plan import ConnectReader

        return ConnectReader(spark)
    return Reader(spark)
