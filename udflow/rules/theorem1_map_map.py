"""Theorem 1: two Map operators can be reordered if they satisfy ROC.

    Map(f1)(Map(f2)(X))  ==  Map(f2)(Map(f1)(X))    iff  pure(f1), pure(f2), ROC(f1, f2)

    before:  Map(f3)           after:  Filter(f2)
               Filter(f2)                Map(f3)
                 X                         X

Section 3's example: f1 replaces B by |B| (R = W = {B}), f2 keeps records with
A >= 0 (R = {A}, W = {}), f3 sets A := A + B (R = {A, B}, W = {A}). f1 and f2
do not conflict and may be swapped; f2 and f3 conflict on A (f3 writes what f2
reads) and may not.
"""

from udflow.rules.base import PairRule
from udflow.rules.roc_kgp import refusal_clauses

NAME = "theorem1_map_map"
PAIR = "kind(U, 'map') & kind(L, 'map')"

CLAUSES = f"""
{NAME}(U, L) <= {PAIR} & pure(U) & pure(L) & roc(U, L)
""" + refusal_clauses(NAME, PAIR)

RULE = PairRule(name=NAME, clauses=CLAUSES, shapes=("unary/unary",),
                upper_kinds=("map",), lower_kinds=("map",), law=__doc__.split("\n\n")[0])
