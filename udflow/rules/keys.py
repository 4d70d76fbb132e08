"""Z3 for the key and foreign-key side conditions (issue 4, item 3).

Records are elements of an uninterpreted sort `Rec`, values of `Val`, and every
attribute `A` of the global record is an uninterpreted function `A : Rec -> Val`.
An operator below the data set in question is encoded by what the facts prove
about it, never more:

  - a record-at-a-time operator gives every output record a parent
    `in:<label>(r)`; an attribute it does not write keeps its value,
    `A(r) = A(in(r))`; if it emits at most one record per call, distinct outputs
    have distinct parents;
  - a Match/Cross output record is a pair `left:<label>(r)`, `right:<label>(r)`;
    a Match adds the join equality `K(left(r)) = F(right(r))`;
  - a Reduce that emits at most one record per group and does not write its
    key makes the key a key of its output;
  - a source's primary key `K` is the functional dependency
    `K(x1) = K(x2) -> x1 = x2`, a foreign key `F -> T(C)` is
    `T.C(ref:T(x)) = F(x)`;
  - anything else (impure, CoGroup, custom operators) adds nothing.

A question is then an SMT problem whose *unsatisfiability* is the property:
"two records agree on K but are distinct" (K is a key), "two records agree on
K but differ on A" (K determines A), "F differs from every referenced key"
(the foreign key still references). `sat`, `unknown` and a timeout all mean
"not proved", so the rule is refused. Each query is kept as SMT-LIB text for
the certificate; identical queries are answered once per RuleBook.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass
from itertools import combinations
from typing import Sequence

import z3

from udflow.plan import Cross, Match, Node, Reduce, Source

TIMEOUT_MS = 2000


@dataclass(frozen=True)
class SmtAnswer:
    question: str
    smt: str  # SMT-LIB 2 text of the query, `(check-sat)` included
    answer: str  # "unsat" (proved), "sat" or "unknown"

    @property
    def proved(self) -> bool:
        return self.answer == "unsat"


def run_smt(text: str, timeout_ms: int = TIMEOUT_MS) -> str:
    """Re-run an SMT-LIB query on a fresh context: 'sat', 'unsat' or 'unknown'."""
    ctx = z3.Context()
    solver = z3.Solver(ctx=ctx)
    solver.set("timeout", timeout_ms)
    try:
        solver.from_string(text)
    except z3.Z3Exception:
        return "unknown"
    return str(solver.check())


class _Encoding:
    """The assertions that describe records flowing out of one subtree."""

    def __init__(self, facts, fields, interest: set[str]):
        self.facts = facts
        self.fields = fields
        self.ctx = z3.Context()
        self.Rec = z3.DeclareSort("Rec", self.ctx)
        self.Val = z3.DeclareSort("Val", self.ctx)
        self.interest = interest
        self.assertions: list = []
        self._attrs: dict = {}
        self.at_source: dict[str, list] = {}

    def attr(self, name: str):
        if name not in self._attrs:
            self._attrs[name] = z3.Function(name, self.Rec, self.Val)
        return self._attrs[name]

    def func(self, name: str):
        return z3.Function(name, self.Rec, self.Rec)

    def record(self, name: str):
        return z3.Const(name, self.Rec)

    def distinct_parents(self, terms: Sequence, parent) -> None:
        for a, b in combinations(terms, 2):
            self.assertions.append(z3.Implies(a != b, parent(a) != parent(b)))

    def keep(self, terms: Sequence, parent, attrs) -> None:
        for t in terms:
            for a in sorted(attrs):
                self.assertions.append(self.attr(a)(t) == self.attr(a)(parent(t)))

    def encode(self, node: Node, terms: Sequence) -> None:
        output_fields = self.fields
        if isinstance(node, Source):
            self.at_source.setdefault(node.label, []).extend(terms)
            src = self.facts.sources[node.label]
            if src.key:
                for a, b in combinations(terms, 2):
                    same = z3.And(*[self.attr(k)(a) == self.attr(k)(b) for k in src.key])
                    self.assertions.append(z3.Implies(same, a == b))
            return
        op = self.facts.ops.get(node.label)
        if op is None or not op.pure:
            return  # nothing is known about an impure operator's output

        def kept(fields) -> set[str]:
            fields = fields or frozenset()
            return {
                a
                for a in self.interest & set(fields)
                if a not in op.writes and (op.copy or (op.outputs is not None and a in op.outputs))
            }

        if isinstance(node, Reduce):
            key = node.key
            if op.emits_at_most_one and not (set(key) & op.writes):
                for a, b in combinations(terms, 2):
                    same = z3.And(*[self.attr(k)(a) == self.attr(k)(b) for k in key])
                    self.assertions.append(z3.Implies(same, a == b))
            member = self.func(f"member:{node.label}")
            self.keep(terms, member, kept(output_fields(node.input)) | (set(key) - op.writes))
            self.encode(node.input, [member(t) for t in terms])
            return
        if isinstance(node, (Match, Cross)) and op.emits_at_most_one:
            left, right = self.func(f"left:{node.label}"), self.func(f"right:{node.label}")
            self.keep(terms, left, kept(output_fields(node.left)))
            self.keep(terms, right, kept(output_fields(node.right)))
            if isinstance(node, Match):
                for t in terms:
                    for lk, rk in zip(node.left_key, node.right_key):
                        self.assertions.append(self.attr(lk)(left(t)) == self.attr(rk)(right(t)))
            for a, b in combinations(terms, 2):
                self.assertions.append(
                    z3.Implies(z3.And(left(a) == left(b), right(a) == right(b)), a == b)
                )
            self.encode(node.left, [left(t) for t in terms])
            self.encode(node.right, [right(t) for t in terms])
            return
        if op.arity == 1 and op.record_at_a_time:
            parent = self.func(f"in:{node.label}")
            if op.emits_at_most_one:
                self.distinct_parents(terms, parent)
            self.keep(terms, parent, kept(output_fields(node.inputs[0])))
            self.encode(node.inputs[0], [parent(t) for t in terms])

    def smt(self, goal) -> str:
        solver = z3.Solver(ctx=self.ctx)
        solver.add(*self.assertions)
        solver.add(goal)
        return solver.to_smt2()


class KeyOracle:
    """Key / foreign-key questions about the data sets inside one flow, answered by Z3."""

    def __init__(self, facts, fields, timeout_ms: int = TIMEOUT_MS):
        self.facts = facts
        self.fields = fields
        self.timeout_ms = timeout_ms
        self._answers: dict[str, str] = {}
        self._lock = threading.Lock()

    def _interest(self, node: Node, extra) -> set[str]:
        out = set(extra)
        for n in node.walk():
            if isinstance(n, Source):
                src = self.facts.sources[n.label]
                out |= set(src.key)
                out |= {f for fields, _, _ in src.foreign_keys for f in fields}
            elif isinstance(n, (Match,)):
                out |= set(n.left_key) | set(n.right_key)
            elif isinstance(n, Reduce):
                out |= set(n.key)
        return out

    def _answer(self, question: str, text: str) -> SmtAnswer:
        with self._lock:
            cached = self._answers.get(text)
        if cached is None:
            cached = run_smt(text, self.timeout_ms)
            with self._lock:
                self._answers[text] = cached
        return SmtAnswer(question, text, cached)

    def is_key(self, node: Node, key: Sequence[str]) -> SmtAnswer:
        """Is `key` a key of the records leaving `node`? (unsat of: two distinct records agree on it)"""
        enc = _Encoding(self.facts, self.fields, self._interest(node, key))
        r1, r2 = enc.record("r1"), enc.record("r2")
        enc.encode(node, [r1, r2])
        goal = z3.And(r1 != r2, *[enc.attr(k)(r1) == enc.attr(k)(r2) for k in key])
        return self._answer(f"is ({', '.join(key)}) a key of {node.label}?", enc.smt(goal))

    def determines(self, node: Node, key: Sequence[str], attrs: Sequence[str]) -> SmtAnswer:
        """In the records leaving `node`, does `key` determine every attribute in `attrs`?"""
        enc = _Encoding(self.facts, self.fields, self._interest(node, set(key) | set(attrs)))
        r1, r2 = enc.record("r1"), enc.record("r2")
        enc.encode(node, [r1, r2])
        differ = z3.Or(*[enc.attr(a)(r1) != enc.attr(a)(r2) for a in sorted(attrs)])
        goal = z3.And(*[enc.attr(k)(r1) == enc.attr(k)(r2) for k in key], differ)
        question = f"does ({', '.join(key)}) determine ({', '.join(sorted(attrs))}) in {node.label}?"
        return self._answer(question, enc.smt(goal))

    def references(self, node: Node, fk_fields: Sequence[str], source_label: str,
                   table: str, columns: Sequence[str]) -> SmtAnswer:
        """Does every record leaving `node` still carry, in `fk_fields`, a key of `table`?"""
        enc = _Encoding(self.facts, self.fields, self._interest(node, fk_fields))
        r = enc.record("r")
        enc.encode(node, [r])
        question = (f"does ({', '.join(fk_fields)}) of {node.label} still reference "
                    f"{table}({', '.join(columns)})?")
        bases = enc.at_source.get(source_label, [])
        if len(bases) != 1:
            return SmtAnswer(question, "; the foreign key's source is not below\n(check-sat)", "sat")
        base = bases[0]
        ref = enc.func(f"ref:{table}")
        for f, c in zip(fk_fields, columns):
            enc.assertions.append(enc.attr(f"{table}.{c}")(ref(base)) == enc.attr(f)(base))
        goal = z3.Or(*[enc.attr(f)(r) != enc.attr(f"{table}.{c}")(ref(base)) for f, c in zip(fk_fields, columns)])
        return self._answer(question, enc.smt(goal))
