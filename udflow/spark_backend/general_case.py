"""The general case of a native Map, filter or join function: the rows its native form cannot hold, run in Python.

Tuplex's split, on Spark (issue 29, item 4). `native_ops.run` gives the operator's
native form and, where a guard of what that form holds could fire (an int past 64
bits, an `int / int` past 2**53), the normal case that proves it does not
(`native_spans.NormalCase`: the int columns it reads within a bound). Then

    normal rows:  df.filter(|a| <= B or a is None)  -> the native form (its limits never fire)
    other rows:   df.filter(NOT ...)                 -> the user's function, record by record
    result:       the union of the two, by name

so every row gets what Python gives it: its value, or its error in Python's words. The
bound is a comparison with constants, which Spark pushes into a Parquet scan: row groups
whose statistics lie inside it are skipped by the general side without being read. The
general side costs one more pass over the operator's input where that input is not a
scan (the sides do not share it), so it is taken only where a limit could fire.

A Match's or Cross's function splits the joined pairs the same way (its model is a Map's
over the concatenated pair); the join itself runs for both sides.
"""

from __future__ import annotations

from typing import Callable

from pyspark.sql import DataFrame

from udflow.plan import Cross, Map, Match
from udflow.spark_backend import udf as executor
from udflow.spark_backend.native_ops import Ran
from udflow.spark_backend.udf import Encoder, Udf


def split(node: Map | Match | Cross, df: DataFrame, run: Callable[[DataFrame], Ran], udf: Udf,
          encoder: Callable[[object], Encoder]) -> Ran:
    """`run(df)` (the node natively over `df`), with the rows outside its normal case computed
    by `udf` in Python where there is one; its `normal` is the split's, None where there is
    none. `encoder(schema)` encodes records of a Spark schema."""
    ran = run(df)
    normal = ran.normal
    if normal is None or not set(normal.columns) <= set(df.columns):
        return Ran(ran.frame, ran.nonnull)  # no split: its limits raise where they fire
    native = run(df.filter(normal.rows()))
    others = df.filter(normal.other_rows()).coalesce(1)
    if isinstance(node, Map) and node.is_filter:
        general = others.mapInArrow(executor.filter_partitions(udf, False), others.schema)
    else:
        schema = native.frame.schema
        general = others.mapInArrow(executor.map_partitions(udf, False, encoder(schema)), schema)
    return Ran(native.frame.unionByName(general), native.nonnull, normal)
