"""Random flows over the function families behind issue 16's soundness bugs.

Every family the fuzzer found a bug in has members here, for either input:
conditional bases (`r if c else {}`), deletions (`del`, `pop` with and without
a default), copies made by `update`, `dict`, `copy.copy`, `None` returns,
strict self-copies, reads of fields an earlier function may create, arithmetic
that raises on None or 0 (guarded and not), a reader of a module table and its
impure writer, CoGroups built from either side (outer, forwarding), Match
functions that delete, Reduces that copy the group's first record.

Issue 28's families (`tests/soundness_families.py`: unknown writes through helpers,
computed keys and unbound methods, `setdefault`, Reduces that write a field, outer
CoGroups and `update`-copies whose outputs depend on their position) are drawn as often
as the older ones, writing one of two field names, so that both inputs may write the
same field.

`random_flow(rng)` draws a flow of 2 to 6 operators over two small sources
with duplicates, None keys and values, and records that lack a field;
`outcome(flow)` is its bag on the reference interpreter, or "raises".
"""

from __future__ import annotations

import collections
import copy
import dataclasses
import math
import random

import udflow as uf
from udflow import UdfRuntimeError
from udflow.plan import Source

from tests import soundness_families as families

SHARED_TABLE: dict = {}


def _named(fn, name):
    fn.__name__ = fn.__qualname__ = name
    return fn


def maps(p: str) -> list:
    """Maps and filters over the fields of input `p` ("a" or "b")."""
    k, v, s = f"{p}_k", f"{p}_v", f"{p}_s"

    def cond_base(r):
        base = r if (r[v] or 0) > 0 else {}
        return {**base, "x": 1}

    def delete(r):
        del r[s]
        return r

    def pop_default(r):
        r.pop(s, None)
        r["y"] = 1
        return r

    def update_copy(r):
        d = {}
        d.update(r)
        d["x"] = 1
        return d

    def dict_copy(r):
        d = dict(r)
        d["z"] = (d[v] or 0) + 1
        return d

    def copy_copy(r):
        d = copy.copy(r)
        d["w"] = 2
        return d

    def none_return(r):
        if r[v] is None:
            return None
        return r

    def strict_self(r):
        return {**r, k: r[k]}

    def get_created(r):
        return {**r, "g": r.get("x", -5)}

    def divide(r):
        return {**r, "q": 12 // r[v]}

    def guarded_divide(r):
        return {**r, "q": 12 // r[v] if r[v] else 0}

    def positive(r):
        return r[v] is not None and r[v] > 0

    def has_s(r):
        return r.get(s)

    def shared_reader(r):
        return {**r, "t": SHARED_TABLE.get(r[k])}

    def shared_writer(r):
        SHARED_TABLE[r[k]] = r[v]
        return r

    fns = [cond_base, delete, pop_default, update_copy, dict_copy, copy_copy, none_return, strict_self,
           get_created, divide, guarded_divide, positive, has_s, shared_reader, shared_writer]
    return [_named(f, f"{f.__name__}_{p}") for f in fns]


FILTERS = {"positive", "has_s"}


def reduces(p: str) -> list:
    v = f"{p}_v"

    def first_spread(rows):
        rows = list(rows)
        yield {**rows[0], "cnt": len(rows)}

    def total(rows):
        rows = list(rows)
        yield {**rows[0], "tot": sum(r[v] or 0 for r in rows)}

    def any_positive(rows):
        rows = list(rows)
        if any((r[v] or 0) > 0 for r in rows):
            yield from rows

    return [_named(f, f"{f.__name__}_{p}") for f in (first_spread, total, any_positive)]


def cg_outer_first(left, right):
    left, right = list(left), list(right)
    first = left[0] if left else {}
    second = right[0] if right else {}
    yield {**first, **second}


def cg_left_if_right(left, right):
    right = list(right)
    if right:
        for rec in left:
            yield {**rec, "n": len(right)}


def cg_right_if_left(left, right):
    left = list(left)
    if left:
        for rec in right:
            yield {**rec, "n": len(left)}


def cg_outer_copy(left, right):
    left, right = list(left), list(right)
    base = left[0] if left else (right[0] if right else {})
    yield {**base, "n": len(left) + len(right)}


def j_merge(left, right):
    return {**left, **right, "m": (left["a_v"] or 0) + (right["b_v"] or 0)}


def j_minus(left, right):
    out = {**left, **right}
    del out["b_v"]
    return out


COGROUPS = [cg_outer_first, cg_left_if_right, cg_right_if_left, cg_outer_copy]
MATCH_FNS = [None, j_merge, j_minus]


def source_rows(rng: random.Random, p: str) -> list:
    rows = []
    for _ in range(rng.randint(0, 4)):
        row = {f"{p}_k": rng.choice([None, 0, 1, 2]), f"{p}_v": rng.choice([None, -1, 0, 1, 3]),
               f"{p}_s": rng.choice([None, "", "x"])}
        if rng.random() < 0.15:
            del row[f"{p}_s"]  # a record that lacks a field
        rows.append(row)
    return rows + rows[:rng.randint(0, 2)]  # duplicates


def random_flow(rng: random.Random) -> uf.Flow:
    a = uf.source("a", rows=source_rows(rng, "a"), fields=["a_k", "a_v", "a_s"])
    b = uf.source("b", rows=source_rows(rng, "b"), fields=["b_k", "b_v", "b_s"])
    a, b = _unary(rng, a, "a", rng.randint(0, 2)), _unary(rng, b, "b", rng.randint(0, 1))
    kind = rng.choice(["match", "match", "cross", "cogroup"])
    if kind == "match":
        flow = a.match(b, on=("a_k", "b_k"), f=rng.choice(MATCH_FNS + families.BINARY))
    elif kind == "cross":
        flow = a.cross(b, f=rng.choice([None, None] + families.BINARY))
    else:
        flow = a.cogroup(b, on=("a_k", "b_k"), f=rng.choice(COGROUPS + families.COGROUPS))
    return _unary(rng, flow, rng.choice("ab"), rng.randint(0, 2), reduce_key=("a_k",) if kind != "cogroup" else None)


def _unary(rng, flow, p, n, reduce_key=None):
    used = set()
    for _ in range(n):
        written = rng.choice(["x", "y"])  # the field issue 28's families write
        if rng.random() < 0.2 and (reduce_key or p == "a" or p == "b"):
            fn = rng.choice(reduces(p) if rng.random() < 0.5 else families.reducers(p, written))
            if fn.__name__ in used:
                continue
            used.add(fn.__name__)
            key = reduce_key or (f"{p}_k",)
            if key[0] in (flow.fields or ()):
                flow = flow.reduce(list(key), fn)
            continue
        fn = rng.choice(maps(p) if rng.random() < 0.5 else families.unary(p, written))
        if fn.__name__ in used or (flow.fields is not None and f"{p}_k" not in flow.fields):
            continue
        used.add(fn.__name__)
        flow = flow.filter(fn) if fn.__name__.rsplit("_", 1)[0] in FILTERS else flow.map(fn)
    return flow


def canon(v):
    if isinstance(v, float) and math.isnan(v):
        return ("nan",)
    if isinstance(v, dict):
        return ("d", tuple(sorted((repr(k), canon(x)) for k, x in v.items())))
    return (type(v).__name__, repr(v))


def outcome(flow: uf.Flow):
    """The bag of `flow` on the reference interpreter, or "raises"."""
    SHARED_TABLE.clear()
    try:
        records = flow.collect(engine="reference")
    except UdfRuntimeError:
        return "raises"
    return collections.Counter(tuple(sorted((k, canon(v)) for k, v in r.items())) for r in records)


def optimized(flow: uf.Flow, stats: collections.Counter):
    """`uf.optimize(flow, mode="full")`; a flow that raises while its functions are sampled
    is profiled on its plan with empty sources instead (the alternatives are the same)."""
    SHARED_TABLE.clear()
    try:
        return uf.optimize(flow, mode="full")
    except UdfRuntimeError:
        stats["raises while sampling"] += 1
    SHARED_TABLE.clear()
    profiles = uf.optimize(uf.Flow(_emptied(flow.root)), mode="full").profiles
    SHARED_TABLE.clear()
    return uf.optimize(flow, mode="full", profiles=profiles)


def _emptied(node):
    if isinstance(node, Source):
        return dataclasses.replace(node, rows=())
    return node.with_inputs(*(_emptied(c) for c in node.inputs))


def check_flow(flow: uf.Flow, stats: collections.Counter) -> list:
    """Every alternative of `flow` against the plan as written: the differences found, a bag
    that differs or an error the plan as written does not raise. A plan that runs where the
    plan as written raises is counted ("avoided error"), not a difference: a reordering may
    put a filter before the function that fails on the records it drops, as every SQL
    engine does; it may never make a pipeline that ran fail (issue 16, item 2)."""
    expected = outcome(flow)
    opt = optimized(flow, stats)
    stats["flows"] += 1
    stats["refused by the field-flow check"] += len(opt.alternatives.refused)
    stats["raising flows"] += expected == "raises"
    problems = []
    for alt in opt.alternatives:
        stats["alternatives"] += 1
        got = outcome(alt.flow)
        if got == expected:
            continue
        kind = "introduced error" if got == "raises" else "avoided error" if expected == "raises" else "bag"
        stats[kind] += 1
        if kind != "avoided error":  # a plan may avoid an error, e.g. a filter now runs first
            problems.append((kind, str(flow), str(alt.flow)))
    return problems
