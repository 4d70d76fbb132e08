"""A concatenation whose inputs share a column: refused at run time, as the reference
interpreter refuses it (`errors.FieldCollisionError`), never Spark's raw
AMBIGUOUS_REFERENCE nor a silent choice of one side.

Construction refuses a concatenation whose inputs' fields are known to meet; what is left
are fields a function the analysis cannot read may have made. The right input's shared
columns are renamed apart before the join, and the join's output is filtered through a
`raise_error` naming the first of them: Spark raises on the first joined row, where Python
raises on the first pair that carries the field on both sides.

    left  {k, x}   right {k2, x}    ->  left.join(right.x AS __udflow_right_x, ...)
                                          .where(raise_error('<<udflow:...>>') IS NULL)
"""

from __future__ import annotations

from pyspark.sql import DataFrame
from pyspark.sql import functions as F

from udflow.errors import collision_message
from udflow.spark_backend import functions
from udflow.spark_backend.udf import MarkedFailure, typed_message

RENAMED = "__udflow_right_"


def shared_columns(left: DataFrame, right: DataFrame) -> list:
    """The user's columns both inputs hold (udflow's own hidden columns aside)."""
    right_columns = set(right.columns)
    return sorted(c for c in left.columns if c in right_columns and not c.startswith("__udflow"))


def renamed_apart(right: DataFrame, shared: list) -> DataFrame:
    return right.select(*[F.col(f"`{c}`").alias(RENAMED + c) if c in shared else F.col(f"`{c}`")
                          for c in right.columns])


def refused(label: str, joined: DataFrame, shared: list) -> DataFrame:
    """`joined`, raising on its first row. The condition is pinned (nondeterministic) so that
    Catalyst neither folds it nor pushes it below the join, onto rows that do not pair."""
    marker = MarkedFailure(typed_message("FieldCollisionError", collision_message(label, shared[0]))).args[0]
    pin = "IF(spark_partition_id() < 0, '?', '')"
    return joined.where(functions.expr(f"raise_error(concat('{marker}', {pin})) IS NULL")) \
        .drop(*[RENAMED + c for c in shared])
