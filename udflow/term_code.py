"""Terms as Python code: a term compiled into one plain Python function of the values it reads.

    round(r["qty"] * r["unit_price"] * (1 - COUPONS.get(r["coupon"], 0.0)), 2)

      ->  def term(v0, v1, v2):            # coupon, qty, unit_price
              return f0(((v1 * v2) * (c0 - t0.get(v0, c1))), c2)

          f0 = round, t0 = {'WELCOME10': 0.1, ...}, c0 = 1, c1 = 0.0, c2 = 2

`expr.evaluate` is the meaning of a term; this is the same meaning at the speed of the
code a user would have written, for the places that run a term on every row (the Python
calls inside a native plan, `spark_backend.python_calls`). Each node becomes the Python
operation `evaluate` performs for it, in the same order:

    Field, Lit            a parameter; a constant bound by name (any value, NaN included)
    Arith, Cmp, Neg       the infix operator (`operator.add(a, b)` is `a + b`)
    BoolOp, IfElse, Not   Python's own `and`/`or`, conditional, `not`: the same short circuits
    Truth, IsNone         `bool(a)`, `a is None`
    InValues, Item, Tuple `a in (...)`, `a[i]`, `(a, b)`
    Call, HelperCall      the method or attribute (`s.upper()`, `d.year`), else the callable
                          `evaluate` calls (`FUNCTIONS[name]`, the user's helper)
    TableGet, InTable     `table.get(key, default)`, `key in table` on the snapshot
    Pieces, Elem          a list comprehension over the pieces (`udflow.pieces`), its loop
                          variable

Any other node (an aggregate's parts, a node defined elsewhere) is evaluated by `evaluate`
over a record of the parameters, so every term compiles and none changes meaning.

A subterm the term holds more than once is computed once where that is sure to come
first (`(s0 := x.strip(P).lower()) and s0 not in STOP`): the analysis inlines the user's
local names, so `word = raw.strip(P).lower()` read three times is three copies. Terms
are pure, so one computation is as good as three, and the first to raise raises first.
A copy reuses the name only where the binding is surely evaluated before it: along the
operands Python always evaluates, in its order (an `IfElse`'s test before its branches);
a binding inside a branch, a later operand of `and`/`or`, or a comprehension's loop is
forgotten once that part is left.
"""

from __future__ import annotations

import operator
from collections import Counter
from contextlib import contextmanager
from typing import Any, Callable, Sequence

from udflow.expr import (
    ARITH,
    COMPARE,
    Arith,
    BoolOp,
    Call,
    Cmp,
    ELEM,
    Elem,
    Evaluated,
    Expr,
    Field,
    IfElse,
    InValues,
    IsNone,
    Item,
    Lit,
    Neg,
    Not,
    Truth,
    Tuple,
    evaluate,
)
from udflow.expr_functions import FUNCTIONS
from udflow.helper_calls import HelperCall
from udflow.pieces import Pieces
from udflow.tables import InTable, TableGet

# calls `FUNCTIONS` defines as a method or attribute looked up on the first argument, spelled so
# (`r.upper()` looks `upper` up on r as `FUNCTIONS["str.upper"]` does: None raises the same
# AttributeError); `test_term_code` checks each against its `FUNCTIONS` entry
METHODS = {"str.lower": "lower", "str.upper": "upper", "str.strip": "strip", "str.startswith": "startswith",
           "str.endswith": "endswith", "str.lstrip": "lstrip", "str.rstrip": "rstrip", "str.replace": "replace",
           "str.zfill": "zfill", "str.find": "find", "str.title": "title", "str.capitalize": "capitalize",
           **{f"str.{name}": name for name in ("casefold", "swapcase", "isdigit", "isdecimal", "isnumeric", "isalpha",
                                               "isalnum", "isspace", "isupper", "islower", "isascii", "count",
                                               "removeprefix", "removesuffix", "ljust", "rjust")},
           "date.weekday": "weekday", "date.isoweekday": "isoweekday", "date.date": "date",
           "date.strftime": "strftime", "timedelta.total_seconds": "total_seconds", "date.isoformat": "isoformat"}
ATTRIBUTES = {"date.year": "year", "date.month": "month", "date.day": "day", "date.hour": "hour",
              "date.minute": "minute", "date.second": "second", "timedelta.days": "days"}
INFIX = {operator.add: "+", operator.sub: "-", operator.mul: "*", operator.truediv: "/",
         operator.floordiv: "//", operator.mod: "%", operator.pow: "**",
         operator.eq: "==", operator.ne: "!=", operator.lt: "<", operator.le: "<=",
         operator.gt: ">", operator.ge: ">="}


def python_function(term: Expr, names: Sequence[str]) -> Callable[..., Any]:
    """`lambda *values: evaluate(term, dict(zip(names, values)))`, as one compiled function.
    `names`: the fields the term reads, in the order of the function's parameters."""
    writer = _Writer(tuple(names), _repeated(term))
    body = writer.code(term)
    source = f"def term({', '.join(writer.params.values())}):\n    return {body}\n"
    # a module name, or pickling the function for Spark's workers searches every loaded module
    # for it (`cloudpickle._whichmodule`); not found there, it is pickled by value
    namespace = {"__name__": __name__, **writer.bound}
    exec(compile(source, f"<udflow term {term}>", "exec"), namespace)  # noqa: S102 - our own code
    return namespace["term"]


def _repeated(term: Expr) -> frozenset:
    """The subterms `term` holds more than once, but for the leaves (a name already)."""
    counts = Counter(t for t in term.walk() if not isinstance(t, (Field, Lit, Elem)))
    return frozenset(t for t, n in counts.items() if n > 1)


class _Writer:
    """Writes a term's Python expression text, its parts in the order Python evaluates them;
    the values it cannot spell are bound by name."""

    def __init__(self, names: tuple, repeated: frozenset = frozenset()):
        self.names = names
        self.params = {name: f"v{i}" for i, name in enumerate(names)}  # a field -> its parameter
        self.bound: dict[str, Any] = {}
        self.elem = None  # inside a `Pieces` comprehension: its loop variable
        self.repeated = repeated
        self.computed: dict[Expr, str] = {}  # a repeated subterm -> the name surely holding it here
        self.may_bind = True  # False in a comprehension's iterable, where `:=` is not allowed

    @contextmanager
    def branch(self):
        """A part Python may not evaluate: what it binds is forgotten after it."""
        before = dict(self.computed)
        try:
            yield
        finally:
            self.computed = before

    def bind(self, prefix: str, value) -> str:
        name = f"{prefix}{len(self.bound)}"
        self.bound[name] = value
        return name

    def code(self, t: Expr) -> str:
        if t in self.computed:
            return self.computed[t]
        writer = getattr(self, f"_{type(t).__name__}", None)
        text = writer(t) if writer is not None and type(t).__module__ in _KNOWN_MODULES else self._other(t)
        if t not in self.repeated or not self.may_bind:
            return text
        name = self.computed[t] = f"s{len(self.computed)}_{len(self.bound)}"
        return f"({name} := {text})"

    def _Field(self, t: Field) -> str:
        return self.params[t.name]

    def _Lit(self, t: Lit) -> str:
        return self.bind("c", t.value)

    def _Arith(self, t: Arith) -> str:
        return self._binary(ARITH[t.op], t.left, t.right)

    def _Cmp(self, t: Cmp) -> str:
        return self._binary(COMPARE[t.op], t.left, t.right)

    def _binary(self, fn, left: Expr, right: Expr) -> str:
        a, b = self.code(left), self.code(right)
        if fn in INFIX:
            return f"({a} {INFIX[fn]} {b})"
        return f"{self.bind('f', fn)}({a}, {b})"

    def _Neg(self, t: Neg) -> str:
        return f"(-{self.code(t.operand)})"

    def _Truth(self, t: Truth) -> str:
        return f"bool({self.code(t.operand)})"

    def _Not(self, t: Not) -> str:
        return f"(not {self.code(t.operand)})"

    def _BoolOp(self, t: BoolOp) -> str:
        first = self.code(t.values[0])
        with self.branch():  # each later operand runs only after the ones before it
            rest = [self.code(v) for v in t.values[1:]]
        return "(" + f" {t.op} ".join([first, *rest]) + ")"

    def _IfElse(self, t: IfElse) -> str:
        test = self.code(t.test)
        with self.branch():
            body = self.code(t.body)
        with self.branch():
            orelse = self.code(t.orelse)
        return f"({body} if {test} else {orelse})"

    def _IsNone(self, t: IsNone) -> str:
        return f"({self.code(t.operand)} is {'not ' if t.negated else ''}None)"

    def _Evaluated(self, t: Evaluated) -> str:
        return f"({self.code(t.operand)}, True)[1]"

    def _InValues(self, t: InValues) -> str:
        return f"({self.code(t.operand)} {'not in' if t.negated else 'in'} {self.bind('c', t.values)})"

    def _Item(self, t: Item) -> str:
        return f"{self.code(t.term)}[{t.index}]"

    def _Tuple(self, t: Tuple) -> str:
        return "(" + "".join(f"{self.code(i)}, " for i in t.items) + ")"

    def _Call(self, t: Call) -> str:
        args = [self.code(a) for a in t.args]
        if t.name in METHODS:
            return f"{args[0]}.{METHODS[t.name]}({', '.join(args[1:])})"
        if t.name in ATTRIBUTES and len(args) == 1:
            return f"{args[0]}.{ATTRIBUTES[t.name]}"
        return f"{self.bind('f', FUNCTIONS[t.name])}({', '.join(args)})"

    def _HelperCall(self, t: HelperCall) -> str:
        return f"{self.bind('h', t.fn)}({', '.join(self.code(a) for a in t.args)})"

    def _TableGet(self, t: TableGet) -> str:
        table = self.bind("t", t.table.python())
        return f"{table}.get({self.code(t.key)}, {self.code(t.default)})"

    def _InTable(self, t: InTable) -> str:
        return f"({self.code(t.operand)} {'not in' if t.negated else 'in'} {self.bind('t', t.table.python())})"

    def _Pieces(self, t: Pieces) -> str:
        # the first iterable of a comprehension is evaluated once, in the enclosing scope
        self.may_bind, may_bind = False, self.may_bind
        try:
            source = self.code(t.source)
        finally:
            self.may_bind = may_bind
        pieces = f"{source}.split({self.bind('c', t.sep)})" if t.split else source
        outer, self.elem = self.elem, f"e{len(self.bound)}"
        try:
            with self.branch():  # per piece: the item runs after the guard held
                guard = "" if t.guard is None else f" if {self.code(t.guard)}"
                return f"[{self.code(t.item)} for {self.elem} in {pieces}{guard}]"
        finally:
            self.elem = outer

    def _Elem(self, t: Elem) -> str:
        if self.elem is None:
            raise ValueError("an explosion's piece outside the loop over its pieces")
        return self.elem

    def _other(self, t: Expr) -> str:
        names = self.names + ((ELEM,) if self.elem is not None else ())
        run = self.bind("x", lambda *values: evaluate(t, dict(zip(names, values))))
        args = [self.params[n] for n in self.names] + ([self.elem] if self.elem is not None else [])
        return f"{run}({', '.join(args)})"


_KNOWN_MODULES = frozenset({"udflow.expr", "udflow.helper_calls", "udflow.tables", "udflow.pieces"})
