"""Constant tables: the module-level dicts, sets and sequences a function looks values up in.

    REGIONS = {"FR": "EU", "DE": "EU", "US": "NA"}

    REGIONS.get(r["country"], "other")     TableGet(REGIONS, Field('country'), Lit('other'))
    REGIONS[r["country"]]                  TableItem(REGIONS, Field('country'))
    r["country"] in REGIONS                InTable(Field('country'), REGIONS)

A `Table` is the table's contents when the function was analysed (`Table.of`): its keys
(and values) must all be literals (`expr.LITERAL_TYPES`). A dict is mutable, and Python
reads it when the function runs, so the snapshot keeps the object it was taken from and
`Table.unchanged()` says whether that object still holds exactly the snapshot. The native
lowering refuses a table that changed (the operator then runs the function itself, which
reads the table as it is), so the analysis's copy never decides a value Python would not:
PySpark's own `F.udf` pickles the table when the DataFrame is built, and udflow checks
it there too (`to_spark()`).

Each node's meaning is Python's, including its None semantics:

    TableGet   T.get(k, d): the value of the key equal to k, else d. k None: d unless None is
               a key. Raises TypeError where k is unhashable (a list).
    TableItem  T[k]: the value, or KeyError(k); of a sequence, T[i] (negative from the end) or
               IndexError, and TypeError where i is not an int.
    InTable    k in T: a key (dict) or member (set, frozenset, list, tuple) equal to k. A set or
               dict raises TypeError where k is unhashable; a list or tuple compares with ==.
    NestedGet  a look-up in a dict of dicts (kind "nested": each value a dict table of its own,
               snapshotted with it): `T.get(a, {}).get(b, d)`, `T[a][b]` and the two mixed.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

from udflow.expr import LITERAL_TYPES, Expr

KINDS = {dict: "dict", set: "set", frozenset: "set", list: "sequence", tuple: "sequence"}
MAX_ENTRIES = 10_000  # larger tables stay with Python: a native plan spells every entry out


@dataclass(frozen=True)
class Table:
    """A constant table as it was analysed: `kind` "dict" holds (key, value) pairs in
    `items`, "set" and "sequence" their members in order."""

    name: str  # as the function names it: COUPONS
    kind: str
    items: tuple
    origin: Any = field(default=None, compare=False, hash=False, repr=False)  # the live object

    @staticmethod
    def of(name: str, obj) -> Optional["Table"]:
        """The snapshot of `obj`, or None where it is not a table of literals."""
        kind = KINDS.get(type(obj))
        if kind is None or len(obj) > MAX_ENTRIES:
            return None
        if kind == "dict" and obj and all(type(v) is dict for v in obj.values()):
            return Table._nested(name, obj)
        items = tuple(obj.items()) if kind == "dict" else tuple(obj)
        keys = [k for k, _ in items] if kind == "dict" else list(items)
        values = [v for _, v in items] if kind == "dict" else []
        if not all(type(v) in LITERAL_TYPES for v in keys + values) or not all(map(_plain, keys)):
            return None  # NaN as a key: found only as the same object
        return Table(name, kind, items, obj)

    @staticmethod
    def _nested(name: str, obj: dict) -> Optional["Table"]:
        """A dict of dicts of literals: each inner dict its own table (`T['FR']`), or None."""
        inner = [(k, Table.of(f"{name}[{k!r}]", v)) for k, v in obj.items()]
        if sum(len(t.items) for _, t in inner if t is not None) > MAX_ENTRIES or \
                not all(t is not None and t.kind == "dict" for _, t in inner) or \
                not all(type(k) in LITERAL_TYPES and _plain(k) for k, _ in inner):
            return None
        return Table(name, "nested", tuple(inner), obj)

    @property
    def keys(self) -> tuple:
        return tuple(k for k, _ in self.items) if self.kind in ("dict", "nested") else self.items

    @property
    def values(self) -> tuple:
        return tuple(v for _, v in self.items) if self.kind in ("dict", "nested") else ()

    def python(self):
        """The table as a Python object holding the snapshot."""
        if self.kind == "dict":
            return dict(self.items)
        if self.kind == "nested":
            return {k: inner.python() for k, inner in self.items}
        if self.kind == "set":
            return frozenset(self.items)
        return list(self.items) if isinstance(self.origin, list) else self.items  # its own IndexError

    def unchanged(self) -> bool:
        """Whether the object the snapshot was taken from holds it still (types included:
        `1`, `1.0` and `True` are equal keys in Python but different values)."""
        now = Table.of(self.name, self.origin)
        return now is not None and now.kind == self.kind and _same(now.items, self.items)

    def __str__(self) -> str:
        return self.name


def _plain(v) -> bool:
    return not isinstance(v, float) or not math.isnan(v)


def _same(a: tuple, b: tuple) -> bool:
    def identity(v):
        return tuple(identity(x) for x in v) if isinstance(v, tuple) else (type(v), repr(v))

    return len(a) == len(b) and all(identity(x) == identity(y) for x, y in zip(a, b))


@dataclass(frozen=True)
class TableGet(Expr):
    """`table.get(key, default)` on a dict table."""

    table: Table
    key: Expr
    default: Expr

    def evaluated(self, record: Mapping[str, Any], evaluate: Callable) -> Any:
        return self.table.python().get(evaluate(self.key, record), evaluate(self.default, record))

    def __str__(self) -> str:
        return f"{self.table}.get({self.key}, {self.default})"


@dataclass(frozen=True)
class TableItem(Expr):
    """`table[key]` on a dict table: KeyError where no key equals it; on a sequence (a tuple or
    list), an int index from either end: IndexError past them, TypeError for another type."""

    table: Table
    key: Expr

    def evaluated(self, record: Mapping[str, Any], evaluate: Callable) -> Any:
        return self.table.python()[evaluate(self.key, record)]

    def __str__(self) -> str:
        return f"{self.table}[{self.key}]"


@dataclass(frozen=True)
class InTable(Expr):
    """`operand in table` (`not in` when negated): a dict's keys, a set's or sequence's members."""

    operand: Expr
    table: Table
    negated: bool = False

    def evaluated(self, record: Mapping[str, Any], evaluate: Callable) -> Any:
        found = evaluate(self.operand, record) in self.table.python()
        return not found if self.negated else found

    def __str__(self) -> str:
        return f"({self.operand} {'not in' if self.negated else 'in'} {self.table})"


@dataclass(frozen=True)
class NestedGet(Expr):
    """A look-up in a dict of dicts: the outer by `outer_key`, "get" (a missing key gives the
    empty dict, `T.get(a, {})`) or "item" (KeyError, `T[a]`); then the inner by `inner_key`,
    "get" (`default` where missing) or "item" (KeyError). Python's order: the outer key, the
    outer look-up (its KeyError before the inner key is read), the inner key, the default."""

    table: Table
    outer_key: Expr
    outer: str
    inner_key: Expr
    inner: str
    default: Expr

    def evaluated(self, record: Mapping[str, Any], evaluate: Callable) -> Any:
        table, key = self.table.python(), evaluate(self.outer_key, record)
        inner = table.get(key, {}) if self.outer == "get" else table[key]
        if self.inner == "get":
            return inner.get(evaluate(self.inner_key, record), evaluate(self.default, record))
        return inner[evaluate(self.inner_key, record)]

    def __str__(self) -> str:
        outer = f".get({self.outer_key}, {{}})" if self.outer == "get" else f"[{self.outer_key}]"
        inner = f".get({self.inner_key}, {self.default})" if self.inner == "get" else f"[{self.inner_key}]"
        return f"{self.table}{outer}{inner}"
