"""What the sample says about key fields: the figures join and grouping estimates need.

The sample run (`statistics.profile_functions`) holds every operator's sampled
output. From it, per operator of the plan as written:

- `created`: for each key field the operator creates (a Map that tokenizes into
  `word`, a Reduce that computes `l_year`), its distinct values over the sampled
  records and over their first half, and the records: `scaled_distinct` scales
  them to the operator's estimated rows.
  Without them a join on a created field was estimated as a key join (every
  record finding one partner): 305 rows where 281,550 came out.
- `retention`: for each key field the operator carries, how many of its values
  it kept on the sample against as many records picked regardless of the value
  (`kept_share`): a Reduce that keeps the sessions with a purchase keeps 11% of
  the clicks and 9% of the session ids, where 11% of the clicks picked at random
  would have kept 55% of them; the Reduce above it makes one record per session
  that is left, not per session of the log.
- `join_selectivity`: for a Match, joined pairs over (left records x right
  records), when one of its sampled inputs is complete (every source below it was
  read whole): then the pairs are those of the sampled records with *every*
  partner, and the selectivity carries the real value overlap of the two keys,
  duplicates and values without a partner included. With both sides truncated to
  their first records, the pairs say nothing (the first lineitems and the first
  orders of a file need not share keys), and the cost model falls back on the
  key fields' distinct counts.

Each figure is a property of one operator, not of its place in a plan, so that
a Match's estimate is `left x right x selectivity` wherever it stands: plans
that compute the same bag by joining in another order get the same count.
"""

from __future__ import annotations

import math
from collections import Counter
from functools import partial
from itertools import repeat
from operator import is_not
from typing import Any, Iterable, Optional

from udflow.plan import Match, Node


def hashable(value: Any) -> Any:
    try:
        hash(value)
        return value
    except TypeError:
        return repr(value)


def _present(records: Iterable[dict], field: str) -> list:
    """The non-None values of `field`."""
    return list(filter(partial(is_not, None), map(dict.get, records, repeat(field))))


def frequencies(records: Iterable[dict], field: str) -> Counter:
    """How often each non-None value of `field` occurs (an unhashable value by its repr).
    Counted at C speed, since the optimizer counts every key field of every sampled output."""
    values = _present(records, field)
    try:
        return Counter(values)
    except TypeError:  # a list or dict value: counted by its repr, as `hashable` gives it
        return Counter(hashable(v) for v in values)


def scaled_distinct(distinct: int, half: int, sampled: int, rows: float) -> float:
    """Distinct values among `rows` records, from `distinct` values among the `sampled` first
    records and `half` among the first half of them: their growth, distinct ~ records^b
    (Heaps' law), extrapolated. b = log2(distinct / half) is 1 for values that keep coming
    (a session id of a log sorted by session: the first records are whole sessions, which
    is why an estimator for random samples, such as GEE, finds a tenth of them), 0 for
    values the sample has all seen (nations, years), and in between for words."""
    if not sampled or rows <= sampled or not half:
        return float(min(distinct, max(rows, 0.0)))
    growth = min(1.0, max(0.0, math.log2(distinct / half)))
    return max(float(distinct), min(rows, distinct * (rows / sampled) ** growth))


def kept_share(correlation: float, kept: float, per_value: float) -> float:
    """The share of a field's values an operator keeps, when it keeps `kept` of its records
    and each value has `per_value` records: 1 - (1 - kept)^per_value if the operator picks
    records regardless of the value, times `correlation`, what the sample showed beyond
    that (a Reduce that keeps whole sessions keeps far fewer session ids than as many
    records picked at random would have)."""
    if kept >= 1.0:
        return min(1.0, correlation)
    return min(1.0, correlation * (1.0 - (1.0 - max(kept, 0.0)) ** max(per_value, 1.0)))


def key_figures(node: Node, keys: set[str], sizes: dict, complete: dict) -> dict:
    """`created`, `retention` and `join_selectivity` of `node` (see the module docstring),
    from `sizes` (label -> (rows, width, records) of the sample run) and `complete`
    (label -> whether that subtree's sample is its whole output)."""
    out_records = sizes[node.label][2]
    inputs = [sizes[c.label][2] for c in node.inputs]
    carried = set().union(*(set(r) for rows in inputs for r in rows[:1])) if inputs else set()
    present = set().union(*(set(r) for r in out_records[:1])) if out_records else set()
    created, retention = [], []
    for field in sorted(keys & present):
        out = frequencies(out_records, field)
        if field not in carried:
            half = frequencies(out_records[: len(out_records) // 2], field)
            created.append((field, len(out), len(half), len(out_records)))
        elif node.arity == 1:
            retention.extend(_retention(field, inputs[0], out_records, len(out)))
    figures = {"created": tuple(created), "retention": tuple(retention)}
    if isinstance(node, Match):
        figures["join_selectivity"] = _join_selectivity(node, sizes, complete)
    return figures


def _retention(field: str, records_in: list, records_out: list, distinct_out: int) -> list:
    """(field, correlation): the share of values kept on the sample over `kept_share`'s."""
    distinct_in = len(frequencies(records_in, field))
    if not distinct_in or not records_in:
        return []
    expected = kept_share(1.0, len(records_out) / len(records_in), len(records_in) / distinct_in)
    return [(field, (distinct_out / distinct_in) / expected)] if expected > 0 else []


def _join_selectivity(node: Match, sizes: dict, complete: dict) -> Optional[float]:
    left, right = (sizes[c.label][0] for c in node.inputs)
    if not left or not right or not any(complete[c.label] for c in node.inputs):
        return None
    pairs = _pairs(node, sizes)
    return pairs / (left * right) if pairs else None


def _pairs(node: Match, sizes: dict) -> int:
    """Pairs of equal keys between the sampled inputs (a Match's function may drop or repeat
    records, so they are counted, not read off its output)."""
    left, right = (sizes[c.label][2] for c in node.inputs)
    if len(node.left_key) == 1:  # one key field: counted at C speed
        counts = frequencies(right, node.right_key[0])
        return sum(map(counts.get, map(hashable, _present(left, node.left_key[0])), repeat(0)))
    counts = Counter(tuple(hashable(r.get(f)) for f in node.right_key) for r in right)
    total = 0
    for r in left:
        key = tuple(hashable(r.get(f)) for f in node.left_key)
        if any(v is None for v in key):
            continue
        total += counts.get(key, 0)
    return total
