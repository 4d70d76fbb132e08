"""Existing PySpark code, opened as it is: `from_spark(df)` turns a DataFrame with Python UDFs
into a flow.

    df = (spark.read.parquet("trips.parquet")
          .withColumn("minutes", F.udf(minutes, "double")("pickup_ts", "dropoff_ts"))
          .filter(F.udf(plausible, "boolean")("minutes")))
    flow = uf.from_spark(df, keys={"trips": ["trip_id"]})
    fast = uf.optimize(flow).best.to_spark()          # or: uf.optimize_dataframe(df)

The parts of the DataFrame without a Python UDF become sources; the UDFs, and the
relational operators between them, become the flow's operators, each UDF analysed
with its parameters bound to its argument columns (`synthesize`), so that it runs
natively where its model allows and reorders like any function. What udflow does
not translate stays as written (`explain()` lists it under "From PySpark").
"""

from __future__ import annotations

from typing import Any, Mapping, Optional

from udflow.errors import closest
from udflow.frontend.catalyst import FrontendError
from udflow.frontend.sessions import reader_of, session_of
from udflow.frontend.translate import KeptPart, Opened, Translation

__all__ = ["from_spark", "optimize_dataframe", "suggest", "FrontendError", "KeptPart"]


def from_spark(df: Any, *, keys: Optional[Mapping] = None, foreign_keys: Optional[Mapping] = None):
    """The flow of PySpark DataFrame `df` (see the module's docstring).

    `keys` maps a source's name to its key columns; `foreign_keys` maps a source's name to
    `{(column, ...): (other source, (its column, ...))}`. Sources are named after their files
    (`trips.parquet` -> `trips`) or `source`, `source_2`, ...; `opened(flow)` lists them.
    """
    return open_dataframe(df, keys=keys, foreign_keys=foreign_keys).flow


def open_dataframe(df: Any, *, keys: Optional[Mapping] = None, foreign_keys: Optional[Mapping] = None) -> Opened:
    """`from_spark`'s whole answer: the flow, and what stays as written and why."""
    spark = session_of(df)
    keys = {name: ([k] if isinstance(k, str) else list(k)) for name, k in (keys or {}).items()}
    foreign = {name: dict(fk) for name, fk in (foreign_keys or {}).items()}
    translation = Translation(reader_of(df, spark), keys, foreign)
    root = translation.reader.read(df)
    flow = translation.root(root)
    columns = tuple(df.columns)
    _check_names(flow, keys, foreign)
    flow = _with_origin(flow, tuple(translation.kept), tuple(translation.udfs))
    return Opened(flow, columns, tuple(translation.kept), tuple(translation.udfs))


def optimize_dataframe(df: Any, *, keys: Optional[Mapping] = None, foreign_keys: Optional[Mapping] = None):
    """`df`, optimized: `uf.optimize(uf.from_spark(df)).chosen.to_spark()`, with df's columns in
    df's order."""
    from udflow.engine import optimize

    opened = open_dataframe(df, keys=keys, foreign_keys=foreign_keys)
    return optimize(opened.flow).best.to_spark(spark=df.sparkSession, fields=list(opened.columns))


def suggest(df: Any):
    """For each Python UDF of `df`, the PySpark Column equal to it, or why none is
    (`frontend.suggest`); print them, one per line."""
    from udflow.frontend.suggest import suggest as suggestions

    return suggestions(df)


def _check_names(flow, keys: dict, foreign: dict) -> None:
    names = {s.table for s in flow.sources}
    for what, given in (("keys", keys), ("foreign_keys", foreign)):
        for name in given:
            if name not in names:
                raise FrontendError(f"from_spark: {what} names source {name!r}, which the DataFrame does not "
                                    f"have;{closest(name, names) or ''} (sources: {', '.join(sorted(names))})")


def _with_origin(flow, kept: tuple, udfs: tuple):
    import dataclasses

    return dataclasses.replace(flow, origin=(kept, udfs))
