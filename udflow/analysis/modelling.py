"""Building a function's model (`model.py`) during the interpreter's one pass.

The frame of the function itself reports to a `ModelRecorder`: the branch
conditions around what it does (as terms), every value it computes at statement
level, and each record it emits or `None` it returns. After the pass,
`build()` gives the model, or None with the reason: the first construct the IR
cannot express, with its line (what `explain()` shows for an operator left in
Python).

Why computed values are checked: Python evaluates `x = 1 // r["d"]` where it
stands, even on a path that never uses `x`; a native CASE evaluates only the
chosen case. A value that may raise must therefore appear in every case on the
paths through it, or the model would raise less often than the function.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from udflow.analysis.model import FORWARD, NO_RECORD, Case, Emit, ExplodeModel, FilterModel, GroupFilterModel, RecordModel, ReduceModel
from udflow.analysis.regex_terms import computable
from udflow.analysis.terms import never_raises, plain, tuples_in_place
from udflow.analysis.values import NO_BASE
from udflow.expr import Agg, BoolOp, Evaluated, Expr, Field, GroupRows, IfElse, Lit

MODELLED_KINDS = ("map", "filter", "match", "cross", "reduce")
MISPLACED_TUPLE = "uses a tuple other than as the element of min()/max() over the group"


@dataclass(frozen=True)
class _Computed:
    term: Expr
    guards: tuple
    seq: int
    line: int


class ModelRecorder:
    def __init__(self, kind: str, n_sides: int):
        self.kind = kind
        self.n_sides = n_sides
        self.reason: Optional[str] = None if kind in MODELLED_KINDS else f"a {kind} function (no model yet)"
        self.cases: list = []  # (guards, emit-or-value, seq, line)
        self.computed: list = []
        # term -> the line of the syntax node Python first evaluates it at: on every path
        # (no branch taken, no operand skipped), and else on some path (`evaluated`)
        self.first_seen: dict = {}
        self.maybe_seen: dict = {}
        self.seq = 0
        self.explosion: Optional[tuple] = None  # (source, sep, name, line, split)

    def explode(self, source: Optional[Expr], sep: Optional[str], name: str, line: int, split: bool = True) -> None:
        """The function is one `for name in source.split(sep): yield {...}`, or with `split`
        False `for name in source: yield {...}` (statements.py checked the shape): its model
        is an ExplodeModel."""
        if source is None:
            self.block(f"{'splits' if split else 'iterates over'} a value the expression IR cannot express", line)
        elif not tuples_in_place(source):
            self.block(MISPLACED_TUPLE, line)
        elif self.reason is None:
            self.explosion = (source, sep, name, line, split)

    def evaluated(self, term: Optional[Expr], line: int, sure: bool) -> None:
        """The function evaluates `term` at `line` (its syntax node's, not the statement's:
        Python names the line of the operation that raised): on every path that reaches the
        statement when `sure`, else only on some (a branch, a later operand of `and`/`or`)."""
        if term is None:
            return
        try:
            (self.first_seen if sure else self.maybe_seen).setdefault(term, line)
        except TypeError:  # a constant of an unhashable value: it raises nothing of its own
            pass

    def block(self, why: str, line: int) -> None:
        """The first construct the model cannot express stops it."""
        if self.reason is None:
            self.reason = f"{why} (line {line})"

    def computes(self, term: Optional[Expr], guards: list, line: int, what: str = "a value") -> None:
        if self.reason is not None:
            return
        if term is None:
            self.block(f"computes {what} the expression IR cannot express", line)
            return
        term = plain(term)
        if not tuples_in_place(term, whole=True):  # `m = min(...)` is kept for `m[0]`
            self.block(MISPLACED_TUPLE, line)
            return
        self.seq += 1
        if not never_raises(term):
            self.computed.append(_Computed(term, tuple(guards), self.seq, line))

    def case(self, guards: list, outcome, line: int) -> None:
        if self.reason is not None:
            return
        if outcome is None:
            self.block("returns a value the expression IR cannot express", line)
            return
        if any(g is None for g in guards):
            self.block("branches on a condition the expression IR cannot express", line)
            return
        if not all(tuples_in_place(t) for t in _terms_of(guards, outcome)):
            self.block(MISPLACED_TUPLE, line)
            return
        self.seq += 1
        self.cases.append((tuple(guards), outcome, self.seq, line))

    def emit(self, heap, ref, guards: list, line: int) -> None:
        """A record emitted (`return d`, `yield d`): the input updated, or a fresh dict."""
        if self.reason is not None:
            return
        obj = heap[ref.id]
        if self.kind == "reduce" and obj.kind == "row" and ref.pos == "each" and not obj.fields \
                and not obj.deleted and not obj.maybe_deleted and not obj.dynamic:
            self.case(guards, FORWARD, line)  # `yield from rows`: a GroupFilterModel if groups.py agrees
            return
        emit = _emit_of(heap, ref, self.n_sides, self.kind == "reduce")
        if isinstance(emit, str):
            self.block(emit, line)
            return
        self.case(guards, emit, line)

    def build(self, line: int, forwards_groups: bool = False):
        """(model, None) or (None, reason). `forwards_groups`: groups.py proved that the Reduce
        emits each group whole and unchanged, or nothing."""
        if self.reason is not None:
            return None, self.reason
        eager = self._evaluated_first()
        problem = self._unused_raising(skip=eager)
        if problem:
            return None, problem
        if eager:  # the first case's guard is evaluated on every record, natively too
            guards, outcome, seq, at = self.cases[0]
            self.cases[0] = (tuple(Evaluated(computable(c.term)) for c in eager) + tuple(guards), outcome, seq, at)
        if any(outcome == FORWARD for _, outcome, _, _ in self.cases):
            return self._group_filter(line, forwards_groups)
        if self.explosion is not None:
            return self._explode_model()
        if self.kind == "filter":
            return FilterModel(self._predicate(), self.cases[0][3] if self.cases else line, self._computed_at()), None
        cases = tuple(Case(_conjunction(g), outcome, at) for g, outcome, _, at in self.cases)
        if self.kind == "reduce":
            return self._reduce_model(cases, line)
        return RecordModel(cases, line, self._computed_at()), None

    def _reduce_model(self, cases: tuple, line: int):
        for g, outcome, _, at in self.cases:
            for term in _terms_of(g, outcome):
                if not _group_level(term):
                    return None, (f"uses a record of the group outside an aggregate (line {at}): "
                                  "only sum/len/min/max over the group and rows[0] are modelled")
        return ReduceModel(cases, line, self._eager_aggregates(), self._computed_at()), None

    def _explode_model(self):
        """The loop body's one `yield {...}`, recorded once per round of the loop's fixpoint."""
        source, sep, name, line, split = self.explosion
        outcomes = {(guards, outcome) for guards, outcome, _, _ in self.cases}
        if len(outcomes) != 1:
            return None, f"emits different records in the loop (line {line})"
        ((guards, emit),) = outcomes
        if not isinstance(emit, Emit):
            return None, f"emits no record in the loop (line {line})"
        guard = _conjunction(guards) if guards else None
        return ExplodeModel(source, sep, name, emit, line, self._computed_at(), guard, split), None

    def _group_filter(self, line: int, forwards_groups: bool):
        """A GroupFilterModel: the cases' guards, in order, decide whether the group is forwarded
        (the generator ends after `yield from rows` or falls off its end with nothing)."""
        first = next(c for c in self.cases if c[1] == FORWARD)
        if not forwards_groups:
            return None, f"emits records of a group (line {first[3]}), not proven to be the whole group"
        if any(outcome not in (FORWARD, NO_RECORD) for _, outcome, _, _ in self.cases):
            return None, f"emits a group's records and other records (line {first[3]})"
        later = [c for c in self.computed if c.seq > first[2]]
        if later:  # Python raises after the records are out: the group would be half emitted
            return None, f"computes {later[0].term} (line {later[0].line}), which may raise, after emitting the group"
        predicate: Expr = Lit(False)
        for guards, outcome, _, _ in reversed(self.cases):
            kept = Lit(outcome == FORWARD)
            predicate = IfElse(_conjunction(guards), kept, predicate) if guards else kept
        if isinstance(predicate, IfElse) and predicate == IfElse(predicate.test, Lit(True), Lit(False)):
            predicate = predicate.test  # emitted iff its truthiness: the test alone says it
        if not _group_level(predicate):
            return None, f"uses a record of the group outside an aggregate (line {first[3]})"
        return GroupFilterModel(predicate, first[3]), None

    def _computed_at(self) -> tuple:
        """(term, line) of each term that may raise: where Python raises its errors, whichever
        case reads it. First the node that evaluates it on every path, then the first statement
        computing it on every path, then a node that evaluates it on some path (the one path
        where it is evaluated at all, in the usual function)."""
        lines: dict = {}
        unguarded = {c.term: c.line for c in reversed(self.computed) if not c.guards}
        for seen in (self.first_seen, unguarded, self.maybe_seen):
            for term, line in seen.items():
                if term not in lines and not never_raises(term):
                    lines[term] = line
        return tuple(lines.items())

    def _eager_aggregates(self) -> frozenset:
        """The aggregates Python computes for every group: at statement level before any branch
        or emit, in the first condition tested, or anywhere in an unconditional only case."""
        first_seq = self.cases[0][2] if self.cases else self.seq + 1
        terms = [c.term for c in self.computed if not c.guards and c.seq < first_seq]
        if self.cases:
            guards, outcome, _, _ = self.cases[0]
            terms += list(guards[:1])
            if not guards and len(self.cases) == 1:
                terms += list(_terms_of(guards, outcome))
        return frozenset(t for term in terms for t in _surely_evaluated(term) if isinstance(t, Agg))

    def _predicate(self) -> Expr:
        predicate: Expr = Lit(None)  # falling off the end returns None: the record is dropped
        for guards, value, _, _ in reversed(self.cases):
            # an unguarded case is taken whatever follows: `value`, not `value if True else ...`
            predicate = IfElse(_conjunction(guards), value, predicate) if guards else value
        return predicate

    def _evaluated_first(self) -> tuple:
        """The values that may raise that Python computes on every path before any case, in
        order, where one of them no case surely uses (`x = f(...)` with `x` used on some paths
        only): a Map's or filter's first guard computes them all (`Evaluated`), in the order
        Python does, so the model raises where Python does. Empty otherwise."""
        if self.kind not in ("map", "filter", "match", "cross") or not self.cases or self.explosion is not None \
                or any(outcome == FORWARD for _, outcome, _, _ in self.cases):
            return ()
        guards, _, first, _ = self.cases[0]
        test = _conjunction(guards)  # an `if`'s test is computed too: the guard itself
        before = tuple(c for c in self.computed if not c.guards and c.seq < first and c.term != test)
        return before if self._unused_raising(only=before) else ()

    def _unused_raising(self, skip: tuple = (), only: Optional[tuple] = None) -> Optional[str]:
        for c in (self.computed if only is None else only):
            if c in skip:
                continue
            for k, (guards, outcome, seq, _) in enumerate(self.cases):
                if seq < c.seq or guards[: len(c.guards)] != c.guards:
                    continue
                # a native CASE evaluates this case's terms and (at least) every earlier case's first
                # guard; inside a term, a conditional's branches and later operands of and/or only
                # sometimes (Python's `x = 1 // d` then `x if c else 0` raises where c is false too)
                evaluated = list(_terms_of(guards, outcome)) + [g[0] for g, *_ in self.cases[:k] if g]
                if not any(t == c.term for term in evaluated for t in _surely_evaluated(term)):
                    return _unused(c)
            n = len(c.guards)
            if not any(seq > c.seq and c.guards[: len(g)] == g for g, _, seq, _ in self.cases):
                # no later case surely matches where c is computed: Python may go on to fall off the
                # end (a generator, a filter), where the model evaluates every case's guard up to its
                # first operand, or, for a case inside c's branch (c's guards hold), the next one
                tested = [g[n] if len(g) > n and g[:n] == c.guards else g[0] for g, *_ in self.cases if g]
                if not any(t == c.term for g in tested for t in _surely_evaluated(g)):
                    return _unused(c)
        return None


def _unused(c: _Computed) -> str:
    return (f"computes {c.term} (line {c.line}), which may raise, on a path that does not "
            f"use it (Python raises there, a native expression would not)")


def _emit_of(heap, ref, n_sides: int, in_reduce: bool = False):
    """The Emit for an emitted dict, or why there is none. In a Reduce the record it may
    copy is `rows[0]`."""
    obj = heap[ref.id]
    if obj.dynamic:
        return "emits a dict with computed keys"
    if obj.deleted or obj.maybe_deleted:
        return "emits a record with fields deleted"
    if in_reduce and obj.kind == "row" and ref.pos == "first" and not obj.fields:
        return Emit((), True)
    if ref.pos != "each" or obj.kind == "row":
        return "emits a record of a group"
    if obj.kind == "input":
        if n_sides != 1:
            return "emits one input of a pair as it is"
        copies = True
    else:
        groups = obj.base_groups
        sides = set()
        for group in groups:
            if len(group) != 1 or NO_BASE in group:
                return "copies a record on some paths only"
            (bid, bpos), = group
            base = heap[bid]
            wanted = ("row", "first") if in_reduce else ("input", "each")
            if (base.kind, bpos if base.kind == "row" else "each") != wanted or base.fields or base.deleted \
                    or base.maybe_deleted:
                return "copies a dict other than an unchanged input record (or, in a Reduce, rows[0])"
            sides.add(base.side)
        if sides and len(sides) != n_sides:
            return "copies one input of a pair and not the other"
        copies = bool(sides)
    fields = []
    for name, value in obj.fields.items():
        if name not in obj.must_set or value.term is None:
            return f"sets field {name} to a value the expression IR cannot express, or on some paths only"
        fields.append((name, value.term))
    return Emit(tuple(fields), copies)


def _conjunction(guards) -> Expr:
    if not guards:
        return Lit(True)
    return guards[0] if len(guards) == 1 else BoolOp("and", tuple(guards))


def _group_level(term: Expr) -> bool:
    """Whether the term reads the group only through aggregates and rows[0]."""
    if isinstance(term, Agg):
        return not any(isinstance(t, Agg) for t in term.rows.walk())
    if isinstance(term, (Field, GroupRows)):
        return False
    return all(_group_level(c) for c in term.children())


def _surely_evaluated(term: Expr):
    """The subterms Python evaluates whenever it evaluates `term`: a conditional's test but
    not its branches, the first operand of `and`/`or` but not the others."""
    yield term
    if isinstance(term, IfElse):
        parts = (term.test,)
    elif isinstance(term, BoolOp):
        parts = term.values[:1]
    else:
        parts = term.children()
    for part in parts:
        yield from _surely_evaluated(part)


def _terms_of(guards, outcome):
    yield from guards
    if isinstance(outcome, Emit):
        yield from (t for _, t in outcome.fields)
    elif isinstance(outcome, Expr):
        yield outcome
