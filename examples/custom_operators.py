"""Two operator types added through udflow's public registry only: Distinct and Union.

Neither udflow's plan nor its rules know these operators. This module

  1. declares each as an `OperatorType` (its bag semantics, its fields, its properties),
  2. registers it (`udflow.rules.register_operator_type`),
  3. writes a rule module for it - Datalog clauses for the permission, the
     structural move, and an independent `verify` for certificates - and
     registers that (`udflow.rules.register_rules`),

so that a filter may move below a Distinct, and into both inputs of a Union.
See docs/writing-rules.md for the same steps explained.

    Filter(f)                 Distinct              Filter(f)             Union
      Distinct        ->        Filter(f)             Union         ->      Filter(f)
        X                         X                     X                     X
                                                        Y                   Filter(f)'
                                                                              Y
"""

from __future__ import annotations

import dataclasses
from typing import Iterator

import udflow as uf
from udflow.analysis.properties import UdfProperties
from udflow.plan import Custom, Map, Node, OperatorType
from udflow.rules import Decision, Move, PairRule, Rule, register_operator_type, register_rules, rules

# -- 1. the operator types -----------------------------------------------------------------------


def _distinct(bags: list, params: dict) -> list:
    """Bag -> set: the first copy of every record (records are equal when all fields are)."""
    seen, out = set(), []
    for r in bags[0]:
        key = tuple(sorted(r.items(), key=lambda kv: kv[0]))
        if key not in seen:
            seen.add(key)
            out.append(r)
    return out


def _distinct_properties(input_fields: tuple, params: dict) -> UdfProperties:
    every = frozenset(input_fields[0])
    # it reads every field (equality decides what survives) and changes none
    return UdfProperties(kind="custom", reads=every, writes=frozenset(), emits=(0, 1),
                         card_reads=every, copy=True, pure=True, output_fields=every,
                         side_reads=(every,), origin="annotation", location="Distinct")


def _union(bags: list, params: dict) -> list:
    return [dict(r) for r in bags[0]] + [dict(r) for r in bags[1]]


def _union_properties(input_fields: tuple, params: dict) -> UdfProperties:
    left, right = (frozenset(f) for f in input_fields)
    return UdfProperties(kind="custom", reads=frozenset(), writes=frozenset(), emits=(1, 1),
                         card_reads=frozenset(), copy=True, pure=True, output_fields=left | right,
                         side_reads=(frozenset(), frozenset()), origin="annotation", location="Union")


DISTINCT = OperatorType(
    name="Distinct", arity=1, reference=_distinct,
    output_fields=lambda inputs, params: inputs[0],
    properties=_distinct_properties,
)
UNION = OperatorType(
    name="Union", arity=2, reference=_union,
    output_fields=lambda inputs, params: inputs[0] | inputs[1],
    properties=_union_properties, disjoint_inputs=False,
)


# -- 2. the rules ------------------------------------------------------------------------------------

# A filter-like Map: pure, at most one record per call, copies its input and writes nothing.
FILTER_LIKE = "pure({X}) & emits_le1({X}) & copies({X}) & ~custom_writes_any({X})"

DISTINCT_CLAUSES = f"""
custom_writes_any(X) <= writes(X, A)
filter_below_distinct(U, L) <= kind(U, 'map') & kind(L, 'Distinct') & {FILTER_LIKE.format(X='U')}
filter_below_distinct(U, L) <= kind(U, 'Distinct') & kind(L, 'map') & {FILTER_LIKE.format(X='L')}
filter_below_distinct_refused(U, L, 'not a filter: writes', A) <= kind(U, 'map') & kind(L, 'Distinct') & writes(U, A)
filter_below_distinct_refused(U, L, 'not a filter: may emit several records', '-') <= kind(U, 'map') & kind(L, 'Distinct') & ~emits_le1(U)
filter_below_distinct_refused(U, L, 'impure', U) <= kind(U, 'map') & kind(L, 'Distinct') & ~pure(U)
"""

UNION_CLAUSES = f"""
custom_writes_any(X) <= writes(X, A)
filter_into_union(U, L) <= kind(U, 'map') & kind(L, 'Union') & {FILTER_LIKE.format(X='U')}
filter_into_union_refused(U, L, 'not a filter: writes', A) <= kind(U, 'map') & kind(L, 'Union') & writes(U, A)
filter_into_union_refused(U, L, 'not a filter: may emit several records', '-') <= kind(U, 'map') & kind(L, 'Union') & ~emits_le1(U)
filter_into_union_refused(U, L, 'impure', U) <= kind(U, 'map') & kind(L, 'Union') & ~pure(U)
"""


def _filter_like(op) -> list[str]:
    """The checker's own reading of "filter-like", from the recomputed properties."""
    problems = []
    if not op.pure:
        problems.append(f"{op.label} is not pure")
    if op.emits[1] is None or op.emits[1] > 1:
        problems.append(f"{op.label} may emit more than one record")
    if not op.copy or op.writes:
        problems.append(f"{op.label} changes records (writes {sorted(op.writes)})")
    return problems


class FilterBelowDistinct(PairRule):
    """Filter(Distinct(X)) == Distinct(Filter(X)): equal records get equal verdicts."""

    def applies(self, book, move: Move) -> bool:
        u, l = book.op(move.upper.label), book.op(move.lower.label)
        return u is not None and l is not None and {u.kind, l.kind} == {"map", "Distinct"}

    def verify(self, certificate, context) -> list[str]:
        u, l = context["upper"], context["lower"]
        f, d = (u, l) if u.kind == "map" else (l, u)
        return _filter_like(f) + ([] if d.kind == "Distinct" else [f"{d.label} is not a Distinct"])


class FilterIntoUnion(Rule):
    """Filter(Union(X, Y)) == Union(Filter(X), Filter'(Y)): a bag union commutes with
    any per-record decision. The filter is copied; the copy's label ends in `'`."""

    def moves(self, node: Node) -> Iterator[Move]:
        if isinstance(node, Map) and isinstance(node.input, Custom) and node.input.op_type.name == "Union":
            union = node.input
            x, y = union.inputs
            copy = dataclasses.replace(node, label=node.label + "'")
            after = union.with_inputs(node.with_inputs(x), copy.with_inputs(y))
            yield Move("unary/binary", node, after, node, union)

    def decide(self, book, move: Move) -> Decision:
        u, l = move.upper.label, move.lower.label
        if book.permitted(self.name, u, l):
            return Decision(True)
        return Decision(False, tuple(book.pair_reasons(self.name, u, l)))

    def verify(self, certificate, context) -> list[str]:
        u, l = context["upper"], context["lower"]
        problems = _filter_like(u)
        if l.kind != "Union":
            problems.append(f"{l.label} is not a Union")
        before, after = context["before"].all_labels(), context["after"].all_labels()
        if sorted(after) != sorted(before + [u.label + "'"]):
            problems.append("the plan after is not the Union over two copies of the filter")
        return problems


RULES = (
    FilterBelowDistinct(name="filter_below_distinct", clauses=DISTINCT_CLAUSES,
                        shapes=("unary/unary",), upper_kinds=("map", "Distinct"),
                        lower_kinds=("map", "Distinct"), order="canonical", canonical_first=("map",),
                        law="Filter(Distinct(X)) == Distinct(Filter(X))"),
    FilterIntoUnion(name="filter_into_union", clauses=UNION_CLAUSES,
                    law="Filter(Union(X, Y)) == Union(Filter(X), Filter'(Y))"),
)


def install() -> None:
    """Register both operator types and their rules (idempotent)."""
    register_operator_type(DISTINCT)
    register_operator_type(UNION)
    known = {r.name for r in rules()}
    register_rules(*(r for r in RULES if r.name not in known))


# -- 3. using them ---------------------------------------------------------------------------------------


def positive(r):
    return r["v"] is not None and r["v"] > 0


def demo() -> None:
    from udflow.rules import RuleBook, check

    install()
    rows = [{"k": 1, "v": 2}, {"k": 1, "v": 2}, {"k": 2, "v": -1}, {"k": 3, "v": None}]
    flow = uf.source("t", rows=rows).apply(DISTINCT).filter(positive)
    other = uf.source("u", rows=[{"k": 9, "v": 5}, {"k": 9, "v": 0}])
    union = uf.source("t", rows=rows).apply(UNION, other).filter(positive)
    for f in (flow, union):
        book = RuleBook(f.root)
        for ex in book.exchanges(f.root):
            print(f"{ex.rule}:\n{ex.certificate.before}\n  ->\n{ex.certificate.after}")
            print(check(ex.certificate, f))


if __name__ == "__main__":
    demo()
