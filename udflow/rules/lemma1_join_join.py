"""Lemma 1 and its Match-Cross, Cross-Cross analogues: join reassociation.

Two Match operators f (keys in R ∪ S) and g (keys in S ∪ T) can be reordered

    g(f(R, S), T)  ==  f(R, g(S, T))

iff ROC(f', g') holds, (R_f' ∪ W_f) ∩ T = ∅ and (R_g' ∪ W_g) ∩ R = ∅, where
R_f' = R_f ∪ K_f (the keys join the read sets). A Cross is a Match without
keys, so the same conditions reorder Match-Cross and Cross-Cross pairs. The
four reassociations of a binary operator over a binary input give bushy trees:

    before:  B1                after:  B2              or  B2
               B2                        X                 B1
                 X                       B1                  X
                 Y                         Y                 Z
               Z                           Z               Y

In each, the operator that moves away from a subtree must not touch it.
"""

from udflow.rules.base import PairRule
from udflow.rules.roc_kgp import refusal_clauses

NAME = "lemma1_join_join"
PAIR = "product(U) & product(L)"

CLAUSES = f"""
{NAME}(U, L) <= {PAIR} & pure(U) & pure(L) & roc(U, L)
""" + refusal_clauses(NAME, PAIR)

RULE = PairRule(
    name=NAME, clauses=CLAUSES, shapes=("binary/binary",),
    upper_kinds=("match", "cross"), lower_kinds=("match", "cross"), law=__doc__.split("\n\n")[0],
)
