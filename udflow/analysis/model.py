"""A function's model: what it computes, in expression IR terms (`udflow.expr`).

The interpreter builds it in the same pass that finds the read and write sets
(`UdfProperties.model`); the Spark backend runs an operator natively from it
(`udflow.spark_backend.native_ops`), and `apply` runs it in Python, which is how
the tests hold a model to the function it came from.

A record-at-a-time function (Map, filter, Match/Cross over the pair) is a list
of cases, tried in order as Python's branches are:

    def volume(r):                               RecordModel
        if r["nation"] == "FRANCE":                case r['nation'] == 'FRANCE':
            return {**r, "v": r["p"] * 2}            {**r, 'v': (r['p'] * 2)}
        return None                                case True: raises (returns None)

    Case(guard, emit)   the first case whose guard is truthy decides: `emit` is the
                        record it emits, NO_RECORD (a generator that yields nothing
                        there) or RAISES (a Map returning None: an error)

A filter's model is its predicate. A Reduce's model has the same cases, once
per group, over *group-level* terms: aggregates over the group (`Agg`) and
fields of one and the same record of it (`First`, `rows[0]`); `Emit.copies_input`
copies that record:

    def revenue(rows):                           ReduceModel
        rows = list(rows)                          case True: {**rows[0],
        total = sum(r["v"] for r in rows)            'revenue': sum([r['v'] for r in rows])}
        yield {**rows[0], "revenue": total}
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Optional

from udflow.expr import ELEM, Agg, Expr, Field, First, evaluate, evaluate_group, transform


@dataclass(frozen=True)
class Emit:
    """One emitted record: the input record with `fields` set (`copies_input`, `{**r, ...}`),
    or a fresh record of exactly `fields` (`{...}`), in the order Python builds them."""

    fields: tuple  # ((name, Expr), ...)
    copies_input: bool

    def __str__(self) -> str:
        parts = (["**r"] if self.copies_input else []) + [f"{n!r}: {e}" for n, e in self.fields]
        return "{" + ", ".join(parts) + "}"


NO_RECORD = "no record"
FORWARD = "the group's records, unchanged"  # a Reduce's `yield from rows` (GroupFilterModel only)
RAISES = "raises (returns None)"


@dataclass(frozen=True)
class Case:
    guard: Expr
    emit: Any  # Emit | NO_RECORD | RAISES
    line: int = 0  # the statement that emits (or returns None): errors there name it

    def __str__(self) -> str:
        return f"case {self.guard}: {self.emit}"


@dataclass(frozen=True)
class RecordModel:
    """A Map's (or a Match/Cross function's, over the concatenated pair) cases. `computed_at`:
    (term, line) for each term that may raise and that a statement of the function computes
    on every path (`x = f(...)`): Python raises its errors on that line."""

    cases: tuple
    line: int = 0
    computed_at: tuple = field(default=(), compare=False)

    def __str__(self) -> str:
        return "\n".join(str(c) for c in self.cases)


@dataclass(frozen=True)
class FilterModel:
    """A filter: the record passes iff `predicate` is truthy. `computed_at`: as `RecordModel`'s."""

    predicate: Expr
    line: int = 0
    computed_at: tuple = field(default=(), compare=False)

    def __str__(self) -> str:
        return f"keep if {self.predicate}"


@dataclass(frozen=True)
class ReduceModel:
    """A Reduce's cases, tried once per group. `eager`: the aggregates Python computes for
    every group (at the top of the function, before any branch), so a native form that
    computes every aggregate for every group raises exactly where Python does when only
    these may raise."""

    cases: tuple
    line: int = 0
    eager: frozenset = frozenset()
    computed_at: tuple = field(default=(), compare=False)  # as `RecordModel`'s

    def aggregates(self) -> tuple:
        """Every distinct `Agg` of the cases, in order of appearance."""
        found = (t for _, term in case_terms(self) for t in term.walk() if isinstance(t, Agg))
        return tuple(dict.fromkeys(found))

    def __str__(self) -> str:
        return "\n".join(str(c).replace("{**r", "{**rows[0]") for c in self.cases)


@dataclass(frozen=True)
class GroupFilterModel:
    """A Reduce that forwards whole groups (`UdfProperties.forwards_groups`): the group's
    records are emitted unchanged, in the order the function received them, iff `predicate`,
    a group-level term, is truthy; else none. Evaluating the predicate raises where the
    function raises (every value that may raise is one the predicate surely evaluates).

        def filter_buy_sessions(rows):             GroupFilterModel
            rows = list(rows)                        keep group if any([(r['action'] == 'buy')
            if any(r["action"] == "buy" for r in rows):                   for r in rows])
                yield from rows
    """

    predicate: Expr
    line: int = 0

    def aggregates(self) -> tuple:
        """Every distinct `Agg` of the predicate, in order of appearance."""
        return tuple(dict.fromkeys(t for t in self.predicate.walk() if isinstance(t, Agg)))

    def __str__(self) -> str:
        return f"keep group if {self.predicate}"


def apply_group(model, rows: list) -> list:
    """The records the modelled Reduce (`ReduceModel`, `GroupFilterModel`) emits for the group
    `rows` (raises where it raises)."""
    if isinstance(model, GroupFilterModel):
        return [dict(r) for r in rows] if group_value(model.predicate, rows) else []
    for agg in model.eager:
        evaluate_group(agg, rows)  # Python computed these first, whatever the branch
    for case in model.cases:
        if group_value(case.guard, rows):
            return _emitted_group(case.emit, rows)
    return []


def group_value(term: Expr, rows: list) -> Any:
    """A group-level term's value over `rows`, each aggregate (and `rows[0]`) computed only
    when the evaluation reaches it, as Python computes an expression: `min(...) if c else
    None` does not raise on an empty `min` when `c` is false. (`evaluate_group` computes
    every aggregate of the term first.)"""
    leaves: dict = {}

    def leaf(t: Expr) -> Expr:
        if isinstance(t, (Agg, First)):
            return Field(leaves.setdefault(t, f"\0group leaf {len(leaves)}"))
        return t

    body = transform(term, leaf)
    return evaluate(body, _LazyLeaves({name: t for t, name in leaves.items()}, rows))


class _LazyLeaves(Mapping):
    """The group-level leaves of a term by their stand-in names, each computed on first use."""

    def __init__(self, leaves: dict, rows: list):
        self._leaves, self._rows, self._values = leaves, rows, {}

    def __getitem__(self, name: str) -> Any:
        if name not in self._values:
            self._values[name] = evaluate_group(self._leaves[name], self._rows)
        return self._values[name]

    def __iter__(self):
        return iter(self._leaves)

    def __len__(self) -> int:
        return len(self._leaves)


def _emitted_group(emit, rows: list) -> list:
    if emit == NO_RECORD:
        return []
    if emit == RAISES:
        raise TypeError("the function returned None, expected a dict")
    out = dict(rows[0]) if emit.copies_input else {}
    for name, term in emit.fields:
        out[name] = group_value(term, rows)
    return [out]


@dataclass(frozen=True)
class ExplodeModel:
    """A Map that emits one record per piece of a string:

        for genre in r["m_genres"].split("|"):     ExplodeModel
            yield {**r, "genre": genre}              for x in r['m_genres'].split('|'): {**r, 'genre': x}

    Python's semantics, exactly: `source` is evaluated once (raising where it raises); its
    value's `.split(sep)` is called (`sep` a non-empty str, or None for `split()`): None or any
    non-str raises AttributeError. For each piece x, in order, `emit` is emitted with `Elem()`
    bound to x (its fields evaluated in order, each record a new dict). `split(sep)` keeps
    empty pieces (`"".split("|")` is `[""]`, `"a||b"` gives "a", "", "b"); `split()` splits on
    runs of Python's whitespace (str.isspace, e.g. \x1c-\x1f, \x85, \u2028 too) and drops
    empty pieces (`"".split()` and `"  ".split()` are `[]`: no record).

    `guard` (None: always): a piece's record is emitted only where it is truthy, evaluated
    per piece before the fields (the loop body's `if ...: yield {...}`, names bound in the
    body inlined; what the body computes on every piece, `Evaluated`, comes first in it).

    With `split` False the pieces are the source's value itself as Python's `for` iterates it
    (`for t in tokens(r["text"]):`, a helper's list): None or a value that is not iterable
    raises TypeError before any piece, and a piece may be of any type, None included
    (`Elem(split=False)`); `sep` is then None and means nothing."""

    source: Expr
    sep: Optional[str]
    name: str  # the loop variable's name in the function (for reading only)
    emit: Emit
    line: int = 0
    computed_at: tuple = field(default=(), compare=False)  # as `RecordModel`'s
    guard: Optional[Expr] = None
    split: bool = True

    def __str__(self) -> str:
        sep = "" if self.sep is None else repr(self.sep)
        when = "" if self.guard is None else f"if {self.guard}: "
        pieces = f"{self.source}.split({sep})" if self.split else f"{self.source}"
        return f"for x in {pieces}: {when}{self.emit}"


def apply(model, record: Mapping[str, Any]) -> list:
    """The records the modelled function emits for `record` (raises where it raises)."""
    if isinstance(model, ExplodeModel):
        return _exploded(model, record)
    if isinstance(model, FilterModel):
        return [dict(record)] if evaluate(model.predicate, record) else []
    for case in model.cases:
        if evaluate(case.guard, record):
            return _emitted(case.emit, record)
    return []


def _emitted(emit, record) -> list:
    if emit == NO_RECORD:
        return []
    if emit == RAISES:
        raise TypeError("the function returned None, expected a dict")
    out = dict(record) if emit.copies_input else {}
    for name, term in emit.fields:
        out[name] = evaluate(term, record)
    return [out]


def _exploded(model: ExplodeModel, record) -> list:
    out = []
    value = evaluate(model.source, record)
    for piece in value.split(model.sep) if model.split else value:
        scope = {**record, ELEM: piece}
        if model.guard is not None and not evaluate(model.guard, scope):
            continue
        emitted = dict(record) if model.emit.copies_input else {}
        for name, term in model.emit.fields:
            emitted[name] = evaluate(term, scope)
        out.append(emitted)
    return out


def case_terms(model):
    """(line, term) for every guard and emitted field of the model, in order (an explosion:
    its source, its guard, then its emitted fields)."""
    if isinstance(model, ExplodeModel):
        yield model.line, model.source
        if model.guard is not None:
            yield model.line, model.guard
        for _, term in model.emit.fields:
            yield model.line, term
        return
    if isinstance(model, (FilterModel, GroupFilterModel)):
        yield model.line, model.predicate
        return
    for case in model.cases:
        for term in case_terms_of(case):
            yield case.line, term


def case_terms_of(case: Case) -> tuple:
    """A case's guard and the terms of the fields it writes."""
    return (case.guard,) + (tuple(term for _, term in case.emit.fields) if isinstance(case.emit, Emit) else ())


def fields_read(model) -> frozenset:
    """The input fields the model's terms read (for a Reduce: inside its aggregates and rows[0])."""
    return frozenset(t.name for _, term in case_terms(model) for t in term.walk() if isinstance(t, (Field, First)))


def describe(model: Optional[Any]) -> str:
    return "no model" if model is None else str(model)
