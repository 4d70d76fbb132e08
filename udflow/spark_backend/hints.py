"""Physical choices handed to Spark (`Flow.hints`, set by the cost model; docs/backend.md).

    Match, Cross   "broadcast_left" / "broadcast_right": that input broadcast (`functions.broadcast`)
                   "shuffle": a sort-merge join (Spark's `shuffle_merge` hint)
    Reduce         "broadcast_kept": a native group filter broadcasts its kept keys to the
                   semi join (`native_groups.run_group_filter`)

Any other value is refused, naming the operator.
"""

from __future__ import annotations

from typing import Optional

from pyspark.sql import DataFrame

from udflow.errors import UdflowError
from udflow.spark_backend import functions

JOIN_HINTS = ("broadcast_left", "broadcast_right", "shuffle")
REDUCE_HINTS = ("broadcast_kept",)  # a native group filter: broadcast its kept keys to the semi join


def hinted_inputs(label: str, left: DataFrame, right: DataFrame, hint: Optional[str]) -> tuple[DataFrame, DataFrame]:
    """A join's two inputs with its hint applied."""
    if hint is None:
        return left, right
    if hint == "broadcast_left":
        return functions.broadcast(left), right
    if hint == "broadcast_right":
        return left, functions.broadcast(right)
    if hint == "shuffle":
        return left.hint("shuffle_merge"), right
    raise UdflowError(f"{label}: unknown join hint {hint!r}; use one of {', '.join(JOIN_HINTS)}")


def check_reduce_hint(label: str, hint: Optional[str]) -> None:
    if hint is not None and hint not in REDUCE_HINTS:
        raise UdflowError(f"{label}: unknown Reduce hint {hint!r}; use {', '.join(REDUCE_HINTS)}")
