"""Which fields (and other terms) a condition proves not None, so that the native form needs no None guard there
(and, `data_nonnull`, which fields the data itself proves never None).

Python reaches a later `and` operand only when the earlier ones were truthy, a
later case only when the earlier guards were falsy (and did not raise), a
conditional's branch only when its test was truthy (or falsy). What a condition
proves of a field `f` (`when_true`; of any other term, `terms_when_true`):

    condition            truthy proves f is not None     falsy proves f is not None
    -------------------  ------------------------------  ---------------------------------
    f is not None        yes                             -
    f is None            -                               yes
    f < c, f >= c, ...   yes (None would have raised)    yes (None would have raised)
    f == c  (c not None) yes                             -
    f, bool(f)           yes (None is falsy)             -
    any other term t     t itself is not None            -
    a and b              what a or b proves              what both prove
    a or b               what both prove                 what a or b proves
    not a                what a proves when falsy        what a proves when truthy
    b if t else c        what t and b prove (t truthy),  the same, for b and c falsy
                         and t falsy and c prove: both   (a constant branch that never is
                                                         falsy or truthy proves nothing away)
    a from_spark UDF's   what x proves when truthy       -
    x made boolean       (`spark.*.boolean` is truthy only where x is; falsy also where
                         a pickled UDF's non-bool became null)
"""

from __future__ import annotations

from udflow.bits import Bits, Invert
from udflow.expr import (Arith, BoolOp, Call, Cmp, Contains, Evaluated, Expr, Field, IfElse, InValues, IsNone, Item,
                         Lit, Neg, Not, Slice, Truth, Tuple)
from udflow.helper_calls import HelperCall
from udflow.tables import InTable, NestedGet, TableGet, TableItem
from udflow.fields import properties_of
from udflow.plan import Node, Source

ORDERINGS = ("<", "<=", ">", ">=")
# the forms Python computes whole: every part before the operation itself
EAGER = (Arith, Neg, Cmp, Truth, Not, IsNone, InValues, Contains, Slice, Call, HelperCall, Evaluated, Tuple, Item,
         TableGet, TableItem, NestedGet, InTable, Bits, Invert)


def when_true(term: Expr) -> frozenset:
    """The fields that are not None wherever `term` evaluated to a truthy value."""
    return _proven_when_true(term, _field_of)


def when_false(term: Expr) -> frozenset:
    """The fields that are not None wherever `term` evaluated (without raising) to a falsy value."""
    return _proven_when_false(term, _field_of)


def terms_when_true(term: Expr) -> frozenset:
    """The other terms (a call's result, a helper's: `placed is not None` for
    `placed = _parse_ts(...)`) that are not None wherever `term` evaluated to a truthy
    value, by the same table. Python computes an equal term to the same value on the same
    record, so a later read of it on that record needs no None guard."""
    return _proven_when_true(term, _term_of)


def terms_when_false(term: Expr) -> frozenset:
    """`terms_when_true`, for a falsy value."""
    return _proven_when_false(term, _term_of)


BOOLEAN_RESULTS = ("spark.arrow.boolean", "spark.pickled.boolean")


def _proven_when_true(term: Expr, of) -> frozenset:
    if isinstance(term, Truth):
        return _proven_when_true(term.operand, of)
    if isinstance(term, Call) and term.name in BOOLEAN_RESULTS and len(term.args) == 1:
        return _proven_when_true(term.args[0], of)
    if isinstance(term, IfElse):
        return _either_branch(term, of, _proven_when_true, _constant_truth(term.body) is False,
                              _constant_truth(term.orelse) is False)
    if isinstance(term, IsNone):
        return of(term.operand) if term.negated else frozenset()
    if isinstance(term, Not):
        return _proven_when_false(term.operand, of)
    if isinstance(term, Cmp):
        if term.op in ORDERINGS:
            return of(term.left) | of(term.right)
        if term.op == "==":
            return _equal_to_a_value(term, of)
        return frozenset()
    if isinstance(term, BoolOp):
        parts = [_proven_when_true(v, of) for v in term.values]
        return frozenset().union(*parts) if term.op == "and" else frozenset.intersection(*parts)
    return of(term)  # a truthy value is not None


def _proven_when_false(term: Expr, of) -> frozenset:
    if isinstance(term, IfElse):
        return _either_branch(term, of, _proven_when_false, _constant_truth(term.body) is True,
                              _constant_truth(term.orelse) is True)
    if isinstance(term, IsNone):
        return frozenset() if term.negated else of(term.operand)
    if isinstance(term, Not):
        return _proven_when_true(term.operand, of)
    if isinstance(term, Cmp) and term.op in ORDERINGS:
        return of(term.left) | of(term.right)
    if isinstance(term, BoolOp):
        parts = [_proven_when_false(v, of) for v in term.values]
        return frozenset().union(*parts) if term.op == "or" else frozenset.intersection(*parts)
    return frozenset()


def nonzero_when_true(term: Expr) -> frozenset:
    """The fields that are not 0 (or are None, which its own guard raises on before any zero
    guard) wherever `term` evaluated to a truthy value: a divisor that needs no zero guard.

        condition                 truthy proves f != 0
        f, bool(f)                yes (0 is falsy)
        f > c, c < f  (c >= 0)    yes          f >= c, c <= f  (c > 0)   yes
        f < c, c > f  (c <= 0)    yes          f <= c, c >= f  (c < 0)   yes
        a and b                   what a or b proves
        not a                     what a proves when falsy"""
    if isinstance(term, Truth):
        return nonzero_when_true(term.operand)
    if isinstance(term, Field):
        return frozenset({term.name})
    if isinstance(term, Not):
        return nonzero_when_false(term.operand)
    if isinstance(term, BoolOp) and term.op == "and":
        return frozenset().union(*[nonzero_when_true(v) for v in term.values])
    if isinstance(term, Cmp) and term.op in ORDERINGS:
        return _away_from_zero(term.op, term.left, term.right) | _away_from_zero(FLIPPED[term.op], term.right, term.left)
    return frozenset()


def nonzero_when_false(term: Expr) -> frozenset:
    """`nonzero_when_true`, for a falsy value: `f == 0` falsy, `not a`, `a or b`."""
    if isinstance(term, Not):
        return nonzero_when_true(term.operand)
    if isinstance(term, BoolOp) and term.op == "or":
        return frozenset().union(*[nonzero_when_false(v) for v in term.values])
    if isinstance(term, Cmp) and term.op == "==":
        for a, b in ((term.left, term.right), (term.right, term.left)):
            if isinstance(a, Field) and _number(b) and b.value == 0:
                return frozenset({a.name})
    return frozenset()


FLIPPED = {"<": ">", "<=": ">=", ">": "<", ">=": "<="}


def _away_from_zero(op: str, left: Expr, right: Expr) -> frozenset:
    """{f} where `f op c` holding excludes f == 0."""
    if not (isinstance(left, Field) and _number(right)):
        return frozenset()
    c = right.value
    holds = {">": c >= 0, ">=": c > 0, "<": c <= 0, "<=": c < 0}[op]
    return frozenset({left.name}) if holds else frozenset()


def _number(term: Expr) -> bool:
    """An int or float constant other than NaN (a bool compares as 0 or 1: left out)."""
    return isinstance(term, Lit) and type(term.value) in (int, float) and term.value == term.value


def _either_branch(term: IfElse, of, branch, body_never: bool, orelse_never: bool) -> frozenset:
    """What `body if test else orelse` having the truth `branch` asks proves: what the test
    and the branch taken prove, common to both branches that can give that truth."""
    taken = []
    if not body_never:
        taken.append(_proven_when_true(term.test, of) | branch(term.body, of))
    if not orelse_never:
        taken.append(_proven_when_false(term.test, of) | branch(term.orelse, of))
    return frozenset.intersection(*taken) if taken else frozenset()


def _constant_truth(term: Expr):
    """True or False for a constant (or a from_spark boolean of one), None otherwise."""
    if isinstance(term, Call) and term.name in BOOLEAN_RESULTS and len(term.args) == 1:
        return _constant_truth(term.args[0])
    return bool(term.value) if isinstance(term, Lit) and isinstance(term.value, (bool, int, float, str)) else None


def computed_by(term: Expr) -> frozenset:
    """The terms Python has computed, without raising, wherever `term` was computed without
    raising: the term and the parts it always evaluates (both operands of a comparison or
    an arithmetic operator, a call's arguments), but of `and`/`or` only the first operand
    and of a conditional only its test. A later read of one of them cannot raise.

    Only the forms listed here are looked into: a new form is, to this function, computed
    as a whole and nothing inside it (a part it might skip is never taken as computed)."""
    if isinstance(term, (BoolOp, IfElse)):
        parts = term.values[:1] if isinstance(term, BoolOp) else (term.test,)
    elif isinstance(term, EAGER):
        parts = term.children()
    else:
        return frozenset() if isinstance(term, (Field, Lit)) else frozenset({term})
    return frozenset({term}).union(*[computed_by(p) for p in parts])


def computed_when_true(term: Expr) -> frozenset:
    """`computed_by`, knowing `term` was truthy: every operand of an `and` was computed."""
    if isinstance(term, BoolOp) and term.op == "and":
        return frozenset({term}).union(*[computed_when_true(v) for v in term.values])
    return computed_by(term)


def computed_when_false(term: Expr) -> frozenset:
    """`computed_by`, knowing `term` was falsy: every operand of an `or` was computed."""
    if isinstance(term, BoolOp) and term.op == "or":
        return frozenset({term}).union(*[computed_when_false(v) for v in term.values])
    return computed_by(term)


def _field_of(term: Expr) -> frozenset:
    return frozenset({term.name}) if isinstance(term, Field) else frozenset()


def _term_of(term: Expr) -> frozenset:
    return frozenset() if isinstance(term, (Field, Lit)) else frozenset({term})


def _equal_to_a_value(term: Cmp, of) -> frozenset:
    for a, b in ((term.left, term.right), (term.right, term.left)):
        if isinstance(b, Lit) and b.value is not None and of(a):
            return of(a)
    return frozenset()


def data_nonnull(node: Node) -> frozenset:
    """The fields of `node`'s records the data proves never None: source fields so typed
    (`udflow.field_types`) that no operator below gives another value."""
    return nonnull_of(data_types(node))


def nonnull_of(types: dict) -> frozenset:
    return frozenset(f for f, t in types.items() if t.known)


def magnitudes_of(types: dict) -> dict:
    """The int fields whose largest magnitude the data proves (a source's values or
    statistics, no operator below giving another value): field -> magnitude."""
    return {f: t.magnitude for f, t in types.items() if t.magnitude is not None}


def passed_on(node: Node, fields, columns) -> frozenset:
    """Of `node`'s input `fields` (those a proof below holds of: `native_ops.Ran.magnitudes`,
    `.nonzero`), those among its output `columns` that its function leaves as they are (all
    of them for a filter or a concatenating join; none where it has no analysis)."""
    if getattr(node, "fn", None) is None:
        changed = frozenset()
    else:
        try:
            p = properties_of(node)
        except Exception:  # noqa: BLE001 - no analysis: it may change anything
            return frozenset()
        changed = changed_fields(p)
    return frozenset(f for f in fields if f in columns and f not in changed)


def changed_fields(p) -> set:
    """The fields an operator with properties `p` may give another value (or create)."""
    return set(p.values_changed()) | set(p.new_fields) if p.pure else set(p.writes)


def data_types(node: Node, source_types=None) -> dict:
    """Field -> `udflow.field_types.FieldType` of `node`'s records, as the sources' data gives
    them (`source_types(source)`, by default `field_types.source_field_types`) to the fields no
    operator below gives another value."""
    from udflow.field_types import attribute_types

    changes = []
    for n in node.walk():
        if isinstance(n, Source):
            continue
        try:
            p = properties_of(n) if getattr(n, "fn", None) is not None else None
        except Exception:  # noqa: BLE001 - no analysis: it may change anything
            return {}
        if p is None:
            continue  # a concatenating join changes no value
        changes.append((changed_fields(p), dict(p.output_types) if p.pure else {}))
    return attribute_types(node, changes, source_types)
