"""From a function to `UdfProperties`: run the interpreter, then read the
write set, the output fields and the copy mode off the dicts it emitted
(paper, section 5: "we start by collecting all statements emit($or) ... and
track the origin of $or").

For every emitted dict the summary knows, field by field, whether its value
is the unchanged input field (`FieldOf` of the same name: explicit or implicit
copy) or anything else (a write). An input field a dict does not carry on some
path is projected away: also a write (Definition 2).
"""

from __future__ import annotations

import ast
import dataclasses
import functools
import inspect
import types
from typing import Optional

from udflow.analysis import constructs, helper_models
from udflow.analysis import emits as emit_bounds
from udflow.analysis.groups import forwarding_lines
from udflow.analysis.interpreter import Frame
from udflow.analysis.model import RAISES, ExplodeModel, GroupFilterModel
from udflow.analysis.properties import BINARY_KINDS, EmitShape, Evidence, RaiseSite, UdfProperties
from udflow.analysis.state import RECORD_KINDS, Analysis, Impure, Unit, unit_of
from udflow.analysis.syntax import always_returns, is_generator
from udflow.analysis.values import (
    NO_BASE,
    ORDER,
    WHOLE,
    Const,
    FieldOf,
    GroupRef,
    Other,
    RecObj,
    RecRef,
    Val,
    deps_of,
    val,
)
from udflow.expr import GroupRows
from udflow.field_types import python_family
from udflow.plan import function_location

GROUP_KINDS = ("reduce", "cogroup")

# The words of an `opaque` answer given because the analysis itself failed (origin "internal"):
# never the user's fault, and a test over a corpus of functions asserts it never happens.
INTERNAL_ERROR = "udflow's analysis failed with an internal error"


def opaque(kind: str, sides: tuple, reason: str, location: str, line: int = 0, file: str = "",
           text: str = "", origin: str = "opaque") -> UdfProperties:
    """The conservative answer: reads and writes everything, emits any number of records.

    A filter operator still emits at most its input record (0..1), but an impure
    predicate may change that record in place, so it too writes everything.
    """
    every = frozenset().union(*sides) if sides else frozenset()
    return UdfProperties(
        kind=kind,
        reads=every,
        writes=every,
        emits=(0, 1) if kind == "filter" else (0, None),
        card_reads=every,
        copy=False,
        pure=False,
        output_fields=None,
        new_fields=frozenset(),
        side_reads=tuple(sides),
        evidence=(Evidence("impure", None, line, file, text, reason),),
        origin=origin,
        location=location,
        model_reason=f"impure: {reason}" + (f" (line {line})" if line else ""),
    )


def _unwrap_partial(f):
    """`functools.partial(g, *bound)`: the function g and its bound arguments (nested partials flattened)."""
    args, kwargs = (), {}
    while isinstance(f, functools.partial):
        args = tuple(f.args) + args
        kwargs = {**(f.keywords or {}), **kwargs}
        f = f.func
    return f, args, kwargs


def run(f, sides: tuple, kind: str) -> UdfProperties:
    location = function_location(f)
    target, bound, bound_kw = _unwrap_partial(f)
    if isinstance(target, types.MethodType):
        return opaque(kind, sides, "a bound method: its object's state is not analysed", location)
    if not isinstance(target, types.FunctionType):
        what = getattr(target, "__name__", type(target).__name__)
        return opaque(kind, sides, f"{what} has no Python source (built-in or C extension)", location)
    code = target.__code__
    if code.co_flags & (inspect.CO_COROUTINE | inspect.CO_ASYNC_GENERATOR):
        return opaque(kind, sides, "a coroutine", location)
    unit = unit_of(target)
    if unit is None:
        return opaque(kind, sides, "no source available (made by exec/eval, or the file is gone)", location,
                      file=code.co_filename, line=code.co_firstlineno)
    an = Analysis(kind, len(sides), unit)
    an.inline_helper = functools.partial(helper_models.inlined_call, model_of=_model_of)
    try:
        frame = _entry_frame(an, unit, sides, kind, bound, bound_kw)
        _interpret(frame, unit)
        props = _with_forwarding(_summarize(an, unit, sides, kind, location), unit, target, bound, bound_kw)
        model, reason = an.model.build(unit.node.lineno, props.forwards_groups)
        if model is not None and not isinstance(model, (GroupFilterModel, ExplodeModel)) \
                and (props.emits[1] is None or props.emits[1] > 1):
            model, reason = None, "emits more than one record per call"
        return dataclasses.replace(props, model=model,
                                   model_reason=constructs.named(reason or "", unit.node, target.__globals__))
    except Impure as stop:
        where = stop.index or unit.index
        return opaque(kind, sides, stop.reason, location, stop.line, where.filename,
                      where.text(stop.line), origin="analysis")
    except RecursionError:
        return opaque(kind, sides, "too deeply nested to analyse", location, origin="analysis")
    except Exception as err:  # a construct the interpreter mishandles must never be trusted
        return opaque(kind, sides, f"{INTERNAL_ERROR} ({type(err).__name__}: {err}): a bug in udflow, not in "
                      "this function; it runs as written, as Python, and nothing moves across it",
                      location, origin="internal")


def _model_of(f, fields: frozenset):
    """The model of the Map `f` over `fields` (a helper's text edited into one, `helper_models`)."""
    return run(f, (fields,), "map").model


def _entry_frame(an: Analysis, unit: Unit, sides, kind, bound, bound_kw) -> Frame:
    node = unit.node
    frame = Frame(an, unit, None, is_udf=True, depth=0)
    a = node.args
    if a.vararg is not None or a.kwarg is not None:
        raise Impure("takes *args/**kwargs: the analysis cannot tell which one is the record", node.lineno)
    params = [p.arg for p in a.posonlyargs + a.args]
    for name, value in zip(params, bound):
        frame.env[name] = frame.outside_value(value, name, node)
    for name, value in bound_kw.items():
        frame.env[name] = frame.outside_value(value, name, node)
    free = [p for p in params if p not in frame.env]
    n_inputs = 2 if kind in BINARY_KINDS else 1
    if len(free) < n_inputs:
        raise Impure(f"expects {n_inputs} input(s) but has parameters {params}", node.lineno)
    body_block = (id(node),)
    for side, name in enumerate(free[:n_inputs]):
        if kind in GROUP_KINDS:
            row = RecObj(("row", side), "row", side=side, line=node.lineno, block=body_block)
            an.heap[row.id] = row
            group = val(GroupRef(side))
            frame.env[name] = group.with_term(GroupRows()) if kind == "reduce" else group
        else:
            rec = RecObj(("in", side), "input", side=side, line=node.lineno, block=body_block)
            an.heap[rec.id] = rec
            frame.env[name] = val(RecRef(rec.id))
    for name in free[n_inputs:]:
        if name in unit.defaults:
            frame.env[name] = frame.outside_value(unit.defaults[name], name, node)
        else:
            raise Impure(f"parameter {name} has no value", node.lineno)
    for kw in a.kwonlyargs:
        if kw.arg not in frame.env:
            if kw.arg not in unit.defaults:
                raise Impure(f"keyword-only parameter {kw.arg} has no value", node.lineno)
            frame.env[kw.arg] = frame.outside_value(unit.defaults[kw.arg], kw.arg, node)
    return frame


def _interpret(frame: Frame, unit: Unit) -> None:
    node = unit.node
    an = frame.an
    if isinstance(node, ast.Lambda):
        frame.returned(frame.ev(node.body), node.body)
        return
    frame.block = (id(node),)
    frame.run(node.body)
    if not is_generator(node) and an.kind != "filter" and not always_returns(node.body):
        # falling off the end returns None: an error for a Map/Match/Cross function (see `returned`)
        line = node.end_lineno or node.lineno
        an.return_shapes.append((True, False, line))
        if an.kind in RECORD_KINDS:
            an.raises.setdefault(("none", line, ""), RaiseSite("none", frozenset(), line))
            an.model.case([], RAISES, line)


# ---------------------------------------------------------------------------
# Summary
# ---------------------------------------------------------------------------


class _Rec:
    """What one emitted dict carries: field -> value, fields maybe missing, unknown content."""

    def __init__(self):
        self.fields: dict = {}
        self.maybe_missing: set = set()
        self.removed: set = set()  # deleted on every path (kept even where the fields are unknown)
        self.unknown_sides: set = set()  # sides copied whose field names are unknown
        self.copied_sides: set = set()
        self.maybe_copied: set = set()  # sides copied on some alternative
        self.dynamic = 0


def _resolve(an: Analysis, ref_id, pos: str, sides, seen=()) -> _Rec:
    out = _Rec()
    if ref_id == NO_BASE[0] or ref_id in seen:
        return out
    obj = an.heap[ref_id]
    seen = seen + (ref_id,)
    if obj.kind in ("input", "row"):
        out.copied_sides.add(obj.side)
        out.maybe_copied.add(obj.side)
        if not sides[obj.side]:
            out.unknown_sides.add(obj.side)
        for name in sides[obj.side]:
            out.fields[name] = val(FieldOf(obj.side, name, pos if obj.kind == "row" else "each"))
    for group in obj.base_groups:
        _merge(out, _alternatives(an, group, sides, seen))
    for name, v in obj.fields.items():
        if name in obj.must_set or name not in out.fields:
            if name not in obj.must_set and name not in out.fields:
                out.maybe_missing.add(name)
            out.fields[name] = v
        else:
            out.fields[name] = out.fields[name].join(v)
        out.removed.discard(name)
    for name in obj.deleted:
        out.fields.pop(name, None)
        out.removed.add(name)
    out.maybe_missing |= obj.maybe_deleted
    if obj.dynamic:
        out.dynamic = obj.dynamic
    return out


def _alternatives(an: Analysis, group, sides, seen) -> _Rec:
    """One base group: the dict is one of the alternatives at run time. A field is surely
    there only if every alternative carries it, a side surely copied only if every one copies it."""
    recs = [_resolve(an, bid, bpos, sides, seen) for bid, bpos in sorted(group, key=repr)]
    out = _Rec()
    for rec in recs:
        _merge(out, rec)
    everywhere = set.intersection(*(set(r.fields) for r in recs))
    out.maybe_missing |= set(out.fields) - everywhere
    out.copied_sides = set.intersection(*(r.copied_sides for r in recs))
    surely_removed = set.intersection(*(r.removed for r in recs))
    out.maybe_missing |= out.removed - surely_removed
    out.removed = surely_removed
    return out


def _merge(out: _Rec, base: _Rec) -> None:
    """`{**out, **base}`: the union of the fields (values joined where both have one)."""
    for name, v in base.fields.items():
        out.fields[name] = out.fields[name].join(v) if name in out.fields else v
    out.removed = (out.removed | base.removed) - set(out.fields)
    out.maybe_missing |= base.maybe_missing
    out.unknown_sides |= base.unknown_sides
    out.copied_sides |= base.copied_sides
    out.maybe_copied |= base.maybe_copied
    out.dynamic = out.dynamic or base.dynamic


def _summarize(an: Analysis, unit: Unit, sides, kind: str, location: str) -> UdfProperties:
    index = unit.index

    def ev(prop, fld, line, note=""):
        return Evidence(prop, fld, line, index.filename, index.text(line), note)

    def name_of(dep):
        return dep[1]

    evidence: list = []
    reads: dict = dict(an.reads)
    inputs = frozenset().union(*sides)
    writes: dict = {}
    changed: set = set()  # fields given a value other than their input's (not only removed)
    families: dict = {}  # changed field -> the type families its values may have (None: unknown)
    group_copied: set = set()
    output: Optional[set] = set()
    copy = True
    emitted_shapes: list = []  # EmitShape per emitted record
    emitted_ids = {}
    for ref, line in an.emits:
        emitted_ids.setdefault((ref.id, ref.pos), line)
    for (ref_id, pos), line in emitted_ids.items():
        rec = _resolve(an, ref_id, pos, sides)
        obj = an.heap[ref_id]
        if rec.dynamic:
            raise Impure("emits a record whose field names are computed", rec.dynamic)
        if rec.copied_sides != set(range(len(sides))):
            copy = False
            for side in range(len(sides)):
                if side not in rec.copied_sides and not sides[side]:
                    raise Impure("projects its input, whose fields are not known here", line)
        if rec.unknown_sides:
            output = None
        for name, value in rec.fields.items():
            atoms = value.atoms
            exact = len(atoms) == 1 and isinstance(next(iter(atoms)), FieldOf) and next(iter(atoms)).name == name
            if exact and name not in rec.maybe_missing:
                fo = next(iter(atoms))
                if fo.pos == "other":
                    raise Impure(f"emits field {name} of a record picked by its position in the group", line)
                if fo.pos == "first" and kind in GROUP_KINDS:
                    group_copied.add(name)
                continue
            # the unchanged input value of this same field flows only into this field: no read (Def. 3)
            deps = deps_of(Val(frozenset(a for a in atoms if not (isinstance(a, FieldOf) and a.name == name)),
                               value.deps), an.heap)
            if WHOLE in deps:
                raise Impure(f"output field {name} holds a whole input record", obj.write_lines.get(name, line))
            if ORDER in deps or any(isinstance(a, FieldOf) and a.pos == "other" for a in atoms):
                raise Impure(f"field {name} depends on the order of the records in the group", obj.write_lines.get(name, line))
            for d in deps:
                reads.setdefault(d, (obj.write_lines.get(name, line), f"flows into output field {name}", index))
            wline = obj.write_lines.get(name, line)
            if exact:  # the input's value where the field is there at all: removed on some path
                writes.setdefault(name, (wline, "removed on some path"))
                continue
            writes.setdefault(name, (wline, "new field" if name not in inputs else "modified"))
            changed.add(name)
            families.setdefault(name, set()).add(_family(value))
        for name in rec.maybe_missing:
            writes.setdefault(name, (obj.write_lines.get(name, line), "removed on some path"))
        for name in rec.removed:
            writes.setdefault(name, (obj.write_lines.get(name, line), "deleted"))
        for name in inputs:
            if name not in rec.fields and not (rec.unknown_sides and _side_of(name, sides) in rec.unknown_sides):
                writes.setdefault(name, (obj.write_lines.get(name, obj.line), "projected away"))
        if output is not None:
            output |= set(rec.fields)
        emitted_shapes.append(_shape(rec, line))
    for d, line in an.emit_deps.items():
        if d == ORDER:
            raise Impure("which records are emitted depends on the order of the records in the group", line)
    for obj in an.heap.values():
        if obj.kind in ("input", "row") and obj.mutated and not obj.emitted:
            raise Impure("changes its input record in place without emitting it", obj.mutated[0])
    if not emitted_ids:
        copy = kind == "filter"

    # emit bounds and the fields that decide them
    node = unit.node
    if kind == "filter":
        bounds = (0, 1)
    elif is_generator(node):
        bounds = emit_bounds.generator_bounds(node)
    elif kind in GROUP_KINDS and any(s[1] and s[0] for s in an.return_shapes):
        bounds = (0, None)
    else:
        shapes = an.return_shapes
        lo = 1 if shapes and all(rec and not none for none, rec, _ in shapes) else 0
        hi = 1 if any(rec for _, rec, _ in shapes) else 0
        bounds = (lo, hi)
    card = {} if bounds[0] == bounds[1] and kind != "filter" else dict(an.card)
    card.pop(ORDER, None)

    def field_set(d):
        return frozenset(name_of(k) for k in d if k != ORDER)

    for dep, line in an.strict.items():
        reads.setdefault(dep, (line, "read strictly: r[...] raises KeyError where the field is absent", index))
    reads.pop(ORDER, None)
    read_fields = field_set(reads)
    side_reads = tuple(
        frozenset(name_of(k) for k in reads if k[0] == side) for side in range(len(sides))
    )
    for dep, (line, note, idx) in sorted(reads.items(), key=lambda kv: (kv[1][0], kv[0][1])):
        if dep != ORDER:
            evidence.append(Evidence("reads", dep[1], line, idx.filename if idx else index.filename,
                                     (idx or index).text(line), note))
    if kind == "filter":
        writes = {}
        output_fields = inputs if inputs else None
        copy = True
    else:
        output_fields = frozenset(output) if output is not None else None
    for name, (line, note) in sorted(writes.items(), key=lambda kv: (kv[1][0], kv[0])):
        evidence.append(ev("writes", name, line, note))
    for dep, line in sorted(card.items(), key=lambda kv: kv[1]):
        where = an.reads.get(dep)  # the condition that first used it, when in this file
        if where and where[2] is index:
            line = where[0]
        evidence.append(ev("card_reads", dep[1], line, "decides how many records are emitted"))
    for ref_line in sorted(set(emitted_ids.values())):
        evidence.append(ev("emits", None, ref_line, f"emits between {bounds[0]} and {bounds[1] if bounds[1] is not None else 'any number of'} records"))
    for name, line in sorted(an.state_reads.items(), key=lambda kv: kv[1]):
        evidence.append(ev("state", name, line, "reads a mutable module global or closure value"))
    for site in sorted(an.raises.values(), key=lambda s: (s.line, s.op, s.name)):
        evidence.append(ev("raises", None, site.line, f"may raise: {site}"))
    for name in sorted(group_copied):
        evidence.append(ev("copy", name, emitted_ids and min(emitted_ids.values()) or 0,
                           "copied from the group's first record: assumed constant within the group"))
    new_fields = frozenset(n for n in writes if n not in inputs) if kind != "filter" else frozenset()
    if output_fields is not None:
        new_fields |= output_fields - inputs if inputs else frozenset()
    return UdfProperties(
        kind=kind,
        reads=read_fields,
        writes=frozenset(writes),
        emits=bounds,
        card_reads=field_set(card),
        copy=copy,
        pure=True,
        output_fields=output_fields,
        new_fields=new_fields if inputs else frozenset(n for n in writes if n not in inputs),
        side_reads=side_reads,
        evidence=tuple(evidence),
        origin="analysis",
        location=location,
        group_copied=frozenset(group_copied),
        state_reads=frozenset(an.state_reads),
        changed=frozenset(changed) if kind != "filter" else frozenset(),
        output_types=tuple(sorted((n, f.pop()) for n, f in families.items() if len(f) == 1 and None not in f)),
        raises=tuple(sorted(an.raises.values(), key=lambda s: (s.line, s.op, s.name))),
        emitted=None if kind == "filter" else tuple(emitted_shapes),
    )


def _shape(rec: "_Rec", line: int) -> EmitShape:
    """The `EmitShape` of one emitted record: a field whose value is exactly one input's value
    of the same name is carried; any other value is the function's own (blended where the
    input's value of the field is among its possibilities)."""
    carried, computed, blended = [], set(), set()
    for name, value in rec.fields.items():
        same = [a for a in value.atoms if isinstance(a, FieldOf) and a.name == name]
        if len(value.atoms) == 1 and same:
            carried.append((name, same[0].side))
            continue
        computed.add(name)
        if same:
            blended.add(name)
    return EmitShape(
        carried=tuple(sorted(carried)),
        computed=frozenset(computed),
        blended=frozenset(blended),
        maybe_missing=frozenset(rec.maybe_missing),
        removed=frozenset(rec.removed),
        copied=frozenset(rec.copied_sides),
        maybe_copied=frozenset(rec.maybe_copied),
        line=line,
    )


def _with_forwarding(props: UdfProperties, unit: Unit, target, bound, bound_kw) -> UdfProperties:
    """Add `forwards_groups` to a pure Reduce that emits its records unchanged, and
    `forwards_sides` to a pure CoGroup that emits records of one input one for one.

    The interpreter vouches for purity and for what is written (for a Reduce: nothing,
    by implicit copy); `groups.forwarding_lines` that each call yields its whole group
    once or not at all.
    """
    node = unit.node
    if not props.pure or not isinstance(node, ast.FunctionDef):
        return props
    params = [p.arg for p in node.args.posonlyargs + node.args.args][len(bound):]
    free = [p for p in params if p not in bound_kw]
    index = unit.index
    if props.kind == "reduce" and free and not props.writes and props.copy:
        lines = forwarding_lines(node, free[0], target.__globals__)
        if lines is None:
            return props
        found = tuple(Evidence("forwards_groups", None, line, index.filename, index.text(line),
                               "emits the whole group unchanged, or nothing") for line in lines)
        return dataclasses.replace(props, forwards_groups=True, evidence=props.evidence + found)
    if props.kind == "cogroup" and len(free) == 2:
        sides, found = set(), []
        for side, group in enumerate(free):
            lines = forwarding_lines(node, group, target.__globals__, extend=True)
            if lines is not None:
                sides.add(side)
                found += [Evidence("forwards_sides", str(side), line, index.filename, index.text(line),
                                   f"emits each record of input {side} once, or none of them")
                          for line in lines]
        if sides:
            return dataclasses.replace(props, forwards_sides=frozenset(sides),
                                       evidence=props.evidence + tuple(found))
    return props


def _family(value: Val):
    """The type family of a value known never to be None (see `Other.family`), else None."""
    families = set()
    for a in value.atoms:
        if isinstance(a, Other) and a.family is not None:
            families.add(a.family)
        elif isinstance(a, Const) and a.value is not None:
            families.add(python_family(a.value))
        else:
            return None
    return families.pop() if len(families) == 1 else None


def _side_of(name, sides):
    for i, s in enumerate(sides):
        if name in s:
            return i
    return -1
