"""The shape of a rule module, and the four local moves a rule can make.

A rule module contributes

  - `clauses`: pyDatalog clauses deriving its *position-independent*
    permission `<name>(U, L)` over operator labels and its refusals
    `<name>_refused(U, L, Condition, Attribute)`; they are evaluated once per
    RuleBook;
  - `moves(node)`: the structural matches at a subtree (which operator would
    be exchanged with which input, and the rewritten subtree);
  - `decide(book, move)`: the permission for that move at that position - the
    Datalog answer for the pair plus the position conditions (which side an
    operator touches, keys via Z3) - returning a `Decision`.

The four local moves (labels are kept, nodes are rebuilt):

    unary/unary     U1(U2(X))       -> U2(U1(X))
    unary/binary    U(B(X, Y))      -> B(U(X), Y)  |  B(X, U(Y))
    binary/unary    B(U(X), Y)      -> U(B(X, Y))      (and U on the right)
    binary/binary   B1(B2(X, Y), Z) -> B2(X, B1(Y, Z)) | B2(B1(X, Z), Y)
                    B1(X, B2(Y, Z)) -> B2(B1(X, Y), Z) | B2(Y, B1(X, Z))
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Iterator, Optional

from udflow.plan import Node, Source


@dataclass(frozen=True)
class Move:
    """One candidate exchange at `before` (the subtree the search asked about)."""

    shape: str  # "unary/unary", "unary/binary", "binary/unary", "binary/binary"
    before: Node
    after: Node
    upper: Node  # the operator on top before the move
    lower: Node  # the input it is exchanged with (on top after the move)
    side: int = 0  # unary/binary: side U goes to; binary/unary: side U comes from
    variant: str = ""  # binary/binary: which of the four reassociations
    stays: tuple[Node, ...] = ()  # the subtrees whose attributes an operator must not touch
    stays_for: tuple[str, ...] = ()  # the operator that must not touch each of them


class _PendingMove(Move):
    """A `Move` whose `after` tree is built on first access: most candidate moves are refused
    by a set lookup before anyone looks at the rewritten tree."""

    def __init__(self, shape, before, after, upper, lower, side=0, variant="", stays=(), stays_for=(),
                 *, build=None):
        values = dict(shape=shape, before=before, upper=upper, lower=lower, side=side,
                      variant=variant, stays=stays, stays_for=stays_for)
        if after is not None or build is None:
            values["after"] = after
        else:
            values["_build"] = build
        self.__dict__.update(values)

    def __getattr__(self, name):
        if name == "after":  # only reached while the tree is not built
            tree = self.__dict__.pop("_build")()
            self.__dict__["after"] = tree
            return tree
        raise AttributeError(name)


@dataclass(frozen=True)
class Decision:
    allowed: bool
    reasons: tuple = ()
    facts: tuple[str, ...] = ()
    smt: tuple = ()  # SmtAnswer
    after: Optional[Node] = None  # a rewrite different from the move's (e.g. a Reduce key rewritten)


@lru_cache(maxsize=None)
def _plain_inputs(cls: type) -> Optional[tuple[str, ...]]:
    """The input fields of a node class whose `with_inputs` is `Node`'s own and whose
    construction is the plain dataclass one (no `__post_init__`); None otherwise."""
    if not dataclasses.is_dataclass(cls) or cls.with_inputs is not Node.with_inputs \
            or hasattr(cls, "__post_init__"):
        return None
    return tuple(f.name for f in dataclasses.fields(cls) if f.name in ("input", "left", "right"))


def rebuild(node: Node, *inputs: Node) -> Node:
    """`node.with_inputs(*inputs)` without `dataclasses.replace`'s re-validation: the moves
    build every candidate's tree, thousands per search, from nodes that were validated once.
    (The shape functions take it as a parameter: a RuleBook passes its own, which returns one
    object per distinct tree, so that everything memoized per node object is found again.)"""
    names = _plain_inputs(type(node))
    if names is None or len(names) != len(inputs):
        return node.with_inputs(*inputs)
    copy = object.__new__(type(node))
    copy.__dict__.update(node.__dict__)
    copy.__dict__.update(zip(names, inputs))
    return copy


def is_operator(node: Node) -> bool:
    return not isinstance(node, Source)


def unary_unary(node: Node, rebuild=rebuild) -> Iterator[Move]:
    if node.arity == 1 and is_operator(node.inputs[0]) and node.inputs[0].arity == 1:
        lower = node.inputs[0]
        yield _PendingMove("unary/unary", node, None, node, lower,
                           build=lambda: rebuild(lower, rebuild(node, lower.inputs[0])))


def unary_binary(node: Node, rebuild=rebuild) -> Iterator[Move]:
    if node.arity == 1 and is_operator(node.inputs[0]) and node.inputs[0].arity == 2:
        b = node.inputs[0]
        for side in (0, 1):
            def after(side=side):
                ins = list(b.inputs)
                ins[side] = rebuild(node, ins[side])
                return rebuild(b, *ins)

            yield _PendingMove("unary/binary", node, None, node, b, side,
                               stays=(b.inputs[1 - side],), stays_for=(node.label,), build=after)


def binary_unary(node: Node, rebuild=rebuild) -> Iterator[Move]:
    if node.arity == 2:
        for side in (0, 1):
            u = node.inputs[side]
            if is_operator(u) and u.arity == 1:
                def after(side=side, u=u):
                    ins = list(node.inputs)
                    ins[side] = u.inputs[0]
                    return rebuild(u, rebuild(node, *ins))

                yield _PendingMove("binary/unary", node, None, node, u, side,
                                   stays=(node.inputs[1 - side],), stays_for=(u.label,), build=after)


def binary_binary(node: Node, rebuild=rebuild) -> Iterator[Move]:
    if node.arity != 2:
        return
    b1 = node
    left, right = node.inputs
    if is_operator(left) and left.arity == 2:
        x, y = left.inputs
        z = right
        # B1(B2(X,Y),Z) -> B2(X, B1(Y,Z)): B1 must not touch X, B2 must not touch Z
        yield _PendingMove("binary/binary", node, None, b1, left, 0, "B2(X, B1(Y, Z))", (x, z),
                           (b1.label, left.label), build=lambda x=x, y=y, z=z: rebuild(left, x, rebuild(b1, y, z)))
        # B1(B2(X,Y),Z) -> B2(B1(X,Z), Y): B1 must not touch Y, B2 must not touch Z
        yield _PendingMove("binary/binary", node, None, b1, left, 0, "B2(B1(X, Z), Y)", (y, z),
                           (b1.label, left.label), build=lambda x=x, y=y, z=z: rebuild(left, rebuild(b1, x, z), y))
    if is_operator(right) and right.arity == 2:
        x = left
        y, z = right.inputs
        # B1(X,B2(Y,Z)) -> B2(B1(X,Y), Z): B1 must not touch Z, B2 must not touch X
        yield _PendingMove("binary/binary", node, None, b1, right, 1, "B2(B1(X, Y), Z)", (z, x),
                           (b1.label, right.label), build=lambda x=x, y=y, z=z: rebuild(right, rebuild(b1, x, y), z))
        # B1(X,B2(Y,Z)) -> B2(Y, B1(X,Z)): B1 must not touch Y, B2 must not touch X
        yield _PendingMove("binary/binary", node, None, b1, right, 1, "B2(Y, B1(X, Z))", (y, x),
                           (b1.label, right.label), build=lambda x=x, y=y, z=z: rebuild(right, y, rebuild(b1, x, z)))


@dataclass
class Rule:
    """A rule module's contribution; see the module docstring. Subclass and override `decide`."""

    name: str
    clauses: str = ""
    shapes: tuple[str, ...] = ()
    law: str = ""
    extra_predicates: tuple[str, ...] = field(default=())  # more derived predicates to pre-compute

    def moves(self, node: Node) -> Iterator[Move]:
        for shape in self.shapes:
            yield from SHAPES[shape](node)

    def applies(self, book, move: Move) -> bool:
        """Whether this rule is about this pair of operator kinds at all."""
        return True

    def permits(self, book, move: Move) -> bool:
        """A cheap necessary condition of `decide(...).allowed`: False means `decide` refuses,
        so `RuleBook.exchanges` skips the move without building the reasons (`why_not` still
        asks `decide` for them). The default knows nothing and says True."""
        return True

    def decide(self, book, move: Move) -> Decision:  # pragma: no cover - abstract
        raise NotImplementedError

    def verify(self, certificate, context) -> list[str]:
        """Independent re-check for rules registered by users (the built-in rules' are in `udflow.rules.check`)."""
        return [f"no checker for rule {self.name!r}"]


SHAPES = {
    "unary/unary": unary_unary,
    "unary/binary": unary_binary,
    "binary/unary": binary_unary,
    "binary/binary": binary_binary,
}


def well_formed(node: Node, output_fields) -> Optional[str]:
    """None if every key of the rebuilt top of `node` is carried by its input, else why not."""
    for n in (node, *node.inputs):
        if isinstance(n, Source):
            continue
        keys = getattr(n, "key", None)
        pairs = [(keys, n.inputs[0])] if keys is not None else []
        if hasattr(n, "left_key"):
            pairs = [(n.left_key, n.inputs[0]), (n.right_key, n.inputs[1])]
        for key, child in pairs:
            carried = output_fields(child)
            if carried is not None and not carried.issuperset(key):
                missing = sorted(set(key) - carried)[0]
                return f"{n.label}: key field {missing} is not carried by {child.label}"
    return None


def rekeyed(book, rule: str, *nodes: Node) -> list:
    """A Reduce whose key an earlier move rewrote no longer matches its facts: refuse."""
    from udflow.rules.certificate import Reason

    out = []
    for n in nodes:
        facts = book.op(n.label)
        key = getattr(n, "key", None)
        if facts is not None and key is not None and not isinstance(n, Source) \
                and facts.keys and tuple(key) != facts.keys[0]:
            out.append(Reason(rule, "key rewritten by an earlier move", None, (n.label,),
                              detail=f"{n.label} now groups on {','.join(key)}"))
    return out


@dataclass
class PairRule(Rule):
    """A rule whose permission is the Datalog pair predicate plus "U stays clear of the
    subtrees it leaves" (the attribute-set conditions of Theorem 3 and Lemma 1)."""

    upper_kinds: tuple[str, ...] = ()
    lower_kinds: tuple[str, ...] = ()
    order: str = "as-is"  # "as-is": predicate(upper, lower); "canonical": predicate(unary-or-map, other)
    canonical_first: tuple[str, ...] = ()  # kinds that go first in the predicate when order == "canonical"

    def applies(self, book, move: Move) -> bool:
        u, l = book.op(move.upper.label), book.op(move.lower.label)
        return (u is not None and l is not None
                and u.kind in self.upper_kinds and l.kind in self.lower_kinds)

    def pair_of(self, book, move: Move) -> tuple[str, str]:
        u, l = move.upper.label, move.lower.label
        if self.order == "canonical" and book.op(l).kind in self.canonical_first \
                and book.op(u).kind not in self.canonical_first:
            return l, u
        return u, l

    def permits(self, book, move: Move) -> bool:
        # Only what `PairRule.decide` itself refuses on (a subclass with its own decide
        # knows its own conditions): the Datalog program did not derive the pair, ...
        if type(self).decide is not PairRule.decide:
            return True
        if not book.permitted(self.name, *self.pair_of(book, move)):
            return False
        # ... or, with the default position conditions, an operator touches a subtree it
        # must stay clear of (a cached set lookup, no reasons built)
        if type(self).position is PairRule.position:
            return not any(book.touched_in(op_label, subtree)
                           for subtree, op_label in zip(move.stays, move.stays_for))
        return True

    def position(self, book, move: Move):
        """Position-dependent reasons, facts and SMT answers (default: stay-clear checks)."""
        reasons = []
        for subtree, op_label in zip(move.stays, move.stays_for):
            reasons += book.touch_reasons(self.name, op_label, subtree)
        return reasons, [], []

    def decide(self, book, move: Move) -> Decision:
        a, b = self.pair_of(book, move)
        reasons = [] if book.permitted(self.name, a, b) else book.pair_reasons(self.name, a, b)
        reasons += rekeyed(book, self.name, move.upper, move.lower)
        more, facts, smt = self.position(book, move)
        reasons += more
        if not reasons:
            problem = well_formed(move.after, book.fields)
            if problem:
                from udflow.rules.certificate import Reason

                reasons.append(Reason(self.name, "key not carried", None, (a, b), detail=problem))
        return Decision(not reasons, tuple(reasons), tuple(facts), tuple(smt))
