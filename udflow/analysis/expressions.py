"""Expressions: each `ev_<Node>` evaluates one kind of syntax node to an abstract
value, recording the fields it uses (`Analysis.read`) and the operations that
may raise on some field's value (`Analysis.may_raise`). A test narrows what
follows it: the fields it proves not None (`narrowed`). Calls are the `Calls`
part of the frame (see `calls`).
"""

from __future__ import annotations

import ast
import types
from contextlib import contextmanager
from typing import Optional

from udflow.analysis import known
from udflow.analysis.state import Impure
from udflow.analysis.syntax import binop_error
from udflow.analysis.terms import term_of
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


class Expressions:
    """The expression part of a `Frame` (see `interpreter`): it uses the frame's
    names (`lookup`, `bind`), its record model, `emit` and `call`."""

    def ev(self, e) -> Val:
        method = getattr(self, "ev_" + type(e).__name__, None)
        if method is None:
            raise self.an.impure(f"uses an expression the analysis does not handle ({type(e).__name__})", e)
        value = method(e)
        if self.is_udf:  # the symbolic side of the same pass: the value as an IR term
            term = term_of(self, e, value)
            self.an.node_terms[id(e)] = term
            self.an.model.evaluated(term, getattr(e, "lineno", 0), sure=not self.guards and not self.an.unsure)
            value = value.with_term(term)
        return value

    def ev_Constant(self, e) -> Val:
        return val(Const(e.value))

    def ev_Name(self, e) -> Val:
        return self.lookup(e.id, e)

    def ev_Lambda(self, e) -> Val:
        return val(LocalFn(e, self))

    def ev_NamedExpr(self, e) -> Val:
        v = self.ev(e.value)
        self.bind(e.target, v, e)
        return v

    def ev_Tuple(self, e) -> Val:
        if any(isinstance(x, ast.Starred) for x in e.elts):
            return self.ev_List(e)
        items = tuple(self.ev(x) for x in e.elts)
        if all(i.const() for i in items):
            return val(Const(tuple(i.const().value for i in items)))
        return val(Tup(items))

    def ev_List(self, e) -> Val:
        elem = Val()
        for x in e.elts:
            if isinstance(x, ast.Starred):
                elem = elem.join(self.element(self.ev(x.value), x))
            else:
                elem = elem.join(self.ev(x))
        return val(Seq(elem))

    ev_Set = ev_List

    def ev_Dict(self, e) -> Val:
        obj = self.alloc(e)
        for k, v in zip(e.keys, e.values):
            value = self.ev(v)
            if k is None:  # {**x}
                self.add_base(obj, value, v)
                continue
            key = self.ev(k)
            c = key.const()
            if c is not None and isinstance(c.value, str):
                if self.is_udf:
                    self.an.model.computes(value.term, self.guards, v.lineno, f"field {c.value}")
                self.set_field(obj, c.value, value, k, must=True)
            else:
                self.an.read(self.deps(key), k, "used as a computed key", self)
                obj.dynamic = obj.dynamic or k.lineno
                obj.dynamic_deps |= self.deps(key) | self.deps(value)
        return val(RecRef(obj.id))

    def ev_JoinedStr(self, e) -> Val:
        parts = [self.ev(p) for p in e.values]
        for p in parts:
            self.check_whole(p, e)
        if all(p.const() for p in parts):
            return val(Const("".join(str(p.const().value) for p in parts)))
        deps = frozenset().union(*(self.deps(p) for p in parts))
        self.an.read(deps, e, "formatted into a string", self)
        return val(Other(family="str"), deps=deps)

    def ev_FormattedValue(self, e) -> Val:
        v = self.ev(e.value)
        if e.format_spec is not None:
            self.ev(e.format_spec)
        if e.conversion == -1 and v.const() is not None:
            return v
        return val(Other(), deps=self.deps(v)) if not v.of(RecRef) else v

    def operands(self, values, node, op: Optional[str] = None) -> Val:
        """An operation on `values` whose result is a new value; `op`: the kind of error it
        may raise on some values (see `RaiseSite`), None when it never raises."""
        deps = set()
        for v in values:
            self.check_whole(v, node)
            deps |= self.deps(v)
        self.an.read(deps, node, "used in a computation", self)
        if op is not None:
            self.an.may_raise(op, values, node, self)
        return val(Other(), deps=deps)

    def ev_BinOp(self, e) -> Val:
        left, right = self.ev(e.left), self.ev(e.right)
        if isinstance(e.op, ast.BitOr) and left.only(RecRef) and right.only(RecRef):
            obj = self.alloc(e)  # `left | right`: a new dict, right's fields override left's
            self.add_base(obj, left, e)
            self.add_base(obj, right, e)
            return val(RecRef(obj.id))
        lc, rc = left.const(), right.const()
        if lc is not None and rc is not None and isinstance(e.op, (ast.Add, ast.Mod, ast.Mult)):
            try:
                folded = {ast.Add: lambda a, b: a + b, ast.Mod: lambda a, b: a % b,
                          ast.Mult: lambda a, b: a * b}[type(e.op)](lc.value, rc.value)
                if known.is_constant(folded) and len(str(folded)) < 10_000:
                    return val(Const(folded))
            except Exception:
                pass
        return self.operands([left, right], e, binop_error(e.op, left, right))

    def ev_UnaryOp(self, e) -> Val:
        v = self.ev(e.operand)
        if isinstance(e.op, ast.Not) and v.of(RecRef):
            return val(Other())  # a dict is never empty here: `not r` reads no field
        if isinstance(e.op, ast.Not):
            self.check_whole(v, e)
            deps = self.truth_deps(v)
            self.an.read(deps, e, "used in a computation", self)
            return val(Other(), deps=deps)
        return self.operands([v], e, "bits" if isinstance(e.op, ast.Invert) else "arith")

    def ev_BoolOp(self, e) -> Val:
        values = []
        saved = set(self.an.nonnull)
        try:
            for k, x in enumerate(e.values):  # `r["x"] is not None and r["x"] > 0`: later operands run narrowed
                self.an.unsure += k > 0
                try:
                    values.append(self.ev(x))
                finally:
                    self.an.unsure -= k > 0
                self.an.nonnull |= self.nonnull_fields(x, isinstance(e.op, ast.And))
        finally:
            self.an.nonnull = saved
        if isinstance(e.op, ast.Or):  # `r["x"] or 0` is r["x"] only where it is truthy
            values = [_truthy(v) for v in values[:-1]] + values[-1:]
        deps = set()
        for v in values[:-1]:  # all but the last decide, by their truthiness, which operand is the result
            deps |= self.truth_deps(Val(frozenset(a for a in v.atoms if not isinstance(a, RecRef)), v.deps))
        self.an.read(deps, e, "used in a condition", self)
        return join_all(values).plus(deps)

    def ev_IfExp(self, e) -> Val:
        test = self.ev(e.test)
        deps = self.truth_deps(test)
        self.an.read(deps, e.test, "used in a condition", self)
        saved = self.pc
        self.pc = saved | deps
        self.an.unsure += 1
        try:
            with self.narrowed(e.test, True):
                body = self.ev(e.body)
            with self.narrowed(e.test, False):
                orelse = self.ev(e.orelse)
            return body.join(orelse).plus(deps)
        finally:
            self.pc = saved
            self.an.unsure -= 1

    @contextmanager
    def narrowed(self, test, outcome: bool):
        """Run a branch knowing that `test` was `outcome`: the fields it proves not None
        (`x is not None`, `x` truthy, `x is None` false) cannot make an operation raise on None."""
        saved = set(self.an.nonnull)
        self.an.nonnull |= self.nonnull_fields(test, outcome)
        try:
            yield
        finally:
            self.an.nonnull = saved

    def nonnull_fields(self, test, outcome: bool) -> set:
        """Field names `test` having been `outcome` proves not None."""
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return self.nonnull_fields(test.operand, not outcome)
        if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And) == outcome:
            return set().union(*(self.nonnull_fields(v, outcome) for v in test.values))
        if isinstance(test, ast.Compare) and len(test.ops) == 1:
            op, right = test.ops[0], test.comparators[0]
            is_none = isinstance(right, ast.Constant) and right.value is None
            if is_none and isinstance(op, (ast.IsNot, ast.NotEq)):
                return self._field_names(test.left) if outcome else set()
            if is_none and isinstance(op, (ast.Is, ast.Eq)):
                return set() if outcome else self._field_names(test.left)
            return set()
        if isinstance(test, (ast.Name, ast.Subscript)) and outcome:  # truthy: not None
            return self._field_names(test)
        return set()

    def _field_names(self, node) -> set:
        """The field an expression is exactly (a record subscript or a variable holding one)."""
        if not isinstance(node, (ast.Name, ast.Subscript)):
            return set()
        try:
            atoms = self.ev(node).atoms
        except Impure:
            return set()
        return {a.name for a in atoms if isinstance(a, FieldOf)} if all(isinstance(a, FieldOf) for a in atoms) else set()

    def ev_Compare(self, e) -> Val:
        left = self.ev(e.left)
        rights = [self.ev(c) for c in e.comparators]
        values = [left] + rights
        deps = set()
        for op, a, b in zip(e.ops, values, values[1:]):
            if isinstance(op, (ast.Is, ast.IsNot)) and (a.of(RecRef) or b.of(RecRef)):
                continue  # `row is None`: identity, no field
            if isinstance(op, (ast.In, ast.NotIn)) and b.of(RecRef):
                c = a.const()
                if c is None or not isinstance(c.value, str) or not b.only(RecRef):
                    raise self.an.impure("tests membership of a computed field name", e)
                for ref in b.atoms:
                    deps |= self.field_presence(ref, c.value)
                continue
            for v in (a, b):
                self.check_whole(v, e)
                deps |= self.deps(v)
            if isinstance(op, (ast.Lt, ast.LtE, ast.Gt, ast.GtE)):
                self.an.may_raise("order", (a, b), e, self)  # None < 1, "a" < 1: TypeError
            elif isinstance(op, (ast.In, ast.NotIn)) and not _literal_collection(b):
                self.an.may_raise("contains", (a, b), e, self)  # 1 in "a", x in None: TypeError
        self.an.read(deps, e, "compared", self)
        return val(Other(), deps=deps)

    def ev_Attribute(self, e) -> Val:
        if e.attr.startswith("__"):
            raise self.an.impure(f"inspects {e.attr}", e)
        base = self.ev(e.value)
        out = Val()
        for a in base.atoms:
            if isinstance(a, PyObj):
                obj = a.obj
                if isinstance(obj, (types.ModuleType, type)):
                    try:
                        out = out.join(self.outside_value(getattr(obj, e.attr), e.attr, e))
                    except AttributeError:
                        raise self.an.impure(f"uses the unknown attribute {e.attr}", e) from None
                    continue
                raise self.an.impure(f"reads attribute {e.attr} of an object the analysis cannot see into", e)
            if isinstance(a, (RecRef, GroupRef)):
                raise self.an.impure(f"reads attribute {e.attr} of a record", e)
            if isinstance(a, Const):
                try:
                    attr = getattr(a.value, e.attr)
                    if known.is_constant(attr):
                        out = out.join(val(Const(attr)))
                        continue
                except AttributeError:
                    pass
            self.an.may_raise("attribute", (val(a),), e, self, e.attr)
            out = out.join(val(Other(shared=not isinstance(a, Const)), deps=self.deps(val(a))))
        return out.plus(base.deps)

    def ev_Subscript(self, e) -> Val:
        return self.subscript(self.ev(e.value), e.slice, e)

    def ev_Slice(self, e) -> Val:
        parts = [self.ev(x) for x in (e.lower, e.upper, e.step) if x is not None]
        return self.operands(parts, e, "index")

    def ev_Starred(self, e) -> Val:
        return self.element(self.ev(e.value), e)

    def ev_Yield(self, e) -> Val:
        v = self.ev(e.value) if e.value is not None else NONE
        if self.is_udf:
            self.emit(v, e)
        else:
            self.yields = self.yields.join(v.plus(self.pc))
        return OTHER

    def ev_YieldFrom(self, e) -> Val:
        it = self.ev(e.value)
        elem = self.element(it, e).plus(it.deps)
        if self.is_udf:
            self.emit(elem, e)
        else:
            self.yields = self.yields.join(elem.plus(self.pc))
        return OTHER

    def comprehension(self, e, make) -> Val:
        saved = self.env
        self.env = dict(saved)
        self.an.unsure += 1
        deps: set = set()
        ordered = False
        try:
            for gen in e.generators:
                if gen.is_async:
                    raise self.an.impure("uses an async comprehension", e)
                it = self.ev(gen.iter)
                ordered |= any(isinstance(a, GroupRef) or (isinstance(a, Seq) and a.ordered) for a in it.atoms)
                deps |= it.deps
                self.bind(gen.target, self.element(it, gen.iter).plus(deps), gen)
                for cond in gen.ifs:
                    c = self.deps(self.ev(cond))
                    self.an.read(c, cond, "filters a comprehension", self)
                    deps |= c
            return make(deps, ordered)
        finally:
            self.env = saved
            self.an.unsure -= 1

    def ev_ListComp(self, e) -> Val:
        return self.comprehension(e, lambda deps, ordered: val(Seq(self.ev(e.elt).plus(deps), ordered), deps=deps))

    ev_GeneratorExp = ev_ListComp

    def ev_SetComp(self, e) -> Val:
        return self.comprehension(e, lambda deps, ordered: val(Seq(self.ev(e.elt).plus(deps)), deps=deps))

    def ev_DictComp(self, e) -> Val:
        def make(deps, ordered):
            obj = self.alloc(e)
            key, value = self.ev(e.key), self.ev(e.value)
            self.check_whole(key, e)
            obj.dynamic = obj.dynamic or e.lineno
            obj.dynamic_deps |= self.deps(key) | self.deps(value) | deps | ({ORDER} if ordered else set())
            return val(RecRef(obj.id), deps=deps)

        return self.comprehension(e, make)

    def ev_Call(self, e) -> Val:
        return self.call(e)


def _truthy(v: Val) -> Val:
    atoms = frozenset(FieldOf(a.side, a.name, a.pos, True) if isinstance(a, FieldOf) else a for a in v.atoms)
    return Val(atoms, v.deps)


def _literal_collection(v: Val) -> bool:
    """A tuple or list written in the code: `x in (1, 2)` compares with == and never raises."""
    return bool(v.atoms) and all(
        (isinstance(a, Const) and isinstance(a.value, tuple)) or (isinstance(a, Seq) and not a.ordered)
        for a in v.atoms) and not v.deps
