"""Which fields a condition proves not None, so that the native form needs no None guard there.

Python reaches a later `and` operand only when the earlier ones were truthy, a
later case only when the earlier guards were falsy (and did not raise), a
conditional's branch only when its test was truthy (or falsy). What a condition
proves of a field `f`:

    condition            truthy proves f is not None     falsy proves f is not None
    -------------------  ------------------------------  ---------------------------------
    f is not None        yes                             -
    f is None            -                               yes
    f < c, f >= c, ...   yes (None would have raised)    yes (None would have raised)
    f == c  (c not None) yes                             -
    f, bool(f)           yes (None is falsy)             -
    a and b              what a or b proves              what both prove
    a or b               what both prove                 what a or b proves
    not a                what a proves when falsy        what a proves when truthy
"""

from __future__ import annotations

from udflow.expr import BoolOp, Cmp, Expr, Field, IsNone, Lit, Not, Truth

ORDERINGS = ("<", "<=", ">", ">=")


def when_true(term: Expr) -> frozenset:
    """The fields that are not None wherever `term` evaluated to a truthy value."""
    if isinstance(term, Field):
        return frozenset({term.name})
    if isinstance(term, Truth):
        return when_true(term.operand)
    if isinstance(term, IsNone):
        return _field_of(term.operand) if term.negated else frozenset()
    if isinstance(term, Not):
        return when_false(term.operand)
    if isinstance(term, Cmp):
        if term.op in ORDERINGS:
            return _field_of(term.left) | _field_of(term.right)
        if term.op == "==":
            return _equal_to_a_value(term)
        return frozenset()
    if isinstance(term, BoolOp):
        parts = [when_true(v) for v in term.values]
        return frozenset().union(*parts) if term.op == "and" else frozenset.intersection(*parts)
    return frozenset()


def when_false(term: Expr) -> frozenset:
    """The fields that are not None wherever `term` evaluated (without raising) to a falsy value."""
    if isinstance(term, IsNone):
        return frozenset() if term.negated else _field_of(term.operand)
    if isinstance(term, Not):
        return when_true(term.operand)
    if isinstance(term, Cmp) and term.op in ORDERINGS:
        return _field_of(term.left) | _field_of(term.right)
    if isinstance(term, BoolOp):
        parts = [when_false(v) for v in term.values]
        return frozenset().union(*parts) if term.op == "or" else frozenset.intersection(*parts)
    return frozenset()


def _field_of(term: Expr) -> frozenset:
    return frozenset({term.name}) if isinstance(term, Field) else frozenset()


def _equal_to_a_value(term: Cmp) -> frozenset:
    for a, b in ((term.left, term.right), (term.right, term.left)):
        if isinstance(a, Field) and isinstance(b, Lit) and b.value is not None:
            return frozenset({a.name})
    return frozenset()
