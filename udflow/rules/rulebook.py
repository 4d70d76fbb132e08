"""RuleBook: all reorder knowledge for one optimization.

    book = RuleBook(flow.root)
    for ex in book.exchanges(subtree):      # every valid local rewrite, with certificates
        ...
    print(book.why_not("Map(f3)", "Filter(f2)"))

At construction the flow's facts are loaded into an isolated pyDatalog
program (see `datalog.Program`) together with every registered rule module's
clauses, and every position-independent permission and refusal is derived
once. `exchanges` then only looks up those answers and evaluates the
position-dependent conditions (which attributes a subtree can carry, key and
foreign-key questions for Z3), memoized per subtree and per
(operator, attribute origins) so repeated calls cost microseconds.
"""

from __future__ import annotations

import dataclasses
import threading
from typing import Iterable, Optional, Sequence

from udflow.plan import Node, Source, draw
from udflow.rules.base import Decision, Move, Rule
from udflow.rules.certificate import Certificate, Exchange, Reason, Verdict
from udflow.rules.datalog import Program
from udflow.rules.facts import NOTHING, OpFacts, analysis_provider, fact_strings, fields_of, flow_facts
from udflow.rules.keys import KeyOracle

_CONFLICT_PROPS = {
    "write-read": ("writes", "reads"),
    "read-write": ("reads", "writes"),
    "write-write": ("writes", "writes"),
}


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
        self._fields: dict = {}
        self._fields_lock = threading.RLock()
        self.facts = flow_facts(self.root, provider, self._fields)
        self.rules: tuple[Rule, ...] = tuple(registry.rules() if rules is None else rules)
        self.program = Program([(r.name, r.clauses) for r in self.rules], self.facts.datalog())
        self.derived = self._derive()
        self.keys = KeyOracle(self.facts, self.fields, timeout_ms)
        self._lock = threading.RLock()
        self._by_id: dict[int, tuple[Node, list]] = {}
        self._by_node: dict[Node, list] = {}
        self._labels: dict[int, tuple[Node, frozenset]] = {}
        self._touch: dict = {}
        self._decisions: dict = {}
        self._verdict_cache: dict = {}
        self._root_keys = {n.label: tuple(n.key) for n in self.root.walk()
                           if not isinstance(n, Source) and getattr(n, "key", None) is not None}

    # -- derivation, once ------------------------------------------------------

    def _derive(self) -> dict[str, set]:
        derived: dict[str, set] = {}
        wanted = {"touches_origin": 3, "udf_touches_origin": 3, "conflict": 4, "roc": 2, "kgp": 2}
        for rule in self.rules:
            if f"{rule.name}(" in rule.clauses or f"{rule.name}_refused(" in rule.clauses:
                wanted[rule.name] = 2
                wanted[f"{rule.name}_refused"] = 4
            for p in rule.extra_predicates:
                name, arity = p.split("/")
                wanted[name] = int(arity)
        queries = {name: f"{name}({', '.join(f'V{i}' for i in range(arity))})" for name, arity in wanted.items()}
        answers = self.program.ask_many(queries.values())
        for name, query in queries.items():
            derived[name] = {a for a in answers[query] if NOTHING not in a}
        touches: dict[str, dict[str, set]] = {}
        for op, origin, attr in derived["touches_origin"]:
            touches.setdefault(op, {}).setdefault(origin, set()).add(attr)
        self.touches = touches
        udf: dict[str, dict[str, set]] = {}
        for op, origin, attr in derived["udf_touches_origin"]:
            udf.setdefault(op, {}).setdefault(origin, set()).add(attr)
        self.udf_touches = udf
        self.refusals: dict[tuple[str, str, str], list] = {}
        for name in list(derived):
            if name.endswith("_refused"):
                for u, l, cond, attr in derived[name]:
                    self.refusals.setdefault((name[: -len("_refused")], u, l), []).append((cond, attr))
        return derived

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

    def permitted(self, rule: str, upper: str, lower: str) -> bool:
        return (upper, lower) in self.derived.get(rule, ())

    def labels_in(self, node: Node) -> frozenset[str]:
        hit = self._labels.get(id(node))
        if hit is not None and hit[0] is node:
            return hit[1]
        labels = frozenset(n.label for n in node.walk())
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
        out = []
        for origin, attrs in sorted(self.touched_in(op_label, subtree, udf_only).items()):
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
            for origin, attrs in self.touches.get(op_label, {}).items():
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
            if result is None:
                result = [ex for ex, _, _ in self._evaluate(node) if ex is not None]
                self._by_node[node] = result
            self._by_id[id(node)] = (node, result)
        return result

    def _evaluate(self, node: Node) -> list[tuple[Optional[Exchange], Decision, Move]]:
        out = []
        if isinstance(node, Source):
            return out
        for rule in self.rules:
            for move in rule.moves(node):
                if not rule.applies(self, move):
                    continue
                decision = rule.decide(self, move)
                exchange = None
                if decision.allowed:
                    if decision.after is not None:
                        move = dataclasses.replace(move, after=decision.after)
                    exchange = Exchange(rule.name, node, move.after, self._certificate(rule, move, decision))
                out.append((exchange, decision, move))
        return out

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
        self.program.close()
        self._by_id.clear()
        self._by_node.clear()

    def __enter__(self) -> "RuleBook":
        return self

    def __exit__(self, *exc) -> None:
        self.close()


def exchanges_of(book: RuleBook, nodes: Iterable[Node]) -> list[Exchange]:
    return [ex for n in nodes for ex in book.exchanges(n)]
