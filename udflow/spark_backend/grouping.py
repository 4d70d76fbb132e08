"""The fields a Reduce's key determines, so that it can group by them instead of taking them
from one record of the group (`first(struct(...))`, which Spark cannot hash-aggregate).

    Reduce[pickup_zone](f)                  every record of a pickup_zone group joined the
      Match(pickup_zone=zone_id)            same zones row (zone_id is zones' key and equals
        ...                                 pickup_zone): zone_id, borough, zone are the same
        Source(zones, key=zone_id)          throughout the group, so groupBy(pickup_zone,
                                            zone_id, borough, zone) makes the same groups

Functional dependencies, followed down the plan: a source's declared key determines its
fields; a Map keeps the dependencies among the fields it copies unchanged (each record it
emits, one or many, holds one input record's values of them: `{**r, "token": t}` per
word of `r`); a concatenating Match keeps each side's, and a side's join fields determine
that side where they determine its fields (joined on a source's key) and the other side's
join fields are determined. Filters and Reduces that keep or drop whole groups
(`forwards_groups`) keep records unchanged: a subset of the records keeps every
dependency. Anything else determines nothing but the key itself.
"""

from __future__ import annotations

from pyspark.sql import Column
from pyspark.sql import functions as F
from pyspark.sql.types import DoubleType, FloatType, StructType

from udflow.fields import output_fields, properties_of
from udflow.plan import CoGroup, Map, Match, Node, Reduce, Source
from udflow.spark_backend.native import col
from udflow.spark_backend.schema import common_key_type


def determined_fields(node: Node, key: tuple) -> frozenset:
    """Fields of `node`'s records that hold one value throughout each group of `key`."""
    return frozenset(_determined(node, frozenset(key))) - set(key)


def _determined(node: Node, key: frozenset) -> frozenset:
    """The fields of `node` that `key` (a set of its fields) determines, `key` included."""
    while _keeps_records(node):
        node = node.input
    if isinstance(node, Source):
        return frozenset(node.fields) if node.key is not None and set(node.key) <= key else key
    if isinstance(node, Map):
        unchanged = _unchanged(node)
        return _determined(node.input, key) & unchanged if key <= unchanged else key
    if isinstance(node, Match) and node.fn is None:
        return _determined_by_join(node, key)
    return key


def _determined_by_join(node: Match, key: frozenset) -> frozenset:
    """A joined record is a left and a right record: each side's fields that its share of
    `key` determines, and a side's fields that its join fields determine where the other
    side's join fields are determined."""
    sides = []
    for side in (node.left, node.right):
        fields = output_fields(side)
        if fields is None:
            return key
        sides.append(_determined(side, key & fields))
    out = key | sides[0] | sides[1]
    pairs = ((node.left, node.left_key, node.right_key), (node.right, node.right_key, node.left_key))
    for side, side_key, other_key in pairs:
        if set(other_key) <= out:
            out |= _determined(side, frozenset(side_key))
    return out


def _unchanged(node: Map) -> frozenset:
    """The fields every record the Map emits copies unchanged from its input record."""
    try:
        props = properties_of(node)
    except Exception:  # noqa: BLE001 - not analysed: it may change anything
        return frozenset()
    return frozenset(props.output_fields or ()) - props.writes


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
