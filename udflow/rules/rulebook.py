"""RuleBook: all reorder knowledge for one optimization.

    book = RuleBook(flow.root)
    for ex in book.exchanges(subtree):      # every valid local rewrite, with certificates
        ...
    print(book.why_not("Map(f3)", "Filter(f2)"))

At construction the flow's facts are loaded into an isolated pyDatalog
program (see `datalog.Program`) together with every registered rule module's
clauses, and every position-independent permission (and where attributes
come from) is derived once, in one query; the refusals, which only reasons
need, are derived in one more query the first time a reason is asked for.
`exchanges` then only looks up those answers and evaluates the
position-dependent conditions (which attributes a subtree can carry, key and
foreign-key questions for Z3), memoized per subtree and per
(operator, attribute origins) so repeated calls cost microseconds. The
certificate of an exchange is built when it is first read.
"""

from __future__ import annotations

import dataclasses
import functools
import threading
from typing import Iterable, Optional, Sequence

from udflow.field_types import FieldType, attribute_types
from udflow.plan import Node, Source, draw
from udflow.rules.base import SHAPES, Decision, Move, Rule, binary_binary, binary_unary, rebuild as base_rebuild, unary_binary, unary_unary
from udflow.rules.certificate import Certificate, Exchange, Reason, Verdict
from udflow.rules.datalog import Program, union_clauses
from udflow.rules.guards import guard_reasons
from udflow.rules.facts import NOTHING, OpFacts, analysis_provider, fact_strings, fields_of, flow_facts
from udflow.rules.keys import KeyOracle

_DERIVED = "udflow_derived"  # the union predicates asked in one query each
_REFUSED = "udflow_refused"

_BUILTIN_SHAPES = (unary_unary, unary_binary, binary_unary, binary_binary)

_CONFLICT_PROPS = {
    "write-read": ("writes", "reads"),
    "read-write": ("reads", "writes"),
    "write-write": ("writes", "writes"),
}


@functools.lru_cache(maxsize=None)
def _own_fields(cls: type) -> tuple[str, ...]:
    """A node class's compared attributes that are not inputs."""
    return tuple(f.name for f in dataclasses.fields(cls)
                 if f.compare and f.name not in ("input", "left", "right", "args"))


class NodeMemo:
    """A memo over plan nodes keyed one level deep: the operator's own attributes and the
    *identity* of its inputs, with the mapping methods `fields_of` uses.

    A frozen plan node hashes its whole tree on every lookup; the search builds its trees
    from shared subtrees, so this key costs one level (and a node object seen before is
    found by its id alone). Entries keep their nodes alive, so an id in a key is never
    reused while it is stored; structurally equal inputs that are different objects only
    cost a recomputation."""

    __slots__ = ("_entries", "_by_id")

    def __init__(self) -> None:
        self._entries: dict[tuple, tuple] = {}
        self._by_id: dict[int, tuple] = {}

    @staticmethod
    def _key(node, inputs=None) -> tuple:
        cls = type(node)
        values = node.__dict__
        return (cls, tuple([values[name] for name in _own_fields(cls)]),
                tuple([id(c) for c in (node.inputs if inputs is None else inputs)]))

    def _find(self, node):
        hit = self._by_id.get(id(node))
        if hit is not None and hit[0] is node:
            return hit
        hit = self._entries.get(self._key(node))
        if hit is not None:
            self._by_id[id(node)] = hit = (node, hit[1])
        return hit

    def canonical(self, template, inputs: tuple, build):
        """The one node equal to `template` over `inputs` (`build(template, *inputs)` the first time)."""
        key = self._key(template, inputs)
        hit = self._entries.get(key)
        if hit is None:
            node = build(template, *inputs)
            hit = self._entries[key] = (node, node)
        return hit[1]

    def get(self, node, default=None):
        hit = self._find(node)
        return default if hit is None else hit[1]

    def __contains__(self, node) -> bool:
        return self._find(node) is not None

    def __getitem__(self, node):
        hit = self._find(node)
        if hit is None:
            raise KeyError(node)
        return hit[1]

    def __setitem__(self, node, value) -> None:
        self._entries[self._key(node)] = self._by_id[id(node)] = (node, value)

    def clear(self) -> None:
        self._entries.clear()
        self._by_id.clear()


class RuleBook:
    """An isolated pyDatalog program with the facts of one flow, plus Z3 for keys."""

    def __init__(self, root, *, properties: str = "analysis", provider=None,
                 rules: Optional[Sequence[Rule]] = None, timeout_ms: int = 2000):
        from udflow.rules import registry

        self.root: Node = getattr(root, "root", root)
        self.properties = properties
        if provider is None:
            provider = analysis_provider(manual=properties == "manual")
        self.provider = provider
        self._fields = NodeMemo()  # fields_of per node: plan nodes hash their whole tree
        self._fields_lock = threading.RLock()
        self.facts = flow_facts(self.root, provider, self._fields)
        self.rules: tuple[Rule, ...] = tuple(registry.rules() if rules is None else rules)
        self._wanted_now, self._wanted_refused = self._wanted()
        self._refusals = None
        self.program = Program(
            [(r.name, r.clauses) for r in self.rules]
            + [("udflow", union_clauses(_DERIVED, self._wanted_now)),
               ("udflow", union_clauses(_REFUSED, self._wanted_refused))],
            self.facts.datalog(),
        )
        self._lock = threading.RLock()
        self.derived = self._derive()
        self.keys = KeyOracle(self.facts, self.fields, timeout_ms)
        self._by_id: dict[int, tuple[Node, list]] = {}
        self._by_node = NodeMemo()
        self._trees = NodeMemo()  # the trees the moves build, one object each
        self._labels: dict[int, tuple[Node, frozenset]] = {}
        self._touch: dict = {}
        self._touch_reasons: dict = {}
        self._decisions: dict = {}
        self._verdict_cache: dict = {}
        self._types_below: dict = {}
        self._types_by_givers: dict = {}
        self._below: Optional[dict] = None
        self._root_keys = {n.label: tuple(n.key) for n in self.root.walk()
                           if not isinstance(n, Source) and getattr(n, "key", None) is not None}

    # -- derivation, once ------------------------------------------------------

    def _wanted(self) -> tuple[dict[str, int], dict[str, int]]:
        """The derived predicates `exchanges` needs (attribute origins, every rule's permission,
        extra predicates) and, separately, the refusals (only `why_not` and reasons need them)."""
        wanted = {"touches_origin": 3, "udf_touches_origin": 3}
        refused = {}
        for rule in self.rules:
            if f"{rule.name}(" in rule.clauses or f"{rule.name}_refused(" in rule.clauses:
                wanted[rule.name] = 2
                refused[f"{rule.name}_refused"] = 4
            for p in rule.extra_predicates:
                name, arity = p.split("/")
                wanted[name] = int(arity)
        return wanted, refused

    def _derive(self) -> dict[str, set]:
        """Ask the program, in one query, for every permission and attribute origin."""
        derived = self.program.ask_all(self._wanted_now, _DERIVED)
        derived = {name: {a for a in answers if NOTHING not in a} for name, answers in derived.items()}
        touches: dict[str, dict[str, set]] = {}
        for op, origin, attr in derived["touches_origin"]:
            touches.setdefault(op, {}).setdefault(origin, set()).add(attr)
        self.touches = touches
        udf: dict[str, dict[str, set]] = {}
        for op, origin, attr in derived["udf_touches_origin"]:
            udf.setdefault(op, {}).setdefault(origin, set()).add(attr)
        self.udf_touches = udf
        return derived

    @property
    def refusals(self) -> dict[tuple[str, str, str], list]:
        """(rule, upper, lower) -> [(condition, attribute)]: every refusal the program derives,
        asked in one query the first time a reason is wanted."""
        if self._refusals is None:
            with self._lock:
                if self._refusals is None:
                    found = self.program.ask_all(self._wanted_refused, _REFUSED)
                    refusals: dict[tuple[str, str, str], list] = {}
                    for name, answers in found.items():
                        self.derived[name] = answers = {a for a in answers if NOTHING not in a}
                        for u, l, cond, attr in answers:
                            refusals.setdefault((name[: -len("_refused")], u, l), []).append((cond, attr))
                    self._refusals = refusals
        return self._refusals

    def query(self, text: str) -> set[tuple]:
        """Ask this book's Datalog program directly (for tests and tooling)."""
        return {a for a in self.program.ask(text) if NOTHING not in a}

    # -- helpers for rule modules -----------------------------------------------

    def fields(self, node: Node) -> Optional[frozenset[str]]:
        """The fields a record leaving `node` may carry (None when unknown)."""
        with self._fields_lock:
            return fields_of(node, self.provider, self._fields)

    def op(self, label: str) -> Optional[OpFacts]:
        return self.facts.ops.get(label)

    @functools.cached_property
    def state_readers(self) -> frozenset[str]:
        """The operators whose function reads a mutable global or closure value (the
        state barrier's readers; `guards.state_barrier`)."""
        return frozenset(label for label, o in self.facts.ops.items()
                         if o.props is not None and o.props.state_reads)

    def permitted(self, rule: str, upper: str, lower: str) -> bool:
        return (upper, lower) in self.derived.get(rule, ())

    def labels_in(self, node: Node) -> frozenset[str]:
        hit = self._labels.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        # from the children's sets: the search's trees share their subtrees, so this is one level
        labels = frozenset({node.label}).union(*(self.labels_in(c) for c in node.inputs))
        self._labels[id(node)] = (node, labels)
        return labels

    def touched_in(self, op_label: str, subtree: Node, udf_only: bool = False) -> dict[str, set]:
        """Attributes `op` reads or (effectively) writes whose origin lies in `subtree`
        (`udf_only`: what the function body reads, without the operator's keys)."""
        labels = self.labels_in(subtree)
        key = (op_label, labels, udf_only)
        hit = self._touch.get(key)
        if hit is None:
            by_origin = (self.udf_touches if udf_only else self.touches).get(op_label, {})
            hit = {o: attrs for o, attrs in by_origin.items() if o in labels}
            self._touch[key] = hit
        return hit

    def reason(self, rule: str, condition: str, attr: Optional[str], ops: Sequence[str],
               detail: str = "") -> Reason:
        """A refusal with the source lines the analysis gave for the failing property."""
        attr = None if attr in (None, "-", NOTHING) else attr
        lines: list[tuple[str, int]] = []
        props = _CONFLICT_PROPS.get(condition.split(": ")[-1])
        for i, label in enumerate(ops):
            facts = self.op(label)
            if facts is None:
                continue
            if props is not None and i < 2:
                wanted = (props[i],)
            elif condition.startswith("kgp"):
                wanted = ("card_reads", "emits")
            elif condition.startswith("impure"):
                wanted = ("impure",)
            else:
                wanted = ("reads", "writes")
            for prop in wanted:
                lines += [(label, ln) for ln in facts.lines(prop, attr if prop != "emits" else None)]
        return Reason(rule, condition, attr, tuple(ops), tuple(dict.fromkeys(lines)), detail)

    def pair_reasons(self, rule: str, upper: str, lower: str) -> list[Reason]:
        """Why the Datalog program did not derive `rule(upper, lower)`."""
        found = self.refusals.get((rule, upper, lower), [])
        out = []
        for cond, attr in sorted(found, key=str):
            out.append(self.reason(rule, cond, attr, (upper, lower)))
        if not out:
            out.append(Reason(rule, "not derived", None, (upper, lower),
                              detail="no clause of the rule matches these operators"))
        return out

    def touch_reasons(self, rule: str, op_label: str, subtree: Node, udf_only: bool = False) -> list[Reason]:
        """Why `op` may not leave `subtree` (it touches attributes from there); [] if it may."""
        touched = self.touched_in(op_label, subtree, udf_only)
        if not touched:
            return []
        key = (rule, op_label, self.labels_in(subtree), subtree.label, udf_only)
        hit = self._touch_reasons.get(key)
        if hit is None:
            hit = self._touch_reasons[key] = tuple(self._touch_reasons_of(rule, op_label, subtree, touched))
        return list(hit)

    def _touch_reasons_of(self, rule: str, op_label: str, subtree: Node, touched: dict) -> list[Reason]:
        out = []
        for origin, attrs in sorted(touched.items()):
            for a in sorted(attrs):
                out.append(self.reason(rule, "touches the other input", a, (op_label,),
                                       detail=f"{a} comes from {origin}, below {subtree.label}"))
        return out

    def position_facts(self, move: Move) -> list[str]:
        """Which subtrees an operator must stay clear of, and where its attributes come from."""
        out = []
        for subtree, op_label in zip(move.stays, move.stays_for):
            out.append(f"clear_of({op_label}, {subtree.label})")
            out += [f"contains({subtree.label}, {n})" for n in sorted(self.labels_in(subtree))]
            for origin, attrs in sorted(self.touches.get(op_label, {}).items()):
                out += [f"origin({a}, {origin})" for a in sorted(attrs)]
        return out

    # -- the contract ----------------------------------------------------------

    def exchanges(self, node: Node) -> list[Exchange]:
        """Every valid local rewrite exchanging `node` with one of its direct inputs."""
        hit = self._by_id.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        with self._lock:
            result = self._by_node.get(node)
            if result is None:  # an equal tree over the same input objects was not asked either
                result = [ex for ex, _, _ in self._evaluate(node, explain=False)]
                self._by_node[node] = result
            self._by_id[id(node)] = (node, result)
        return result

    def decisions(self, node: Node) -> list[tuple[Optional[Exchange], Decision, Move]]:
        """Every rule's decision on every move at `node`, refused ones with their reasons
        (what `why_not` reads; for tests and tooling)."""
        return self._evaluate(node, explain=True)

    def _evaluate(self, node: Node, explain: bool = True) -> list[tuple[Optional[Exchange], Decision, Move]]:
        """The decision of every rule on every move at `node`; without `explain`, only the
        allowed ones, and moves a rule refuses outright (`Rule.permits`) are not decided."""
        out = []
        if isinstance(node, Source):
            return out
        shared: dict[str, list[Move]] = {}  # the moves of one shape, built once for every rule
        for rule in self.rules:
            if type(rule).moves is not Rule.moves:  # a rule with its own matcher
                groups = (list(rule.moves(node)),)
            else:
                groups = []
                for shape in rule.shapes:
                    found = shared.get(shape)
                    if found is None:
                        make = SHAPES[shape]
                        found = shared[shape] = list(
                            make(node, rebuild=self._rebuild) if make in _BUILTIN_SHAPES else make(node))
                    groups.append(found)
            for moves in groups:
                for move in moves:
                    if not rule.applies(self, move):
                        continue
                    if not explain and not rule.permits(self, move):
                        continue
                    decision = self._guarded(rule, move, rule.decide(self, move))
                    exchange = None
                    if decision.allowed:
                        if decision.after is not None:
                            move = dataclasses.replace(move, after=decision.after)
                        exchange = Exchange(rule.name, node, move.after,
                                            build=functools.partial(self._certificate, rule, move, decision))
                    elif not explain:
                        continue
                    out.append((exchange, decision, move))
        return out

    def _guarded(self, rule: Rule, move: Move, decision: Decision) -> Decision:
        """The rule's decision, refused where the move breaks a guard (`guards.py`)."""
        if not decision.allowed:
            return decision
        reasons = guard_reasons(self, rule.name, move, decision.after or move.after)
        if not reasons:
            return decision
        return dataclasses.replace(decision, allowed=False, reasons=tuple(reasons))

    def field_types_below(self, labels: frozenset) -> dict[str, FieldType]:
        """Attribute -> FieldType as records leave the operators `labels` (a subtree): only the
        operators below a function decide what values reach it."""
        hit = self._types_below.get(labels)
        if hit is None:
            changes = {b: _values_changed(self.facts.ops[b]) for b in labels if b in self.facts.ops}
            # only the operators that change some value count: many subtrees share them, and
            # `attribute_types` reads every source's types (parquet metadata) on each call
            givers = frozenset(b for b, (changed, _) in changes.items() if changed)
            hit = self._types_by_givers.get(givers)
            if hit is None:
                hit = self._types_by_givers[givers] = attribute_types(self.root, list(changes.values()))
            self._types_below[labels] = hit
        return hit

    def below_as_written(self, label: str) -> frozenset[str]:
        """The operators and sources below `label` in the plan as written."""
        if self._below is None:
            self._below = {n.label: self.labels_in(n) - {n.label} for n in self.root.walk()}
        return self._below.get(label, frozenset())

    def _rebuild(self, node: Node, *inputs: Node) -> Node:
        """`node` over `inputs`, one object per distinct tree: the moves at different subtrees
        build the same trees again and again, and every memo here (fields, labels, the
        exchanges themselves) and the search's interner find a known object in one step."""
        return self._trees.canonical(node, inputs, base_rebuild)

    def _certificate(self, rule: Rule, move: Move, decision: Decision) -> Certificate:
        ops = (move.upper.label, move.lower.label)
        facts: list[str] = []
        for label in ops:
            o = self.op(label)
            if o is not None:
                facts += fact_strings(o)
        facts += self.position_facts(move)
        facts += decision.facts
        return Certificate(
            rule=rule.name,
            operators=ops,
            facts=tuple(dict.fromkeys(facts)),
            smt=tuple((a.smt, a.answer) for a in decision.smt),
            before=draw(move.before, self._annotate),
            after=draw(move.after, self._annotate),
            properties=self.properties,
        )

    def _annotate(self, node: Node) -> str:
        """Plans keep labels, so a Reduce whose key was rewritten says so: `[key l_suppkey]`."""
        key = getattr(node, "key", None)
        if isinstance(node, Source) or key is None:
            return ""
        if self._root_keys.get(node.label) != tuple(key):
            return f"[key {','.join(key)}]"
        return ""

    def why_not(self, a_label: str, b_label: str) -> Verdict:
        """May `a` and `b` be exchanged where they stand in the flow (or, if they are not
        adjacent, as if `a` stood directly on `b`)? Allowed with certificates, or refused
        with the rule, the failed condition, the attribute and the source lines."""
        key = (a_label, b_label)
        if key in self._verdict_cache:
            return self._verdict_cache[key]
        nodes = {n.label: n for n in self.root.walk()}
        if a_label not in nodes or b_label not in nodes:
            missing = a_label if a_label not in nodes else b_label
            from udflow.errors import OptimizationError

            raise OptimizationError(f"no operator labelled {missing!r} in this flow")
        a, b = nodes[a_label], nodes[b_label]
        if b in a.inputs:
            top = a
        elif a in b.inputs:
            top = b
        else:
            top = self._hypothetical(a, b)
        allowed, reasons = [], []
        if top is not None:
            for exchange, decision, move in self._evaluate(top):
                if {move.upper.label, move.lower.label} != {a_label, b_label}:
                    continue
                if exchange is not None:
                    allowed.append(exchange.certificate)
                else:
                    reasons += decision.reasons
        verdict = Verdict(bool(allowed), (a_label, b_label), tuple(allowed),
                          tuple(dict.fromkeys(reasons)) if not allowed else ())
        self._verdict_cache[key] = verdict
        return verdict

    def _hypothetical(self, a: Node, b: Node) -> Optional[Node]:
        """`a` placed directly over `b` (for why_not on operators that are not adjacent)."""
        if a.arity == 1:
            return a.with_inputs(b)
        if a.arity == 2:
            return a.with_inputs(b, a.inputs[1]) if b not in a.inputs[1].walk() else a.with_inputs(a.inputs[0], b)
        return None

    def close(self) -> None:
        """Drop every memo (a search leaves hundreds of thousands of entries) and the Datalog
        program once nothing needs it: the refusals (for `why_not`) are asked lazily, so the
        program stays until they are. The book still answers after `close`, recomputing."""
        if self._refusals is not None:
            self.program.close()
        for memo in (self._by_id, self._by_node, self._trees, self._labels, self._touch,
                     self._touch_reasons, self._decisions):
            memo.clear()

    def __enter__(self) -> "RuleBook":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def _values_changed(o: OpFacts) -> tuple[frozenset, dict]:
    """The attributes an operator may give a value (removing a field or projecting it away
    leaves the values where it is present as they were), and their known type families."""
    if o.props is None or not o.pure:
        return o.writes | o.new_fields, {}
    return frozenset(o.props.values_changed()) | o.new_fields, dict(o.props.output_types)


def exchanges_of(book: RuleBook, nodes: Iterable[Node]) -> list[Exchange]:
    return [ex for n in nodes for ex in book.exchanges(n)]
