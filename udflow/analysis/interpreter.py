"""An abstract interpreter for Python functions over records (paper, section 5).

The paper scans three-address code for `getField`/`setField`/`emit` and follows
def-use chains. Python has no record API, so the interpreter runs the
function's syntax tree on abstract values (see `values`): a subscript
`r["a"]` of the input record yields `FieldOf(a)`, and the value carries the
fields it depends on as it flows through assignments, operations and calls.

A `Frame` is one activation (the UDF, or a helper it calls) and is assembled
from one part per concern:

    statements    assignments, branches, loops to a fixpoint, try, return/yield
    expressions   the `ev_*` methods and None-narrowing
    records       the heap of abstract dicts: fields read, written, copied
    calls         calls: helpers followed into, methods, built-in models

This module adds the names: how a name is looked up (locals, enclosing frames,
closure, module globals, builtins) and how a value is bound to a target. The
evidence all frames gather goes to their shared `Analysis` (see `state`).
Soundness first: every construct not handled precisely makes the function impure.
"""

from __future__ import annotations

import ast
import builtins
import functools
import types
from typing import Optional

from udflow.analysis import known
from udflow.analysis.calls import Calls
from udflow.analysis.expressions import Expressions
from udflow.analysis.records import Records
from udflow.analysis.state import MISSING, Analysis, Unit
from udflow.analysis.statements import Statements
from udflow.analysis.syntax import is_generator
from udflow.analysis.values import Const, Other, PyObj, Seq, Tup, Val, deps_of, join_all, val


class Frame(Statements, Expressions, Records, Calls):
    """One activation: the UDF itself or a helper/lambda it calls."""

    def __init__(self, an: Analysis, unit: Unit, parent: Optional["Frame"], is_udf: bool, depth: int, pc=frozenset()):
        self.an, self.unit, self.parent, self.is_udf, self.depth = an, unit, parent, is_udf, depth
        self.env: dict = {}
        self.pc = set(pc)
        self.block: tuple = (id(unit.node),)
        self.returns = Val()
        self.yields = Val()
        self.group_loops: list = []  # (body block, names bound before the loop)
        self.guards: list = []  # the branch conditions around the statement being run, as terms
        self.unrolled: tuple = ()  # (loop node id, round) of the unrolled loops being run (`Statements.loop`)

    def deps(self, v: Val) -> frozenset:
        return deps_of(v, self.an.heap)

    # ------------------------------------------------------------------ names

    def lookup(self, name: str, node) -> Val:
        frame = self
        while frame is not None:
            if name in frame.env:
                return frame.env[name]
            frame = frame.parent
        unit = self.unit
        if name in unit.closure:
            value = unit.closure[name]
            if value is MISSING:
                raise self.an.impure(f"closure variable {name} is not bound yet", node)
            if name in unit.index.nonlocal_names:
                raise self.an.impure(f"reads closure variable {name}, which a function rebinds with nonlocal", node)
            return self.outside_value(value, name, node)
        if name in unit.globals:
            if name in unit.index.rebound_globals:
                raise self.an.impure(f"reads module variable {name}, which a function rebinds with global", node)
            return self.outside_value(unit.globals[name], name, node)
        if hasattr(builtins, name):
            return val(PyObj(getattr(builtins, name)))
        raise self.an.impure(f"uses the unknown name {name}", node)

    def outside_value(self, value, name, node) -> Val:
        """A value from a closure cell or a module global."""
        if known.is_constant(value):
            try:
                hash(value)
                return val(Const(value))
            except TypeError:
                return val(Other(shared=True))
        if isinstance(value, (types.ModuleType, types.FunctionType, types.BuiltinFunctionType, type,
                              functools.partial, types.MethodType, types.BuiltinMethodType)):
            return val(PyObj(value))
        if isinstance(value, (dict, list, set, bytearray)):
            # a lookup table: reading is fine, changing it is not; another function may change it
            self.an.state_reads.setdefault(name, getattr(node, "lineno", 0))
            return val(Other(shared=True))
        if isinstance(value, (tuple, frozenset)):
            return val(Other(shared=True))
        return val(PyObj(value))

    def bind(self, target, v: Val, node) -> None:
        v = v.plus(self.pc)
        if isinstance(target, ast.Name):
            self.env[target.id] = v
        elif isinstance(target, (ast.Tuple, ast.List)):
            tups = [a for a in v.atoms if isinstance(a, Tup) and len(a.items) == len(target.elts)]
            for i, t in enumerate(target.elts):
                if isinstance(t, ast.Starred):
                    self.bind(t.value, val(Seq(self.element(v, node)), deps=v.deps), node)
                    continue
                parts = [a.items[i] for a in tups]
                rest = Val(v.atoms - set(tups), v.deps)
                item = join_all(parts) if parts else Val()
                if rest.atoms:
                    item = item.join(self.element(rest, node))
                self.bind(t, item.plus(v.deps), node)
        elif isinstance(target, ast.Subscript):
            self.store(target.value, self.ev(target.value), target.slice, v, node)
        elif isinstance(target, ast.Starred):
            self.bind(target.value, v, node)
        else:
            raise self.an.impure("assigns to an attribute", node)

    def callee(self, unit: Unit, parent: Optional["Frame"]) -> "Frame":
        """The frame of a helper this frame calls (`parent`: the frame that defined it, if local)."""
        return Frame(self.an, unit, parent, is_udf=False, depth=self.depth + 1, pc=self.pc)

    @property
    def generator(self) -> bool:
        return is_generator(self.unit.node)
