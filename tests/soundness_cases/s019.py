"""Repro 019, soundness-diff: a copy of ../shared/soundness/019-soundness-diff.py."""

import random

import udflow as uf

_STATE_RESETTERS = []


def reset():
    random.seed(20240601)
    for fn in _STATE_RESETTERS:
        fn()


# ---- the functions (from the fuzzer's pool) ----
def j_update__ac(l, r):
    out = dict(l)
    out.update(r)
    return out


def m_map_get__a(r):
    vals = list(map(r.get, ["a_v", "a_s"]))
    return {**r, "x": vals[0]}


def _gen_g_yield_from_helper__b(rec):
    yield rec
    if rec["b_v"]:
        yield {**rec, "x": 1}


def g_yield_from_helper__b(r):
    yield from _gen_g_yield_from_helper__b(r)


# ---- the flow ----
def build(empty=False):
    rows_c = [] if empty else [
        {'c_k': 5, 'c_v': None, 'c_s': 'a_v', 'c_f': 2.0},
    ]
    c = uf.source('c', rows=rows_c, fields=['c_k', 'c_v', 'c_s', 'c_f'])
    rows_b = [] if empty else [
        {'b_k': 2, 'b_v': -2, 'b_s': 'y', 'b_f': None},
    ]
    b = uf.source('b', rows=rows_b, fields=['b_k', 'b_v', 'b_s', 'b_f'])
    rows_a = [] if empty else [
        {'a_k': 1, 'a_v': 3, 'a_s': None, 'a_f': None},
    ]
    a = uf.source('a', rows=rows_a, fields=['a_k', 'a_v', 'a_s', 'a_f'])
    f1 = a.map(m_map_get__a)
    f2 = b.map(g_yield_from_helper__b)
    f3 = c.cross(f2, f=None)
    f4 = f1.cross(f3, f=j_update__ac)
    return f4
