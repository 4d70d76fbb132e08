"""Theorem 2 (Map-Reduce) and the remark after it (Reduce-Reduce).

A Map f and a Reduce g with key K can be reordered iff ROC(f, g) holds and f
satisfies KGP for K (it keeps or drops whole key groups):

    Reduce[K](g)(Map(f)(X))  ==  Map(f)(Reduce[K](g)(X))   iff  ROC(f, g), KGP(f, K)

    before:  Reduce[A](g)        after:  Filter(f)
               Filter(f)                   Reduce[A](g)
                 X                           X

Section 4.2.2's counterexample is refused: f keeps records whose A and B are
both odd, g appends the sum of B per A. ROC holds, but f decides on B, which is
not in the key A (card_reads(f) ⊄ K), so f thins key groups and the sums change.

Two Reduce operators g (key K) and h (key H) can be reordered iff ROC(g, h),
KGP(g, H) and KGP(h, K).
"""

from udflow.rules.base import PairRule
from udflow.rules.roc_kgp import refusal_clauses

MAP_REDUCE = "theorem2_map_reduce"
REDUCE_REDUCE = "theorem2_reduce_reduce"

MR_PAIR = "kind(U, 'map') & kind(L, 'reduce')"
RR_PAIR = "kind(U, 'reduce') & kind(L, 'reduce')"

MAP_REDUCE_CLAUSES = f"""
{MAP_REDUCE}(U, L) <= {MR_PAIR} & pure(U) & pure(L) & roc(U, L) & kgp(U, L)
{MAP_REDUCE}_refused(U, L, C, A) <= {MR_PAIR} & kgp_refused(U, L, C, A)
""" + refusal_clauses(MAP_REDUCE, MR_PAIR)

REDUCE_REDUCE_CLAUSES = f"""
{REDUCE_REDUCE}(U, L) <= {RR_PAIR} & pure(U) & pure(L) & roc(U, L) & kgp(U, L) & kgp(L, U)
{REDUCE_REDUCE}_refused(U, L, C, A) <= {RR_PAIR} & kgp_refused(U, L, C, A)
{REDUCE_REDUCE}_refused(U, L, C, A) <= {RR_PAIR} & kgp_refused(L, U, C, A)
""" + refusal_clauses(REDUCE_REDUCE, RR_PAIR)

class MapReduceRule(PairRule):
    """Theorem 2 applies to a Map over a Reduce and to a Reduce over a Map."""

    def applies(self, book, move):
        u, l = book.op(move.upper.label), book.op(move.lower.label)
        return u is not None and l is not None and {u.kind, l.kind} == {"map", "reduce"}


MAP_REDUCE_RULE = MapReduceRule(
    name=MAP_REDUCE, clauses=MAP_REDUCE_CLAUSES, shapes=("unary/unary",),
    upper_kinds=("map", "reduce"), lower_kinds=("map", "reduce"),
    order="canonical", canonical_first=("map",), law=__doc__.split("\n\n")[1],
)

REDUCE_REDUCE_RULE = PairRule(
    name=REDUCE_REDUCE, clauses=REDUCE_REDUCE_CLAUSES, shapes=("unary/unary",),
    upper_kinds=("reduce",), lower_kinds=("reduce",), law=__doc__.split("\n\n")[-1],
)

RULES = (MAP_REDUCE_RULE, REDUCE_REDUCE_RULE)
