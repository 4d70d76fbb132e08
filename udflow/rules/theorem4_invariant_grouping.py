"""Theorem 4 (Reduce with a Cartesian product) and invariant grouping.

Theorem 4. A Reduce g whose key contains every attribute of R moves past R:

    Reduce[K ∪ R](g)(R x S)  ==  R x Reduce[K](g)(S)     iff  (R_g ∪ W_g) ∩ R = ∅

    before:  Reduce[k,r1,r2](g)        after:  Cross
               Cross                             Source(R)
                 Source(R)                       Reduce[k](g)
                 Source(S)                         Source(S)

Under bag semantics a record repeated in R would double the groups above the
product but not below it, so R must be a set: Z3 must prove that R's
attributes are a key of R (e.g. from R's primary key).

Invariant grouping (Theorem 4 applied to a Match). In

    Reduce[G](g)(Match[R.K = S.F](R, S))  ==  Match[R.K = S.F](R, Reduce[G'](g)(S))

when K is a key of R's subtree (every S record meets at most one R record),
G contains F (or the K it equals) and g's body touches no R attribute. G' is
G rewritten across the join equality (K -> F; R's other attributes dropped):

    before:  Reduce[s_suppkey](g)              after:  Match(l_suppkey=s_suppkey)
               Match(l_suppkey=s_suppkey)                Reduce[l_suppkey](g)
                 Source(lineitem)                          Source(lineitem)
                 Source(supplier)                        Source(supplier)

Why uniqueness of K is enough. The paper assumes F is a foreign key to R's
primary key K, but its proof only uses that in every Match output record F
determines all R attributes, i.e. that each S record has at most one partner.
Adding R to the key then leaves the groups unchanged and Theorem 4 applies.
Whether an S record has a partner depends only on its F value, and F ⊆ G', so
the Match keeps or drops whole G'-groups: S records without a partner (the
inclusion part of a foreign key) change nothing. udflow therefore uses this
weaker, still sound condition: no foreign key is needed, and F may be any
field of S's side (a source column or one computed by an operator below).
Without uniqueness pushing is wrong: an S group meeting two R records is
reduced once below the Match but twice (once per R record) above it.

Conditions: g and the Match are pure, the Match concatenates (one record per
pair, copies both), ROC(g, Match'), g's body touches no R attribute, G' ⊇ F,
and Z3 proves (1) K is a key of R's subtree, (2) G' determines G and every
attribute of R in the Match's output. When F is a declared foreign key to R's
primary key and Z3 proves it still references R's table after the operators
on S's side, its facts and that query are kept in the certificate as extra
evidence; they are not required. The reverse move (pulling the Reduce up) needs
the same conditions; its key goes back to the key the Reduce had in the flow
when that one rewrites to the same key.
"""

from __future__ import annotations

import dataclasses
from typing import Optional

from udflow.plan import Node, Reduce, Source
from udflow.rules.base import Decision, Move, PairRule, rekeyed, well_formed
from udflow.rules.certificate import Reason
from udflow.rules.roc_kgp import refusal_clauses

THEOREM4 = "theorem4_reduce_cross"
INVARIANT = "invariant_grouping"

THEOREM4_PAIR = "kind(U, 'reduce') & kind(L, 'cross')"
INVARIANT_PAIR = "kind(U, 'reduce') & kind(L, 'match')"

THEOREM4_CLAUSES = f"""
{THEOREM4}(U, L) <= {THEOREM4_PAIR} & pure(U) & pure(L) & emits_one(L) & copies(L) & roc(U, L)
""" + refusal_clauses(THEOREM4, THEOREM4_PAIR)

INVARIANT_CLAUSES = f"""
{INVARIANT}(U, L) <= {INVARIANT_PAIR} & pure(U) & pure(L) & emits_one(L) & copies(L) & roc(U, L)
""" + refusal_clauses(INVARIANT, INVARIANT_PAIR) + f"""
{INVARIANT}_refused(U, L, 'the Match does not concatenate', '-') <= {INVARIANT_PAIR} & ~copies(L)
"""


def _fields(book, node: Node) -> frozenset[str]:
    return book.fields(node) or frozenset()


def rewrite_across(r_key, s_key, r_attrs):
    """A key above the Match, rewritten for S: K -> F across the join equality, R's other
    attributes dropped (K, hence F, determines them when K is a key of R)."""
    partner = dict(zip(r_key, s_key))

    def rewrite(key):
        return tuple(dict.fromkeys(partner.get(k, k) for k in key if k in partner or k not in r_attrs))

    return rewrite


def _original_key(book, label: str) -> Optional[tuple]:
    for n in book.root.walk():
        if n.label == label and isinstance(n, Reduce):
            return tuple(n.key)
    return None


class _ReduceOverBinary(PairRule):
    """Shared plumbing: find the Reduce, the binary operator as it stands over plain
    inputs, and the side the Reduce is (or goes) on, for both directions."""

    def parts(self, move: Move):
        if move.shape == "unary/binary":
            return move.upper, move.lower, move.side
        return move.lower, move.after.inputs[0], move.side

    def pair_of(self, book, move):
        reduce_node, binary, _ = self.parts(move)
        return reduce_node.label, binary.label

    def applies(self, book, move):
        reduce_node, binary, _ = self.parts(move)
        r, b = book.op(reduce_node.label), book.op(binary.label)
        return r is not None and b is not None and r.kind == "reduce" and b.kind == self.binary_kind

    def decide(self, book, move: Move) -> Decision:
        reduce_node, binary, side = self.parts(move)
        reasons = [] if book.permitted(self.name, reduce_node.label, binary.label) else \
            book.pair_reasons(self.name, reduce_node.label, binary.label)
        if move.shape == "unary/binary":
            reasons += rekeyed(book, self.name, reduce_node)
        other = binary.inputs[1 - side]
        reasons += book.touch_reasons(self.name, reduce_node.label, other, udf_only=True)
        if reasons:
            return Decision(False, tuple(reasons))
        more, facts, smt, key = self.keys(book, reduce_node, binary, side, move)
        if more:
            return Decision(False, tuple(more), tuple(facts), tuple(smt))
        after = self.rebuild(move, reduce_node, key)
        problem = well_formed(after, book.fields)
        if problem:
            return Decision(False, (Reason(self.name, "key not carried", None,
                                           (reduce_node.label, binary.label), detail=problem),))
        facts.append(f"reduce_key_after({reduce_node.label}, {','.join(key)})")
        return Decision(True, (), tuple(facts), tuple(smt), after)

    def rebuild(self, move: Move, reduce_node: Reduce, key: tuple) -> Node:
        if move.shape == "unary/binary":
            b = move.lower
            ins = list(b.inputs)
            ins[move.side] = dataclasses.replace(reduce_node, key=key).with_inputs(ins[move.side])
            return b.with_inputs(*ins)
        return dataclasses.replace(reduce_node, key=key).with_inputs(move.after.inputs[0])

    def refuse(self, condition: str, ops, attr=None, detail: str = "") -> Reason:
        return Reason(self.name, condition, attr, tuple(ops), detail=detail)


class Theorem4Rule(_ReduceOverBinary):
    binary_kind = "cross"

    def keys(self, book, reduce_node, cross, side, move):
        ops = (reduce_node.label, cross.label)
        r_side = cross.inputs[1 - side]
        r_attrs = _fields(book, r_side)
        facts = [f"fields({r_side.label}, {a})" for a in sorted(r_attrs)]
        if move.shape == "unary/binary":
            missing = sorted(r_attrs - set(reduce_node.key))
            if missing:
                return [self.refuse("key does not contain the other input", ops, missing[0])], facts, [], ()
            key = tuple(k for k in reduce_node.key if k not in r_attrs)
        else:
            original = _original_key(book, reduce_node.label)
            key = tuple(reduce_node.key) + tuple(sorted(r_attrs))
            if original is not None and set(original) == set(key):
                key = original
        if not key or not r_attrs:
            return [self.refuse("empty key", ops)], facts, [], ()
        is_set = book.keys.is_key(r_side, sorted(r_attrs))
        if not is_set.proved:
            return [self.refuse("the other input may hold duplicate records", ops,
                                detail=is_set.question)], facts, [is_set], ()
        facts.append(f"unique_key({r_side.label}, {','.join(sorted(r_attrs))})")
        return [], facts, [is_set], key


class InvariantGroupingRule(_ReduceOverBinary):
    binary_kind = "match"

    def keys(self, book, reduce_node, match, side, move):
        ops = (reduce_node.label, match.label)
        s_side, r_side = match.inputs[side], match.inputs[1 - side]
        s_key = (match.left_key, match.right_key)[side]
        r_key = (match.left_key, match.right_key)[1 - side]
        r_attrs = _fields(book, r_side)
        above, below = self.key_pair(book, reduce_node, move, rewrite_across(r_key, s_key, r_attrs))
        if not set(s_key) <= set(below):
            missing = sorted(set(s_key) - set(below))[0]
            return [self.refuse("key does not contain the join key", ops, missing)], [], [], ()
        unique = book.keys.is_key(r_side, r_key)
        if not unique.proved:
            return [self.refuse("the other input's join key is not a key", ops, r_key[0],
                                detail=f"{unique.question} -> {unique.answer}")], [], [unique], ()
        facts = [f"unique_key({r_side.label}, {','.join(r_key)})"]
        smt = [unique]
        fk = self.foreign_key(book, s_side, r_side, s_key, r_key)
        if fk is not None:  # not needed for soundness; kept as evidence when it still holds
            fk_source, _, table, columns, fk_facts = fk
            ref = book.keys.references(s_side, s_key, fk_source, table, columns)
            if ref.proved:
                facts += fk_facts
                smt.append(ref)
        smt.append(book.keys.determines(match, below, sorted(set(above) | set(r_attrs))))
        if set(above) != set(below):
            smt.append(book.keys.determines(match, above, sorted(below)))
        failed = [a for a in smt if not a.proved]
        if failed:
            return [self.refuse("not proved by Z3", ops, detail=a.question + f" -> {a.answer}")
                    for a in failed], facts, smt, ()
        return [], facts, smt, below if move.shape == "unary/binary" else above

    @staticmethod
    def key_pair(book, reduce_node, move, rewrite) -> tuple[tuple, tuple]:
        """The Reduce key above the Match and below it (in S), for either direction."""
        if move.shape == "unary/binary":
            above = tuple(reduce_node.key)
            return above, rewrite(above)
        below = tuple(reduce_node.key)
        original = _original_key(book, reduce_node.label)
        above = original if original is not None and rewrite(original) == below else below
        return above, below

    @staticmethod
    def foreign_key(book, s_side, r_side, s_key, r_key):
        """A declared FK from the S-side fields `s_key` to the primary key of R's table,
        whose primary-key fields are `r_key` in R's subtree (through `column_of`)."""
        r_sources = [n for n in r_side.walk() if isinstance(n, Source)]
        for src in (n for n in s_side.walk() if isinstance(n, Source)):
            for fk in src.foreign_keys:
                if set(fk.fields) == set(s_key):
                    pairs = dict(zip(fk.fields, fk.target_fields))
                    for r_src in r_sources:
                        if r_src.table != fk.target or not r_src.key:
                            continue
                        if not set(r_key) <= set(r_src.fields):
                            continue
                        cols = {f: r_src.column_of(f) for f in r_key}
                        pk_cols = {r_src.column_of(f) for f in r_src.key}
                        if all(cols[rk] == pairs[sk] for sk, rk in zip(s_key, r_key)) \
                                and set(cols.values()) == pk_cols:
                            facts = [f"foreign_key({src.label}, {f}, {fk.target}, {t})"
                                     for f, t in zip(fk.fields, fk.target_fields)]
                            facts += [f"source_key({r_src.label}, {k})" for k in r_src.key]
                            ordered = [pairs[sk] for sk in s_key]
                            return src.label, r_src.label, fk.target, ordered, facts
        return None


def _law(opening: str) -> str:
    paragraphs = __doc__.split("\n\n")
    i = next(i for i, p in enumerate(paragraphs) if p.startswith(opening))
    return "\n\n".join(paragraphs[i:i + 2])


THEOREM4_RULE = Theorem4Rule(name=THEOREM4, clauses=THEOREM4_CLAUSES,
                             shapes=("unary/binary", "binary/unary"), law=_law("Theorem 4. "))
INVARIANT_RULE = InvariantGroupingRule(name=INVARIANT, clauses=INVARIANT_CLAUSES,
                                       shapes=("unary/binary", "binary/unary"),
                                       law=_law("Invariant grouping "))
RULES = (THEOREM4_RULE, INVARIANT_RULE)
