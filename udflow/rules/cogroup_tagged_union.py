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

A Reduce h moves into one input the same way, by the Reduce-Reduce condition
on h and g': ROC(h, g), KGP(h, key(g)) and KGP(g', key(h)) - both must pass
their key groups through (`preserves_groups`) with equal keys. The reverse
moves need the same conditions.
"""

from udflow.plan import CoGroup, Reduce
from udflow.rules.base import PairRule
from udflow.rules.certificate import Reason
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
{REDUCE}(U, L) <= {REDUCE_PAIR} & pure(U) & pure(L) & roc(U, L) & preserves_groups(U) & preserves_groups(L)
""" + refusal_clauses(REDUCE, REDUCE_PAIR) + f"""
{REDUCE}_refused(U, L, 'kgp: a Reduce may change the size of key groups', U) <= {REDUCE_PAIR} & ~preserves_groups(U)
{REDUCE}_refused(U, L, 'kgp: a CoGroup may change the size of key groups', L) <= {REDUCE_PAIR} & ~preserves_groups(L)
"""


class CoGroupMapRule(PairRule):
    pass


class CoGroupReduceRule(PairRule):
    def position(self, book, move):
        reasons, facts, smt = super().position(book, move)
        reduce_node = move.upper if isinstance(move.upper, Reduce) else move.lower
        cogroup = move.lower if isinstance(move.lower, CoGroup) else move.upper
        side_key = (cogroup.left_key, cogroup.right_key)[move.side]
        if set(reduce_node.key) != set(side_key):
            reasons.append(Reason(self.name, "kgp: keys differ", None, (reduce_node.label, cogroup.label),
                                  detail=f"{reduce_node.key} vs {side_key}"))
        return reasons, facts, smt


MAP_RULE = CoGroupMapRule(name=MAP, clauses=CLAUSES, shapes=("unary/binary", "binary/unary"),
                          upper_kinds=("map", "cogroup"), lower_kinds=("map", "cogroup"),
                          order="canonical", canonical_first=("map",), law=__doc__.split("\n\n")[1])
REDUCE_RULE = CoGroupReduceRule(name=REDUCE, clauses=REDUCE_CLAUSES, shapes=("unary/binary", "binary/unary"),
                                upper_kinds=("reduce", "cogroup"), lower_kinds=("reduce", "cogroup"),
                                order="canonical", canonical_first=("reduce",),
                                law=__doc__.split("\n\n")[-1])
RULES = (MAP_RULE, REDUCE_RULE)
