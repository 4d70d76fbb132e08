"""Position conditions every exchange must meet, whatever rule allows it.

A rule's law says the two plans compute the same bag; it assumes what the
paper assumes: functions never fail, never share state, and an operator's
output fields are what they were where the plan put it. Three guards make
those assumptions conditions, checked on the trees before and after a move:

same_fields
    Both trees carry the same fields. A function that copies one input of a
    Match, Cross or CoGroup and not the other drops what a moved Map adds on
    the other input, though the facts (taken where the plan put it) say it
    carries it:

        before:  Map(add_x)                after:  CoGroup(keep_left)
                   CoGroup(keep_left)                R
                     R                               Map(add_x)     x is lost
                     S                                 S

state_barrier
    A function that reads a mutable module global or closure value
    (`UdfProperties.state_reads`) keeps its order with every impure operator,
    which may write it: the move may not change which of the two runs first.

raise_guard, key_type_guard
    A function that may raise (`UdfProperties.raises`) is not moved below an
    operator that, in the plan as written, ran before it and may drop records
    (a filter, a join, a Reduce): that operator may be what kept it from the
    records it raises on. Sites proven safe by the fields' types
    (`udflow.field_types`) do not count. A Match or CoGroup joining on a key an
    operator computes may raise too (`KeyTypeError`, keys of two types meet).

        before:  Map(12 // c_v)            after:  Match(b_k=c_k)
                   Match(b_k=c_k)                    R
                     R                               Map(12 // c_v)   sees every S record
                     S                                 S
"""

from __future__ import annotations

from typing import Optional

from udflow.field_types import cannot_raise
from udflow.rules.facts import removes
from udflow.plan import Node, Source
from udflow.rules.certificate import Reason

def guard_reasons(book, rule: str, move, after: Node) -> list[Reason]:
    """Why the move breaks one of the guards (empty when it breaks none)."""
    return (same_fields(book, rule, move, after) + state_barrier(book, rule, move)
            + raise_guard(book, rule, move, after) + key_type_guard(book, rule, move, after))


def same_fields(book, rule: str, move, after: Node) -> list[Reason]:
    ops = (book.op(move.upper.label), book.op(move.lower.label))
    if all(o is not None and o.copy for o in ops):
        return []  # copying operators carry whatever their inputs carry
    before_fields, after_fields = book.fields(move.before), book.fields(after)
    if before_fields is None or after_fields is None or before_fields == after_fields:
        return []
    changed = sorted(before_fields ^ after_fields)
    return [Reason(rule, "output fields change", changed[0], (move.upper.label, move.lower.label),
                   detail=f"as written the records carry {_fields(before_fields)}, "
                          f"after the move {_fields(after_fields)}")]


def state_barrier(book, rule: str, move) -> list[Reason]:
    if not book.state_readers:
        return []  # no function reads state: no pair to keep in order (most flows)
    pairs = [(move.upper.label, move.lower.label)]
    for subtree, op_label in zip(move.stays, move.stays_for):
        pairs += [(op_label, n.label) for n in subtree.walk() if not isinstance(n, Source)]
    out = []
    for a, b in pairs:
        for reader, writer in ((a, b), (b, a)):
            r, w = book.op(reader), book.op(writer)
            if r is None or w is None or r.props is None or w.pure:
                continue
            for name in sorted(r.props.state_reads):
                out.append(Reason(rule, "reads state an impure operator may change", name, (reader, writer),
                                  lines=tuple((reader, ln) for ln in r.lines("state", name)),
                                  detail=f"{reader} reads {name}; {writer} may change it"))
    return out


def raise_guard(book, rule: str, move, after: Node) -> list[Reason]:
    out = []
    for label in (move.upper.label, move.lower.label):
        facts = book.op(label)
        if facts is None or facts.props is None or not facts.props.raises:
            continue
        guards = _guards_left_behind(book, move, after, label)
        if not guards:
            continue  # no guard left behind: whatever it may raise on, it met as written
        below = book.labels_in(_find(after, label)) - {label}
        removed_below = frozenset().union(*(removes(book.op(b)) for b in below))
        types = book.field_types_below(below)  # the values as they reach it where the move puts it
        sites = [s for s in facts.props.raises if not cannot_raise(s, types, removed_below)]
        if sites:
            out.append(Reason(rule, "may raise on records a guard below it drops", None, (label, guards[0]),
                              lines=tuple((label, s.line) for s in sites),
                              detail=f"{label} may raise ({sites[0]}); as written {guards[0]} "
                                     f"runs before it and may drop the records it raises on"))
    return out


def key_type_guard(book, rule: str, move, after: Node) -> list[Reason]:
    """A Match or CoGroup on a key field some operator computes may meet keys of two types at
    run time (`KeyTypeError`; a source's key fields have one type, checked when the flow is
    built): it is not moved above a guard that, as written, dropped records before it, so
    that no reordering makes it meet values the plan as written never showed it."""
    out = []
    for label in (move.upper.label, move.lower.label):
        facts = book.op(label)
        if facts is None or facts.kind not in ("match", "cogroup"):
            continue
        below = book.below_as_written(label) | book.labels_in(_find(after, label))
        computed = [k for key in facts.keys for k in key if _computed(book, k, below)]
        if not computed:
            continue
        guards = _guards_left_behind(book, move, after, label)
        if guards:
            out.append(Reason(rule, "may meet keys of two types a guard below it drops", computed[0],
                              (label, guards[0]),
                              detail=f"{label} joins on {computed[0]}, which an operator computes; as written "
                                     f"{guards[0]} runs before it and may drop the records whose key "
                                     f"has another type"))
    return out


def _guards_left_behind(book, move, after: Node, label: str) -> list[str]:
    """The operators that ran below `label` as written, may drop records, and are no longer
    below it after the move: what may have kept it from records it now meets."""
    lost = book.labels_in(_find(move.before, label)) - book.labels_in(_find(after, label))
    return sorted(g for g in lost & book.below_as_written(label) if may_drop(book.op(g)))


def _computed(book, field: str, below: frozenset) -> bool:
    """Whether an operator among `below` (below the join as written, or after the move) may
    give `field` its value: it makes the field, or changes it."""
    origins = book.facts.origin.get(field, ())
    for label in below:
        o = book.facts.ops.get(label)
        if o is None:
            continue  # a source: its fields have one type, checked when the flow was built
        changed = o.props.values_changed() if o.props is not None and o.pure else o.writes
        if label in origins or field in changed:
            return True
    return False


def may_drop(facts) -> bool:
    """Whether an operator may emit fewer records than it receives (or none from an input)."""
    if facts is None:
        return False
    if facts.kind == "map":
        return facts.emits[0] < 1
    return True  # joins drop unmatched records, a Cross an empty side's partners, a Reduce groups


def _find(tree: Node, label: str) -> Optional[Node]:
    for n in tree.walk():
        if n.label == label:
            return n
    return None


def _fields(fields) -> str:
    return "{" + ", ".join(sorted(fields)) + "}"
