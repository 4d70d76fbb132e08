"""Theorem 3: a Map and a Cartesian product, hence Map with Match and Cross.

    Map(f)(R x S)  ==  Map(f)(R) x S      iff  (R_f ∪ W_f) ∩ S = ∅

A Cross with UDF g is `Map(g)(R x S)`, a Match with keys K = F is
`Map(g')(R x S)` where g' also reads K and F (section 4.3.1). So a Map f moves
into one input of a Match/Cross g iff f and g are pure, ROC(f, g') holds
(Theorem 1 on the two Maps) and f touches no attribute of the other input
(Theorem 3); the reverse move needs the same conditions.

    before:  Filter(f)                 after:  Match(l_suppkey=s_suppkey)
               Match(l_suppkey=s_suppkey)        Filter(f)
                 Source(lineitem)                  Source(lineitem)
                 Source(supplier)                Source(supplier)

"Touches no attribute of S" is decided by origin: an attribute enters the plan
at one source or operator, so S can only carry attributes whose origin lies in S.
"""

from udflow.rules.base import PairRule
from udflow.rules.roc_kgp import refusal_clauses

NAME = "theorem3_product"
PAIR = "kind(U, 'map') & product(L)"

CLAUSES = f"""
{NAME}(U, L) <= {PAIR} & pure(U) & pure(L) & roc(U, L)
""" + refusal_clauses(NAME, PAIR)

RULE = PairRule(
    name=NAME, clauses=CLAUSES, shapes=("unary/binary", "binary/unary"),
    upper_kinds=("map", "match", "cross"), lower_kinds=("map", "match", "cross"),
    order="canonical", canonical_first=("map",), law=__doc__.split("\n\n")[1],
)
