"""Statements: assignments, branches, loops, `try`, and what leaves the
function (`return`, `yield`: a record emitted).

Control dependences are tracked as a path condition `pc`: a value assigned under
`if r["a"] > 0:` depends on `a`. Branches are analysed both ways and joined;
loops are iterated until the environment stops growing, widening constants
that keep changing. A statement not handled precisely makes the function impure.
"""

from __future__ import annotations

import ast
import decimal
from dataclasses import dataclass
from typing import Optional

from udflow.analysis.caught_form import PLACEHOLDER, CaughtForm, caught_form
from udflow.analysis.model import NO_RECORD, RAISES
from udflow.analysis.resolved import names_object
from udflow.caught import Caught, exception_class
from udflow.analysis.state import RECORD_KINDS
from udflow.expr import LITERAL_TYPES, Elem, IfElse, Item, Lit, Not
from udflow.analysis.syntax import COMMUTATIVE_OPS, assigned_names, exits
from udflow.analysis.local_tables import table_of
from udflow.analysis.terms import is_tuple_aggregate, truth_term
from udflow.analysis.values import (
    NONE,
    ORDER,
    OTHER,
    Const,
    FieldOf,
    GroupRef,
    LocalFn,
    Other,
    RecRef,
    Seq,
    Val,
    as_other_row,
    val,
)

MAX_LOOP_ROUNDS = 6
MAX_UNROLLED = 16  # items of a constant tuple a loop is unrolled over (each a copy of its body in the model)


class Statements:
    """The statement part of a `Frame` (see `interpreter`): it uses the frame's
    expressions (`ev`, `narrowed`), its record model and its names (`bind`, `lookup`)."""

    def run(self, stmts) -> None:
        for s in stmts:
            self.stmt(s)

    def sub_block(self, stmts, tag: str, node, extra_pc=frozenset()) -> dict:
        """Run a nested block on a copy of the environment; return the environment after it."""
        saved_env, saved_pc, saved_block = self.env, self.pc, self.block
        self.env = dict(saved_env)
        self.pc = saved_pc | set(extra_pc)
        self.block = saved_block + ((id(node), tag),)
        try:
            self.run(stmts)
            return self.env
        finally:
            after_pc = self.pc
            self.env, self.pc, self.block = saved_env, saved_pc, saved_block
            self.pc |= after_pc - saved_pc - set(extra_pc)  # early exits inside stay sticky

    def guarded_block(self, stmts, tag: str, node, deps, condition) -> dict:
        """A branch: its statements run knowing `condition` (a term, for the model) holds."""
        self.guards.append(condition)
        try:
            return self.sub_block(stmts, tag, node, deps)
        finally:
            self.guards.pop()

    def join_env(self, *envs) -> None:
        merged: dict = {}
        for env in envs:
            for k, v in env.items():
                merged[k] = merged[k].join(v) if k in merged else v
        self.env = merged

    def merge_terms(self, body: dict, orelse: dict, condition, body_exits: bool, orelse_exits: bool) -> None:
        """After `if condition:`, a name bound in both branches to different terms is the term
        `IfElse(condition, body's, orelse's)`; where one branch leaves the function, what
        follows sees the other's. A name a branch that goes on leaves unbound has no term:
        Python raises UnboundLocalError reading it there, which no term says."""
        for name, v in list(self.env.items()):
            if name not in body and not body_exits or name not in orelse and not orelse_exits:
                self.env[name] = Val(v.atoms | OTHER.atoms, v.deps)  # maybe unbound: no one value
                continue
            if condition is None or name not in body or name not in orelse:
                continue
            ours, theirs = body[name].term, orelse[name].term
            if body_exits and not orelse_exits:
                term = theirs
            elif orelse_exits and not body_exits:
                term = ours
            elif ours is None or theirs is None:
                term = None
            else:
                term = ours if ours == theirs else IfElse(condition, ours, theirs)
            if term is not None:
                self.env[name] = v.with_term(term)

    def stmt(self, s) -> None:
        an = self.an
        if isinstance(s, ast.Expr):
            if self.is_udf and not isinstance(s.value, (ast.Yield, ast.YieldFrom)) \
                    and not (isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)):
                an.model.block("a statement that is an expression", s.lineno)
            self.ev(s.value)
        elif isinstance(s, ast.Assign):
            v = self.ev(s.value)
            if self.is_udf and isinstance(s.value, ast.Tuple):  # a, b = x, y
                for elt in s.value.elts:
                    an.model.computes(an.node_terms.get(id(elt)), self.guards, s.lineno)
            elif self.is_udf and not v.of(RecRef):
                an.model.computes(v.term, self.guards, s.lineno)
            for t in s.targets:
                self.bind(t, v, s)
                if self.is_udf:
                    self.unpacked(t, v.term, s.lineno)
        elif isinstance(s, ast.AnnAssign):
            if s.value is not None:
                self.bind(s.target, self.ev(s.value), s)
        elif isinstance(s, ast.AugAssign):
            self.aug_assign(s)
        elif isinstance(s, ast.Return):
            v = self.ev(s.value) if s.value is not None else NONE
            self.returned(v.plus(self.pc), s)
        elif isinstance(s, ast.If):
            test = self.ev(s.test)
            deps = self.truth_deps(test)
            an.read(deps, s.test, "used in a branch condition", self)
            condition = truth_term(an.node_terms.get(id(s.test))) if self.is_udf else None
            if self.is_udf:
                an.model.computes(condition, self.guards, s.lineno, "a condition")
            with self.narrowed(s.test, True):
                body = self.guarded_block(s.body, "body", s, deps, condition)
            with self.narrowed(s.test, False):
                orelse = self.guarded_block(s.orelse, "else", s, deps, None if condition is None else Not(condition))
            self.join_env(body, orelse)
            self.merge_terms(body, orelse, condition, exits(s.body), exits(s.orelse))
            if exits(s.body) or exits(s.orelse):
                self.pc |= deps  # what follows runs only on some paths
                if not (exits(s.body) and exits(s.orelse)):
                    an.nonnull |= self.nonnull_fields(s.test, not exits(s.body))
        elif isinstance(s, (ast.For, ast.While)):
            self.loop(s)
        elif isinstance(s, (ast.Pass, ast.Break, ast.Continue)):
            pass
        elif isinstance(s, (ast.FunctionDef,)):
            if s.decorator_list:
                raise an.impure(f"defines {s.name} with a decorator", s)
            self.env[s.name] = val(LocalFn(s, self))
        elif isinstance(s, ast.Delete):
            for t in s.targets:
                if isinstance(t, ast.Subscript):
                    self.delete(self.ev(t.value), t.slice, t)
                elif isinstance(t, ast.Name):
                    self.env.pop(t.id, None)
                else:
                    raise an.impure("deletes an attribute", s)
        elif isinstance(s, ast.Try):
            self.try_stmt(s)
        elif isinstance(s, (ast.Raise, ast.Assert)):
            raise an.impure("may raise an exception on some records (a reordered plan could "
                            "raise where the original does not, or the reverse)", s)
        elif isinstance(s, (ast.Global, ast.Nonlocal)):
            word = "global" if isinstance(s, ast.Global) else "nonlocal"
            raise an.impure(f"rebinds {word} {', '.join(s.names)}", s)
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            raise an.impure("uses a context manager (with)", s)
        elif isinstance(s, (ast.Import, ast.ImportFrom)):
            raise an.impure("imports a module while running", s)
        else:
            raise an.impure(f"uses a statement the analysis does not handle ({type(s).__name__})", s)

    def unpacked(self, target, term, line: int) -> None:
        """`a, b = min((x, y) for r in rows)`: each name is an `Item` of the tuple aggregate
        (the interpreter's value of each is one record's element, not the minimum's)."""
        if not isinstance(target, (ast.Tuple, ast.List)) or not is_tuple_aggregate(term):
            return
        if len(target.elts) != len(term.rows.elem.items) or not all(isinstance(e, ast.Name) for e in target.elts):
            self.an.model.block("unpacks a tuple into other than one name per element", line)
            return
        for i, e in enumerate(target.elts):
            self.env[e.id] = self.env[e.id].with_term(Item(term, i))

    def aug_assign(self, s) -> None:
        right = self.ev(s.value)
        if isinstance(s.target, ast.Name):
            old = self.lookup(s.target.id, s)
            self.an.read(self.deps(old) | self.deps(right), s, "used in a computation", self)
            self.check_whole(old, s)
            self.check_whole(right, s)
            self.env[s.target.id] = val(Other(), deps=self.deps(old) | self.deps(right) | self.pc)
        elif isinstance(s.target, ast.Subscript):
            container = self.ev(s.target.value)
            old = self.subscript(container, s.target.slice, s)
            self.an.read(self.deps(old) | self.deps(right), s, "used in a computation", self)
            new = val(Other(), deps=self.deps(old) | self.deps(right))
            # `d[k] += x` folds commutatively only over numbers (`+` on strings and lists keeps the order)
            order_free = isinstance(s.op, COMMUTATIVE_OPS) and _numeric_fold(old)
            self.store(s.target.value, container, s.target.slice, new, s, aug=order_free)
        else:
            raise self.an.impure("assigns to an attribute", s)

    def loop(self, s) -> None:
        an = self.an
        split = _explosion_split(self.unit.node, s) if self.is_udf and an.kind == "map" else None
        items = _unrolled_items(self, s) if self.is_udf and split is None else None
        if items is not None:  # the body once per item, in order, as Python runs it
            around = self.unrolled
            try:
                for k, item in enumerate(items):
                    self.unrolled = around + ((id(s), k),)
                    self.bind(s.target, val(Const(item)), s)
                    self.run(s.body)
            finally:
                self.unrolled = around
            return
        if self.is_udf and split is None:
            an.model.block("a loop", s.lineno)
        if isinstance(s, ast.For):
            it = self.ev(s.iter)
            if split is not None:
                over = s.iter.func.value if split.splits else s.iter
                an.model.explode(an.node_terms.get(id(over)), split.sep, s.target.id, s.lineno, split.splits)
            deps = set(it.deps) | {d for a in it.atoms if isinstance(a, (FieldOf,)) for d in self.deps(val(a))}
            an.read(deps - {ORDER}, s.iter, "iterated over", self)
            elem = self.element(it, s.iter)
            over_group = any(isinstance(a, GroupRef) or (isinstance(a, Seq) and a.ordered) for a in it.atoms)
        else:
            test = self.ev(s.test)
            deps = set(self.deps(test))
            an.read(deps, s.test, "used in a loop condition", self)
            elem, over_group = None, False
        carried = assigned_names(s.body)
        before = dict(self.env)
        body_block = self.block + ((id(s), "body"),)
        if over_group:
            self.group_loops.append((body_block, frozenset(before)))
        try:
            env = dict(self.env)
            for rounds in range(MAX_LOOP_ROUNDS):
                start = dict(env)
                if over_group:  # a value carried from one row to the next depends on their order
                    for name in carried:
                        if name in start:
                            start[name] = start[name].plus({ORDER})
                self.env = start
                if elem is not None:
                    self.bind(s.target, elem.plus(deps), s)
                    if split is not None:  # the piece at hand of the explosion
                        self.env[s.target.id] = self.env[s.target.id].with_term(Elem(split.splits))
                out = self.sub_block(s.body, "body", s, deps)
                merged = dict(env)
                for k, v in out.items():
                    merged[k] = merged[k].join(v) if k in merged else v
                if merged == env:
                    break
                if rounds >= 2:  # widen: constants that keep changing become unknown values
                    merged = {k: _widen(v) if env.get(k) != v else v for k, v in merged.items()}
                env = merged
            else:
                raise an.impure("a loop the analysis could not bring to a fixpoint", s)
        finally:
            if over_group:
                self.group_loops.pop()
        if over_group:
            for name, commutative in carried.items():
                if name not in env:
                    continue
                if commutative and name in before and _numeric(before[name]):
                    env[name] = Val(env[name].atoms, env[name].deps - {ORDER})
                else:  # after the loop it holds the value of the *last* row that assigned it
                    env[name] = as_other_row(env[name]).plus({ORDER})
            for t in ast.walk(s.target):  # after the loop the target holds the *last* row
                if isinstance(t, ast.Name) and t.id in env:
                    env[t.id] = as_other_row(env[t.id])
        self.env = env
        if s.orelse:
            self.join_env(env, self.sub_block(s.orelse, "else", s, deps))
        if exits(s.body):
            self.pc |= deps

    def try_stmt(self, s) -> None:
        form = caught_form(s) if self.is_udf else None
        if form is not None and isinstance(form.statement, ast.Return) and \
                not isinstance(form.statement.value, ast.Dict) and self.an.kind != "filter":
            form = None  # a record kind's `return r` or `return None`: not one term
        if form is not None and all(c is None or names_object(self, c, exception_class(c.id)) for c in form.catches):
            self.caught(form)
            return
        if self.is_udf:
            self.an.model.block("a try statement", s.lineno)
        before_reads = set(self.an.reads)
        before = dict(self.env)
        body = self.sub_block(s.body, "body", s)
        # a handler runs when something in the body failed: it depends on what the body read
        risk = set(self.an.reads) - before_reads | self.pc
        envs = [body]
        for h in s.handlers:
            saved = self.env
            self.join_env(before, body)
            if h.name:
                self.env[h.name] = OTHER
            envs.append(self.sub_block(h.body, "handler", h, risk))
            self.env = saved
        self.join_env(*envs)
        if s.orelse:
            self.join_env(self.env, self.sub_block(s.orelse, "else", s))
        if s.finalbody:
            self.run(s.finalbody)
        self.pc |= risk if s.handlers else set()

    def caught(self, form: CaughtForm) -> None:
        """`try: x = E except T: x = F` (`analysis.caught_form`): the statement run once, with
        `Caught(E, T, F)` for its expression. Which of the two Python computes depends on
        what E reads, so the value depends on both."""
        body, fallback = self.ev(form.body), self.ev(form.fallback)
        names = tuple("Exception" if c is None else c.id for c in form.catches)
        term = Caught(body.term, names, fallback.term) if body.term is not None and fallback.term is not None else None
        self.env[PLACEHOLDER] = Val(body.atoms | fallback.atoms, body.deps | fallback.deps, term)
        try:
            self.stmt(form.statement)
        finally:
            self.env.pop(PLACEHOLDER, None)

    # ------------------------------------------------------------ emit/return

    def returned(self, v: Val, node) -> None:
        self.returns = self.returns.join(v)
        if not self.is_udf:
            return
        an = self.an
        if an.kind == "filter":
            an.model.case(list(self.guards), v.term if v.term is not None else _literal(v), node.lineno)
            deps = self.deps(v) | self.pc
            an.read(deps, node, "decides whether the record passes", self)
            for d in deps:
                an.card.setdefault(d, node.lineno)
            self.check_whole(Val(frozenset(a for a in v.atoms if not isinstance(a, RecRef)), v.deps), node)
            return
        if self.generator:
            an.model.case(list(self.guards), NO_RECORD, node.lineno)
            return  # `return` in a generator ends it; it emits nothing
        may_none = any(isinstance(a, Const) and a.value is None for a in v.atoms)
        records = [a for a in v.atoms if isinstance(a, RecRef)]
        rest = [a for a in v.atoms if not isinstance(a, RecRef) and not (isinstance(a, Const) and a.value is None)]
        if an.kind in ("reduce", "cogroup") and not records:
            seqs = [a for a in rest if isinstance(a, Seq)]
            if seqs and len(seqs) == len(rest):
                for sq in seqs:
                    self.emit(sq.elem.plus(v.deps), node)
                an.return_shapes.append((True, True, node.lineno))
                return
        if rest:
            raise an.impure("returns something that is not a dict (or None)", node)
        an.return_shapes.append((may_none, bool(records), node.lineno))
        if may_none and an.kind in RECORD_KINDS:
            an.may_raise("none", (Val(frozenset(), frozenset(v.deps | self.pc)),), node, self)
            if records:
                an.model.block("returns a record or None from one expression", node.lineno)
            an.model.case(list(self.guards), RAISES, node.lineno)
        elif len(records) > 1:
            an.model.block("returns one of several dicts from one expression", node.lineno)
        if records:  # the record's model case too
            self.emit(Val(frozenset(records), v.deps), node)
        if may_none or self.pc:
            for d in v.deps | self.pc:
                an.card.setdefault(d, node.lineno)
            an.read(v.deps | self.pc, node, "decides whether a record is emitted", self)

    def emit(self, v: Val, node) -> None:
        an = self.an
        deps = set(v.deps) | self.pc
        for d in deps:
            an.card.setdefault(d, node.lineno)
            an.emit_deps.setdefault(d, node.lineno)
        an.read(deps, node, "decides whether a record is emitted", self)
        for a in v.atoms:
            if not isinstance(a, RecRef):
                raise an.impure("emits a value that is not a dict", node)
            if a.pos == "other":
                raise an.impure("emits a record picked by its position in the group (order-dependent)", node)
            an.heap[a.id].emitted.append(node.lineno)
            an.emits.append((a, node.lineno))
        if self.is_udf:
            records = v.of(RecRef)
            if len(records) == 1 and len(v.atoms) == 1:
                an.model.emit(an.heap, records[0], list(self.guards), node.lineno)
            else:
                an.model.block("emits one of several dicts from one expression", node.lineno)


@dataclass(frozen=True)
class Pieces:
    """How an explosion's loop takes its pieces: `TERM.split(sep)`, or (`splits` False) the
    value of the loop's iterable itself, `for NAME in TERM:`."""

    splits: bool
    sep: Optional[str] = None


def _unrolled_items(frame, s) -> Optional[tuple]:
    """The items of `for name in <constant tuple>:` whose body the model runs once per item,
    in order, with `name` bound to each: Python's semantics exactly, since a tuple of literals
    never changes (a module's tuple is part of the analysis's key, `outside.snapshot`), and
    the body has no `break` or `continue`, the loop no `else`, and no function or generator
    in the body keeps the name to read it later. None for any other loop.

        for suffix in ("ing", "ed"):              if w.endswith("ing"): return w[:-3]
            if w.endswith(suffix):          ->    if w.endswith("ed"): return w[:-2]
                return w[: -len(suffix)]
    """
    if not isinstance(s, ast.For) or s.orelse or not isinstance(s.target, ast.Name):
        return None
    if isinstance(s.iter, ast.Tuple) and all(isinstance(e, ast.Constant) for e in s.iter.elts):
        items = tuple(e.value for e in s.iter.elts)
    else:
        table = table_of(frame, s.iter)
        if table is None or type(table.origin) is not tuple:
            return None
        items = table.items
    if len(items) > MAX_UNROLLED or not all(type(v) in LITERAL_TYPES for v in items):
        return None
    kept = (ast.Break, ast.Continue, ast.Lambda, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.GeneratorExp)
    if any(isinstance(n, kept) for stmt in s.body for n in ast.walk(stmt)):
        return None
    return items


def _explosion_split(fnode, s) -> Optional[Pieces]:
    """How the loop `s` takes its pieces when the function's whole body (but a docstring) is
    that loop, of the exact shape an `ExplodeModel` describes, else None:

        for NAME in TERM.split(SEP):      SEP a non-empty str literal, or none (sep None)
        for NAME in TERM:                 any other iterable (a helper's list): its items
            word = ...                    names bound in the body (any number, or none)
            if TEST:                      the record's condition (or none: always)
                yield {...}

    Names bound to the record's fields before the loop (`s = r["text"]`, as `uf.from_spark`
    binds a UDF's parameters) may come first: reading a field computes nothing.
    """
    body = list(getattr(fnode, "body", ()))
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    params = [a.arg for a in fnode.args.args] if isinstance(fnode, ast.FunctionDef) else []
    while body and params and (_field_binding(body[0], params[0]) or _docstring(body[0])):
        body = body[1:]
    if body != [s] or not isinstance(s, ast.For) or not isinstance(s.target, ast.Name) or s.orelse:
        return None
    if not _piece_body(s.body, {s.target.id, *params[:1]}):
        return None
    call = s.iter
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr == "split"):
        return Pieces(splits=False)
    if call.keywords or len(call.args) > 1:
        return None
    if not call.args:
        return Pieces(splits=True)
    sep = call.args[0]
    if isinstance(sep, ast.Constant) and isinstance(sep.value, str) and sep.value:
        return Pieces(splits=True, sep=sep.value)
    return None


def _piece_body(body: list, kept: set) -> bool:
    """An explosion's loop body: plain names bound (neither the piece's nor the record's:
    `kept`), then one `yield {...}`, alone or under one `if` with no `else`."""
    *binds, last = body
    if not all(isinstance(b, ast.Assign) and len(b.targets) == 1 and isinstance(b.targets[0], ast.Name)
               and b.targets[0].id not in kept for b in binds):
        return False
    if isinstance(last, ast.If) and not last.orelse and len(last.body) == 1:
        last = last.body[0]
    return isinstance(last, ast.Expr) and isinstance(last.value, ast.Yield) and isinstance(last.value.value, ast.Dict)


def _docstring(s) -> bool:
    return isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant) and isinstance(s.value.value, str)


def _field_binding(s, record: str) -> bool:
    """`name = record["field"]`: a name bound to a field of the record parameter."""
    return (isinstance(s, ast.Assign) and len(s.targets) == 1 and isinstance(s.targets[0], ast.Name)
            and isinstance(s.value, ast.Subscript) and isinstance(s.value.value, ast.Name)
            and s.value.value.id == record and s.targets[0].id != record
            and isinstance(s.value.slice, ast.Constant) and isinstance(s.value.slice.value, str))


def _literal(v: Val):
    c = v.const()
    return Lit(c.value) if c is not None and isinstance(c.value, LITERAL_TYPES) else None


def _numeric(v: Val) -> bool:
    """A number to start from: `+`/`*` on it are commutative (strings and lists are not)."""
    return bool(v.atoms) and all(
        isinstance(a, Const) and isinstance(a.value, (int, float, complex, decimal.Decimal)) for a in v.atoms
    )


def _numeric_fold(old: Val) -> bool:
    """The old value of a `d[k] += x` started as a number (and is not a copied field or a sequence)."""
    numbers = (int, float, complex, decimal.Decimal)
    consts = [a for a in old.atoms if isinstance(a, Const)]
    return (
        any(isinstance(a.value, numbers) for a in consts)
        and all(isinstance(a.value, numbers) or a.value is None for a in consts)
        and all(isinstance(a, (Const, Other)) for a in old.atoms)
    )


def _widen(v: Val) -> Val:
    """Constants that keep changing from round to round become an unknown value (a fixpoint)."""
    consts = [a for a in v.atoms if isinstance(a, Const)]
    if len(consts) < 2:
        return v
    return Val(v.atoms - set(consts) | {Other()}, v.deps)
