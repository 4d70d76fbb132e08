"""Methods: of records (`get`, `pop`, `setdefault`, `copy`, `update`, `keys`...),
of the group (`sort`), of modules and classes (resolved, then called), and of
plain values (strings, numbers, dates, local lists and sets). A method the
analysis does not know makes the function impure.

`frame` is the calling `Frame` (see `interpreter`).
"""

from __future__ import annotations

import ast
import re
import types

from udflow.analysis import known
from udflow.analysis.arguments import kw_values, plain_args
from udflow.analysis.values import (
    NONE,
    ORDER,
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

STR_TO_STR = frozenset("lower upper strip lstrip rstrip replace title capitalize casefold join format "
                       "zfill center ljust rjust swapcase".split())


def method_call(frame, e, receiver: Val, name: str, args, kwargs) -> Val:
    an = frame.an
    if name.startswith("__"):
        raise an.impure(f"calls {name}", e)
    values = plain_args(frame, e, args, kwargs, name)
    out = Val()
    for atom in receiver.atoms:
        if isinstance(atom, RecRef):
            out = out.join(record_method(frame, e, atom, name, values, kwargs))
        elif isinstance(atom, GroupRef):
            if name == "sort":
                key_fn(frame, e, kwargs, val(RecRef(("row", atom.side), "each")))
                an.group_sorted.add(atom.side)
                out = out.join(NONE)
            else:
                raise an.impure(f"calls {name} on the group", e)
        elif isinstance(atom, PyObj):
            try:
                attr = getattr(atom.obj, name)
            except AttributeError:
                raise an.impure(f"calls the unknown method {name}", e) from None
            # a compiled pattern's methods, as a module's functions: its type fixes them (another
            # object's attribute may be rebound after the analysis, which its snapshot would miss)
            if isinstance(atom.obj, (types.ModuleType, type, re.Pattern)):
                out = out.join(frame.call_atom(e, frame.outside_value(attr, name, e).atoms.__iter__().__next__(),
                                               args, kwargs, f"{getattr(atom.obj, '__name__', '?')}.{name}"))
            else:
                raise an.impure(known.impure_reason(attr, f"{type(atom.obj).__name__}.{name}"), e)
        elif isinstance(atom, LocalFn):
            raise an.impure(f"calls method {name} of a function", e)
        else:
            out = out.join(value_method(frame, e, atom, name, values, kwargs))
    return out.plus(receiver.deps)


def value_method(frame, e, atom, name: str, values, kwargs) -> Val:
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
        for v in list(values) + list(kw_values(kwargs)):
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


def record_method(frame, e, ref: RecRef, name: str, values, kwargs) -> Val:
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
            frame.delete(val(ref), ast.Constant(key.value), e, strict=len(values) < 2)
        if name == "setdefault":  # afterwards the field is there, with its old value or the default
            frame.set_field(obj, key.value, field_value.join(default), e, must=obj.block == frame.block,
                            pos=ref.pos)
        return result
    if name == "copy" and not values:
        new = frame.alloc(e)
        frame.add_base(new, val(ref), e)
        return val(RecRef(new.id))
    if name == "update":
        for v in values + list(kw_values({k: v for k, v in kwargs.items() if k == "**"})):
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


def key_fn(frame, e, kwargs, elem: Val) -> set:
    """Analyse a `key=` function on one element; return the deps of the key."""
    key = kwargs.get("key")
    if key is None:
        return set()
    if key.const() is not None and key.const().value is None:
        return set()
    out = Val()
    for atom in key.atoms:
        out = out.join(frame.call_atom(e, atom, [("", elem)], {}, "the key function"))
    deps = set(frame.deps(out))
    frame.an.read(deps, e, "used as a sort key", frame)
    return deps
