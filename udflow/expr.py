"""The expression IR: what a user function computes, as data.

The analysis builds these terms while it interprets a function (a *model*,
`udflow.analysis.model`); the Spark backend lowers them to Column expressions
(`udflow.spark_backend.native`); `evaluate` runs them in Python. Every node's
meaning is **Python's**: `evaluate` performs exactly the Python operation the
user wrote, so a term raises where the function raises and returns what it
returns. A lowering is correct iff it agrees with `evaluate` on every input,
values or errors (tests/test_native_differential.py checks it with hypothesis).

    Field("l_discount")                         r["l_discount"]
    Arith("*", Field("l_extendedprice"),
          Arith("-", Lit(1), Field("l_discount")))   r["l_extendedprice"] * (1 - r["l_discount"])
    Cmp("<=", Lit(date(1995, 1, 1)), Field("l_shipdate"))
    IfElse(Truth(Field("c")), Lit(1), Lit(0))   1 if r["c"] else 0

Truthiness is explicit: a condition is `Truth(x)` (Python's `bool(x)`: None,
0, 0.0, "", Decimal(0) are false, NaN is true), `not x` is `Not(x)`, and
`and`/`or` return one of their operands, as in Python (`BoolOp`).

Each class states its None semantics; "raises" means the Python operation
raises (TypeError for None in arithmetic or an ordering comparison).

Terms are frozen dataclasses: printable (`str(term)` is Python source),
hashable, walkable (`children`, `walk`), rebuilt never mutated.
"""

from __future__ import annotations

import dataclasses
import datetime
import decimal
import operator
from dataclasses import dataclass
from typing import Any, Iterator, Mapping

from udflow import kept_chars
from udflow.expr_functions import DATE_METHODS, FUNCTIONS

LITERAL_TYPES = (bool, int, float, str, type(None), datetime.date, datetime.datetime, datetime.timedelta,
                 decimal.Decimal)

ARITH = {"+": operator.add, "-": operator.sub, "*": operator.mul, "/": operator.truediv,
         "//": operator.floordiv, "%": operator.mod, "**": operator.pow}
COMPARE = {"==": operator.eq, "!=": operator.ne, "<": operator.lt, "<=": operator.le,
           ">": operator.gt, ">=": operator.ge}


class Expr:
    """A term. Subclasses are frozen dataclasses whose Expr-valued fields are its children."""

    def children(self) -> tuple["Expr", ...]:
        out = []
        for value in self.__dict__.values():
            if isinstance(value, Expr):
                out.append(value)
            elif isinstance(value, tuple):
                out += [v for v in value if isinstance(v, Expr)]
        return tuple(out)

    def walk(self) -> Iterator["Expr"]:
        yield self
        for c in self.children():
            yield from c.walk()

    def fields(self) -> frozenset[str]:
        """The record fields the term reads."""
        return frozenset(e.name for e in self.walk() if isinstance(e, Field))


@dataclass(frozen=True)
class Field(Expr):
    """`r[name]`: the field's value, None included (its presence is checked by the analysis)."""

    name: str

    def __str__(self) -> str:
        return f"r[{self.name!r}]"


@dataclass(frozen=True, eq=False)
class Lit(Expr):
    """A constant of LITERAL_TYPES (a closure's immutable value folded in). Two are equal
    when they are the same constant of the same type: Python has 1 == True == 1.0 and
    0.0 == -0.0, but `x * 1` and `x * 1.0` compute different things, and a term equal to
    another is computed once (a shared aggregate, a shared field)."""

    value: Any

    def __post_init__(self):
        if not isinstance(self.value, LITERAL_TYPES):
            raise TypeError(f"not a literal: {self.value!r}")

    def __eq__(self, other) -> bool:
        return isinstance(other, Lit) and self._identity() == other._identity()

    def __hash__(self) -> int:
        return hash(self._identity())

    def _identity(self) -> tuple:
        return type(self.value), repr(self.value)

    def __str__(self) -> str:
        return repr(self.value)


@dataclass(frozen=True)
class Arith(Expr):
    """`left op right`, op in ARITH. None on either side raises TypeError; `/`, `//`, `%` by
    zero raise ZeroDivisionError; ints never overflow; float and Decimal do not mix."""

    op: str
    left: Expr
    right: Expr

    def __str__(self) -> str:
        return f"({self.left} {self.op} {self.right})"


@dataclass(frozen=True)
class Neg(Expr):
    """`-operand`. None raises TypeError."""

    operand: Expr

    def __str__(self) -> str:
        return f"(-{self.operand})"


@dataclass(frozen=True)
class Cmp(Expr):
    """`left op right`, op in COMPARE. `==`/`!=` never raise (None == None is True, 1 == "1"
    is False); the orderings raise TypeError on None or on values of unordered types."""

    op: str
    left: Expr
    right: Expr

    def __str__(self) -> str:
        return f"({self.left} {self.op} {self.right})"


@dataclass(frozen=True)
class Truth(Expr):
    """`bool(operand)`: Python truthiness. Never raises for the literal types."""

    operand: Expr

    def __str__(self) -> str:
        return f"bool({self.operand})"


@dataclass(frozen=True)
class Not(Expr):
    """`not operand`: a bool. Never raises for the literal types."""

    operand: Expr

    def __str__(self) -> str:
        return f"(not {self.operand})"


@dataclass(frozen=True)
class BoolOp(Expr):
    """`a and b` / `a or b`: Python's short circuit, returning an operand (not a bool)."""

    op: str  # "and" | "or"
    values: tuple

    def __str__(self) -> str:
        return "(" + f" {self.op} ".join(str(v) for v in self.values) + ")"


@dataclass(frozen=True)
class IfElse(Expr):
    """`body if test else orelse`; only the chosen branch is evaluated (and may raise)."""

    test: Expr
    body: Expr
    orelse: Expr

    def __str__(self) -> str:
        return f"({self.body} if {self.test} else {self.orelse})"


@dataclass(frozen=True)
class Evaluated(Expr):
    """True, once `operand` is computed: raises where it raises. A statement `x = f(...)`
    that Python runs on every path, where no case of the model surely uses `x`, becomes
    the first guard of the model (`analysis.modelling`), so the model raises where the
    function does."""

    operand: Expr

    def __str__(self) -> str:
        return f"computed({self.operand})"


@dataclass(frozen=True)
class IsNone(Expr):
    """`operand is None` (`is not None` when negated). Never raises."""

    operand: Expr
    negated: bool = False

    def __str__(self) -> str:
        return f"({self.operand} is {'not ' if self.negated else ''}None)"


@dataclass(frozen=True)
class InValues(Expr):
    """`operand in (v1, v2, ...)` over literals: == against each, so it never raises."""

    operand: Expr
    values: tuple
    negated: bool = False

    def __str__(self) -> str:
        return f"({self.operand} {'not in' if self.negated else 'in'} {self.values!r})"


@dataclass(frozen=True)
class Contains(Expr):
    """`needle in haystack` on strings. None on either side, or a non-str, raises TypeError."""

    needle: Expr
    haystack: Expr

    def __str__(self) -> str:
        return f"({self.needle} in {self.haystack})"


@dataclass(frozen=True)
class Slice(Expr):
    """`operand[start:stop]` of a str with literal int bounds (None: open); negative bounds
    count from the end, as in Python. None raises TypeError."""

    operand: Expr
    start: Any = None
    stop: Any = None

    def __str__(self) -> str:
        start = "" if self.start is None else self.start
        stop = "" if self.stop is None else self.stop
        return f"{self.operand}[{start}:{stop}]"


@dataclass(frozen=True)
class Call(Expr):
    """A whitelisted function or method (FUNCTIONS), e.g. `Call("str.lower", (x,))` for
    `x.lower()`, `Call("date.year", (d,))` for `d.year`. Raises where Python raises."""

    name: str
    args: tuple

    def __post_init__(self):
        if self.name not in FUNCTIONS:
            raise ValueError(f"no pinned-down meaning for {self.name}")

    def __str__(self) -> str:
        if self.name == "re.matched":
            kind, *rest = self.args
            return f"(re.{kind.value}({', '.join(str(a) for a in rest)}) is not None)"
        if self.name == "re.group":
            kind, pattern, text, k = self.args
            return f"re.{kind.value}({pattern}, {text}).group({k})"
        if self.name.startswith("hashlib."):
            return f"{self.name}({self.args[0]}.encode()).hexdigest()"
        if self.name == "chars.keep":
            receiver, op, *tests = self.args
            return kept_chars.spelled(str(receiver), op.value, tuple(t.value for t in tests))
        if self.name == "decimal.quantize":
            x, exp, rounding = self.args
            return f"{x}.quantize({exp}" + (f", {rounding.value})" if rounding != Lit(None) else ")")
        if self.name.startswith(("math.", "numpy.", "datetime.", "re.", "unicodedata.")):
            return f"{self.name}({', '.join(str(a) for a in self.args)})"
        if "." in self.name:
            receiver, *rest = self.args
            method = self.name.split(".", 1)[1]
            if self.name == "date.isocalendar":
                return f"{receiver}.isocalendar()[{rest[0]}]"
            if self.name == "date.dayofyear":
                return f"{receiver}.timetuple().tm_yday"
            if self.name == "date.replace":
                parts = ", ".join(f"{k.value}={v}" for k, v in zip(rest[::2], rest[1::2]))
                return f"{receiver}.replace({parts})"
            if self.name.startswith("date.") or self.name == "timedelta.days":
                if method in DATE_METHODS:
                    return f"{receiver}.{method}({', '.join(str(a) for a in rest)})"
                return f"{receiver}.{method}"
            if self.name.startswith("timedelta."):
                return f"({receiver}).{method}()"
            return f"{receiver}.{method}({', '.join(str(a) for a in rest)})"
        return f"{self.name}({', '.join(str(a) for a in self.args)})"


# -- terms over a group (a Reduce's model) ------------------------------------
#
# A Reduce sees its group as a list `rows`. Its model's terms are *group level*:
# they read the group only through `Agg` (an aggregate over its records) and
# `First` (a field of the one record `rows[0]` it takes). Inside an `Agg`,
# `Field` means the field of each record in turn.

AGGREGATES = {"sum": sum, "count": len, "min": min, "max": max, "any": any, "all": all}


@dataclass(frozen=True)
class GroupRows(Expr):
    """`[elem for r in rows if where]`, the group's records (`elem` None: the records
    themselves) or a value per record. Only an argument of an `Agg`, never a value."""

    elem: Any = None  # Expr | None
    where: Any = None  # Expr | None: Python's truthiness decides

    def __str__(self) -> str:
        cond = f" if {self.where}" if self.where is not None else ""
        return f"[{self.elem if self.elem is not None else 'r'} for r in rows{cond}]"


@dataclass(frozen=True)
class Agg(Expr):
    """`fn(elem for r in rows if where)`, fn in AGGREGATES ("count" is `len(...)`), as Python
    computes it: `sum` starts from int 0 and raises TypeError on None; `min`/`max` raise
    TypeError comparing None with a value and ValueError on no values (a group is never
    empty, a `where` may leave none); `count` never raises. `any`/`all`: Python's truthiness of
    each value (`bool(v)`), True iff some (every) value is truthy; no values: `any` False, `all`
    True; a bool, never None. Python stops at the first deciding value, so the analysis builds
    them only over `elem` and `where` terms that never raise (then computing every value, as
    `evaluate_group` does, gives the same result)."""

    fn: str
    rows: GroupRows

    def __str__(self) -> str:
        name = "len" if self.fn == "count" else self.fn
        return f"{name}({self.rows})"


@dataclass(frozen=True)
class First(Expr):
    """`rows[0][name]`: the field of the first record of the group (every `First` of one model
    reads the same record). None as the record holds it."""

    name: str

    def __str__(self) -> str:
        return f"rows[0][{self.name!r}]"


@dataclass(frozen=True)
class Tuple(Expr):
    """`(a, b, ...)`, a tuple of per-record terms, valid only as the `elem` of a `GroupRows`
    inside `Agg("min"/"max")`: `min((r["t"], r["u"]) for r in rows)`. Its items are
    evaluated left to right (the first that raises raises). Python's `min`/`max` of tuples
    compare lexicographically: element by element (`is`, else `==`: None == None goes on, a
    NaN equals only itself) up to the first unequal position, which decides by `<` (`>`);
    None there raises TypeError, NaN makes both `<` and `>` False (the earlier tuple stays);
    equal tuples keep the first in group order. `evaluate_group` runs Python's `min`/`max`."""

    items: tuple

    def __str__(self) -> str:
        inner = ", ".join(str(i) for i in self.items)
        return f"({inner},)" if len(self.items) == 1 else f"({inner})"


@dataclass(frozen=True)
class Item(Expr):
    """`term[index]`: the element at `index` (0 <= index < its length) of a tuple-valued
    aggregate `term` (an `Agg` over a `Tuple`; `m[0]` or `a, b = min(...)`). Never raises
    itself; computing `term` raises where the aggregate raises."""

    term: Expr
    index: int

    def __str__(self) -> str:
        return f"{self.term}[{self.index}]"


# -- the element of an explosion (a Map's `ExplodeModel`) ---------------------------------

ELEM = "\x00elem"  # the reserved key under which `evaluate` finds the element at hand


@dataclass(frozen=True)
class Elem(Expr):
    """The loop variable of an `ExplodeModel`: the element at hand of `source.split(sep)`, a
    str (never None; "" where Python's split keeps an empty piece), or with `split` False of
    the source's value itself as Python's `for` iterates it (any value, None included). Valid
    only in that model's emitted fields; `evaluate` reads it from the record under the
    reserved key ELEM. Prints as `x`."""

    split: bool = True

    def __str__(self) -> str:
        return "x"


def evaluate_group(term: Expr, rows: list) -> Any:
    """A group-level term's value over the group `rows` (a list of records)."""
    if isinstance(term, Agg):
        return AGGREGATES[term.fn](list(_group_values(term.rows, rows)))
    if isinstance(term, First):
        return rows[0][term.name]
    return evaluate(_folded(term, rows), {})


def _group_values(group: GroupRows, rows: list):
    for r in rows:
        if group.where is None or evaluate(group.where, r):
            yield r if group.elem is None else evaluate(group.elem, r)


def _folded(term: Expr, rows: list) -> Expr:
    """The term with its group-level leaves replaced by their values."""
    return transform(term, lambda t: _Value(evaluate_group(t, rows)) if isinstance(t, (Agg, First)) else t)


def transform(term: Expr, rewrite) -> Expr:
    """A new term: `rewrite` applied to every subterm, top down; where it returns a different
    term, that term is kept as it is (its parts are not visited)."""
    new = rewrite(term)
    if new is not term:
        return new
    changes = {}
    for name, value in term.__dict__.items():
        if isinstance(value, Expr):
            changes[name] = transform(value, rewrite)
        elif isinstance(value, tuple) and any(isinstance(v, Expr) for v in value):
            changes[name] = tuple(transform(v, rewrite) if isinstance(v, Expr) else v for v in value)
    if all(changes[n] is getattr(term, n) for n in changes):
        return term
    return dataclasses.replace(term, **changes)


@dataclass(frozen=True)
class _Value(Expr):
    """Any Python value standing for an evaluated group-level leaf (a list for `len(rows)`)."""

    value: Any


def evaluate(term: Expr, record: Mapping[str, Any]) -> Any:
    """The term's value on `record`, computed by exactly the Python operations it stands for.
    A node defined outside this module (`udflow.tables`) evaluates itself."""
    ev = _EVALUATORS.get(type(term))
    return ev(term, record) if ev is not None else term.evaluated(record, evaluate)


def _bool_op(t: BoolOp, r):
    result = None
    for v in t.values:
        result = evaluate(v, r)
        if bool(result) == (t.op == "or"):
            return result
    return result


def _in_values(t: InValues, r):
    found = evaluate(t.operand, r) in t.values
    return not found if t.negated else found


def _evaluated(t: Evaluated, r) -> bool:
    evaluate(t.operand, r)
    return True


def _is_none(t: IsNone, r):
    is_none = evaluate(t.operand, r) is None
    return not is_none if t.negated else is_none


def _slice(t: Slice, r):
    value = evaluate(t.operand, r)
    if not isinstance(value, str):
        raise TypeError(f"slicing {type(value).__name__}: only str is modelled")
    return value[t.start:t.stop]


_EVALUATORS = {
    Field: lambda t, r: r[t.name],
    Lit: lambda t, r: t.value,
    Arith: lambda t, r: ARITH[t.op](evaluate(t.left, r), evaluate(t.right, r)),
    Neg: lambda t, r: -evaluate(t.operand, r),
    Cmp: lambda t, r: COMPARE[t.op](evaluate(t.left, r), evaluate(t.right, r)),
    Truth: lambda t, r: bool(evaluate(t.operand, r)),
    Not: lambda t, r: not evaluate(t.operand, r),
    BoolOp: _bool_op,
    IfElse: lambda t, r: evaluate(t.body, r) if evaluate(t.test, r) else evaluate(t.orelse, r),
    IsNone: _is_none,
    Evaluated: _evaluated,
    InValues: _in_values,
    Contains: lambda t, r: evaluate(t.needle, r) in _str(evaluate(t.haystack, r)),
    Slice: _slice,
    Call: lambda t, r: FUNCTIONS[t.name](*(evaluate(a, r) for a in t.args)),
    _Value: lambda t, r: t.value,
    Tuple: lambda t, r: tuple(evaluate(i, r) for i in t.items),
    Item: lambda t, r: evaluate(t.term, r)[t.index],
    Elem: lambda t, r: r[ELEM],
}


def _str(value):
    if not isinstance(value, str):
        raise TypeError(f"'in <{type(value).__name__}>' requires a str here")
    return value
