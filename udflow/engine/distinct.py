"""Distinct counts of key fields in any subtree: what join and grouping estimates read.

A mixin of `CostModel` (it reads the model's estimates, profiles, source statistics and
memos). Two kinds of count:

- `_domain(node, f)`: distinct values of `f` where they come from: its source, or the
  operator that creates it (the sample's count extrapolated to that operator's rows).
  A Match's selectivity reads these: they do not depend on what lies between, so any
  order of the same joins and filters gets the same count.
- `_distinct_field(node, f)`: distinct values of `f` in `node`'s output: the domain,
  then through each filter or Reduce the share of values it keeps (`keysample.kept_share`),
  through a Match on `f` the smaller of the two keys' counts, never more than the rows.
  A Reduce's groups and a CoGroup read these.
"""

from __future__ import annotations

from typing import Optional

from udflow.engine.keysample import kept_share, scaled_distinct
from udflow.plan import Match, Node, Source


class KeyCounts:
    """Distinct counts for `CostModel` (see the module docstring)."""

    def _distinct_of_fields(self, node: Node, fields) -> Optional[float]:
        """Distinct values of a field combination in `node`'s output; None if a field is unknown."""
        total = 1.0
        for f in fields:
            d = self._distinct_field(node, f)
            if d is None:
                return None
            total *= d
        return min(total, self.estimate(node).rows)

    def _distinct_field(self, node: Node, field: str) -> Optional[float]:
        """Distinct values of `field` in `node`'s output: a source's count; a created field's
        sampled count scaled to the creator's rows; through a unary operator, its input's
        times the share the sample kept (`retention`); through a Match on the field, the
        smaller of the two keys' counts; at most the rows of `node`."""
        key = (self.interner.id_of(node), field)
        if key in self._distinct:
            return self._distinct[key]
        found = self._source_distinct(node, field) if isinstance(node, Source) else self._created(node, field)
        if found is None and not isinstance(node, Source):
            found = self._carried_distinct(node, field)
        if found is not None:
            found = min(found, self.estimate(node).rows)
        self._distinct[key] = found
        return found

    def _carried_distinct(self, node: Node, field: str) -> Optional[float]:
        child = self._carrier(node, field)
        if child is None:
            return None
        found = self._distinct_field(child, field)
        if found is None:
            return None
        if isinstance(node, Match) and field in node.left_key + node.right_key:
            pairs = dict(zip(node.left_key, node.right_key)) | dict(zip(node.right_key, node.left_key))
            other = self._distinct_field(node.inputs[1 - node.inputs.index(child)], pairs[field])
            return min(found, other) if other is not None else found
        correlation = dict(self._profile(node).retention).get(field) if node.label in self.profiles else None
        if node.arity == 1 and correlation is not None:
            rows_in, rows_out = self.estimate(child).rows, self.estimate(node).rows
            if rows_in > 0 and found > 0:
                return found * kept_share(correlation, rows_out / rows_in, rows_in / found)
        return found

    def _domain_of_fields(self, node: Node, fields, sources_only: bool = False) -> Optional[float]:
        total = 1.0
        for f in fields:
            d = self._domain(node, f)
            if sources_only and self._created_anywhere(node, f):
                return None
            if d is None:
                return None
            total *= d
        return total

    def _domain(self, node: Node, field: str) -> Optional[float]:
        """Distinct values of `field` where they come from: its source, or the operator that
        creates it (the sample's count scaled to that operator's rows); None if unknown."""
        key = (self.interner.id_of(node), field)
        if key in self._domains:
            return self._domains[key]
        if isinstance(node, Source):
            found = self._source_distinct(node, field)
        else:
            found = self._created(node, field)
            if found is None:
                child = self._carrier(node, field)
                found = self._domain(child, field) if child is not None else None
        self._domains[key] = found
        return found

    def _created_anywhere(self, node: Node, field: str) -> bool:
        """Whether an operator of `node`'s subtree creates `field` (it has no source domain)."""
        return any(n.label in self.profiles and any(c[0] == field for c in self._profile(n).created)
                   for n in node.walk())

    def _source_distinct(self, node: Source, field: str) -> Optional[float]:
        if field not in node.fields:
            return None
        stats = self.sources[node.label]
        d = stats.distinct_of(field)
        if d is None and node.key == (field,):
            d = stats.rows
        return float(d) if d is not None else None

    def _created(self, node: Node, field: str) -> Optional[float]:
        """A field `node` creates: its sampled distinct count, scaled to `node`'s rows."""
        if node.label not in self.profiles:
            return None
        for name, distinct, half, sampled in self._profile(node).created:
            if name == field:
                return scaled_distinct(distinct, half, sampled, self.estimate(node).rows)
        return None

    def _carrier(self, node: Node, field: str) -> Optional[Node]:
        """The input of `node` whose output has `field` (the first, if fields are unknown)."""
        for child in node.inputs:
            carried = self._output_fields(child)
            if carried is None or field in carried:
                return child
        return None
