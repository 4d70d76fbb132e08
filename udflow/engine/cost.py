"""The cost model: estimated records per operator, and the cost of a plan with its physical choices.

Cardinalities, bottom-up (section 7.1's hints, measured rather than given):

    Source            rows and bytes per record from its statistics
    Map               rows(in) * emitted per call                      (sampled or hinted)
    Reduce            groups(in, key) * emitted per group; groups = the product of the
                      key fields' distinct counts, capped by rows(in)
    Match             rows(L) * rows(R) / max(d(L.key), d(R.key)) * emitted per pair;
                      a primary key has d = rows of its source, so a foreign-key join
                      to a (filtered) primary-key side keeps rows(L) * rows(R)/rows(R.source)
    Cross             rows(L) * rows(R) * emitted per pair
    CoGroup           d(L.key) + d(R.key) groups * emitted per group

Cost of a plan, in estimated seconds on Spark, is the sum over its operators of

    python  = calls * (cost per call + PY_CALL) + bytes into Python * PY_BYTE
    shuffle = bytes repartitioned * SHUFFLE_BYTE
    bcast   = bytes broadcast * WORKERS * BROADCAST_BYTE

where every Match and Cross takes the cheaper of shuffling both inputs or
broadcasting one (only a side under MAX_BROADCAST_BYTES may be broadcast). The
choice is the operator's physical strategy and becomes the Flow's Spark hint.
Partitioning is tracked as the interesting property: a Reduce or a shuffled
Match whose input is already hash-partitioned on its key does not shuffle it
again (section 7.3's Q15 discussion).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from udflow.engine.memo import Interner
from udflow.engine.statistics import FunctionProfile, SourceStatistics
from udflow.flow import output_fields
from udflow.plan import CoGroup, Cross, Custom, Map, Match, Node, Reduce, Source

# Constants of the model (seconds). Their ratios matter, not their absolute values.
PY_CALL = 1.5e-6  # crossing into a Python worker, per call
PY_BYTE = 4e-9  # serialising a byte to and from Python
SHUFFLE_BYTE = 5e-9  # serialising, writing to local disk, fetching and reading a byte of a shuffle
BROADCAST_BYTE = 3e-9  # collecting a byte to the driver, sending it to one executor, hashing it
WORKERS = 2  # executors receiving a broadcast copy (local[2] in tests; set higher for a cluster)
MAX_BROADCAST_BYTES = 10 * 1024 * 1024  # Spark's own autoBroadcastJoinThreshold; a larger side can exhaust the driver (seen at TPC-H 0.1)

Partitioning = frozenset  # of frozensets of fields: the data is hash-partitioned on any one of them


@dataclass(frozen=True)
class Estimate:
    """The estimate of one subtree: its output and the cost of computing it (cumulative)."""

    rows: float
    width: float  # bytes per record
    cost: float  # seconds, the whole subtree
    python_calls: float
    shuffled: float  # bytes, the whole subtree
    broadcast: float  # bytes, the whole subtree
    partitioning: Partitioning = frozenset()
    strategy: Optional[str] = None  # this operator's physical choice (Match/Cross)

    @property
    def bytes(self) -> float:
        return self.rows * self.width


class CostModel:
    """Estimates for any subtree of any alternative; memoized per interned subtree."""

    def __init__(
        self,
        sources: dict[str, SourceStatistics],
        profiles: dict[str, FunctionProfile],
        interner: Optional[Interner] = None,
    ) -> None:
        self.sources = sources
        self.profiles = profiles
        self.interner = interner or Interner()
        self._memo: dict[int, Estimate] = {}
        self._distinct: dict[tuple[int, str], Optional[float]] = {}
        self._fields: dict[int, Optional[frozenset]] = {}

    # -- public ----------------------------------------------------------------

    def estimate(self, node: Node) -> Estimate:
        key = self.interner.id_of(node)
        found = self._memo.get(key)
        if found is None:
            found = self._estimate(node)
            self._memo[key] = found
        return found

    def cost(self, node: Node) -> float:
        return self.estimate(node).cost

    def partitioning(self, node: Node) -> Partitioning:
        return self.estimate(node).partitioning

    def strategies(self, root: Node) -> dict[str, str]:
        """The physical choice for every Match and Cross of a plan: its Spark hints."""
        return {
            n.label: self.estimate(n).strategy
            for n in root.walk()
            if isinstance(n, (Match, Cross)) and self.estimate(n).strategy
        }

    # -- per operator ----------------------------------------------------------

    def _estimate(self, node: Node) -> Estimate:
        if isinstance(node, Source):
            stats = self.sources[node.label]
            return Estimate(float(stats.rows), stats.width, 0.0, 0.0, 0.0, 0.0)
        inputs = [self.estimate(c) for c in node.inputs]
        if isinstance(node, Map):
            return self._map(node, inputs[0])
        if isinstance(node, Reduce):
            return self._reduce(node, inputs[0])
        if isinstance(node, Match):
            return self._match(node, *inputs)
        if isinstance(node, Cross):
            return self._cross(node, *inputs)
        if isinstance(node, CoGroup):
            return self._cogroup(node, *inputs)
        return self._custom(node, inputs)

    def _profile(self, node: Node) -> FunctionProfile:
        found = self.profiles.get(node.label)
        if found is None:
            return FunctionProfile(node.label, 0, 1.0, 0.0, source="default")
        return found

    def _map(self, node: Map, child: Estimate) -> Estimate:
        prof = self._profile(node)
        rows = child.rows * prof.selectivity
        python = _python(child.rows, prof.cost, child.bytes)
        return Estimate(
            rows,
            child.width * prof.width_ratio,
            child.cost + python,
            child.python_calls + child.rows,
            child.shuffled,
            child.broadcast,
            child.partitioning if node.is_filter else frozenset(),
        )

    def _reduce(self, node: Reduce, child: Estimate) -> Estimate:
        prof = self._profile(node)
        groups = self._groups(node, child, prof)
        shuffle = 0.0 if _partitioned_on(child.partitioning, node.key) else child.bytes
        python = _python(groups, prof.cost, child.bytes)
        return Estimate(
            groups * prof.selectivity,
            child.width * prof.width_ratio,
            child.cost + python + shuffle * SHUFFLE_BYTE,
            child.python_calls + groups,
            child.shuffled + shuffle,
            child.broadcast,
            frozenset({frozenset(node.key)}),
        )

    def _groups(self, node: Reduce, child: Estimate, prof: FunctionProfile) -> float:
        known = self._distinct_of_fields(node.input, node.key)
        if known is not None:
            return max(1.0, min(child.rows, known))
        if prof.groups_per_row is not None and prof.sample_groups:
            # A key that the sample saturates (few groups) keeps its count; otherwise scale.
            if prof.groups_per_row < 0.1:
                return max(1.0, min(child.rows, float(prof.sample_groups)))
            return max(1.0, child.rows * prof.groups_per_row)
        return max(1.0, child.rows)

    def _match(self, node: Match, left: Estimate, right: Estimate) -> Estimate:
        d_left = self._distinct_of_fields(node.left, node.left_key) or left.rows
        d_right = self._distinct_of_fields(node.right, node.right_key) or right.rows
        pairs = left.rows * right.rows / max(d_left, d_right, 1.0)
        return self._join(node, left, right, pairs, (node.left_key, node.right_key))

    def _cross(self, node: Cross, left: Estimate, right: Estimate) -> Estimate:
        return self._join(node, left, right, left.rows * right.rows, None)

    def _join(self, node: Node, left: Estimate, right: Estimate, pairs: float, keys) -> Estimate:
        prof = self._profile(node) if node.fn is not None else None
        rows = pairs * (prof.selectivity if prof else 1.0)
        width = left.width + right.width
        python = _python(pairs, prof.cost, pairs * width) if prof else 0.0
        options = []
        for side, est in (("broadcast_right", right), ("broadcast_left", left)):
            if est.bytes <= MAX_BROADCAST_BYTES:
                other = left if side == "broadcast_right" else right
                options.append((est.bytes * WORKERS * BROADCAST_BYTE, side, 0.0, est.bytes * WORKERS, other.partitioning))
        if keys is not None:
            moved = (0.0 if _partitioned_on(left.partitioning, keys[0]) else left.bytes) + (
                0.0 if _partitioned_on(right.partitioning, keys[1]) else right.bytes
            )
            options.append((moved * SHUFFLE_BYTE, "shuffle", moved, 0.0, frozenset({frozenset(keys[0]), frozenset(keys[1])})))
        elif not options:
            moved = left.bytes * right.rows + right.bytes * left.rows  # cartesian product
            options.append((moved * SHUFFLE_BYTE, "shuffle", moved, 0.0, frozenset()))
        physical, strategy, shuffled, broadcast, partitioning = min(options, key=lambda o: (o[0], o[1]))
        return Estimate(
            rows,
            width,
            left.cost + right.cost + python + physical,
            left.python_calls + right.python_calls + (pairs if prof else 0.0),
            left.shuffled + right.shuffled + shuffled,
            left.broadcast + right.broadcast + broadcast,
            partitioning,
            strategy,
        )

    def _cogroup(self, node: CoGroup, left: Estimate, right: Estimate) -> Estimate:
        prof = self._profile(node)
        groups = (self._distinct_of_fields(node.left, node.left_key) or left.rows) + (
            self._distinct_of_fields(node.right, node.right_key) or right.rows
        )
        moved = left.bytes + right.bytes
        python = _python(groups, prof.cost, moved)
        return Estimate(
            groups * prof.selectivity,
            left.width + right.width,
            left.cost + right.cost + python + moved * SHUFFLE_BYTE,
            left.python_calls + right.python_calls + groups,
            left.shuffled + right.shuffled + moved,
            left.broadcast + right.broadcast,
            frozenset({frozenset(node.left_key), frozenset(node.right_key)}),
        )

    def _custom(self, node: Custom, inputs: list[Estimate]) -> Estimate:
        rows = sum(e.rows for e in inputs)
        width = max((e.width for e in inputs), default=0.0)
        python = _python(rows, 0.0, rows * width) if not node.op_type.spark else 0.0
        return Estimate(
            rows,
            width,
            sum(e.cost for e in inputs) + python,
            sum(e.python_calls for e in inputs) + (rows if python else 0.0),
            sum(e.shuffled for e in inputs),
            sum(e.broadcast for e in inputs),
        )

    # -- distinct counts ---------------------------------------------------------

    def _output_fields(self, node: Node):
        """`flow.output_fields` once per subtree (it hashes the whole tree on every call)."""
        key = self.interner.id_of(node)
        if key not in self._fields:
            self._fields[key] = output_fields(node)
        return self._fields[key]

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
        key = (self.interner.id_of(node), field)
        if key in self._distinct:
            return self._distinct[key]
        found: Optional[float] = None
        if isinstance(node, Source):
            stats = self.sources[node.label]
            if field in node.fields:
                d = stats.distinct_of(field)
                if d is None and node.key == (field,):
                    d = stats.rows
                found = float(d) if d is not None else None
        else:
            for child in node.inputs:
                carried = self._output_fields(child)
                if carried is None or field in carried:
                    found = self._distinct_field(child, field)
                    if found is not None:
                        break
            if found is not None:
                found = min(found, self.estimate(node).rows)
        self._distinct[key] = found
        return found


def _python(calls: float, cost_per_call: float, bytes_in: float) -> float:
    return calls * (cost_per_call + PY_CALL) + bytes_in * PY_BYTE


def _partitioned_on(partitioning: Partitioning, key) -> bool:
    """Hash-partitioned on a subset of `key`: equal keys are already in one partition."""
    wanted = frozenset(key)
    return any(p and p <= wanted for p in partitioning)
