"""A library of analysable functions and a random-flow builder for the differential tests.

Three sources a(a_k, a_v), b(b_k, b_v), c(c_k, c_v); values are small ints or
None. Every function is None-safe and order-independent (Reduce functions
append a per-group value to every record), so any difference between two plans
is a difference of bags, never of iteration order.
"""

import udflow as uf

# -- filters -------------------------------------------------------------------------------


def a_v_pos(r):
    return r["a_v"] is not None and r["a_v"] > 0


def a_k_even(r):
    return r["a_k"] is not None and r["a_k"] % 2 == 0


def b_v_pos(r):
    return r["b_v"] is not None and r["b_v"] > 0


def b_k_small(r):
    return r["b_k"] is not None and r["b_k"] < 2


def c_v_odd(r):
    if r["c_v"] is not None and r["c_v"] % 2 == 1:
        yield r


def a_v_below_b_v(r):
    return r["a_v"] is not None and r["b_v"] is not None and r["a_v"] < r["b_v"]


# -- maps ----------------------------------------------------------------------------------


def inc_a_v(r):
    return {**r, "a_v": None if r["a_v"] is None else r["a_v"] + 1}


def abs_b_v(r):
    return {**r, "b_v": None if r["b_v"] is None else abs(r["b_v"])}


def flag_a(r):
    return {**r, "a_flag": r["a_k"] is None}


def sum_ab(r):
    return {**r, "ab": (r["a_v"] or 0) + (r["b_v"] or 0)}


def twice_c(r):
    yield {**r, "c_v": r["c_v"]}
    yield {**r, "c_v": None}


# -- reduces (per record: order-independent) ---------------------------------------------


def count_a(rows):
    rows = list(rows)
    for r in rows:
        yield {**r, "n_a": len(rows)}


def total_b(rows):
    rows = list(rows)
    total = sum(r["b_v"] or 0 for r in rows)
    for r in rows:
        yield {**r, "tot_b": total}


def total_a(rows):
    rows = list(rows)
    total = sum(r["a_v"] or 0 for r in rows)
    for r in rows:
        yield {**r, "tot_a": total}


def a_groups_with_pos(rows):
    """A group filter: the whole a_k group when one of its a_v is positive, else nothing."""
    rows = list(rows)
    if any(r["a_v"] is not None and r["a_v"] > 0 for r in rows):
        yield from rows


# -- issue 28's families: writes the analysis cannot read exactly, or only for one position ----


def _first_value(a_v=None, b_v=None, **rest):
    return a_v if a_v is not None else b_v


def helper_x(r):
    """`**r` into a helper: unknown writes."""
    return {**r, "x": _first_value(**r)}


def setdefault_x(r):
    r.setdefault("x", 0)
    return r


def yield_from_x(r):
    yield from _with_x(r)


def _with_x(r):
    yield r
    if r.get("b_v"):
        yield {**r, "x": 1}


# name -> (kind, function, needed fields, key for reduces)
UNARY = {
    "a_v_pos": ("filter", a_v_pos, {"a_v"}, None),
    "a_k_even": ("filter", a_k_even, {"a_k"}, None),
    "b_v_pos": ("filter", b_v_pos, {"b_v"}, None),
    "b_k_small": ("filter", b_k_small, {"b_k"}, None),
    "c_v_odd": ("map", c_v_odd, {"c_v"}, None),
    "a_v_below_b_v": ("filter", a_v_below_b_v, {"a_v", "b_v"}, None),
    "inc_a_v": ("map", inc_a_v, {"a_v"}, None),
    "abs_b_v": ("map", abs_b_v, {"b_v"}, None),
    "flag_a": ("map", flag_a, {"a_k"}, None),
    "sum_ab": ("map", sum_ab, {"a_v", "b_v"}, None),
    "twice_c": ("map", twice_c, {"c_v"}, None),
    "count_a[a_k]": ("reduce", count_a, {"a_k"}, ["a_k"]),
    "total_b[b_k]": ("reduce", total_b, {"b_k"}, ["b_k"]),
    "total_a[a_k]": ("reduce", total_a, {"a_k"}, ["a_k"]),
    "total_a[b_k]": ("reduce", total_a, {"a_v", "b_k"}, ["b_k"]),
    "count_a[a_k,b_v]": ("reduce", count_a, {"a_k", "b_v"}, ["a_k", "b_v"]),
    "a_groups_with_pos[a_k]": ("reduce", a_groups_with_pos, {"a_k", "a_v"}, ["a_k"]),
}
# issue 28's families, drawn by their own differential test
FAMILIES = {
    "helper_x": ("map", helper_x, {"a_v"}, None),
    "setdefault_x": ("map", setdefault_x, {"b_k"}, None),
    "yield_from_x": ("map", yield_from_x, {"b_v"}, None),
}


def apply_unary(flow, name):
    """`flow` with the library operator `name` on top, or None when its fields are missing."""
    kind, fn, needs, key = UNARY[name] if name in UNARY else FAMILIES[name]
    fields = flow.fields or frozenset()
    if not needs <= fields:
        return None
    if any(n.label.startswith(f"{kind.title()}({fn.__name__})") or n.label.endswith(f"({fn.__name__})")
           for n in flow.operators):
        return None  # one use per function keeps labels readable
    if kind == "filter":
        return flow.filter(fn)
    if kind == "map":
        return flow.map(fn)
    return flow.reduce(key, fn)


def first_per_b_k(rows):
    """The first record per b_k value: what b holds when b_k is its primary key."""
    seen, unique = set(), []
    for r in rows:
        if r["b_k"] not in seen:
            seen.add(r["b_k"])
            unique.append(r)
    return unique


def sources(bags, b_key=False, fk=False):
    a_rows, b_rows, c_rows = bags
    if b_key:  # a primary key must hold
        b_rows = first_per_b_k(b_rows)
    fks = {("a_k",): ("b", ("b_k",))} if fk else None
    return (uf.source("a", rows=a_rows, fields=["a_k", "a_v"], foreign_keys=fks),
            uf.source("b", rows=b_rows, fields=["b_k", "b_v"], key=["b_k"] if b_key else None),
            uf.source("c", rows=c_rows, fields=["c_k", "c_v"]))


def build(spec, bags):
    """A flow from a spec: (shape, ops on a, ops on b, ops on c, top ops, binary kinds, keys)."""
    shape, on_a, on_b, on_c, top, binaries, b_key = spec
    a, b, c = sources(bags, b_key=b_key, fk=b_key)

    def stack(flow, names):
        for name in names:
            nxt = apply_unary(flow, name)
            if nxt is not None:
                flow = nxt
        return flow

    a, b, c = stack(a, on_a), stack(b, on_b), stack(c, on_c)
    if shape == "linear":
        flow = a
    else:
        flow = a.match(b, on=("a_k", "b_k")) if binaries[0] == "match" else a.cross(b)
        if shape == "three":
            if binaries[1] == "match":
                flow = flow.match(c, on=("b_k", "c_k"))
            elif binaries[1] == "cross":
                flow = flow.cross(c)
            elif binaries[1] == "cogroup":
                flow = flow.cogroup(c, on=("a_k", "c_k"), f=pair_up)
            elif binaries[1] == "cogroup_outer":
                flow = flow.cogroup(c, on=("a_k", "c_k"), f=left_outer_fill)
            else:
                flow = flow.cogroup(c, on=("a_k", "c_k"), f=with_c_count)
    return stack(flow, top)


def pair_up(left, right):
    right = list(right)
    for p in left:
        for o in right:
            yield {**p, **o, "n_c": len(right)}


def left_outer_fill(left, right):
    """Its output depends on its position: the left record alone, c's fields filled with None,
    where c has no group."""
    right = list(right)
    for p in left:
        if right:
            for o in right:
                yield {**p, **o}
        else:
            yield {**p, "c_k": None, "c_v": None}


def with_c_count(left, right):
    """Forwards its left input record for record (when c has the key), extended."""
    right = list(right)
    if right:
        for r in left:
            yield {**r, "n_c": len(right), "c_total": sum(x["c_v"] or 0 for x in right)}


def build_subtree(flow, subtree, bags):
    """`subtree` with its sources holding `bags` instead (b deduplicated when b has a key)."""
    import dataclasses

    from udflow.plan import Source

    b_src = next(s for s in (n for n in flow.root.walk()) if isinstance(s, Source) and s.table == "b") \
        if any(isinstance(n, Source) and n.table == "b" for n in flow.root.walk()) else None
    a_rows, b_rows, c_rows = bags
    if b_src is not None and b_src.key:
        b_rows = first_per_b_k(b_rows)
    by_table = {"a": a_rows, "b": b_rows, "c": c_rows}

    def rebind(n):
        if isinstance(n, Source):
            return dataclasses.replace(n, rows=tuple(dict(r) for r in by_table[n.table]))
        return n.with_inputs(*[rebind(c) for c in n.inputs])

    return rebind(subtree)
