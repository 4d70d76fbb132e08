"""The fields a Reduce's key determines, so that it can group by them instead of taking them
from one record of the group (`first(struct(...))`, which Spark cannot hash-aggregate).

    Reduce[pickup_zone](f)                  every record of a pickup_zone group joined the
      Match(pickup_zone=zone_id)            same zones row (zone_id is zones' key and equals
        ...                                 pickup_zone): zone_id, borough, zone are the same
        Source(zones, key=zone_id)          throughout the group, so groupBy(pickup_zone,
                                            zone_id, borough, zone) makes the same groups

A side of a concatenating Match is determined when it is a source joined on exactly its
declared key and the join fields of either side lie in the Reduce's key. Filters and Reduces
that keep or drop whole groups (`forwards_groups`) above the Match keep records unchanged and
are looked through: a subset of the records keeps every dependency. Anything else ends the
search.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, FloatType, StructType

from udflow.fields import properties_of
from udflow.plan import CoGroup, Map, Match, Node, Reduce, Source
from udflow.spark_backend.native import col
from udflow.spark_backend.schema import common_key_type


def determined_fields(node: Node, key: tuple) -> frozenset:
    """Fields of `node`'s records that hold one value throughout each group of `key`."""
    while _keeps_records(node):
        node = node.input
    if not isinstance(node, Match) or node.fn is not None:
        return frozenset()
    out: set = set()
    sides = ((node.right, node.right_key, node.left_key), (node.left, node.left_key, node.right_key))
    for side, side_key, other_key in sides:
        joined_on_key = isinstance(side, Source) and side.key is not None and set(side.key) == set(side_key)
        if joined_on_key and (set(other_key) <= set(key) or set(side_key) <= set(key)):
            out |= set(side.fields)
    return frozenset(out) - set(key)


def _keeps_records(node: Node) -> bool:
    """A filter, or a Reduce emitting each group whole or not at all: records pass unchanged."""
    if isinstance(node, Map):
        return node.is_filter
    if isinstance(node, Reduce):
        try:
            return properties_of(node).forwards_groups
        except Exception:  # noqa: BLE001 - not analysed: it may change anything
            return False
    return False


def cogroup_keys(node: CoGroup, left: StructType, right: StructType) -> tuple[list[Column], list[Column]]:
    """The grouping columns of both sides; key columns of different (comparable) types are
    cast to one, so that 1 and Decimal("1.00") meet in one group, as they do in Python."""
    left_cols, right_cols = [], []
    for lk, rk in zip(node.left_key, node.right_key):
        common = common_key_type(left[lk].dataType, right[rk].dataType)
        for cols, name, side in ((left_cols, lk, left), (right_cols, rk, right)):
            cols.append(_group_key(col(name) if common is None else col(name).cast(common), common or side[name].dataType))
    return left_cols, right_cols


def _group_key(column: Column, data_type) -> Column:
    """-0.0 as 0.0 in a float key: one value in Python, and Spark does not normalise a
    CoGroup's keys as it does a join's (a -0.0 meeting a 0.0 failed an assertion in its
    cogrouping iterator)."""
    if not isinstance(data_type, (DoubleType, FloatType)):
        return column
    return F.when(column == 0, F.lit(0.0).cast(data_type)).otherwise(column)
