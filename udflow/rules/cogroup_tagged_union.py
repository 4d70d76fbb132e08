"""CoGroup via the tagged union (section 4.3.2): Map and Reduce into one input and back.

A CoGroup g over R and S is a Reduce g' over the tagged union R ∪_T S (each
record tagged with the input it came from), keyed on the CoGroup key and the
tag. A Map f that touches only R's attributes becomes f_R (f on R records,
identity on S records), and then

    Map(f)(CoGroup(g)(R, S))  ==  CoGroup(g)(Map(f)(R), S)

by Theorem 2 on f_R and g' followed by pushing f_R under the union. KGP for
f_R must hold for the union's key groups: f_R passes every S record, so it
may drop no R record either - f must emit exactly one record per call. So:
f and g pure, ROC(f, g), f emits exactly one record, f touches nothing of S.

    before:  Map(f)                after:  CoGroup(g)
               CoGroup(g)                    Map(f)
                 R                             R
                 S                           S

A Reduce h with key K moves into input R of a CoGroup g keyed K on R:

    Reduce[K](h)(CoGroup[K=F](g)(R, S))  ==  CoGroup[K=F](g)(Reduce[K](h)(R), S)

On the tagged union this is the Reduce-Reduce remark after Theorem 2 for h_R
and g', both keyed on K; what it needs, stated for the CoGroup directly:

  - h forwards its groups, h(G) = G or [] (`preserves_groups`);
  - g forwards R record for record (`forwards_side(g, R)`): each call emits
    [r | e(r) for r in R_k] or [], where e adds fields (g's writes);
  - ROC(h, g): h reads none of the fields e adds, nor S's, which g drops;
  - key(h) = g's key on R.

Then, per key k: below, h keeps R_k whole or drops it, and g(∅, S_k) = [].
Above, h sees g's records for k, whose fields h reads are R_k's own, so it
decides as it did below and keeps or drops them whole.

    before:  Reduce[K](h)          after:  CoGroup[K=F](g)
               CoGroup[K=F](g)               Reduce[K](h)
                 R                             R
                 S                           S

The reverse moves need the same conditions.
"""

from udflow.plan import CoGroup, Reduce
from udflow.rules.base import PairRule
from udflow.rules.certificate import Reason
from udflow.rules.facts import forwarded_sides
from udflow.rules.roc_kgp import refusal_clauses

MAP = "cogroup_map"
REDUCE = "cogroup_reduce"

MAP_PAIR = "kind(U, 'map') & kind(L, 'cogroup')"
REDUCE_PAIR = "kind(U, 'reduce') & kind(L, 'cogroup')"

CLAUSES = f"""
{MAP}(U, L) <= {MAP_PAIR} & pure(U) & pure(L) & emits_one(U) & roc(U, L)
""" + refusal_clauses(MAP, MAP_PAIR) + f"""
{MAP}_refused(U, L, 'kgp: may drop records of one input only', '-') <= {MAP_PAIR} & ~emits_one(U)
"""

REDUCE_CLAUSES = f"""
cogroup_forwards(L) <= forwards_side(L, I)
{REDUCE}(U, L) <= {REDUCE_PAIR} & pure(U) & pure(L) & roc(U, L) & preserves_groups(U) & cogroup_forwards(L)
""" + refusal_clauses(REDUCE, REDUCE_PAIR) + f"""
{REDUCE}_refused(U, L, 'kgp: a Reduce may change the size of key groups', U) <= {REDUCE_PAIR} & ~preserves_groups(U)
{REDUCE}_refused(U, L, 'kgp: a CoGroup that forwards no input record for record may change key groups', L) <= {REDUCE_PAIR} & ~cogroup_forwards(L)
"""


class CoGroupMapRule(PairRule):
    pass


class CoGroupReduceRule(PairRule):
    """The position conditions: the CoGroup forwards the input the Reduce is on, keyed alike."""

    def position(self, book, move):
        reasons, facts, smt = super().position(book, move)
        reduce_node = move.upper if isinstance(move.upper, Reduce) else move.lower
        cogroup = move.lower if isinstance(move.lower, CoGroup) else move.upper
        side_key = (cogroup.left_key, cogroup.right_key)[move.side]
        pair = (reduce_node.label, cogroup.label)
        if set(reduce_node.key) != set(side_key):
            reasons.append(Reason(self.name, "kgp: keys differ", None, pair,
                                  detail=f"{reduce_node.key} vs {side_key}"))
        if move.side not in forwarded_sides(book.op(cogroup.label)):
            reasons.append(Reason(self.name, f"kgp: {cogroup.label} does not forward input {move.side} "
                                  "record for record", None, pair))
        else:
            facts.append(f"forwards_side({cogroup.label}, {move.side})")
        return reasons, facts, smt


MAP_RULE = CoGroupMapRule(name=MAP, clauses=CLAUSES, shapes=("unary/binary", "binary/unary"),
                          upper_kinds=("map", "cogroup"), lower_kinds=("map", "cogroup"),
                          order="canonical", canonical_first=("map",), law=__doc__.split("\n\n")[1])
REDUCE_RULE = CoGroupReduceRule(name=REDUCE, clauses=REDUCE_CLAUSES, shapes=("unary/binary", "binary/unary"),
                                upper_kinds=("reduce", "cogroup"), lower_kinds=("reduce", "cogroup"),
                                order="canonical", canonical_first=("reduce",),
                                law=__doc__.split("\n\n")[6].strip())
RULES = (MAP_RULE, REDUCE_RULE)
