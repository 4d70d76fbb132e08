"""Calls: methods of records and values, built-ins the analysis models, and
helper functions it follows into (interprocedural, up to `MAX_CALL_DEPTH`).

A call the analysis cannot see into makes the function impure: an unknown
callee may do I/O, keep state, or read any field of a record it is given.
"""

from __future__ import annotations

import ast
import copy
import builtins
import functools
import types

from udflow.analysis import known
from udflow.analysis.interpreter import (
    MAX_CALL_DEPTH,
    Frame,
    Unit,
    _as_other_row,
    always_returns,
    is_generator,
    strip_order,
    unit_of,
)
from udflow.analysis.values import (
    NONE,
    ORDER,
    OTHER,
    Const,
    FieldOf,
    GroupRef,
    LocalFn,
    Other,
    PyObj,
    RecRef,
    Seq,
    Tup,
    Val,
    join_all,
    val,
)

B = builtins


def _name(func_node) -> str:
    try:
        return ast.unparse(func_node)
    except Exception:  # pragma: no cover - unparse handles every expression
        return "a function"


def call(frame: Frame, e: ast.Call) -> Val:
    args, kwargs = [], {}
    for a in e.args:
        if isinstance(a, ast.Starred):
            args.append(("*", frame.ev(a.value)))
        else:
            args.append(("", frame.ev(a)))
    for kw in e.keywords:
        if kw.arg is None:
            kwargs.setdefault("**", []).append(frame.ev(kw.value))
        else:
            kwargs[kw.arg] = frame.ev(kw.value)
    if isinstance(e.func, ast.Attribute):
        receiver = frame.ev(e.func.value)
        return method_call(frame, e, receiver, e.func.attr, args, kwargs)
    callee = frame.ev(e.func)
    out = Val()
    for atom in callee.atoms:
        out = out.join(call_atom(frame, e, atom, args, kwargs, _name(e.func)))
    return out.plus(callee.deps)


def _plain(frame, e, args, kwargs, what):
    if any(star for star, _ in args) or "**" in kwargs:
        raise frame.an.impure(f"calls {what} with *args/**kwargs the analysis cannot follow", e)
    return [v for _, v in args]


def call_atom(frame: Frame, e, atom, args, kwargs, what: str) -> Val:
    an = frame.an
    if isinstance(atom, LocalFn):
        return invoke(frame, e, Unit(atom.node, frame.unit.index, frame.unit.globals, frame.unit.closure,
                                     {}, what), atom.frame, _plain(frame, e, args, kwargs, what), kwargs)
    if not isinstance(atom, PyObj):
        raise an.impure(f"calls {what}, a value the analysis cannot resolve", e)
    obj = atom.obj
    if isinstance(obj, functools.partial):
        bound = [("", _outside(frame, v, e)) for v in obj.args]
        extra = {k: _outside(frame, v, e) for k, v in (obj.keywords or {}).items()}
        return call_atom(frame, e, PyObj(obj.func), bound + args, {**extra, **kwargs}, what)
    special = SPECIAL.get(id(obj)) if _is_builtin(obj) else None
    if special is not None:
        values = _plain(frame, e, args, kwargs, what)
        if obj not in SPECIAL_NEVER_RAISE:
            frame.an.may_raise("call", values, e, frame, getattr(obj, "__name__", what))
        return special(frame, e, values, kwargs)
    if known.is_pure_callable(obj):
        return pure_call(frame, e, [v for _, v in args] + list(_kw_values(kwargs)), what)
    if isinstance(obj, types.FunctionType):
        unit = unit_of(obj)
        if unit is None:
            raise an.impure(f"calls {what}, whose source is not available", e)
        return invoke(frame, e, unit, None, _plain(frame, e, args, kwargs, what), kwargs)
    raise an.impure(known.impure_reason(obj, what), e)


def _is_builtin(obj) -> bool:
    try:
        return id(obj) in SPECIAL and SPECIAL_OBJS[id(obj)] is obj
    except Exception:
        return False


def _kw_values(kwargs):
    for k, v in kwargs.items():
        if k == "**":
            yield from v
        else:
            yield v


def _outside(frame, value, node) -> Val:
    return frame.outside_value(value, "a bound argument", node)


def pure_call(frame: Frame, e, values, what: str) -> Val:
    """A library function that only computes from its arguments."""
    deps = set()
    for v in values:
        for a in v.atoms:
            if isinstance(a, (LocalFn,)):
                raise frame.an.impure(f"passes a function to {what}", e)
        frame.check_whole(v, e)
        deps |= frame.deps(v)
    frame.an.read(deps, e, f"passed to {what}", frame)
    if what not in NEVER_RAISE:
        frame.an.may_raise("call", values, e, frame, what)
    return val(Other(family=CALL_FAMILIES.get(what)), deps=deps)


def invoke(frame: Frame, e, unit: Unit, parent, args, kwargs) -> Val:
    """Interpret a helper (a def/lambda of the user) with abstract arguments."""
    an = frame.an
    if frame.depth + 1 > MAX_CALL_DEPTH:
        raise an.impure(f"calls {unit.name} beyond the call depth the analysis follows ({MAX_CALL_DEPTH})", e)
    if unit.node in an.active:
        raise an.impure(f"calls {unit.name} recursively", e)
    node = unit.node
    if isinstance(node, ast.AsyncFunctionDef):
        raise an.impure(f"calls the coroutine {unit.name}", e)
    callee = Frame(an, unit, parent, is_udf=False, depth=frame.depth + 1, pc=frame.pc)
    a = node.args
    params = [p.arg for p in a.posonlyargs + a.args]
    if len(args) > len(params) and a.vararg is None:
        raise an.impure(f"calls {unit.name} with too many arguments", e)
    for name, v in zip(params, args):
        callee.env[name] = v
    if a.vararg is not None:
        callee.env[a.vararg.arg] = val(Seq(join_all(args[len(params):]))) if len(args) > len(params) else val(Seq(Val()))
    for name in a.kwonlyargs:
        params.append(name.arg)
    for k, v in kwargs.items():
        if k == "**" or k not in params:
            raise an.impure(f"calls {unit.name} with keyword arguments the analysis cannot follow", e)
        callee.env[k] = v
    if a.kwarg is not None:
        callee.env[a.kwarg.arg] = OTHER
    missing = [p for p in params if p not in callee.env]
    if missing:
        defaults = dict(zip([p.arg for p in a.posonlyargs + a.args][len(a.posonlyargs + a.args) - len(a.defaults):], a.defaults))
        defaults.update({k.arg: d for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
        for p in missing:
            if p in unit.defaults:
                callee.env[p] = _outside(frame, unit.defaults[p], e)
            elif p in defaults and parent is not None:
                callee.env[p] = parent.ev(defaults[p])
            else:
                raise an.impure(f"calls {unit.name} without argument {p}", e)
    an.active.append(node)
    an.files.append(unit.index)
    try:
        if isinstance(node, ast.Lambda):
            return callee.ev(node.body)
        callee.block = (id(node),)
        callee.run(node.body)
        if is_generator(node):
            return val(Seq(callee.yields))
        result = callee.returns
        if not always_returns(node.body):
            result = result.join(NONE)
        return result
    finally:
        an.active.pop()
        an.files.pop()


# ---------------------------------------------------------------------------
# Methods
# ---------------------------------------------------------------------------


def method_call(frame: Frame, e, receiver: Val, name: str, args, kwargs) -> Val:
    an = frame.an
    if name.startswith("__"):
        raise an.impure(f"calls {name}", e)
    values = _plain(frame, e, args, kwargs, name)
    out = Val()
    for atom in receiver.atoms:
        if isinstance(atom, RecRef):
            out = out.join(record_method(frame, e, atom, name, values, kwargs))
        elif isinstance(atom, GroupRef):
            if name == "sort":
                _key_fn(frame, e, kwargs, val(RecRef(("row", atom.side), "each")))
                an.group_sorted.add(atom.side)
                out = out.join(NONE)
            else:
                raise an.impure(f"calls {name} on the group", e)
        elif isinstance(atom, PyObj):
            try:
                attr = getattr(atom.obj, name)
            except AttributeError:
                raise an.impure(f"calls the unknown method {name}", e) from None
            if isinstance(atom.obj, (types.ModuleType, type)):
                out = out.join(call_atom(frame, e, frame.outside_value(attr, name, e).atoms.__iter__().__next__(),
                                         args, kwargs, f"{getattr(atom.obj, '__name__', '?')}.{name}"))
            else:
                raise an.impure(known.impure_reason(attr, f"{type(atom.obj).__name__}.{name}"), e)
        elif isinstance(atom, LocalFn):
            raise an.impure(f"calls method {name} of a function", e)
        else:
            out = out.join(value_method(frame, e, atom, name, values, kwargs))
    return out.plus(receiver.deps)


def value_method(frame: Frame, e, atom, name: str, values, kwargs) -> Val:
    """A method of a plain value: a string, a number, a date, a local list or set."""
    an = frame.an
    shared = isinstance(atom, FieldOf) or getattr(atom, "shared", False)
    if name in known.MUTATING_METHODS:
        if shared or isinstance(atom, (Const, Tup)):
            raise an.impure(f"changes data it does not own ({name} on an input value or a module global)", e)
        # what is added goes into the container's elements; its own deps gain only the shape deps
        arg_deps = set().union(*(v.deps for v in values)) if values else set()
        frame.absorb(e.func.value, arg_deps, name in known.UNORDERED_MUTATIONS, e)
        if isinstance(atom, Seq) and isinstance(e.func.value, ast.Name) and name in ("append", "add", "insert"):
            current = frame.lookup(e.func.value.id, e)
            new_elem = join_all(values[-1:]) if values else Val()
            frame.env[e.func.value.id] = Val(
                frozenset(Seq(a.elem.join(new_elem), a.ordered) if isinstance(a, Seq) else a for a in current.atoms),
                current.deps,
            )
        if isinstance(atom, Seq) and name == "pop":
            return atom.elem
        return NONE
    if name in known.READ_METHODS:
        deps = set(frame.deps(val(atom)))
        for v in list(values) + list(_kw_values(kwargs)):
            frame.check_whole(v, e)
            deps |= frame.deps(v)
        an.read(deps - {ORDER} if name in ("count",) else deps, e, f"used in .{name}()", frame)
        an.may_raise("method", [val(atom)] + list(values), e, frame, name)
        if isinstance(atom, Seq) and name in ("copy",):
            return val(atom)
        if isinstance(atom, Const) and all(v.const() for v in values) and not kwargs:
            try:
                result = getattr(atom.value, name)(*[v.const().value for v in values])
                if known.is_constant(result):
                    return val(Const(result))
            except Exception:
                pass
        return _method_result(atom, name, deps)
    raise an.impure(f"calls .{name}(), a method the analysis does not know", e)


STR_TO_STR = frozenset("lower upper strip lstrip rstrip replace title capitalize casefold join format "
                       "zfill center ljust rjust swapcase".split())
CALL_FAMILIES = {"str": "str", "repr": "str", "len": "int", "bool": "int"}


def _method_result(receiver, name: str, deps) -> Val:
    """A str method of a str gives a str (`" ".join(...)`, `s.lower()`), `split` a list of them:
    values the analysis knows are never None (see `Other.family`)."""
    is_str = (isinstance(receiver, Const) and isinstance(receiver.value, str)) or \
        (isinstance(receiver, Other) and receiver.family == "str")
    if is_str and name in STR_TO_STR:
        return val(Other(family="str"), deps=deps)
    if is_str and name in ("split", "rsplit", "splitlines"):
        return val(Seq(val(Other(family="str"), deps=deps)), deps=deps)
    return val(Other(), deps=deps)


def record_method(frame: Frame, e, ref: RecRef, name: str, values, kwargs) -> Val:
    an = frame.an
    obj = an.heap[ref.id]
    record = frame.record_like(obj)
    if name in ("get", "pop", "setdefault"):
        if not values:
            raise an.impure(f"calls {name}() without a field name", e)
        key = values[0].const()
        default = values[1] if len(values) > 1 else NONE
        if key is None or not isinstance(key.value, str):
            if record:
                raise an.impure(f"{name}s a record field whose name is computed", e)
            an.read(frame.deps(values[0]), e, "used as a key", frame)
            return join_all(obj.fields.values()).plus(frame.deps(values[0]) | obj.dynamic_deps).join(default)
        field_value = frame.load_field(ref, key.value, e)
        present = frame.field_presence(ref, key.value)
        result = field_value.join(default).plus(present) if len(values) > 1 or name == "get" else field_value
        if name == "get" and len(values) < 2:
            result = result.join(NONE)
        if name == "pop":
            frame.delete(val(ref), ast.Constant(key.value), e)
        if name == "setdefault":
            frame.set_field(obj, key.value, default, e, must=False, pos=ref.pos)
        return result
    if name == "copy" and not values:
        new = frame.alloc(e)
        frame.add_base(new, val(ref), e)
        return val(RecRef(new.id))
    if name == "update":
        for v in values + list(_kw_values({k: v for k, v in kwargs.items() if k == "**"})):
            frame.add_base(obj, v, e, conditional=obj.block != frame.block)
            obj.must_set.clear()  # fields set before may now come from the other dict
        for k, v in kwargs.items():
            if k != "**":
                frame.set_field(obj, k, v, e, must=obj.block == frame.block, pos=ref.pos)
        if obj.kind in ("input", "row"):
            if an.kind in ("match", "cross"):
                raise an.impure("changes an input record in place (other pairs share it)", e)
            obj.mutated.append(e.lineno)
        return NONE
    if name in ("keys", "values", "items") and not record:
        contents = join_all(obj.fields.values()).plus(obj.dynamic_deps)
        if name == "items":
            return val(Seq(val(Tup((val(Other(), deps=obj.dynamic_deps), contents)))), deps=obj.dynamic_deps)
        return val(Seq(contents if name == "values" else val(Other(), deps=obj.dynamic_deps)))
    if name in ("keys", "values", "items"):
        raise an.impure(f"iterates over all fields of a record (.{name}())", e)
    raise an.impure(f"calls .{name}() on a record", e)


def _key_fn(frame: Frame, e, kwargs, elem: Val) -> set:
    """Analyse a `key=` function on one element; return the deps of the key."""
    key = kwargs.get("key")
    if key is None:
        return set()
    if key.const() is not None and key.const().value is None:
        return set()
    out = Val()
    for atom in key.atoms:
        out = out.join(call_atom(frame, e, atom, [("", elem)], {}, "the key function"))
    deps = set(frame.deps(out))
    frame.an.read(deps, e, "used as a sort key", frame)
    return deps


# ---------------------------------------------------------------------------
# Built-ins with a model of their own
# ---------------------------------------------------------------------------


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
            deps = _key_fn(frame, e, kwargs, val(RecRef(("row", a.side), "each")))
            out = out.join(val(GroupRef(a.side, True), deps=deps))
        else:
            elem = frame.element(val(a), e)
            deps = _key_fn(frame, e, kwargs, elem)
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


def b_aggregate(frame, e, values, kwargs):
    """sum/min/max/any/all over an iterable, or min/max of several arguments."""
    if len(values) != 1:
        return pure_call(frame, e, values + [v for k, v in kwargs.items() if k != "key"], "an aggregate")
    v = values[0]
    out = Val()
    deps = set(v.deps) - {ORDER}
    for a in v.atoms:
        if isinstance(a, GroupRef):
            if kwargs.get("key") is None:
                raise frame.an.impure("aggregates the records of the group themselves", e)
            _key_fn(frame, e, kwargs, val(RecRef(("row", a.side), "each")))
            out = out.join(val(RecRef(("row", a.side), "other")))  # ties: the pick depends on the order
            continue
        elem = frame.element(strip_order(val(a)), e)
        if kwargs.get("key") is not None:
            _key_fn(frame, e, kwargs, elem)
            out = out.join(_as_other_row(elem) if isinstance(a, Seq) and a.ordered else elem)
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
            out = out.join(_as_other_row(a.elem.plus({ORDER})) if a.ordered else a.elem)
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
    bounds = pure_call(frame, e, values, "range")
    return val(Seq(bounds), deps=bounds.deps)  # how many elements depends on the bounds


def b_map(frame, e, values, kwargs):
    fn, rest = values[0], values[1:]
    elems = [frame.element(v, e) for v in rest]
    out = Val()
    for atom in fn.atoms:
        out = out.join(call_atom(frame, e, atom, [("", x) for x in elems], {}, "the mapped function"))
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
        deps |= frame.deps(call_atom(frame, e, atom, [("", elem)], {}, "the filter function"))
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
            new = new.join(call_atom(frame, e, atom, [("", acc), ("", elem)], {}, "the reducing function"))
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
SPECIAL_NEVER_RAISE = (B.dict, B.list, B.tuple, B.iter, B.set, B.frozenset, B.isinstance, B.enumerate,
                       B.zip, B.reversed, B.any, B.all, B.map, B.filter, B.getattr, copy.copy, copy.deepcopy)
NEVER_RAISE = frozenset({"str", "repr", "bool", "type", "isinstance", "ascii", "id"})
SPECIAL_OBJS = {id(k): k for k in SPECIAL_TABLE}
