"""The abstract values of the analysis: what a Python expression may evaluate to.

An abstract value `Val` is a set of *atoms* (the shapes the runtime value may
take) plus `deps`, the input fields its content may depend on. A field is a
pair `(side, name)`; `ORDER` is a pseudo-field meaning "depends on the order
of the records within a group".

    atom          runtime value
    ----------    ------------------------------------------------------------
    Const(v)      the constant v (str, int, date, tuple of constants, ...)
    FieldOf(s,n)  exactly the value of input field n of input s, unchanged
    RecRef(id)    a dict in the abstract heap (input record, group row, fresh)
    GroupRef(s)   the group of records of input s (reduce / cogroup)
    Seq(elem)     a list / tuple / iterator whose elements are `elem`
    Tup(items)    a tuple of known length
    PyObj(o)      a resolved Python object: module, function, class, builtin
    LocalFn(n)    a lambda or def written inside the analysed function
    Other(shared) any other value; `shared` when it may alias an object the
                  function does not own (input data, module globals); `family`
                  when it is known never None and of one type family ("str"...)

Dicts live in a heap indexed by allocation site, so loops reach a fixpoint.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

Dep = tuple  # (side, name)
ORDER: Dep = (-1, "<order>")
WHOLE: Dep = (-2, "<whole record>")  # depends on every field of some input record


@dataclass(frozen=True)
class Const:
    value: Any


@dataclass(frozen=True)
class FieldOf:
    side: int
    name: str
    pos: str = "each"  # for group rows: "each" (the current row), "first", "other"
    truthy: bool = False  # only where the value is truthy, hence not None (`r["x"] or 0`)


@dataclass(frozen=True)
class RecRef:
    id: Any
    pos: str = "each"


@dataclass(frozen=True)
class GroupRef:
    side: int
    sorted: bool = False


@dataclass(frozen=True)
class Seq:
    elem: "Val"
    ordered: bool = False  # its order comes from the order of a group


@dataclass(frozen=True)
class Tup:
    items: tuple


@dataclass(frozen=True, eq=False)
class PyObj:
    obj: Any

    def __eq__(self, other):
        return isinstance(other, PyObj) and other.obj is self.obj

    def __hash__(self):
        return id(self.obj)


@dataclass(frozen=True, eq=False)
class LocalFn:
    node: Any  # ast.Lambda | ast.FunctionDef
    frame: Any  # the defining frame (its environment is the closure)

    def __eq__(self, other):
        return isinstance(other, LocalFn) and other.node is self.node

    def __hash__(self):
        return id(self.node)


@dataclass(frozen=True)
class Other:
    shared: bool = False
    family: Optional[str] = None  # a value never None of this type family (udflow.field_types)


@dataclass(frozen=True)
class Val:
    atoms: frozenset = frozenset()
    deps: frozenset = frozenset()
    term: Any = field(default=None, compare=False)  # the value as an IR term (analysis/terms.py)

    def join(self, other: "Val") -> "Val":
        if other is self or (not other.atoms and not other.deps):
            return self
        if not self.atoms and not self.deps:
            return other
        term = self.term if self.term is not None and self.term == other.term else None
        return Val(self.atoms | other.atoms, self.deps | other.deps, term)

    def plus(self, deps) -> "Val":
        deps = frozenset(deps)
        return self if deps <= self.deps else Val(self.atoms, self.deps | deps, self.term)

    def with_term(self, term) -> "Val":
        return self if term is None or term is self.term else Val(self.atoms, self.deps, term)

    def only(self, kind) -> bool:
        return bool(self.atoms) and all(isinstance(a, kind) for a in self.atoms)

    def of(self, kind) -> list:
        return [a for a in self.atoms if isinstance(a, kind)]

    def const(self) -> Optional[Const]:
        """The constant, when the value is exactly one known constant."""
        if len(self.atoms) == 1:
            (a,) = self.atoms
            if isinstance(a, Const):
                return a
        return None


def val(*atoms, deps=()) -> Val:
    return Val(frozenset(atoms), frozenset(deps))


OTHER = val(Other())
NONE = val(Const(None))


def join_all(vals) -> Val:
    out = Val()
    for v in vals:
        out = out.join(v)
    return out


NO_BASE = ("<no base>", "each")  # the alternative of a base group that copies nothing


@dataclass
class RecObj:
    """A dict in the abstract heap.

    kind: "input" (the input record of side `side`), "row" (any record of the
    group of side `side`) or "fresh" (made by the function). A fresh dict
    copies the fields of its `base_groups`, then `fields` overrides them;
    `deleted` are removed on every path through the creating block,
    `maybe_deleted` on some.

    Each base group is one `**x`, `update(x)` or `dict(x)`: the alternatives x
    may be at run time, each a (heap id, position) or `NO_BASE` (nothing copied,
    e.g. `r if c else {}` or an `update` on some paths only). A field is surely
    copied only when every alternative of its group carries it.
    """

    id: Any
    kind: str
    side: int = 0
    line: int = 0
    block: tuple = ()
    base_groups: set = field(default_factory=set)  # {frozenset({(heap id, pos) | NO_BASE})}
    fields: dict = field(default_factory=dict)  # name -> Val
    must_set: set = field(default_factory=set)
    deleted: set = field(default_factory=set)
    maybe_deleted: set = field(default_factory=set)
    dynamic: Optional[int] = None  # line where a computed key was stored
    dynamic_deps: frozenset = frozenset()
    mutated: list = field(default_factory=list)  # lines of in-place changes
    emitted: list = field(default_factory=list)  # lines where emitted
    write_lines: dict = field(default_factory=dict)  # name -> line

    @property
    def bases(self) -> set:
        """Every (heap id, pos) any base group may copy from."""
        return {b for group in self.base_groups for b in group if b is not NO_BASE}


def deps_of(v: Val, heap: Optional[dict] = None, _seen: Optional[set] = None) -> frozenset:
    """The fields a value's content depends on (ORDER included).

    With the `heap`, dicts count by their contents; an input record or group row
    held as a whole (`[r]`, `{"orig": r}`) depends on every field: `WHOLE`.
    """
    out = set(v.deps)
    seen = set() if _seen is None else _seen
    for a in v.atoms:
        if isinstance(a, FieldOf):
            out.add((a.side, a.name))
            if a.pos == "other":
                out.add(ORDER)
        elif isinstance(a, Seq):
            out |= deps_of(a.elem, heap, seen)
            if a.ordered:
                out.add(ORDER)
        elif isinstance(a, Tup):
            for item in a.items:
                out |= deps_of(item, heap, seen)
        elif isinstance(a, RecRef) and heap is not None and a.id not in seen:
            seen.add(a.id)
            obj = heap[a.id]
            if obj.kind in ("input", "row"):
                out.add(WHOLE)
                continue
            out |= obj.dynamic_deps
            for fv in obj.fields.values():
                out |= deps_of(fv, heap, seen)
            for bid, bpos in obj.bases:
                out |= deps_of(Val(frozenset({RecRef(bid, bpos)})), heap, seen)
    return frozenset(out)


def strip_order(v: Val) -> Val:
    atoms = frozenset(Seq(a.elem, False) if isinstance(a, Seq) else a for a in v.atoms)
    return Val(atoms, v.deps - {ORDER})


def as_other_row(v: Val) -> Val:
    """Rows and their fields seen outside the iteration that produced them: order-dependent."""
    atoms = set()
    for a in v.atoms:
        if isinstance(a, RecRef) and a.id[0] == "row":
            atoms.add(RecRef(a.id, "other"))
        elif isinstance(a, FieldOf) and a.pos != "first":
            atoms.add(FieldOf(a.side, a.name, "other"))
        else:
            atoms.add(a)
    return Val(frozenset(atoms), v.deps)
