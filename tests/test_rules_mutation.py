"""Mutation test: six deliberately weakened rule copies, injected through `RuleBook(rules=...)`
(never by editing udflow's files), are each caught by the independent checker or by the
differential comparison on the reference interpreter."""

import dataclasses
from collections import Counter

import pytest

import udflow as uf
from udflow.errors import UdflowError
from udflow.reference import run
from udflow.rules import RuleBook, builtin_rules, check
from udflow.rules.base import PairRule
from udflow.rules.cogroup_tagged_union import REDUCE_RULE, CoGroupReduceRule
from udflow.rules.theorem4_invariant_grouping import INVARIANT_CLAUSES, InvariantGroupingRule, rewrite_across

from tests import rules_flows as F


def bag(records):
    return Counter(tuple(sorted(r.items(), key=lambda kv: kv[0])) for r in records)


def weakened(name, old, new):
    """The built-in rules with one clause of rule `name` replaced (a weakened copy)."""
    out = []
    for rule in builtin_rules():
        if rule.name == name:
            assert old in rule.clauses, f"{old!r} not in {name}"
            rule = dataclasses.replace(rule, clauses=rule.clauses.replace(old, new))
        out.append(rule)
    return out


def replaced(name, new_rule):
    return [new_rule if r.name == name else r for r in builtin_rules()]


def caught(flow, rules):
    """(by checker, by differential, number of exchanges) for every exchange the mutant allows."""
    book = RuleBook(flow.root, rules=rules)
    by_checker = by_bag = n = 0
    for node in flow.root.walk():
        for ex in book.exchanges(node):
            n += 1
            by_checker += not check(ex.certificate, flow).ok
            by_bag += outcome(ex.before) != outcome(ex.after)
    return by_checker, by_bag, n


def outcome(node):
    """The bag of `node` on the reference interpreter, or the type of error it raises (a
    concatenation meeting a field on both sides raises FieldCollisionError)."""
    try:
        return bag(run(node))
    except UdflowError as e:
        return type(e).__name__


def set_x1(r):
    return {**r, "x": 1}


def set_x2(r):
    return {**r, "x": 2}


def zero_b_v(r):
    return {**r, "b_v": 0 if r["a_v"] is not None else 1}


def first_with_count(rows):
    rows = list(rows)
    yield {**rows[0], "n": len(rows)}


def count_a(rows):
    rows = list(rows)
    for r in rows:
        yield {**r, "n_a": len(rows)}


class NoKeyUniqueness(InvariantGroupingRule):
    """Invariant grouping without the key-uniqueness condition: it still rewrites the key
    across the join and asks Z3 that the new key determines the old one, but never asks
    whether R's join key is a key (nor, hence, that it determines R's attributes)."""

    def keys(self, book, reduce_node, match, side, move):
        s_side, r_side = match.inputs[side], match.inputs[1 - side]
        s_key = (match.left_key, match.right_key)[side]
        r_key = (match.left_key, match.right_key)[1 - side]
        rewrite = rewrite_across(r_key, s_key, book.fields(r_side) or frozenset())
        above, below = self.key_pair(book, reduce_node, move, rewrite)
        if not set(s_key) <= set(below):
            return [self.refuse("key does not contain the join key", (reduce_node.label,))], [], [], ()
        smt = [book.keys.determines(match, below, sorted(above))]
        if not all(a.proved for a in smt):
            return [self.refuse("not proved by Z3", (reduce_node.label,))], [], smt, ()
        return [], [], smt, below if move.shape == "unary/binary" else above


class CoGroupWithoutForwarding(CoGroupReduceRule):
    """Reduce across a CoGroup without asking whether the CoGroup forwards that input."""

    def position(self, book, move):
        return PairRule.position(self, book, move)


def mutants():
    dup_supplier = [{"s_suppkey": 0, "s_name": "A"}, {"s_suppkey": 0, "s_name": "B"},
                    {"s_suppkey": 1, "s_name": "C"}]
    li = uf.source("lineitem", rows=F.LINEITEM)
    su = uf.source("supplier", rows=dup_supplier)
    q15_dup = li.match(su, on=("l_suppkey", "s_suppkey")).reduce(["s_suppkey"], F.revenue)
    ab = uf.source("a", rows=[{"a_k": 1, "a_v": 1}, {"a_k": 1, "a_v": None}])
    b = uf.source("b", rows=[{"b_k": 1, "b_v": 5}, {"b_k": 2, "b_v": 6}])
    grouped = uf.source("I", rows=[{"A": 1, "B": 1}, {"A": 1, "B": 2}, {"A": 2, "B": 3}])
    return {
        "ROC without the write-write clause": (
            weakened("roc_kgp", "conflict(X, Y, 'write-write', A) <= writes_eff(X, A) & writes_eff(Y, A) & op(X) & op(Y)", ""),
            uf.source("I", rows=[{"A": 1}]).map(set_x1).map(set_x2)),
        "KGP ignoring card_reads": (
            weakened("roc_kgp", "kgp(X, R) <= rat(X) & emits_le1(X) & kind(R, 'reduce') & ~card_outside_key(X, R)",
                     "kgp(X, R) <= rat(X) & emits_le1(X) & kind(R, 'reduce')"),
            F.counterexample_flow()),
        "invariant grouping without the key-uniqueness condition": (
            replaced("invariant_grouping", NoKeyUniqueness(name="invariant_grouping", clauses=INVARIANT_CLAUSES,
                                                           shapes=("unary/binary", "binary/unary"))),
            q15_dup),
        "Theorem 3 ignoring writes": (
            weakened("roc_kgp", "touches(X, A) <= writes_eff(X, A)", ""),
            ab.cross(b).map(zero_b_v)),
        "Reduce-Reduce without KGP": (
            weakened("theorem2_reduce_reduce", "roc(U, L) & kgp(U, L) & kgp(L, U)", "roc(U, L)"),
            grouped.reduce(["A"], first_with_count).reduce(["A"], count_a)),
        "CoGroup-Reduce without side forwarding": (
            replaced("cogroup_reduce", CoGroupWithoutForwarding(
                name=REDUCE_RULE.name, clauses=REDUCE_RULE.clauses.replace(" & cogroup_forwards(L)\n", "\n"),
                shapes=REDUCE_RULE.shapes, upper_kinds=REDUCE_RULE.upper_kinds,
                lower_kinds=REDUCE_RULE.lower_kinds, order="canonical", canonical_first=("reduce",))),
            F.cogroup_reduce_flow(cogroup_fn=F.priced_big_orders)),
    }


@pytest.mark.parametrize("name", sorted(mutants()))
def test_weakened_rule_is_caught(name):
    rules, flow = mutants()[name]
    # the real rules refuse every wrong exchange of this flow ...
    real_checker, real_bag, _ = caught(flow, None)
    assert real_checker == 0 and real_bag == 0
    # ... the weakened copy allows one, and it is caught
    by_checker, by_bag, n = caught(flow, rules)
    assert n > 0, f"{name}: the mutant allowed nothing, so this test shows nothing"
    assert by_checker + by_bag > 0, f"{name}: not caught"
    if name == "invariant grouping without the key-uniqueness condition":
        assert by_checker > 0 and by_bag > 0  # both the checker and the data see it
    print(f"{name}: {n} exchanges allowed, {by_checker} rejected by the checker, "
          f"{by_bag} change the bag")
