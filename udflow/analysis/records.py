"""The record model: dicts in the abstract heap, and how the function reads,
writes, copies, deletes and iterates over them.

A dict is allocated once per site (`alloc`), so loops reach a fixpoint. Its
fields are set definitely (`must`, in the block that made it) or maybe; a copy
(`**r`, `dict(r)`, `r.copy()`) adds a base group whose fields it inherits.
Reading `r["f"]` of an input record yields `FieldOf(f)`; a field whose name is
computed makes the function impure when the dict is a record (an input record,
a group row, or a copy of one).
"""

from __future__ import annotations

import ast
from typing import Optional

from udflow.analysis import known
from udflow.analysis.properties import RaiseSite
from udflow.analysis.values import (
    NO_BASE,
    NONE,
    ORDER,
    OTHER,
    Const,
    FieldOf,
    GroupRef,
    LocalFn,
    Other,
    PyObj,
    RecObj,
    RecRef,
    Seq,
    Tup,
    Val,
    as_other_row,
    join_all,
    val,
)


class Records:
    """The record/heap part of a `Frame` (see `interpreter`): it uses the frame's
    `an`, `block`, `pc`, `env`, `group_loops`, `ev` and `deps`."""

    def alloc(self, node, kind: str = "fresh") -> RecObj:
        # one object per allocation site, and per round of the unrolled loops around it
        key = ("site", id(node)) + self.unrolled
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
            line = getattr(node, "lineno", 0)
            self.an.strict.setdefault((obj.side, name), line)
            self.an.raises.setdefault(("key", line, name), RaiseSite("key", frozenset({name}), line, name=name))
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
                    out = out.join(as_other_row(elem) if a.ordered else elem)
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

    def delete(self, container: Val, key_node, node, strict: bool = True) -> None:
        """`del d[k]` (and `d.pop(k)`, `strict`: KeyError where k is absent; `d.pop(k, default)`
        is not strict)."""
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
            if strict:
                self.strict_read(a, name, node)
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

    def truth_deps(self, v: Val) -> frozenset:
        """The fields the truthiness of `v` depends on. A list is truthy iff it is not empty, so
        what decides is what decides its length (as for `len`, `b_len`), not its records'
        contents: `if [r for r in rows if r["tip"] is not None]` reads `tip`, not whole rows."""
        out = set(v.deps)
        for a in v.atoms:
            if isinstance(a, Seq):
                elem = Val(frozenset(x for x in a.elem.atoms if not isinstance(x, RecRef)), a.elem.deps)
                out |= self.deps(elem)
            else:
                out |= self.deps(val(a))
        return frozenset(out)

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


def _const_names(key: Val) -> tuple:
    """The field names a key may be, when every possibility is a constant string."""
    if key.atoms and all(isinstance(a, Const) and isinstance(a.value, str) for a in key.atoms):
        return tuple(sorted(a.value for a in key.atoms))
    return ()
