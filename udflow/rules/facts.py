"""Facts: what the rules know about one flow (issue 4, item 1).

A flow becomes a set of ground facts over the labels of its operators and the
attributes of its global record (Definition 1):

    kind(Map(f1), map)            pure(Map(f1))          copies(Map(f1))
    reads(Map(f1), B)             writes(Map(f1), B)     card_reads(Filter(f2), A)
    emits(Map(f1), 1, 1)          key(Reduce[A](g), 0, A)
    origin(B, Source(I))          attr(B)
    source_key(Source(I), A)      foreign_key(Source(l), l_suppkey, supplier, s_suppkey)

Two conventions of the paper are applied here, once, so that every rule sees
them: the keys of a KAT operator (Reduce, CoGroup) and of a Match join its read
set (section 4.1 and 4.3.1: `Match_f == Map_f'(R x S)` reads its keys), and the
concatenation (`fn=None`) of a Match or Cross is a pure, copying UDF that
emits exactly one record and writes nothing.

Facts are *position independent*: a moved operator keeps its function, so its
read and write sets (named by global-record attributes) move with it. What
depends on the position - which attributes a subtree can carry - is computed
from `origin` facts: an attribute enters the plan at one source or operator
(and at every operator whose output fields are unknown, which may make any
field), so a subtree can only carry attributes whose origin lies inside it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable, Iterable, Optional

from udflow.analysis.properties import UdfProperties
from udflow.plan import Custom, Map, Match, Cross, Node, Reduce, CoGroup, Source

PropertiesProvider = Callable[[Node], UdfProperties]

RECORD_AT_A_TIME = ("map", "match", "cross")

# Every base predicate with its arity. pyDatalog refuses to negate or ask a
# predicate that has no fact at all, so each gets one sentinel fact over
# NOTHING, a value that is never a label or an attribute.
BASE_PREDICATES = {
    "attr": 1, "origin": 2, "source": 2, "source_key": 2, "foreign_key": 5,
    "op": 1, "kind": 2, "pure": 1, "rat": 1, "copies": 1, "outputs": 2,
    "emits_one": 1, "emits_le1": 1, "reads": 2, "udf_reads": 2, "writes": 2,
    "card_reads": 2, "key": 3, "preserves_groups": 1, "forwards_side": 2,
}
NOTHING = "\u22a5"


@dataclass(frozen=True)
class OpFacts:
    """The facts of one operator, as plain sets (what the Datalog facts are made of)."""

    label: str
    kind: str  # map, reduce, match, cross, cogroup, or a registered OperatorType's name
    arity: int
    pure: bool
    is_filter: bool
    reads: frozenset[str]  # function reads plus the operator's keys
    udf_reads: frozenset[str]  # what the function's body reads (keys not added)
    writes: frozenset[str]
    copy: bool
    outputs: Optional[frozenset[str]]
    emits: tuple[int, Optional[int]]
    card_reads: frozenset[str]
    keys: tuple[tuple[str, ...], ...]  # per input; () for Map/Cross
    new_fields: frozenset[str]
    record_at_a_time: bool
    props: Optional[UdfProperties] = field(default=None, compare=False, repr=False)

    @property
    def emits_exactly_one(self) -> bool:
        return self.emits == (1, 1)

    @property
    def emits_at_most_one(self) -> bool:
        return self.emits[1] is not None and self.emits[1] <= 1

    def lines(self, prop: str, attr: Optional[str] = None) -> tuple[int, ...]:
        """Source lines the analysis gave for `prop` (on `attr`)."""
        if self.props is None:
            return ()
        return self.props.lines_for(prop, attr)


@dataclass(frozen=True)
class SourceFacts:
    label: str
    table: str
    fields: tuple[str, ...]
    columns: tuple[str, ...]
    key: tuple[str, ...]
    foreign_keys: tuple[tuple[tuple[str, ...], str, tuple[str, ...]], ...]  # (fields, table, target columns)


@dataclass(frozen=True)
class FlowFacts:
    """All facts of one flow: per operator, per source, the global record and origins."""

    ops: dict
    sources: dict
    attributes: frozenset[str]
    origin: dict  # attribute -> frozenset of labels where it enters the plan

    def datalog(self) -> Iterable[tuple]:
        """The ground facts, as (predicate, *args) tuples for pyDatalog."""
        for predicate, arity in BASE_PREDICATES.items():
            yield (predicate,) + (NOTHING,) * arity
        for a in sorted(self.attributes):
            yield ("attr", a)
            for o in sorted(self.origin.get(a, ())):
                yield ("origin", a, o)
        for s in self.sources.values():
            yield ("source", s.label, s.table)
            for k in s.key:
                yield ("source_key", s.label, k)
            for fields, table, targets in s.foreign_keys:
                for f, t in zip(fields, targets):
                    yield ("foreign_key", s.label, f, table, t)
        for o in self.ops.values():
            yield from op_datalog(o)


def op_datalog(o: OpFacts) -> Iterable[tuple]:
    yield ("op", o.label)
    yield ("kind", o.label, o.kind)
    if o.pure:
        yield ("pure", o.label)
    if o.record_at_a_time:
        yield ("rat", o.label)
    if o.copy:
        yield ("copies", o.label)
    elif o.outputs is not None:
        for a in sorted(o.outputs):
            yield ("outputs", o.label, a)
    if o.emits_exactly_one:
        yield ("emits_one", o.label)
    if o.emits_at_most_one:
        yield ("emits_le1", o.label)
    for a in sorted(o.reads):
        yield ("reads", o.label, a)
    for a in sorted(o.udf_reads):
        yield ("udf_reads", o.label, a)
    for a in sorted(o.writes):
        yield ("writes", o.label, a)
    for a in sorted(o.card_reads):
        yield ("card_reads", o.label, a)
    for i, key in enumerate(o.keys):
        for a in key:
            yield ("key", o.label, i, a)
    if o.kind == "reduce" and o.props is not None and o.props.forwards_groups:
        # f(G) = G or []: keeps or drops whole key groups (KGP for Reduce, roc_kgp.py)
        yield ("preserves_groups", o.label)
    for side in forwarded_sides(o):
        # g(G_0, G_1) = [r | e(r) for r in G_side] or []: cogroup_tagged_union.py
        yield ("forwards_side", o.label, side)


def fact_strings(o: OpFacts) -> tuple[str, ...]:
    """The operator's facts as certificate text, e.g. `reads(Map(f1), B)`."""
    out = [f"kind({o.label}, {o.kind})", f"emits({o.label}, {o.emits[0]}, {o.emits[1]})"]
    out.append(f"pure({o.label})" if o.pure else f"impure({o.label})")
    out.append(f"copies({o.label})" if o.copy else f"projects({o.label})")
    if not o.copy and o.outputs is not None:
        out += [f"outputs({o.label}, {a})" for a in sorted(o.outputs)]
    out += [f"reads({o.label}, {a})" for a in sorted(o.reads)]
    out += [f"writes({o.label}, {a})" for a in sorted(o.writes)]
    out += [f"card_reads({o.label}, {a})" for a in sorted(o.card_reads)]
    for i, key in enumerate(o.keys):
        out += [f"key({o.label}, {i}, {a})" for a in key]
    if o.kind == "reduce" and o.props is not None and o.props.forwards_groups:
        out.append(f"preserves_groups({o.label})")
    out += [f"forwards_side({o.label}, {side})" for side in forwarded_sides(o)]
    return tuple(out)


def forwarded_sides(o: OpFacts) -> tuple[int, ...]:
    """The inputs a CoGroup forwards record for record (analysis' `forwards_sides`)."""
    if o.kind != "cogroup" or o.props is None:
        return ()
    return tuple(sorted(getattr(o.props, "forwards_sides", ())))


# ---------------------------------------------------------------------------
# Building the facts of a flow
# ---------------------------------------------------------------------------


def concat_properties(node: Node) -> UdfProperties:
    """`fn=None` of Match/Cross: `{**left, **right}` - pure, copying, one record per pair."""
    from udflow.flow import output_fields

    sides = tuple(output_fields(c) or frozenset() for c in node.inputs)
    return UdfProperties(
        kind=node.kind,
        reads=frozenset(),
        writes=frozenset(),
        emits=(1, 1),
        card_reads=frozenset(),
        copy=True,
        pure=True,
        output_fields=sides[0] | sides[1],
        side_reads=(frozenset(), frozenset()),
        origin="analysis",
        location="concat",
    )


def analysis_provider(manual: bool = False) -> PropertiesProvider:
    """Properties from `udflow.analysis` (or the `@annotate` declarations when `manual`)."""
    from udflow.flow import properties_of

    def provide(node: Node) -> UdfProperties:
        if isinstance(node, (Match, Cross)) and node.fn is None:
            return concat_properties(node)
        return properties_of(node, manual=manual)

    return provide


def _keys_of(node: Node) -> tuple[tuple[str, ...], ...]:
    if isinstance(node, Reduce):
        return (tuple(node.key),)
    if isinstance(node, (Match, CoGroup)):
        return (tuple(node.left_key), tuple(node.right_key))
    return ()


def operator_facts(node: Node, props: UdfProperties, input_fields: tuple) -> OpFacts:
    keys = _keys_of(node)
    key_fields = frozenset(a for k in keys for a in k)
    known_inputs = frozenset().union(*(f or frozenset() for f in input_fields))
    outputs = props.output_fields
    new_fields = frozenset(props.new_fields)
    if outputs is not None and None not in input_fields:
        new_fields |= outputs - known_inputs
    if isinstance(node, Custom):
        kind = node.op_type.name
        rat = node.op_type.record_at_a_time
    else:
        kind = node.kind
        rat = kind in RECORD_AT_A_TIME
    return OpFacts(
        label=node.label,
        kind=kind,
        arity=len(node.inputs),
        pure=bool(props.pure),
        is_filter=isinstance(node, Map) and node.is_filter,
        reads=frozenset(props.reads) | key_fields,
        udf_reads=frozenset(props.reads),
        writes=frozenset(props.writes) | new_fields,
        copy=bool(props.copy),
        outputs=None if outputs is None else frozenset(outputs),
        emits=tuple(props.emits),
        card_reads=frozenset(props.card_reads),
        keys=keys,
        new_fields=new_fields,
        record_at_a_time=rat,
        props=props,
    )


def source_facts(s: Source) -> SourceFacts:
    fks = tuple((tuple(fk.fields), fk.target, tuple(fk.target_fields)) for fk in s.foreign_keys)
    return SourceFacts(s.label, s.table, tuple(s.fields), tuple(s.columns), tuple(s.key or ()), fks)


def fields_of(node: Node, provider: PropertiesProvider, memo: dict) -> Optional[frozenset[str]]:
    """The fields a record leaving `node` may carry, by the provider's properties (None: unknown)."""
    hit = memo.get(node)
    if hit is not None or node in memo:
        return hit
    if isinstance(node, Source):
        out = frozenset(node.fields)
    else:
        inputs = [fields_of(c, provider, memo) for c in node.inputs]
        if isinstance(node, (Match, Cross)) and node.fn is None:
            out = None if None in inputs else inputs[0] | inputs[1]
        elif isinstance(node, Custom):
            out = None if None in inputs else node.op_type.output_fields(tuple(inputs), node.param_dict)
        else:
            out = provider(node).output_fields
        out = None if out is None else frozenset(out)
    memo[node] = out
    return out


def flow_facts(root: Node, provider: PropertiesProvider, memo: Optional[dict] = None) -> FlowFacts:
    """Facts of every operator and source of the tree under `root`."""
    memo = {} if memo is None else memo

    def output_fields(node):
        return fields_of(node, provider, memo)

    ops: dict = {}
    sources: dict = {}
    origin: dict = {}
    attributes: set = set()
    for node in root.walk():
        if isinstance(node, Source):
            sources[node.label] = source_facts(node)
            for a in node.fields:
                origin.setdefault(a, set()).add(node.label)
            attributes.update(node.fields)
            continue
        inputs = tuple(output_fields(c) for c in node.inputs)
        facts = operator_facts(node, provider(node), inputs)
        ops[node.label] = facts
        for a in facts.new_fields:
            origin.setdefault(a, set()).add(node.label)
        attributes.update(facts.new_fields)
        attributes.update(facts.reads | facts.writes)
    # An operator whose output fields are unknown (an impure function, an opaque custom
    # operator) may create any field: it is an origin of every field, those that others
    # create too (a Map writing `x` is not moved across a concatenation whose other input
    # may carry an `x` such an operator made).
    wildcards = {o.label for o in ops.values() if o.outputs is None and not o.pure}
    for a in attributes:
        if wildcards:
            origin[a] = origin.get(a, set()) | wildcards
    frozen_origin = {a: frozenset(o) for a, o in origin.items()}
    return FlowFacts(ops, sources, frozenset(attributes), frozen_origin)


def removes(o: Optional[OpFacts]) -> frozenset:
    """The attributes an operator may remove from a record (on some path, or by projection)."""
    if o is None:
        return frozenset()
    if o.props is None or not o.pure:
        return o.writes
    return o.writes - frozenset(o.props.values_changed())
