"""The cost model: estimated records per operator, and the cost of a plan with its physical choices.

Cardinalities, bottom-up (section 7.1's hints, measured rather than given):

    Source            rows and bytes per record from its statistics
    Map               rows(in) * emitted per call                      (sampled or hinted)
    Reduce            groups(in, key) * emitted per group; groups = the product of the
                      key fields' distinct counts in its input, at most what the sample's
                      groups extrapolate to, at most rows(in)
    Match             rows(L) * rows(R) * s(Match) * emitted per pair, where s is the
                      Match's own: 1 / max(D(L.key), D(R.key)) over the distinct counts
                      where the key values come from (sources; a primary key has D = rows,
                      so a foreign-key join to a filtered primary-key side keeps
                      rows(L) * rows(R) / rows(R.source)), or, for a key a Map creates,
                      the value overlap the sample measured (`keysample`). Any order of
                      the same joins and filters gives the same count.
    Cross             rows(L) * rows(R) * emitted per pair
    CoGroup           d(L.key) + d(R.key) groups * emitted per group

Cost of a plan, in estimated seconds on Spark, is the sum over its operators of

    python  = calls * (cost per call + PY_CALL) + values into Python * PY_FIELD
    shuffle = STAGE + records repartitioned * SHUFFLE_ROW + their bytes * SHUFFLE_BYTE
    bcast   = STAGE + (records broadcast * BROADCAST_ROW + their bytes * BROADCAST_BYTE) * WORKERS

A value into Python is one field of one record: the executor turns every Arrow
value into a Python object and back, so a function placed above joins, over
wide records, pays for every field it carries, not only for the fields it
reads - except a filter, or a map that copies its record (`{**r, ...}`), which the
backend shows only the fields it reads or writes (`flow.read_projection`), and
for a map that writes, the rest of each record it emits. Bytes are Spark row
bytes (`statistics.record_bytes`).

where every Match and Cross takes the cheaper of shuffling both inputs or
broadcasting one (only a side under MAX_BROADCAST_BYTES may be broadcast). The
choice is the operator's physical strategy and becomes the Flow's Spark hint. A
Reduce moves what `physical.grouping` says: every record when it runs in Python; far
fewer when it runs natively (partial aggregation; a group filter's kept keys).
Partitioning is tracked as the interesting property: a Reduce or a shuffled
Match whose input is already hash-partitioned on its key does not shuffle it
again (section 7.3's Q15 discussion).
"""

from __future__ import annotations

from typing import Optional

from udflow.analysis.model import GroupFilterModel
from udflow.engine.distinct import KeyCounts
from udflow.engine.keysample import scaled_distinct
from udflow.engine.memo import Interner
from udflow.engine.physical import (MAX_BROADCAST_BYTES, NATIVE_ROW, PY_CALL, PY_FIELD, SHUFFLE_BYTE, SHUFFLE_ROW,
                                    WORKERS, Estimate, Partitioning, broadcast, grouping, partitioned_on, shuffle)
from udflow.engine.statistics import FunctionProfile, SourceStatistics
from udflow.engine.steps import step_of
from udflow.flow import output_fields
from udflow.native_forms import NativeForms
from udflow.physical import Step
from udflow.plan import CoGroup, Cross, Custom, Map, Match, Node, Reduce, Source

_UNKNOWN = object()  # a memo's "not computed yet" (None is a value: fields unknown)


class CostModel(KeyCounts):
    """Estimates for any subtree of any alternative; memoized per interned subtree."""

    def __init__(
        self,
        sources: dict[str, SourceStatistics],
        profiles: dict[str, FunctionProfile],
        interner: Optional[Interner] = None,
        keyed: Optional[dict[str, frozenset]] = None,
        forms: Optional[NativeForms] = None,
    ) -> None:
        """`keyed`: operator label -> the key fields it joins or groups on, for every Match,
        CoGroup and Reduce of the flow (`optimize.keyed_operators`); `interface` reads it.
        `forms`: what the backend runs natively (`udflow.native_forms`); a function it runs
        natively costs generated code per record. None costs every function as Python calls
        (`collect(native=False)`)."""
        self.forms = forms
        self.sources = sources
        self.profiles = profiles
        self.keyed = dict(keyed or {})
        self.interner = interner or Interner()
        self._memo: dict[int, Estimate] = {}
        self._distinct: dict[tuple[int, str], Optional[float]] = {}
        self._domains: dict[tuple[int, str], Optional[float]] = {}
        self._fields: dict[int, Optional[frozenset]] = {}
        self._label_sets: dict[int, frozenset] = {}
        self._canonical_labels: dict[frozenset, frozenset] = {}  # keeps each set alive: its id is a key
        self._label_unions: dict[tuple, frozenset] = {}
        self._keys_outside: dict[frozenset, tuple[str, ...]] = {}
        self._fields_of_operator: dict[tuple, Optional[frozenset]] = {}
        self._steps: dict[int, Step] = {}
        self._step_of_operator: dict[tuple, Step] = {}

    # -- public ----------------------------------------------------------------

    def estimate(self, node: Node) -> Estimate:
        key = self.interner.id_of(node)
        found = self._memo.get(key)
        if found is None:
            found = self._estimate(node)
            self._memo[key] = found
        return found

    def step(self, node: Node) -> Step:
        """How `node` runs (`udflow.engine.steps`): the step the lowering takes for it."""
        key = self.interner.id_of(node)
        found = self._steps.get(key)
        if found is None:
            # a step depends on the operator, its inputs' fields and how its inputs leave
            # (columns or pickled), not on the rest of the subtree: decided once for each
            inputs = [self.step(c) for c in node.inputs]
            local = (self.interner.operator_of(node), tuple(s.pickled for s in inputs),
                     tuple(self._output_fields(c) for c in node.inputs))
            found = self._step_of_operator.get(local)
            if found is None:
                found = self._step_of_operator[local] = step_of(node, inputs, forms=self.forms)
            self._steps[key] = found
        return found

    def cost(self, node: Node) -> float:
        return self.estimate(node).cost

    def partitioning(self, node: Node) -> Partitioning:
        return self.estimate(node).partitioning

    def interface(self, node: Node) -> tuple:
        """Everything the estimate of an operator above `node` reads of it, besides its cost.

        A parent's estimate reads its input's rows, width, fields and partitioning, whether
        the input must be decoded from pickled records (`_decoding`) or leaves pickled at all
        (`Step.pickled`: an operator above can run natively over columns only), and the distinct
        counts of the key fields of the operators above it (the model's `keyed` operators
        that are not inside `node`). Two plans of one group with equal interfaces cost the
        same above them up to their own costs, so the cheaper one can stand for both: the
        principle of optimality, exact for this model. Equivalent plans do differ here: a
        filter or a Reduce below changes the distinct counts of key fields that a Reduce or
        a CoGroup above reads, and a Map's place changes widths and fields. Figures are compared to 9 significant digits
        (the same estimate reached by products in another order differs in the last bits).
        """
        est = self.estimate(node)
        carried = self._output_fields(node)
        distinct = tuple(
            _significant(self._distinct_field(node, f))
            for f in self._keys_above(self._labels(node))
            if carried is None or f in carried
        )
        decodes = self._decoding(node, est) > 0.0
        pickled = self.step(node).pickled  # an operator above runs natively over columns only
        return (_significant(est.rows), _significant(est.width), est.fields, est.partitioning, decodes, pickled,
                distinct)

    def _keys_above(self, inside: frozenset) -> tuple[str, ...]:
        """The key fields of the keyed operators not in `inside`, sorted (memoized per set)."""
        found = self._keys_outside.get(inside)
        if found is None:
            found = tuple(sorted({f for label, fields in self.keyed.items() if label not in inside for f in fields}))
            self._keys_outside[inside] = found
        return found

    def _labels(self, node: Node) -> frozenset:
        """The operator labels of a subtree, built from its inputs' (memoized per subtree).

        Equivalent plans hold the same operators, so the search meets the same few sets
        over and over: each set is built once per (label, inputs' sets) and kept as one
        object, whose identity then keys that memo."""
        key = self.interner.id_of(node)
        found = self._label_sets.get(key)
        if found is None:
            inputs = tuple(self._labels(c) for c in node.inputs)
            local = (node.label, tuple(map(id, inputs)))
            found = self._label_unions.get(local)
            if found is None:
                built = frozenset().union(*inputs) | {node.label}
                found = self._label_unions[local] = self._canonical_labels.setdefault(built, built)
            self._label_sets[key] = found
        return found

    def strategies(self, root: Node) -> dict[str, str]:
        """The physical choice for every Match, Cross and native group filter of a plan that
        becomes a Spark hint (`Estimate.hinted`)."""
        return {
            n.label: self.estimate(n).strategy
            for n in root.walk()
            if isinstance(n, (Match, Cross, Reduce)) and self.estimate(n).strategy and self.estimate(n).hinted
        }

    # -- per operator ----------------------------------------------------------

    def _estimate(self, node: Node) -> Estimate:
        if isinstance(node, Source):
            stats = self.sources[node.label]
            return Estimate(float(stats.rows), stats.width, 0.0, 0.0, 0.0, 0.0, fields=float(len(node.fields)))
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
        python = self._function(node, child.rows, prof.cost, _values_shown(node, prof, child, rows))
        return Estimate(
            rows,
            _map_width(node, prof, child.width),
            child.cost + python,
            child.python_calls + child.rows,
            child.shuffled,
            child.broadcast,
            child.partitioning if node.is_filter else frozenset(),
            fields=self._field_count(node, child.fields),
        )

    def _reduce(self, node: Reduce, child: Estimate) -> Estimate:
        prof = self._profile(node)
        groups = self._groups(node, child, prof)
        width = child.width * prof.width_ratio
        model = self.step(node).model
        if model is not None:  # generated code per record (`_function`)
            python = child.rows * NATIVE_ROW
        else:
            python = _python(groups, prof.cost, child.rows * child.fields)
        kind = "python" if model is None else "group filter" if isinstance(model, GroupFilterModel) else "aggregate"
        share = min(1.0, groups * prof.selectivity / child.rows) if child.rows else 1.0
        moved = grouping(kind, node.key, child, groups, width, share)
        return Estimate(
            groups * prof.selectivity,
            width,
            child.cost + python + moved.cost,
            child.python_calls + groups,
            child.shuffled + moved.shuffled,
            child.broadcast + moved.broadcast,
            moved.partitioning,
            moved.strategy,
            fields=self._field_count(node, child.fields),
        )

    def _groups(self, node: Reduce, child: Estimate, prof: FunctionProfile) -> float:
        """Groups of a Reduce: the product of its key fields' distinct counts, and at most
        what the sample's groups extrapolate to (`scaled_distinct`): key fields that go
        together (Q7's supplier and customer nations: 4 groups of 2 x 2 x 2) have fewer
        combinations than their product; at most the records of its input."""
        sampled = None
        if prof.sample_groups and prof.half_groups and prof.groups_per_row:
            sampled = scaled_distinct(prof.sample_groups, prof.half_groups,
                                      round(prof.sample_groups / prof.groups_per_row), child.rows)
        known = self._distinct_of_fields(node.input, node.key)
        if known is not None:
            return max(1.0, min(child.rows, known, sampled if sampled is not None else known))
        if sampled is not None:
            return max(1.0, min(child.rows, sampled))
        return max(1.0, child.rows)

    def _match(self, node: Match, left: Estimate, right: Estimate) -> Estimate:
        pairs = left.rows * right.rows * self._join_selectivity(node, left, right)
        return self._join(node, left, right, pairs, (node.left_key, node.right_key))

    def _join_selectivity(self, node: Match, left: Estimate, right: Estimate) -> float:
        """The fraction of (left, right) pairs whose keys are equal.

        When both keys come from sources: 1 / max(D(left key), D(right key)) over the
        sources' distinct counts, the textbook estimate, which assumes the smaller domain
        inside the larger. When a key is created by an operator (a Map that tokenizes into
        `word`), the sample's overlap of the two keys' values if the sample saw every
        partner of its records (`keysample`); else the same formula, with the created
        field's distinct count scaled up from the sample. Each is a property of the Match,
        not of what lies below it, so any order of the same joins and filters gets the same
        count. (The sampled overlap is not used for keys from sources: it is measured where
        the Match is written, and a filter below it there, correlated with the key, would
        carry over to every other place: clickstream's sessions with a purchase are mostly
        logged in, all sessions are not.) Only a key whose distinct counts are unknown
        falls back on the inputs' distinct counts or rows."""
        d_left = self._domain_of_fields(node.left, node.left_key, sources_only=True)
        d_right = self._domain_of_fields(node.right, node.right_key, sources_only=True)
        if d_left is not None and d_right is not None:
            return 1.0 / max(d_left, d_right, 1.0)
        sampled = self._profile(node).join_selectivity if node.label in self.profiles else None
        if sampled is not None:
            return sampled
        d_left = self._domain_of_fields(node.left, node.left_key)
        d_right = self._domain_of_fields(node.right, node.right_key)
        if d_left is None or d_right is None:
            d_left = d_left or self._distinct_of_fields(node.left, node.left_key) or left.rows
            d_right = d_right or self._distinct_of_fields(node.right, node.right_key) or right.rows
        return 1.0 / max(d_left, d_right, 1.0)

    def _cross(self, node: Cross, left: Estimate, right: Estimate) -> Estimate:
        return self._join(node, left, right, left.rows * right.rows, None)

    def _join(self, node: Node, left: Estimate, right: Estimate, pairs: float, keys) -> Estimate:
        prof = self._profile(node) if node.fn is not None else None
        rows = pairs * (prof.selectivity if prof else 1.0)
        width = left.width + right.width
        fields = left.fields + right.fields
        python = self._function(node, pairs, prof.cost, pairs * fields) if prof else 0.0
        python += self._decoding(node.inputs[0], left) + self._decoding(node.inputs[1], right)
        options = []
        for side, est in (("broadcast_right", right), ("broadcast_left", left)):
            if est.bytes <= MAX_BROADCAST_BYTES:
                other = left if side == "broadcast_right" else right
                cost = broadcast(est)
                options.append((cost, side, 0.0, est.bytes * WORKERS, other.partitioning))
        if keys is not None:
            moving = [e for e, k in ((left, keys[0]), (right, keys[1])) if not partitioned_on(e.partitioning, k)]
            moved = sum(e.bytes for e in moving)
            cost = sum(shuffle(e) for e in moving)
            options.append((cost, "shuffle", moved, 0.0, frozenset({frozenset(keys[0]), frozenset(keys[1])})))
        elif not options:
            moved = left.bytes * right.rows + right.bytes * left.rows  # cartesian product
            cost = 2 * left.rows * right.rows * SHUFFLE_ROW + moved * SHUFFLE_BYTE
            options.append((cost, "shuffle", moved, 0.0, frozenset()))
        could_broadcast = any(o[1] != "shuffle" for o in options)
        physical, strategy, shuffled, sent, partitioning = min(options, key=lambda o: (o[0], o[1]))
        return Estimate(
            rows,
            width,
            left.cost + right.cost + python + physical,
            left.python_calls + right.python_calls + (pairs if prof else 0.0),
            left.shuffled + right.shuffled + shuffled,
            left.broadcast + right.broadcast + sent,
            partitioning,
            strategy,
            fields=self._field_count(node, fields) if prof else fields,
            hinted=could_broadcast or strategy != "shuffle",
        )

    def _cogroup(self, node: CoGroup, left: Estimate, right: Estimate) -> Estimate:
        prof = self._profile(node)
        groups = (self._distinct_of_fields(node.left, node.left_key) or left.rows) + (
            self._distinct_of_fields(node.right, node.right_key) or right.rows
        )
        moved = left.bytes + right.bytes
        python = _python(groups, prof.cost, left.rows * left.fields + right.rows * right.fields)
        python += self._decoding(node.left, left) + self._decoding(node.right, right)
        return Estimate(
            groups * prof.selectivity,
            left.width + right.width,
            left.cost + right.cost + python + shuffle(left) + shuffle(right),
            left.python_calls + right.python_calls + groups,
            left.shuffled + right.shuffled + moved,
            left.broadcast + right.broadcast,
            frozenset({frozenset(node.left_key), frozenset(node.right_key)}),
            fields=self._field_count(node, left.fields + right.fields),
        )

    def _custom(self, node: Custom, inputs: list[Estimate]) -> Estimate:
        rows = sum(e.rows for e in inputs)
        width = max((e.width for e in inputs), default=0.0)
        fields = max((e.fields for e in inputs), default=1.0)
        python = _python(rows, 0.0, rows * fields) if not node.op_type.spark else 0.0
        return Estimate(
            rows,
            width,
            sum(e.cost for e in inputs) + python,
            sum(e.python_calls for e in inputs) + (rows if python else 0.0),
            sum(e.shuffled for e in inputs),
            sum(e.broadcast for e in inputs),
            fields=self._field_count(node, fields),
        )

    def _function(self, node: Node, calls: float, cost_per_call: float, values_in: float) -> float:
        """What running the operator's function costs: Python calls and the values converted
        for them, or, for an operator the backend runs natively, generated code per record."""
        if self.step(node).native:
            return calls * NATIVE_ROW
        return _python(calls, cost_per_call, values_in)

    def _decoding(self, node: Node, est: Estimate) -> float:
        """Turning a Python operator's pickled records into columns for a native consumer.

        A Python operator that creates fields emits pickled records (Spark needs a schema
        before it runs); a native join or a CoGroup above it makes the backend persist them
        and decode every field of every record into columns: one more pass through Python.
        """
        if isinstance(node, Source) or (isinstance(node, Map) and node.is_filter):
            return 0.0
        if isinstance(node, (Match, Cross)) and node.fn is None:
            return 0.0
        if isinstance(node, Custom) and node.op_type.spark is not None:
            return 0.0
        if self.step(node).native:
            return 0.0  # typed columns already
        out = self._output_fields(node)
        carried = [self._output_fields(c) for c in node.inputs]
        if out is not None and all(c is not None for c in carried) and out <= frozenset().union(*carried):
            return 0.0  # no new field: the backend keeps its input's columns
        return est.rows * est.fields * PY_FIELD

    def _field_count(self, node: Node, otherwise: float) -> float:
        """Fields per record of `node`'s output: from `output_fields` when known."""
        known = self._output_fields(node)
        return float(len(known)) if known else otherwise

    # -- fields -----------------------------------------------------------------

    def _output_fields(self, node: Node):
        """`flow.output_fields`, memoized per subtree and built from the inputs' fields.

        `flow.output_fields` hashes the whole tree on every call (and each input's tree
        again); what it computes depends only on the operator and its inputs' fields, so it
        is asked once per (operator, inputs' fields), not once per tree of the search.
        """
        key = self.interner.id_of(node)
        found = self._fields.get(key, _UNKNOWN)
        if found is not _UNKNOWN:
            return found
        if isinstance(node, Source):
            found = frozenset(node.fields)
        else:
            inputs = tuple(self._output_fields(c) for c in node.inputs)
            if any(f is None for f in inputs):
                found = None
            elif isinstance(node, (Match, Cross)) and node.fn is None:
                found = inputs[0] | inputs[1]
            else:
                local = (self.interner.operator_of(node), inputs)
                found = self._fields_of_operator.get(local, _UNKNOWN)
                if found is _UNKNOWN:
                    found = self._fields_of_operator[local] = output_fields(node)
        self._fields[key] = found
        return found

def _significant(x: Optional[float]) -> Optional[float]:
    """`x` to 9 significant digits: equal estimates computed in another order compare equal."""
    return None if x is None else float(f"{x:.9g}")


def _map_width(node: Map, prof: FunctionProfile, width: float) -> float:
    """Bytes per record a Map emits. A filter emits its input records: their width. A Map adds
    (or removes) the bytes it did on the sample: a sum, so that equivalent plans, which apply
    the same Maps in another order or above other joins, get the same width (a ratio would
    make each placement a different width, and the search keep a plan per placement)."""
    if node.is_filter:
        return width
    if prof.width_delta is None:
        return width * prof.width_ratio
    return max(width + prof.width_delta, 8.0)  # a record is at least one field slot


def _values_shown(node: Map, prof: FunctionProfile, child: Estimate, rows_out: float) -> float:
    """Values a Map's records bring into Python: every field of every record, or, when the
    backend projects (`fields_read`), the fields shown, plus - for a Map that writes - the
    rest of each record it emits, completed from its input row."""
    if prof.fields_read is None:
        return child.rows * child.fields
    shown = min(prof.fields_read, child.fields)
    completed = 0.0 if node.is_filter or prof.forwards_records else rows_out * (child.fields - shown)
    return child.rows * shown + completed


def _python(calls: float, cost_per_call: float, values_in: float) -> float:
    """Calls of a function, plus every value (field of a record) converted into Python for it."""
    return calls * (cost_per_call + PY_CALL) + values_in * PY_FIELD
