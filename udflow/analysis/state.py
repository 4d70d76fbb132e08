"""The state of one analysis run: the function to interpret (`Unit`), the
evidence gathered while interpreting it (`Analysis`), and `Impure`, raised
as soon as the function is known to be impure.

Every frame of a run (the UDF and the helpers it calls) shares one `Analysis`:

    reads       every field whose value is *used*: in an operation, a branch
                condition, a call, or stored in an output field of another name
    card        the fields of the conditions and loops that guard an emit
    emits       the dicts emitted, in the heap of abstract dicts
    strict      fields read as `r["f"]` (KeyError where absent)
    raises      operations that may raise on some value of a field they read
"""

from __future__ import annotations

import types
from dataclasses import dataclass, field
from typing import Any, Optional

from udflow.analysis.modelling import ModelRecorder
from udflow.analysis.properties import RaiseSite
from udflow.analysis.source import FileIndex, file_index, find_node
from udflow.analysis.values import ORDER, WHOLE, Const, FieldOf, Seq

RECORD_KINDS = ("map", "match", "cross")  # a `return None` of theirs is an error in both engines
MISSING = object()  # the value of an empty closure cell


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
        self.node_terms: dict = {}  # id(ast node) -> its term, for the function's own expressions
        # > 0 while evaluating what Python may skip: a later operand of `and`/`or`, a branch of
        # a conditional expression, a comprehension (`ModelRecorder.evaluated`)
        self.unsure = 0
        self.model = ModelRecorder(kind, n_sides)
        # (fn, args, never_raises) -> the term of a helper's call inlined, or None (`helper_models`)
        self.inline_helper = None

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
        # a divisor or a shift count computed from fields may be 0 or negative however it is computed
        divisor_deps = op in ("divide", "shift") and bool(frame.deps(values[-1]) - {ORDER, WHOLE})
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


def _field_atoms(values):
    """The FieldOf atoms of `values`, and of the elements of sequences among them."""
    for v in values:
        for a in v.atoms:
            if isinstance(a, FieldOf):
                yield a
            elif isinstance(a, Seq):
                yield from (x for x in a.elem.atoms if isinstance(x, FieldOf))
