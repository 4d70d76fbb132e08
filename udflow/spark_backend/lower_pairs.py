"""Lowering the binary operators (Match, Cross, CoGroup): a mixin of `lower.Lowering`.

    Match, fn=None      native inner equi-join (a None key matches nothing)
    Cross, fn=None      native crossJoin
    Match/Cross, fn     the join, then fn's model over the concatenated pair (native_ops),
                        or fn per joined row (mapInArrow)
    CoGroup             groupBy(key).cogroup(groupBy(key)).applyInArrow

The mixin reads the lowering's `physical`, `hints`, `lower`, `typed`, `_natively`,
`_python`, `_encoder` and `_source_types`.
"""

from __future__ import annotations

from typing import Callable, Optional

from pyspark.sql import DataFrame
from pyspark.sql.types import StructType

from udflow.plan import CoGroup, Cross, Match, function_location
from udflow.spark_backend import collisions, functions, general_case, native_ops
from udflow.spark_backend import udf as executor
from udflow.spark_backend.grouping import cogroup_keys
from udflow.spark_backend.hints import hinted_inputs
from udflow.spark_backend.lowered import Lowered
from udflow.spark_backend.native import col
from udflow.spark_backend.nullness import data_nonnull, data_types, magnitudes_of
from udflow.spark_backend.schema import clashing_keys, key_type_error
from udflow.spark_backend.sql import ident
from udflow.spark_backend.udf import Udf, translated


class PairLowering:
    """Match, Cross and CoGroup, as `lower.Lowering` lowers them."""

    def match(self, node: Match, key: Optional[tuple]) -> Lowered:
        left, right = self._aligned(node, *self._hinted(node))
        on = functions.expr(" AND ".join(f"{ident(a)} = {ident(b)}" for a, b in zip(node.left_key, node.right_key)))
        keys = frozenset(node.left_key) | frozenset(node.right_key)  # a None key matches nothing
        return self._pairs(node, left, right, lambda r: left.join(r, on, "inner"), key,
                           self._sides_nonnull(node) | keys)

    def cross(self, node: Cross, key: Optional[tuple]) -> Lowered:
        left, right = self._hinted(node)
        return self._pairs(node, left, right, left.crossJoin, key, self._sides_nonnull(node))

    def _sides_nonnull(self, node: Match | Cross) -> frozenset:
        """The fields the operators below either side prove never None."""
        return self.lower(node.left).nonnull | self.lower(node.right).nonnull

    def _sides_magnitudes(self, node: Match | Cross) -> dict:
        """The magnitudes the operators below either side prove (the sides' fields are disjoint)."""
        return {**self.lower(node.left).magnitudes, **self.lower(node.right).magnitudes}

    def _sides_nonzero(self, node: Match | Cross) -> frozenset:
        """The fields the operators below either side prove never 0."""
        return self.lower(node.left).nonzero | self.lower(node.right).nonzero

    def _pairs(self, node: Match | Cross, left: DataFrame, right: DataFrame, join: Callable, key: Optional[tuple],
               nonnull: frozenset) -> Lowered:
        shared = collisions.shared_columns(left, right) if node.fn is None else []
        if shared:  # a field construction could not see on both sides: refused on the first pair
            joined = collisions.refused(node.label, join(collisions.renamed_apart(right, shared)), shared)
            return Lowered(joined, pickled=False, nonnull=nonnull)
        joined = join(right)
        if node.fn is None:  # concatenation {**l, **r}: the join's own output
            return Lowered(joined, pickled=False, nonnull=nonnull, magnitudes=self._sides_magnitudes(node),
                           nonzero=self._sides_nonzero(node))
        udf = Udf(node.label, function_location(node.fn), node.fn, "pair", tuple(left.columns))
        native = self._native_pairs(node, joined, nonnull, udf)
        if native is not None:
            return native
        inp = Lowered(joined, pickled=False)
        run = executor.map_partitions
        return self._python(node, udf, inp, key, lambda enc, schema: joined.mapInArrow(run(udf, False, enc), schema))

    def _native_pairs(self, node: Match | Cross, joined: DataFrame, known: frozenset, udf: Udf) -> Optional[Lowered]:
        """A Match/Cross function with a model, run natively over the joined row: its model is
        a Map's over the concatenated pair (the two sides' fields are disjoint), and the pairs
        outside its normal case run in Python as a Map's rows do (`general_case`)."""
        step = self.physical[node.label]
        if not step.native:
            return None
        nonnull = data_nonnull(node.left) | data_nonnull(node.right) | known
        below = self._sides_magnitudes(node)
        magnitudes = {**below, **magnitudes_of(data_types(node.left, self._source_types)),
                      **magnitudes_of(data_types(node.right, self._source_types))}
        nonzero = self._sides_nonzero(node)
        return self._natively(node, lambda where: general_case.split(
            node, joined, lambda df, assumed=None: native_ops.run(df, step.model, where, nonnull, (), magnitudes,
                                                                  nonzero, assumed), udf,
            lambda schema: self._encoder(udf, schema), (step.model, where)), below, nonzero)

    def cogroup(self, node: CoGroup, key: Optional[tuple]) -> Lowered:
        left, right = self._aligned(node, self.typed(node.left), self.typed(node.right))
        udf = Udf(node.label, function_location(node.fn), node.fn, "cogroup")
        left_cols, right_cols = cogroup_keys(node, left.schema, right.schema)
        groups = left.groupBy(*left_cols).cogroup(right.groupBy(*right_cols))
        keys = (node.left_key, node.right_key)
        inp = Lowered(left, pickled=False, input_schema=StructType(left.schema.fields + right.schema.fields))
        run = executor.cogroup_groups
        return self._python(node, udf, inp, key, lambda enc, schema: groups.applyInArrow(run(udf, keys, enc), schema))

    def _aligned(self, node: Match | CoGroup, left: DataFrame, right: DataFrame) -> tuple[DataFrame, DataFrame]:
        """Both sides, refused when a key pair's types would be compared differently by Spark
        and by Python (`udflow.keytypes`) and both hold values. A side whose key holds no
        value at all (an empty input typed `string` for want of a value) is cast to the other
        side's type instead: nulls compare alike everywhere. Only a clash costs a Spark job."""
        for lk, rk in clashing_keys(left.schema, node.left_key, right.schema, node.right_key):
            lt, rt = left.schema[lk].dataType, right.schema[rk].dataType
            if not _has_value(left, lk):
                left = left.withColumn(lk, col(lk).cast(rt))
            elif not _has_value(right, rk):
                right = right.withColumn(rk, col(rk).cast(lt))
            else:
                raise key_type_error(node.label, lk, lt, rk, rt)
        return left, right

    def _hinted(self, node: Match | Cross) -> tuple[DataFrame, DataFrame]:
        return hinted_inputs(node.label, self.typed(node.left), self.typed(node.right), self.hints.get(node.label))


def _has_value(df: DataFrame, name: str) -> bool:
    with translated():
        return bool(df.where(col(name).isNotNull()).limit(1).count())
