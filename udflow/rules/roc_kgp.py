"""ROC (Definition 4) and KGP (Definition 5): the two conditions every reordering needs.

ROC, the read-only conflict condition. Operators f1 and f2 may be reordered
only if neither writes what the other reads or writes:

    R(f1) ∩ W(f2) = W(f1) ∩ R(f2) = W(f1) ∩ W(f2) = ∅

A function that builds its output record from scratch (no implicit copy)
projects away every attribute it does not emit; at another position it would
drop attributes it has never seen, so its *effective* write set is its write
set plus every attribute of the global record it does not output.

KGP, key group preservation. A record-at-a-time operator f preserves the key
groups of key K iff it emits exactly one record per call, or at most one and
whether it emits depends only on attributes in K (card_reads(f) ⊆ K): then
it keeps or drops whole groups. For a Reduce h (the remark after Theorem 2)
KGP needs h to pass its groups through whole or not at all (`preserves_groups`,
from the analysis' `forwards_groups`, see facts.py) with key(h) ⊆ K.

    before:  Reduce[K](g)          after:  Map(f)
               Map(f)                       Reduce[K](g)
                 X                            X

Derived predicates: `writes_eff/2`, `conflict(X, Y, How, A)`, `roc/2`,
`kgp(X, R)`, `kgp_refused(X, R, Condition, A)`, `touches_origin(X, Origin, A)`.
"""

from udflow.rules.base import Rule

CLAUSES = """
writes_eff(X, A) <= writes(X, A)
writes_eff(X, A) <= op(X) & ~copies(X) & attr(A) & ~outputs(X, A)

conflict(X, Y, 'write-read', A) <= writes_eff(X, A) & reads(Y, A) & op(X) & op(Y)
conflict(X, Y, 'read-write', A) <= reads(X, A) & writes_eff(Y, A) & op(X) & op(Y)
conflict(X, Y, 'write-write', A) <= writes_eff(X, A) & writes_eff(Y, A) & op(X) & op(Y)
has_conflict(X, Y) <= conflict(X, Y, C, A)
roc(X, Y) <= op(X) & op(Y) & ~has_conflict(X, Y)

card_outside_key(X, R) <= card_reads(X, A) & kind(R, 'reduce') & ~key(R, 0, A)
kgp(X, R) <= rat(X) & emits_one(X) & kind(R, 'reduce')
kgp(X, R) <= rat(X) & emits_le1(X) & kind(R, 'reduce') & ~card_outside_key(X, R)
key_outside_key(X, R) <= key(X, 0, A) & kind(R, 'reduce') & ~key(R, 0, A)
kgp(X, R) <= kind(X, 'reduce') & preserves_groups(X) & kind(R, 'reduce') & ~key_outside_key(X, R)

kgp_refused(X, R, 'kgp: emits more than one record per call', '-') <= rat(X) & kind(R, 'reduce') & ~emits_le1(X)
kgp_refused(X, R, 'kgp: card_reads', A) <= rat(X) & emits_le1(X) & ~emits_one(X) & card_reads(X, A) & kind(R, 'reduce') & ~key(R, 0, A)
kgp_refused(X, R, 'kgp: a Reduce may change the size of key groups', '-') <= kind(X, 'reduce') & kind(R, 'reduce') & ~preserves_groups(X)
kgp_refused(X, R, 'kgp: key outside the other key', A) <= kind(X, 'reduce') & kind(R, 'reduce') & key(X, 0, A) & ~key(R, 0, A)

product(B) <= kind(B, 'match')
product(B) <= kind(B, 'cross')

touches(X, A) <= reads(X, A)
touches(X, A) <= writes_eff(X, A)
touches_origin(X, O, A) <= touches(X, A) & origin(A, O)
udf_touches(X, A) <= udf_reads(X, A)
udf_touches(X, A) <= writes_eff(X, A)
udf_touches_origin(X, O, A) <= udf_touches(X, A) & origin(A, O)

impure_refused(X, Y, 'impure', X) <= op(X) & op(Y) & ~pure(X)
impure_refused(X, Y, 'impure', Y) <= op(X) & op(Y) & ~pure(Y)
"""

RULE = Rule(name="roc_kgp", clauses=CLAUSES, law=__doc__.split("\n\n")[0])


def refusal_clauses(name: str, pair: str) -> str:
    """The standard refusals of a rule `name(U, L)` guarded by `pair` (a Datalog body):
    impurity, every ROC conflict, and (where the rule uses it) every KGP failure."""
    return f"""
{name}_refused(U, L, C, A) <= {pair} & impure_refused(U, L, C, A)
{name}_refused(U, L, C, A) <= {pair} & conflict(U, L, C, A)
"""
