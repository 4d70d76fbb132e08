"""Calls: the `Calls` part of a `Frame` (see `interpreter`) resolves a callee and
interprets the call. A helper function (a def or lambda of the user, or a module
function with source) is followed into, up to `MAX_CALL_DEPTH`; a library
callable the analysis trusts (`known`) only computes from its arguments; the
built-ins with a model of their own are in `builtin_models`, methods in
`methods`.

A call the analysis cannot see into makes the function impure: an unknown
callee may do I/O, keep state, or read any field of a record it is given.
"""

from __future__ import annotations

import ast
import functools
import types

from udflow.analysis import known
from udflow.analysis.arguments import call_arguments, call_name, kw_values, plain_args
from udflow.analysis.builtin_models import CALL_FAMILIES, NEVER_RAISE, builtin_model, never_raises
from udflow.analysis.methods import method_call
from udflow.analysis.state import Unit, unit_of
from udflow.analysis.syntax import always_returns, is_generator
from udflow.analysis.values import NONE, OTHER, LocalFn, Other, PyObj, Seq, Val, join_all, val

MAX_CALL_DEPTH = 4


class Calls:
    """The call part of a `Frame`: it uses the frame's `ev`, `deps`, `check_whole`,
    `outside_value` and `callee` (the frame of a helper)."""

    def call(self, e: ast.Call) -> Val:
        args, kwargs = call_arguments(self, e)
        if isinstance(e.func, ast.Attribute):
            receiver = self.ev(e.func.value)
            return method_call(self, e, receiver, e.func.attr, args, kwargs)
        callee = self.ev(e.func)
        out = Val()
        for atom in callee.atoms:
            out = out.join(self.call_atom(e, atom, args, kwargs, call_name(e.func)))
        return out.plus(callee.deps)

    def call_atom(self, e, atom, args, kwargs, what: str) -> Val:
        """Call one resolved callee `atom`; `what` names it in a reason."""
        an = self.an
        if isinstance(atom, LocalFn):
            unit = Unit(atom.node, self.unit.index, self.unit.globals, self.unit.closure, {}, what)
            return self.invoke(e, unit, atom.frame, plain_args(self, e, args, kwargs, what), kwargs)
        if not isinstance(atom, PyObj):
            raise an.impure(f"calls {what}, a value the analysis cannot resolve", e)
        obj = atom.obj
        if isinstance(obj, functools.partial):
            bound = [("", self.bound_value(v, e)) for v in obj.args]
            extra = {k: self.bound_value(v, e) for k, v in (obj.keywords or {}).items()}
            return self.call_atom(e, PyObj(obj.func), bound + args, {**extra, **kwargs}, what)
        model = builtin_model(obj)
        if model is not None:
            values = plain_args(self, e, args, kwargs, what)
            if not never_raises(obj):
                an.may_raise("call", values, e, self, getattr(obj, "__name__", what))
            return model(self, e, values, kwargs)
        if known.is_pure_callable(obj):
            return self.pure_call(e, [v for _, v in args] + list(kw_values(kwargs)), what)
        if isinstance(obj, types.FunctionType):
            unit = unit_of(obj)
            if unit is None:
                raise an.impure(f"calls {what}, whose source is not available", e)
            return self.invoke(e, unit, None, plain_args(self, e, args, kwargs, what), kwargs)
        raise an.impure(known.impure_reason(obj, what), e)

    def bound_value(self, value, node) -> Val:
        """An argument bound outside the function (by `functools.partial`, or a default)."""
        return self.outside_value(value, "a bound argument", node)

    def pure_call(self, e, values, what: str) -> Val:
        """A library function that only computes from its arguments."""
        deps = set()
        for v in values:
            for a in v.atoms:
                if isinstance(a, (LocalFn,)):
                    raise self.an.impure(f"passes a function to {what}", e)
            self.check_whole(v, e)
            deps |= self.deps(v)
        self.an.read(deps, e, f"passed to {what}", self)
        if what not in NEVER_RAISE:
            self.an.may_raise("call", values, e, self, what)
        return val(Other(family=CALL_FAMILIES.get(what)), deps=deps)

    def invoke(self, e, unit: Unit, parent, args, kwargs) -> Val:
        """Interpret a helper (a def/lambda of the user) with abstract arguments."""
        an = self.an
        if self.depth + 1 > MAX_CALL_DEPTH:
            raise an.impure(f"calls {unit.name} beyond the call depth the analysis follows ({MAX_CALL_DEPTH})", e)
        if unit.node in an.active:
            raise an.impure(f"calls {unit.name} recursively", e)
        node = unit.node
        if isinstance(node, ast.AsyncFunctionDef):
            raise an.impure(f"calls the coroutine {unit.name}", e)
        callee = self.callee(unit, parent)
        self.bind_arguments(callee, e, unit, parent, args, kwargs)
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

    def bind_arguments(self, callee, e, unit: Unit, parent, args, kwargs) -> None:
        """Bind the parameters of `unit` in the `callee` frame: arguments, then defaults."""
        an = self.an
        a = unit.node.args
        params = [p.arg for p in a.posonlyargs + a.args]
        if len(args) > len(params) and a.vararg is None:
            raise an.impure(f"calls {unit.name} with too many arguments", e)
        for name, v in zip(params, args):
            callee.env[name] = v
        if a.vararg is not None:
            extra = args[len(params):]
            callee.env[a.vararg.arg] = val(Seq(join_all(extra))) if extra else val(Seq(Val()))
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
            positional = [p.arg for p in a.posonlyargs + a.args]
            defaults = dict(zip(positional[len(positional) - len(a.defaults):], a.defaults))
            defaults.update({k.arg: d for k, d in zip(a.kwonlyargs, a.kw_defaults) if d is not None})
            for p in missing:
                if p in unit.defaults:
                    callee.env[p] = self.bound_value(unit.defaults[p], e)
                elif p in defaults and parent is not None:
                    callee.env[p] = parent.ev(defaults[p])
                else:
                    raise an.impure(f"calls {unit.name} without argument {p}", e)
