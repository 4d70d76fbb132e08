"""A stable fingerprint of a pipeline: what its optimization result depends on.

The result of optimizing a pipeline is a function of

1. the pipeline's module source text;
2. the plan: every operator's kind, label, keys and flags, every source's
   schema, keys, data (in-memory rows) or files (path, size, modification time);
3. the code of every user function in it, followed into what it uses: its
   closure cells, the module globals it names, the functions those name, and
   `functools.partial` arguments;
4. the rule set: the source of udflow's analysis, rules and engine, and the
   rules a user registered (their fields and the source file of their class);
5. the properties mode ("analysis" or "manual").

`pipeline_key` hashes all of them. Anything whose value has no stable
description (an object whose repr shows a memory address) makes the key
unique to this run, so such a pipeline is simply never served from the cache:
a miss costs time, a wrong hit would cost correctness.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import inspect
import os
import types
import uuid
from typing import Any, Optional

import udflow
from udflow.flow import Flow
from udflow.plan import Custom, Node, OperatorType, Source

FORMAT = "udflow-batch-1"
_RULE_SET_PARTS = ("analysis", "rules", "engine", "plan.py", "flow.py", "reference.py", "batch/outcome.py")
_SIMPLE = (type(None), bool, int, float, complex, str, bytes)


class _Unstable(Exception):
    """A value without a stable description was reached."""


@functools.lru_cache(maxsize=1)
def rule_set_hash() -> str:
    """Hash of the optimizer's own source: analysis, rules, engine and the plan model."""
    digest = hashlib.sha256(FORMAT.encode())
    base = os.path.dirname(udflow.__file__)
    for part in _RULE_SET_PARTS:
        path = os.path.join(base, part)
        files = [path] if os.path.isfile(path) else sorted(
            os.path.join(folder, f) for folder, _, names in os.walk(path) for f in names if f.endswith(".py")
        )
        for f in sorted(files):
            digest.update(os.path.relpath(f, base).encode())
            with open(f, "rb") as fh:
                digest.update(hashlib.sha256(fh.read()).digest())
    return digest.hexdigest()


def file_hash(path: str) -> str:
    with open(path, "rb") as fh:
        return hashlib.sha256(fh.read()).hexdigest()


class _Hasher:
    """Describes plans, functions and values as text, following references once each."""

    def __init__(self, depth: int = 6):
        self.parts: list[str] = []
        self.seen: set[int] = set()
        self.depth = depth

    def add(self, *items: str) -> None:
        self.parts.extend(items)

    # -- values --------------------------------------------------------------

    def value(self, v: Any, depth: int) -> None:
        if isinstance(v, _SIMPLE):
            self.add(f"{type(v).__name__}:{v!r}")
        elif isinstance(v, (tuple, list, set, frozenset)):
            items = sorted(v, key=repr) if isinstance(v, (set, frozenset)) else v
            self.add(f"{type(v).__name__}[{len(items)}")
            for item in items:
                self.value(item, depth)
            self.add("]")
        elif isinstance(v, dict):
            self.add(f"dict[{len(v)}")
            for k in sorted(v, key=repr):
                self.value(k, depth)
                self.value(v[k], depth)
            self.add("]")
        elif isinstance(v, Node):
            self.node(v)
        elif isinstance(v, Flow):
            self.node(v.root)
        elif isinstance(v, types.ModuleType):
            self.add(f"module:{v.__name__}")
        elif isinstance(v, type):
            self.add(f"type:{v.__module__}.{v.__qualname__}")
        elif callable(v):
            self.function(v, depth)
        else:
            self.instance(v, depth)

    def instance(self, v: Any, depth: int) -> None:
        """An object: its repr when that is a value, else its class and attributes."""
        kind = f"{type(v).__module__}.{type(v).__qualname__}"
        text = repr(v)
        if " at 0x" not in text and " object at " not in text:
            self.add(f"{kind}:{text}")
            return
        state = _state(v)
        if state is None or id(v) in self.seen or depth > self.depth:
            raise _Unstable(text)
        self.seen.add(id(v))
        self.add(f"object:{kind}")
        self.value(state, depth + 1)

    # -- functions -----------------------------------------------------------

    def code(self, code: types.CodeType) -> None:
        self.add(code.co_name, code.co_code.hex(), repr(code.co_names), repr(code.co_varnames),
                 repr(code.co_freevars), os.path.basename(code.co_filename), str(code.co_firstlineno),
                 code.co_linetable.hex())
        for const in code.co_consts:
            if isinstance(const, types.CodeType):
                self.code(const)
            else:
                self.add(repr(const))

    def function(self, fn: Any, depth: int) -> None:
        if fn is None:
            self.add("concat")
            return
        if id(fn) in self.seen:
            self.add(f"seen:{getattr(fn, '__qualname__', type(fn).__name__)}")
            return
        self.seen.add(id(fn))
        if depth > self.depth:
            raise _Unstable(f"functions nested deeper than {self.depth}")
        if isinstance(fn, functools.partial):
            self.add("partial")
            self.function(fn.func, depth + 1)
            self.value(fn.args, depth + 1)
            self.value(fn.keywords, depth + 1)
        elif isinstance(fn, types.FunctionType):
            self.add(f"fn:{fn.__module__}.{fn.__qualname__}")
            self.code(fn.__code__)
            self.value(fn.__defaults__ or (), depth + 1)
            for cell in fn.__closure__ or ():
                try:
                    self.value(cell.cell_contents, depth + 1)
                except ValueError:  # an empty cell
                    self.add("empty-cell")
            for name in _global_names(fn.__code__):
                if name in fn.__globals__:
                    self.add(f"global:{name}")
                    self.value(fn.__globals__[name], depth + 1)
        elif isinstance(fn, (types.BuiltinFunctionType, types.MethodType)) and not hasattr(fn, "__code__"):
            owner = getattr(fn, "__self__", None)
            if owner is not None and not isinstance(owner, types.ModuleType):
                raise _Unstable(repr(fn))
            self.add(f"builtin:{getattr(fn, '__module__', '')}.{getattr(fn, '__qualname__', repr(fn))}")
        elif isinstance(fn, types.MethodType):
            self.function(fn.__func__, depth + 1)
            self.value(fn.__self__, depth + 1)
        else:  # a callable object: its class's __call__ and its attributes
            call = getattr(type(fn), "__call__", None)
            self.add(f"callable:{type(fn).__module__}.{type(fn).__qualname__}")
            if isinstance(call, types.FunctionType):
                self.function(call, depth + 1)
            self.value(_state(fn), depth + 1)

    # -- plans ---------------------------------------------------------------

    def node(self, node: Node) -> None:
        self.add(f"node:{node.kind}:{node.label}")
        if isinstance(node, Source):
            self.source(node)
        elif isinstance(node, Custom):
            self.op_type(node.op_type)
            self.value(node.params, 0)
        else:
            for f in dataclasses.fields(node):
                if f.name in ("label", "input", "left", "right"):
                    continue
                value = getattr(node, f.name)
                if f.name == "fn":
                    self.function(value, 0)
                else:
                    self.value(value, 0)
        for child in node.inputs:
            self.node(child)

    def op_type(self, op: OperatorType) -> None:
        self.add(f"optype:{op.name}:{op.arity}:{op.record_at_a_time}:{op.disjoint_inputs}")
        for part in (op.reference, op.output_fields, op.properties, op.spark):
            self.function(part, 0) if part is not None else self.add("none")

    def source(self, src: Source) -> None:
        self.value((src.table, src.fields, src.columns, src.key, src.prefix, src.format), 0)
        self.value(tuple((fk.fields, fk.target, fk.target_fields) for fk in src.foreign_keys), 0)
        if src.path is None:
            self.value(src.rows, 0)
            return
        for path in _files_under(src.path):
            st = os.stat(path)
            self.add(f"file:{path}:{st.st_size}:{st.st_mtime_ns}")


def _state(obj: Any) -> Optional[dict]:
    """An object's attributes (`__dict__` and `__slots__`); None when it has neither."""
    state = dict(getattr(obj, "__dict__", None) or {})
    slots = [name for cls in type(obj).__mro__ for name in getattr(cls, "__slots__", ())]
    for name in slots:
        if name not in ("__dict__", "__weakref__") and hasattr(obj, name):
            state[name] = getattr(obj, name)
    if not state and not hasattr(obj, "__dict__") and not slots:
        return None
    return state


def _global_names(code: types.CodeType) -> list[str]:
    names = list(code.co_names)
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            names.extend(_global_names(const))
    return sorted(set(names))


def _files_under(path: str) -> list[str]:
    if os.path.isfile(path):
        return [path]
    return sorted(os.path.join(d, f) for d, _, names in os.walk(path) for f in names)


def flow_fingerprint(root: Node) -> str:
    """Hash of the plan and its functions' code; unique per call when something is unstable."""
    hasher = _Hasher()
    try:
        hasher.node(root)
    except _Unstable:
        return "unstable-" + uuid.uuid4().hex
    return hashlib.sha256("\x00".join(hasher.parts).encode()).hexdigest()


def user_rules_hash() -> str:
    """Hash of the rules users registered (udflow.rules.register_rules): each rule's fields and
    the source file of its class. Computed per call: importing a module may register rules."""
    from udflow.rules import builtin_rules, rules

    builtin = {id(r) for r in builtin_rules()}
    hasher = _Hasher()
    for rule in rules():
        if id(rule) in builtin:
            continue
        hasher.add(f"rule:{type(rule).__module__}.{type(rule).__qualname__}")
        source = inspect.getsourcefile(type(rule))
        if source:
            hasher.add(file_hash(source))
        hasher.value(getattr(rule, "__dict__", None) or repr(rule), 0)
    return hashlib.sha256("\x00".join(hasher.parts).encode()).hexdigest()


def pipeline_key(name: str, module_file: str, root: Node, properties: str) -> str:
    """The cache key of one pipeline's optimization result (see the module docstring)."""
    fp = flow_fingerprint(root)
    if fp.startswith("unstable-"):
        return fp
    try:
        user_rules = user_rules_hash()
    except _Unstable:
        return "unstable-" + uuid.uuid4().hex
    parts = (FORMAT, udflow.__version__, name, file_hash(module_file), fp, rule_set_hash(), user_rules,
             properties)
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()
