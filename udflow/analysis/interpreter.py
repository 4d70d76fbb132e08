"""An abstract interpreter for Python functions over records (paper, section 5).

The paper scans three-address code for `getField`/`setField`/`emit` and follows
def-use chains. Python has no record API, so the interpreter runs the
function's syntax tree on abstract values (see `values`): a subscript
`r["a"]` of the input record yields `FieldOf(a)`, and the value carries the
fields it depends on as it flows through assignments, operations and calls.

    reads       every field whose value is *used*: in an operation, a branch
                condition, a call, or stored in an output field of another name
    writes      decided at the end from the dicts that were emitted (`summary`)
    card_reads  the fields of the conditions and loops that guard an emit
    impure      anything the interpreter cannot prove harmless

Control dependences are tracked as a path condition `pc`: a value assigned under
`if r["a"] > 0:` depends on `a`. Branches are analysed both ways and joined;
loops are iterated until the environment stops growing. Soundness first: every
construct not handled precisely makes the function impure.
"""

from __future__ import annotations

import ast
import builtins
import functools
import types
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any, Optional

from udflow.analysis import known
from udflow.analysis.properties import RaiseSite
from udflow.analysis.source import FileIndex, file_index, find_node
from udflow.analysis.values import (
    NONE,
    ORDER,
    OTHER,
    WHOLE,
    Const,
    FieldOf,
    GroupRef,
    NO_BASE,
    LocalFn,
    Other,
    PyObj,
    RecObj,
    RecRef,
    Seq,
    Tup,
    Val,
    join_all,
    val,
)

RECORD_KINDS = ("map", "match", "cross")  # a `return None` of theirs is an error in both engines
MAX_CALL_DEPTH = 4
MAX_LOOP_ROUNDS = 6
COMMUTATIVE_OPS = (ast.Add, ast.Mult, ast.BitOr, ast.BitAnd, ast.BitXor)
MISSING = object()


class Impure(Exception):
    """Raised to stop the analysis as soon as the function is known to be impure."""

    def __init__(self, reason: str, line: int, index: Optional[FileIndex] = None):
        super().__init__(reason)
        self.reason, self.line, self.index = reason, line, index


@dataclass
class Unit:
    """A function to interpret: its tree and the names it can see."""

    node: Any  # ast.FunctionDef | ast.Lambda
    index: FileIndex
    globals: dict
    closure: dict  # free variable -> value (MISSING for an empty cell)
    defaults: dict = field(default_factory=dict)  # parameter -> default value
    name: str = ""


def unit_of(fn) -> Optional[Unit]:
    """The `Unit` of a plain Python function; None when it has no readable source."""
    code = getattr(fn, "__code__", None)
    if not isinstance(fn, types.FunctionType) or code is None:
        return None
    index = file_index(code)
    if index is None:
        return None
    node = find_node(code, index)
    if node is None:
        return None
    closure = {}
    for name, cell in zip(code.co_freevars, fn.__closure__ or ()):
        try:
            closure[name] = cell.cell_contents
        except ValueError:
            closure[name] = MISSING
    params = [p.arg for p in node.args.posonlyargs + node.args.args]
    defaults = dict(zip(params[len(params) - len(fn.__defaults__ or ()):], fn.__defaults__ or ()))
    defaults.update(fn.__kwdefaults__ or {})
    return Unit(node, index, fn.__globals__, closure, defaults, fn.__qualname__)


def _exits(stmts) -> bool:
    """Does the block contain a return/break/continue/raise (outside nested functions)?"""
    stack = list(stmts)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Return, ast.Break, ast.Continue, ast.Raise)):
            return True
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(n))
    return False


def _assigned_names(stmts) -> dict:
    """name -> True iff every assignment to it in the block is commutative
    (`x += e`, `x = x + e`, `x = max(x, e)`): its final value does not depend on the order."""
    out: dict = {}

    def note(name, commutative):
        out[name] = out.get(name, True) and commutative

    stack = list(stmts)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        if isinstance(n, ast.AugAssign) and isinstance(n.target, ast.Name):
            note(n.target.id, isinstance(n.op, COMMUTATIVE_OPS))
            stack.append(n.value)
            continue
        if isinstance(n, ast.Assign) and len(n.targets) == 1 and isinstance(n.targets[0], ast.Name):
            v, name = n.value, n.targets[0].id
            minmax = (
                isinstance(v, ast.Call) and isinstance(v.func, ast.Name) and v.func.id in ("max", "min")
                and any(isinstance(a, ast.Name) and a.id == name for a in v.args)
            )
            folds = (
                isinstance(v, ast.BinOp) and isinstance(v.op, COMMUTATIVE_OPS)
                and any(isinstance(x, ast.Name) and x.id == name for x in (v.left, v.right))
            )
            note(name, minmax or folds)
            stack.append(v)
            continue
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
            note(n.id, False)
        stack.extend(ast.iter_child_nodes(n))
    return out


class Analysis:
    """The state of one analysis run, shared by every frame (the UDF and the helpers it calls)."""

    def __init__(self, kind: str, n_sides: int, unit: Unit):
        self.kind = kind
        self.n_sides = n_sides
        self.unit = unit
        self.heap: dict = {}
        self.reads: dict = {}  # dep -> (line, note, file)
        self.card: dict = {}  # dep -> line
        self.emits: list = []  # (RecRef, line)
        self.emit_deps: dict = {}  # dep -> line (deps of emitted values and their conditions)
        self.return_shapes: list = []  # (may_none, may_record, line) for non-generator returns
        self.group_sorted: set = set()
        self.active: list = []  # call stack of function nodes
        self.files: list = [unit.index]  # the file of the frame being interpreted
        self.strict: dict = {}  # dep -> line: fields read as r["f"] (KeyError where absent)
        self.state_reads: dict = {}  # name -> line: mutable module globals / closure values read
        self.raises: dict = {}  # (op, line, name) -> RaiseSite
        self.nonnull: set = set()  # fields proven not None where the interpreter is now

    # -- evidence -------------------------------------------------------------

    def read(self, deps, node, note: str, frame=None) -> None:
        if WHOLE in deps:
            raise self.impure("uses a whole record (any of its fields may matter)", node)
        for d in deps:
            if d != ORDER and d not in self.reads:
                self.reads[d] = (getattr(node, "lineno", 0), note, frame.unit.index if frame else None)

    def impure(self, reason: str, node) -> "Impure":
        return Impure(reason, getattr(node, "lineno", 0), self.files[-1])

    def may_raise(self, op: str, values, node, frame, name: str = "") -> None:
        """Record an operation of the function itself that may raise on some value of a field
        it reads (docs/analysis.md, "Errors"): one of its operands is a field's value as read
        (`r["x"] + 1`, `r["d"].year`, `x < START` with `x = r["x"]`), or it divides by a value
        computed from fields. Operations inside helpers, or on values the function derives
        otherwise, are assumed not to fail on the records the function is given (an assumption
        `udflow verify --sample` tests); an operation on constants alone raises on every record
        or on none."""
        if op != "none" and not frame.is_udf:
            return
        atoms = list(_field_atoms(values))  # a field's value, or values of a group's field
        raw = bool(atoms)
        divisor_deps = op == "divide" and bool(frame.deps(values[-1]) - {ORDER, WHOLE})
        if op != "none" and not raw and not divisor_deps:
            return
        deps = set()
        consts = set()
        for v in values:
            deps |= frame.deps(v)
            for a in v.atoms:
                inner = a.elem.atoms if isinstance(a, Seq) else (a,)
                consts |= {type(x.value).__name__ for x in inner if isinstance(x, Const)}
        fields = frozenset(d[1] for d in deps if d not in (ORDER, WHOLE))
        line = getattr(node, "lineno", 0)
        key = (op, line, name)
        truthy = {a.name for a in atoms if a.truthy} - {a.name for a in atoms if not a.truthy}
        guarded = fields & (self.nonnull | truthy)
        old = self.raises.get(key)
        if old is not None:
            fields, consts, guarded = fields | old.fields, consts | old.consts, guarded & old.nonnull
        self.raises[key] = RaiseSite(op, fields, line, frozenset(consts), name, frozenset(guarded))


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


class Frame:
    """One activation: the UDF itself or a helper/lambda it calls."""

    def __init__(self, an: Analysis, unit: Unit, parent: Optional["Frame"], is_udf: bool, depth: int, pc=frozenset()):
        self.an, self.unit, self.parent, self.is_udf, self.depth = an, unit, parent, is_udf, depth
        self.env: dict = {}
        self.pc = set(pc)
        self.block: tuple = (id(unit.node),)
        self.returns = Val()
        self.yields = Val()
        self.group_loops: list = []  # (body block, names bound before the loop)

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

    # ------------------------------------------------------------- statements

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

    def join_env(self, *envs) -> None:
        merged: dict = {}
        for env in envs:
            for k, v in env.items():
                merged[k] = merged[k].join(v) if k in merged else v
        self.env = merged

    def stmt(self, s) -> None:
        an = self.an
        if isinstance(s, ast.Expr):
            self.ev(s.value)
        elif isinstance(s, ast.Assign):
            v = self.ev(s.value)
            for t in s.targets:
                self.bind(t, v, s)
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
            deps = self.deps(test)
            an.read(deps, s.test, "used in a branch condition", self)
            with self.narrowed(s.test, True):
                body = self.sub_block(s.body, "body", s, deps)
            with self.narrowed(s.test, False):
                orelse = self.sub_block(s.orelse, "else", s, deps)
            self.join_env(body, orelse)
            if _exits(s.body) or _exits(s.orelse):
                self.pc |= deps  # what follows runs only on some paths
                if not (_exits(s.body) and _exits(s.orelse)):
                    an.nonnull |= self.nonnull_fields(s.test, not _exits(s.body))
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
        if isinstance(s, ast.For):
            it = self.ev(s.iter)
            deps = set(it.deps) | {d for a in it.atoms if isinstance(a, (FieldOf,)) for d in self.deps(val(a))}
            an.read(deps - {ORDER}, s.iter, "iterated over", self)
            elem = self.element(it, s.iter)
            over_group = any(isinstance(a, GroupRef) or (isinstance(a, Seq) and a.ordered) for a in it.atoms)
        else:
            test = self.ev(s.test)
            deps = set(self.deps(test))
            an.read(deps, s.test, "used in a loop condition", self)
            elem, over_group = None, False
        carried = _assigned_names(s.body)
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
                    env[name] = _as_other_row(env[name]).plus({ORDER})
            for t in ast.walk(s.target):  # after the loop the target holds the *last* row
                if isinstance(t, ast.Name) and t.id in env:
                    env[t.id] = _as_other_row(env[t.id])
        self.env = env
        if s.orelse:
            self.join_env(env, self.sub_block(s.orelse, "else", s, deps))
        if _exits(s.body):
            self.pc |= deps

    def try_stmt(self, s) -> None:
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

    # ------------------------------------------------------------ emit/return

    def returned(self, v: Val, node) -> None:
        self.returns = self.returns.join(v)
        if not self.is_udf:
            return
        an = self.an
        if an.kind == "filter":
            deps = self.deps(v) | self.pc
            an.read(deps, node, "decides whether the record passes", self)
            for d in deps:
                an.card.setdefault(d, node.lineno)
            self.check_whole(Val(frozenset(a for a in v.atoms if not isinstance(a, RecRef)), v.deps), node)
            return
        if self.generator:
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

    # ------------------------------------------------------------ expressions

    def ev(self, e) -> Val:
        method = getattr(self, "ev_" + type(e).__name__, None)
        if method is None:
            raise self.an.impure(f"uses an expression the analysis does not handle ({type(e).__name__})", e)
        return method(e)

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
        return self.operands([left, right], e, _binop_error(e.op, left, right))

    def ev_UnaryOp(self, e) -> Val:
        v = self.ev(e.operand)
        if isinstance(e.op, ast.Not) and v.of(RecRef):
            return val(Other())  # a dict is never empty here: `not r` reads no field
        return self.operands([v], e, None if isinstance(e.op, ast.Not) else "arith")

    def ev_BoolOp(self, e) -> Val:
        values = []
        saved = set(self.an.nonnull)
        try:
            for x in e.values:  # `r["x"] is not None and r["x"] > 0`: later operands run narrowed
                values.append(self.ev(x))
                self.an.nonnull |= self.nonnull_fields(x, isinstance(e.op, ast.And))
        finally:
            self.an.nonnull = saved
        if isinstance(e.op, ast.Or):  # `r["x"] or 0` is r["x"] only where it is truthy
            values = [_truthy(v) for v in values[:-1]] + values[-1:]
        deps = set()
        for v in values[:-1]:  # all but the last decide which operand is the result
            deps |= self.deps(Val(frozenset(a for a in v.atoms if not isinstance(a, RecRef)), v.deps))
        self.an.read(deps, e, "used in a condition", self)
        return join_all(values).plus(deps)

    def ev_IfExp(self, e) -> Val:
        test = self.ev(e.test)
        deps = self.deps(test)
        self.an.read(deps, e.test, "used in a condition", self)
        saved = self.pc
        self.pc = saved | deps
        try:
            with self.narrowed(e.test, True):
                body = self.ev(e.body)
            with self.narrowed(e.test, False):
                orelse = self.ev(e.orelse)
            return body.join(orelse).plus(deps)
        finally:
            self.pc = saved

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
        from udflow.analysis.calls import call

        return call(self, e)

    # ---------------------------------------------------------- record model

    def alloc(self, node, kind: str = "fresh") -> RecObj:
        key = ("site", id(node))
        obj = self.an.heap.get(key)
        if obj is None:
            obj = RecObj(key, kind, line=node.lineno, block=self.block)
            self.an.heap[key] = obj
        return obj

    def add_base(self, obj: RecObj, value: Val, node, conditional: bool = False) -> None:
        """`**value` (or `update(value)`, `dict(value)`) into `obj`: one base group whose
        alternatives are the dicts `value` may be; `conditional` when it runs on some paths
        through the block that made `obj` only (an alternative that copies nothing)."""
        group = {NO_BASE} if conditional else set()
        for a in value.atoms:
            if isinstance(a, RecRef):
                if a.pos == "other":
                    raise self.an.impure("copies a record picked by its position in the group (order-dependent)", node)
                group.add((a.id, a.pos))
            else:
                obj.dynamic = obj.dynamic or node.lineno
                obj.dynamic_deps |= self.deps(val(a))
        if group - {NO_BASE}:
            obj.base_groups.add(frozenset(group))
        self.an.read(value.deps, node, "decides which record is copied", self)

    def set_field(self, obj: RecObj, name: str, value: Val, node, must: bool, aug: bool = False, pos: str = "each") -> None:
        value = value.plus(self.pc)
        if obj.kind in ("input", "row"):
            obj.mutated.append(node.lineno)
        per_row = obj.kind == "row" and pos == "each"
        if self.group_loops and not aug and not per_row and not self.inside_loops(obj.block):
            value = value.plus({ORDER})  # last write wins: which row wrote last depends on the order
        if must and name not in obj.must_set:
            obj.fields[name] = value
            obj.must_set.add(name)
        else:
            obj.fields[name] = obj.fields[name].join(value) if name in obj.fields else value
        if must:
            obj.maybe_deleted.discard(name)
        obj.deleted.discard(name)
        obj.write_lines.setdefault(name, node.lineno)

    def record_like(self, obj: RecObj) -> bool:
        return obj.kind in ("input", "row") or bool(obj.bases)

    def key_name(self, key_node, node) -> Optional[str]:
        c = self.ev(key_node).const()
        return c.value if c is not None and isinstance(c.value, str) else None

    def load_field(self, ref: RecRef, name: str, node) -> Val:
        obj = self.an.heap[ref.id]
        if obj.kind in ("input", "row"):
            pos = ref.pos if obj.kind == "row" else "each"
            base = val(FieldOf(obj.side, name, pos))
            if name in obj.fields:
                return obj.fields[name] if name in obj.must_set else obj.fields[name].join(base)
            return base
        out = Val()
        if name in obj.fields:
            out = obj.fields[name]
            if name in obj.must_set:
                return out
        for bid, bpos in obj.bases:
            out = out.join(self.load_field(RecRef(bid, bpos), name, node))
        if obj.dynamic:
            out = out.join(val(Other(), deps=obj.dynamic_deps))
        return out if out.atoms else NONE

    def field_presence(self, ref: RecRef, name: str) -> set:
        """Deps of `name in record`: the field itself (its presence is part of the record)."""
        obj = self.an.heap[ref.id]
        if obj.kind in ("input", "row"):
            return {(obj.side, name)}
        out = set(obj.dynamic_deps)
        for bid, bpos in obj.bases:
            out |= self.field_presence(RecRef(bid, bpos), name)
        return out

    def strict_read(self, ref: RecRef, name: str, node) -> None:
        """`d[name]` raises KeyError where the field is absent: when `d` is (or copies) an
        input record that the function did not give the field itself, its presence in the
        input is a precondition, a read of the field (docs/analysis.md, "Errors")."""
        obj = self.an.heap[ref.id]
        if name in obj.must_set:
            return
        if obj.kind in ("input", "row"):
            self.an.strict.setdefault((obj.side, name), getattr(node, "lineno", 0))
            return
        for bid, bpos in obj.bases:
            self.strict_read(RecRef(bid, bpos), name, node)

    def subscript(self, base: Val, key_node, node) -> Val:
        key = self.ev(key_node)
        c = key.const()
        out = Val()
        names = _const_names(key)
        for a in base.atoms:
            if isinstance(a, RecRef):
                obj = self.an.heap[a.id]
                if names:  # one of a few known names: any of them may be read
                    self.an.read(key.deps, node, "decides which field is read", self)
                    for name in names:
                        self.strict_read(a, name, node)
                        out = out.join(self.load_field(a, name, node).plus(key.deps))
                elif self.record_like(obj):
                    raise self.an.impure("reads a record field whose name is computed", node)
                else:
                    self.an.read(self.deps(key), node, "used as a key", self)
                    vals = join_all(obj.fields.values())
                    out = out.join(vals.plus(self.deps(key) | obj.dynamic_deps)).join(NONE)
            elif isinstance(a, GroupRef):
                if isinstance(key_node, ast.Slice):
                    raise self.an.impure("slices the group (which records it keeps depends on their order)", node)
                pos = "first" if c is not None and c.value == 0 and not a.sorted and a.side not in self.an.group_sorted else "other"
                out = out.join(val(RecRef(("row", a.side), pos)))
            elif isinstance(a, Seq):
                self.an.read(self.deps(key), node, "used as an index", self)
                if isinstance(key_node, ast.Slice):
                    out = out.join(val(a, deps=self.deps(key)))
                else:
                    self.an.may_raise("index", (val(a), key), node, self)
                    elem = a.elem.plus(self.deps(key) | ({ORDER} if a.ordered else set()))
                    out = out.join(_as_other_row(elem) if a.ordered else elem)
            elif isinstance(a, Tup) and c is not None and isinstance(c.value, int) and -len(a.items) <= c.value < len(a.items):
                out = out.join(a.items[c.value])
            elif isinstance(a, Const) and c is not None:
                try:
                    item = a.value[c.value]
                    out = out.join(val(Const(item)) if known.is_constant(item) else OTHER)
                except Exception:
                    out = out.join(OTHER)
            elif isinstance(a, (LocalFn,)):
                raise self.an.impure("subscripts a function", node)
            elif isinstance(a, PyObj):
                out = out.join(val(Other(shared=True)))
            else:
                self.an.read(self.deps(key), node, "used as an index", self)
                error = "slice" if isinstance(key_node, ast.Slice) else "index"
                self.an.may_raise(error, (val(a), key), node, self)
                out = out.join(val(Other(shared=not isinstance(a, Const) and getattr(a, "shared", True)),
                                   deps=self.deps(val(a)) | self.deps(key)))
        return out.plus(base.deps)

    def store(self, target_node, container: Val, key_node, value: Val, node, aug: bool = False) -> None:
        key = self.ev(key_node)
        c = key.const()
        for a in container.atoms:
            if isinstance(a, RecRef):
                obj = self.an.heap[a.id]
                if obj.kind in ("input", "row") and self.an.kind in ("match", "cross"):
                    raise self.an.impure("changes an input record in place (other pairs share it)", node)
                if a.pos == "other":
                    raise self.an.impure("changes a record picked by its position in the group", node)
                if c is not None and isinstance(c.value, str):
                    self.set_field(obj, c.value, value, node, must=obj.block == self.block, aug=aug, pos=a.pos)
                elif self.record_like(obj):
                    raise self.an.impure("writes a record field whose name is computed", node)
                else:
                    self.an.read(self.deps(key), node, "used as a key", self)
                    obj.dynamic = obj.dynamic or node.lineno
                    extra = {ORDER} if (self.group_loops and not aug and not self.inside_loops(obj.block)) else set()
                    obj.dynamic_deps |= self.deps(key) | self.deps(value) | self.pc | extra
            elif isinstance(a, (Seq, Other)) and not getattr(a, "shared", False):
                self.absorb(target_node, self.deps(key) | self.deps(value), aug, node)
            else:
                raise self.an.impure("changes data it does not own (an input value or a module global)", node)

    def inside_loops(self, block) -> bool:
        return all(block[: len(loop)] == loop for loop, _ in self.group_loops)

    def absorb(self, target_node, deps, order_free: bool, node) -> None:
        """A local container changed in place: its variable now depends on `deps` too."""
        if not isinstance(target_node, ast.Name):
            return  # e.g. `x.y[k] = v` would have failed earlier; nested containers keep their deps
        name = target_node.id
        current = self.env.get(name)
        if current is None:
            raise self.an.impure(f"changes {name}, which it does not own", node)
        extra = set(self.pc)
        if not order_free and any(name in before for _, before in self.group_loops):
            # e.g. list.append in a loop over the group: the list keeps the group's order
            seqs = [a for a in current.atoms if isinstance(a, Seq)]
            current = Val(current.atoms - set(seqs) | {Seq(a.elem, True) for a in seqs}, current.deps)
            if len(seqs) < len(current.atoms):
                extra.add(ORDER)
        self.env[name] = current.plus(set(deps) | extra)

    def delete(self, container: Val, key_node, node) -> None:
        name = self.key_name(key_node, node)
        for a in container.atoms:
            if not isinstance(a, RecRef):
                raise self.an.impure("deletes from data it does not own", node)
            obj = self.an.heap[a.id]
            if obj.kind in ("input", "row") and self.an.kind in ("match", "cross"):
                raise self.an.impure("changes an input record in place (other pairs share it)", node)
            if name is None:
                if self.record_like(obj):
                    raise self.an.impure("deletes a record field whose name is computed", node)
                continue
            if obj.kind in ("input", "row"):
                obj.mutated.append(node.lineno)
            if obj.block == self.block:
                obj.deleted.add(name)
                obj.fields.pop(name, None)
                obj.must_set.discard(name)
            else:
                obj.maybe_deleted.add(name)
            obj.write_lines.setdefault(name, node.lineno)

    def check_whole(self, v: Val, node) -> None:
        """A record or group used as a whole (printed, compared, hashed...): it could read any field."""
        for a in v.atoms:
            if isinstance(a, RecRef) and self.record_like(self.an.heap[a.id]):
                raise self.an.impure("uses a whole record (any of its fields may matter)", node)
            if isinstance(a, GroupRef):
                raise self.an.impure("uses the whole group in a way the analysis cannot follow", node)
            if isinstance(a, (LocalFn,)):
                raise self.an.impure("uses a function as a value", node)

    def element(self, it: Val, node) -> Val:
        """The value of one element when iterating over `it`."""
        out = Val()
        for a in it.atoms:
            if isinstance(a, GroupRef):
                out = out.join(val(RecRef(("row", a.side), "each")))
            elif isinstance(a, Seq):
                out = out.join(a.elem)
            elif isinstance(a, Tup):
                out = out.join(join_all(a.items))
            elif isinstance(a, RecRef):
                if self.record_like(self.an.heap[a.id]):
                    raise self.an.impure("iterates over all fields of a record", node)
                out = out.join(val(Other(), deps=self.an.heap[a.id].dynamic_deps))
            elif isinstance(a, Const):
                try:
                    items = list(a.value)
                    out = out.join(join_all(val(Const(i)) if known.is_constant(i) else OTHER for i in items) if items else Val())
                except TypeError:
                    out = out.join(OTHER)
            elif isinstance(a, (LocalFn, PyObj)):
                raise self.an.impure("iterates over an object the analysis cannot see into", node)
            else:
                out = out.join(val(Other(shared=getattr(a, "shared", True)), deps=self.deps(val(a))))
        return out.plus(it.deps)

    @property
    def generator(self) -> bool:
        return _is_generator(self.unit.node)


def always_returns(stmts) -> bool:
    """Does every path through the block end in `return` or `raise` (never fall off its end)?"""
    if not stmts:
        return False
    last = stmts[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return always_returns(last.body) and always_returns(last.orelse)
    return False


def _is_generator(fnode) -> bool:
    if isinstance(fnode, ast.Lambda):
        return False
    stack = list(fnode.body)
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(n))
    return False


def _numeric(v: Val) -> bool:
    """A number to start from: `+`/`*` on it are commutative (strings and lists are not)."""
    import decimal

    return bool(v.atoms) and all(
        isinstance(a, Const) and isinstance(a.value, (int, float, complex, decimal.Decimal)) for a in v.atoms
    )


def _numeric_fold(old: Val) -> bool:
    """The old value of a `d[k] += x` started as a number (and is not a copied field or a sequence)."""
    import decimal

    numbers = (int, float, complex, decimal.Decimal)
    consts = [a for a in old.atoms if isinstance(a, Const)]
    return (
        any(isinstance(a.value, numbers) for a in consts)
        and all(isinstance(a.value, numbers) or a.value is None for a in consts)
        and all(isinstance(a, (Const, Other)) for a in old.atoms)
    )


def _truthy(v: Val) -> Val:
    atoms = frozenset(FieldOf(a.side, a.name, a.pos, True) if isinstance(a, FieldOf) else a for a in v.atoms)
    return Val(atoms, v.deps)


def _field_atoms(values):
    """The FieldOf atoms of `values`, and of the elements of sequences among them."""
    for v in values:
        for a in v.atoms:
            if isinstance(a, FieldOf):
                yield a
            elif isinstance(a, Seq):
                yield from (x for x in a.elem.atoms if isinstance(x, FieldOf))


def _literal_collection(v: Val) -> bool:
    """A tuple or list written in the code: `x in (1, 2)` compares with == and never raises."""
    return bool(v.atoms) and all(
        (isinstance(a, Const) and isinstance(a.value, tuple)) or (isinstance(a, Seq) and not a.ordered)
        for a in v.atoms) and not v.deps


def _binop_error(op, left: Val, right: Val) -> str:
    """The kind of error `left op right` may raise (`RaiseSite.op`)."""
    if isinstance(op, ast.Mod) and left.const() is not None and isinstance(left.const().value, str):
        return "format"
    if isinstance(op, (ast.Div, ast.FloorDiv, ast.Mod)):
        c = right.const()
        divisor_safe = c is not None and isinstance(c.value, (int, float)) and c.value != 0
        return "arith" if divisor_safe else "divide"
    return "arith"


def _widen(v: Val) -> Val:
    consts = [a for a in v.atoms if isinstance(a, Const)]
    if len(consts) < 2:
        return v
    return Val(v.atoms - set(consts) | {Other()}, v.deps)


def _const_names(key: Val) -> tuple:
    """The field names a key may be, when every possibility is a constant string."""
    if key.atoms and all(isinstance(a, Const) and isinstance(a.value, str) for a in key.atoms):
        return tuple(sorted(a.value for a in key.atoms))
    return ()


def _as_other_row(v: Val) -> Val:
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


is_generator = _is_generator
