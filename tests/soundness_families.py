"""Function families behind issue 28's soundness bugs, as generators over the field they
write, for the soundness fuzzer (`tests/soundness_pool.py`).

Each family is a way to write a field the analysis cannot read exactly, or can only read
for one position of the function:

- unknown writes: a helper called with `**r`, a field name computed from a module constant,
  an unbound `dict.get`, `map(r.get, ...)`, `r.__setitem__`, `yield from` a helper, a copy
  made with `update`; and reads of a field through a computed key;
- known writes that meet them: `setdefault`, a chained `get`, a late-binding lambda;
- Reduces that write the field (from the group's first and last record: order-dependent);
- binary functions whose output depends on their inputs' fields where the plan puts them:
  outer CoGroups that fill the other side's fields with None, `dict(l); out.update(r)`.

`unary(p, w)` are Maps over input `p` ("a" or "b") writing field `w`; `reducers(p, w)` the
Reduces; `BINARY` the Match/Cross functions and `COGROUPS` the CoGroup functions.
"""

from __future__ import annotations

PREFIXES = {"a": "a", "b": "b"}  # module constants a computed key is built from


def _named(fn, name):
    fn.__name__ = fn.__qualname__ = name
    return fn


def _count(**fields):
    return len(fields)


def _first_of(a_v=None, b_v=None, **rest):
    return a_v if a_v is not None else b_v


def _extended(rec, w, v):
    yield rec
    if rec.get(v):
        yield {**rec, w: 1}


def unary(p: str, w: str) -> list:
    """Maps over input `p` that write `w`, each family once."""
    k, v, s = f"{p}_k", f"{p}_v", f"{p}_s"

    def kwargs_helper(r):
        return {**r, w: _first_of(**r)}

    def kwargs_count(r):
        return {**r, w: _count(**r)}

    def computed_key_write(r):
        out = dict(r)
        out[f"{PREFIXES[p]}_{w}"[len(p) + 1:]] = 1
        return out

    def unbound_get(r):
        return {**r, w: dict.get(r, v)}

    def map_get(r):
        vals = list(map(r.get, [v, s]))
        return {**r, w: vals[0]}

    def setitem(r):
        r.__setitem__(w, 2)
        return r

    def setdefault(r):
        r.setdefault(w, 0)
        return r

    def yield_from_helper(r):
        yield from _extended(r, w, v)

    def update_copy(r):
        d = {}
        d.update(r)
        d[w] = 3
        return d

    def computed_key_read(r):
        return {**r, w: r[f"{PREFIXES[p]}_s"]}

    def chained_get(r):
        return {**r, w: r.get(v, r.get(k))}

    late = [lambda r: {**r, w: i} for i in range(3)][0]

    fns = [kwargs_helper, kwargs_count, computed_key_write, unbound_get, map_get, setitem, setdefault,
           yield_from_helper, update_copy, computed_key_read, chained_get, late]
    names = [f.__name__ if f is not late else "late_binding" for f in fns]
    return [_named(f, f"{n}_{w}_{p}") for f, n in zip(fns, names)]


def reducers(p: str, w: str) -> list:
    v = f"{p}_v"

    def first_and_last(rows):
        rows = list(rows)
        yield {**rows[0], w: rows[-1][v]}

    def total_into(rows):
        rows = list(rows)
        yield {**rows[0], w: sum(r[v] or 0 for r in rows)}

    def forward(rows):
        yield from rows

    return [_named(f, f"{f.__name__}_{w}_{p}") for f in (first_and_last, total_into, forward)]


def j_update(left, right):
    out = dict(left)
    out.update(right)
    return out


def j_spread(left, right):
    return {**left, **right}


def cg_left_outer_fill(left, right):
    right = list(right)
    for l in left:
        if right:
            for r in right:
                yield {**l, **r}
        else:
            yield {**l, "b_k": None, "b_v": None}


def cg_right_outer_fill(left, right):
    left = list(left)
    for r in right:
        if left:
            for l in left:
                yield {**l, **r}
        else:
            yield {**r, "a_k": None, "a_v": None}


BINARY = [j_update, j_spread]
COGROUPS = [cg_left_outer_fill, cg_right_outer_fill]
