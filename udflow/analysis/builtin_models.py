"""Built-ins with a model of their own: `dict`, `list`, `set`, `sorted`, `len`, `bool`,
`sum`/`min`/`max`/`any`/`all`, `next`, `enumerate`, `zip`, `range`, `map`,
`filter`, `isinstance`, `getattr`, `copy.copy`, `functools.reduce`.

Each model `b_<name>(frame, e, values, kwargs)` gives the abstract result of the
call `e` with positional `values`: which elements it keeps, whether their order
survives, which fields decide the result. `frame` is the calling `Frame` (see
`interpreter`); a function passed in (`key=`, `map`'s) is called through it.
"""

from __future__ import annotations

import ast
import builtins
import copy
import functools
from typing import Callable, Optional

from udflow.analysis.methods import key_fn
from udflow.analysis.values import (
    ORDER,
    Const,
    GroupRef,
    Other,
    RecRef,
    Seq,
    Tup,
    Val,
    as_other_row,
    strip_order,
    val,
)

B = builtins
CALL_FAMILIES = {"str": "str", "repr": "str", "len": "int", "bool": "int"}  # result types never None


def builtin_model(obj) -> Optional[Callable]:
    """The model of `obj` when it is one of the built-ins modelled here (by identity)."""
    try:
        if id(obj) in SPECIAL and SPECIAL_OBJS[id(obj)] is obj:
            return SPECIAL[id(obj)]
    except Exception:
        pass
    return None


def never_raises(obj) -> bool:
    """A modelled built-in that never raises whatever its arguments."""
    return obj in SPECIAL_NEVER_RAISE


def _groups(values):
    return [a for v in values for a in v.atoms if isinstance(a, GroupRef)]


def b_dict(frame, e, values, kwargs):
    obj = frame.alloc(e)
    for v in values:
        frame.add_base(obj, v, e)
    for k, v in kwargs.items():
        frame.set_field(obj, k, v, e, must=True)
    return val(RecRef(obj.id))


def b_copy(frame, e, values, kwargs):
    """`copy.copy(x)`, `copy.deepcopy(x)`: a record is copied as `dict(x)` copies it; any other
    value keeps its shape and is now the function's own."""
    if len(values) != 1 or kwargs:
        raise frame.an.impure("calls copy with more than one argument", e)
    (value,) = values
    if value.of(RecRef):
        if not value.only(RecRef):
            raise frame.an.impure("copies a value that may or may not be a record", e)
        return b_dict(frame, e, values, {})
    return Val(frozenset(Other() if isinstance(a, Other) else a for a in value.atoms), value.deps)


def b_sequence(frame, e, values, kwargs):
    """list(x), tuple(x), iter(x): the same elements in the same order."""
    if not values:
        return val(Seq(Val()))
    (v,) = values[:1]
    out = Val()
    for a in v.atoms:
        if isinstance(a, (GroupRef, Seq)):
            out = out.join(val(a))
        else:
            out = out.join(val(Seq(frame.element(val(a), e))))
    return out.plus(v.deps)


def b_reversed(frame, e, values, kwargs):
    out = b_sequence(frame, e, values, kwargs)
    return Val(frozenset(GroupRef(a.side, True) if isinstance(a, GroupRef) else a for a in out.atoms), out.deps)


def b_unordered(frame, e, values, kwargs):
    """set(x), frozenset(x): the elements, their order forgotten."""
    if not values:
        return val(Seq(Val()))
    v = values[0]
    if _groups([v]):
        raise frame.an.impure("puts the records of the group in a set", e)
    return val(Seq(frame.element(strip_order(v), e)), deps=v.deps - {ORDER})


def b_sorted(frame, e, values, kwargs):
    v = values[0]
    out = Val()
    for a in v.atoms:
        if isinstance(a, GroupRef):
            if kwargs.get("key") is None:
                raise frame.an.impure("sorts the records of the group without a key", e)
            deps = key_fn(frame, e, kwargs, val(RecRef(("row", a.side), "each")))
            out = out.join(val(GroupRef(a.side, True), deps=deps))
        else:
            elem = frame.element(val(a), e)
            deps = key_fn(frame, e, kwargs, elem)
            ordered = bool(kwargs.get("key")) and isinstance(a, Seq) and a.ordered  # ties keep the group order
            out = out.join(val(Seq(elem, ordered), deps=deps))
    return out.plus(v.deps - {ORDER})


def b_len(frame, e, values, kwargs):
    v = values[0]
    deps = set(v.deps) - {ORDER}
    for a in v.atoms:
        if isinstance(a, GroupRef):
            continue
        if isinstance(a, Seq):  # a set's size depends on its elements' values; records are never in sets
            elem = Val(frozenset(x for x in a.elem.atoms if not isinstance(x, RecRef)), a.elem.deps)
            deps |= set(frame.deps(elem)) - {ORDER}
        elif isinstance(a, RecRef) and frame.record_like(frame.an.heap[a.id]):
            raise frame.an.impure("counts the fields of a record", e)
        else:
            deps |= frame.deps(val(a)) - {ORDER}
    frame.an.read(deps, e, "counted", frame)
    return val(Other(), deps=deps)


def b_bool(frame, e, values, kwargs):
    """`bool(x)`: its truthiness (`Records.truth_deps`); `bool()` is False."""
    if not values:
        return val(Const(False))
    frame.check_whole(values[0], e)
    deps = frame.truth_deps(values[0])
    frame.an.read(deps, e, "used in a condition", frame)
    return val(Other(family="int"), deps=deps)


def b_aggregate(frame, e, values, kwargs):
    """sum/min/max/any/all over an iterable, or min/max of several arguments."""
    if len(values) != 1:
        return frame.pure_call(e, values + [v for k, v in kwargs.items() if k != "key"], "an aggregate")
    v = values[0]
    out = Val()
    deps = set(v.deps) - {ORDER}
    for a in v.atoms:
        if isinstance(a, GroupRef):
            if kwargs.get("key") is None:
                raise frame.an.impure("aggregates the records of the group themselves", e)
            key_fn(frame, e, kwargs, val(RecRef(("row", a.side), "each")))
            out = out.join(val(RecRef(("row", a.side), "other")))  # ties: the pick depends on the order
            continue
        elem = frame.element(strip_order(val(a)), e)
        if kwargs.get("key") is not None:
            key_fn(frame, e, kwargs, elem)
            out = out.join(as_other_row(elem) if isinstance(a, Seq) and a.ordered else elem)
            continue
        frame.check_whole(elem, e)
        deps |= frame.deps(elem)
        out = out.join(val(Other(), deps=frame.deps(elem)))
    if "default" in kwargs:
        out = out.join(kwargs["default"])
    if "start" in kwargs:
        deps |= frame.deps(kwargs["start"])
    frame.an.read(deps, e, "aggregated", frame)
    return out.plus(deps)


def b_next(frame, e, values, kwargs):
    v = values[0]
    out = Val()
    for a in v.atoms:
        if isinstance(a, GroupRef):
            sorted_ = a.sorted or a.side in frame.an.group_sorted
            out = out.join(val(RecRef(("row", a.side), "other" if sorted_ else "first")))
        elif isinstance(a, Seq):
            out = out.join(as_other_row(a.elem.plus({ORDER})) if a.ordered else a.elem)
        else:
            out = out.join(frame.element(val(a), e))
    if len(values) > 1:
        out = out.join(values[1])
    return out.plus(v.deps)


def b_enumerate(frame, e, values, kwargs):
    v = values[0]
    ordered = any(isinstance(a, GroupRef) or (isinstance(a, Seq) and a.ordered) for a in v.atoms)
    index = val(Other(), deps={ORDER} if ordered else set())
    return val(Seq(val(Tup((index, frame.element(v, e)))), ordered), deps=v.deps)


def b_zip(frame, e, values, kwargs):
    ordered = any(isinstance(a, GroupRef) or (isinstance(a, Seq) and a.ordered) for v in values for a in v.atoms)
    items = tuple(frame.element(v, e) for v in values)
    if ordered and len(values) > 1:
        items = tuple(i.plus({ORDER}) for i in items)  # pairs rows by position
    deps = set().union(*(v.deps for v in values)) if values else set()
    return val(Seq(val(Tup(items)), ordered), deps=deps)


def b_range(frame, e, values, kwargs):
    bounds = frame.pure_call(e, values, "range")
    return val(Seq(bounds), deps=bounds.deps)  # how many elements depends on the bounds


def b_map(frame, e, values, kwargs):
    fn, rest = values[0], values[1:]
    elems = [frame.element(v, e) for v in rest]
    out = Val()
    for atom in fn.atoms:
        out = out.join(frame.call_atom(e, atom, [("", x) for x in elems], {}, "the mapped function"))
    ordered = any(isinstance(a, GroupRef) or (isinstance(a, Seq) and a.ordered) for v in rest for a in v.atoms)
    return val(Seq(out, ordered))


def b_filter(frame, e, values, kwargs):
    fn, it = values
    elem = frame.element(it, e)
    deps = set()
    for atom in fn.atoms:
        if isinstance(atom, Const) and atom.value is None:
            deps |= frame.deps(elem)
            continue
        deps |= frame.deps(frame.call_atom(e, atom, [("", elem)], {}, "the filter function"))
    frame.an.read(deps, e, "filters", frame)
    ordered = any(isinstance(a, GroupRef) or (isinstance(a, Seq) and a.ordered) for a in it.atoms)
    return val(Seq(elem.plus(deps), ordered), deps=deps)


def b_isinstance(frame, e, values, kwargs):
    deps = frame.deps(values[0])
    frame.an.read(deps, e, "type-tested", frame)
    return val(Other(), deps=deps)


def b_getattr(frame, e, values, kwargs):
    name = values[1].const() if len(values) > 1 else None
    if name is None or not isinstance(name.value, str):
        raise frame.an.impure("calls getattr with a computed name", e)
    fake = ast.Attribute(value=ast.Name(id="__udflow_tmp", ctx=ast.Load()), attr=name.value, ctx=ast.Load())
    ast.copy_location(fake, e)
    ast.copy_location(fake.value, e)
    frame.env["__udflow_tmp"] = values[0]
    try:
        out = frame.ev(fake)
    finally:
        del frame.env["__udflow_tmp"]
    if len(values) > 2:
        out = out.join(values[2])
    return out


def b_reduce(frame, e, values, kwargs):
    fn, it = values[0], values[1]
    acc = values[2] if len(values) > 2 else frame.element(it, e)
    elem = frame.element(it, e)
    for _ in range(3):
        new = Val()
        for atom in fn.atoms:
            new = new.join(frame.call_atom(e, atom, [("", acc), ("", elem)], {}, "the reducing function"))
        if new.join(acc) == acc:
            break
        acc = acc.join(new)
    ordered = any(isinstance(a, GroupRef) or (isinstance(a, Seq) and a.ordered) for a in it.atoms)
    return acc.plus({ORDER} if ordered else set())  # an unknown fold: assume order matters


SPECIAL_TABLE = {
    B.dict: b_dict,
    B.list: b_sequence,
    B.tuple: b_sequence,
    B.iter: b_sequence,
    B.reversed: b_reversed,
    B.set: b_unordered,
    B.frozenset: b_unordered,
    B.sorted: b_sorted,
    B.len: b_len,
    B.bool: b_bool,
    B.sum: b_aggregate,
    B.min: b_aggregate,
    B.max: b_aggregate,
    B.any: b_aggregate,
    B.all: b_aggregate,
    B.next: b_next,
    B.enumerate: b_enumerate,
    B.zip: b_zip,
    B.range: b_range,
    B.map: b_map,
    B.filter: b_filter,
    B.isinstance: b_isinstance,
    B.getattr: b_getattr,
    functools.reduce: b_reduce,
}
SPECIAL_TABLE[copy.copy] = b_copy
SPECIAL_TABLE[copy.deepcopy] = b_copy
SPECIAL = {id(k): v for k, v in SPECIAL_TABLE.items()}
# never raise whatever their arguments (that they can be called at all is checked statically)
SPECIAL_NEVER_RAISE = (B.bool, B.dict, B.list, B.tuple, B.iter, B.set, B.frozenset, B.isinstance, B.enumerate,
                       B.zip, B.reversed, B.any, B.all, B.map, B.filter, B.getattr, copy.copy, copy.deepcopy)
NEVER_RAISE = frozenset({"str", "repr", "bool", "type", "isinstance", "ascii", "id"})
SPECIAL_OBJS = {id(k): k for k in SPECIAL_TABLE}
