"""Repro 013, soundness-diff: a copy of ../shared/soundness/013-soundness-diff.py."""

import random

import udflow as uf

_STATE_RESETTERS = []


def reset():
    random.seed(20240601)
    for fn in _STATE_RESETTERS:
        fn()


# ---- the functions (from the fuzzer's pool) ----
def m_pop_default__a(r):
    r.pop("a_s", None)
    r["y"] = 1
    return r


def f_mutating_cond__a(r):
    r["a_v"] = None
    return r["a_v"] is None


# ---- the flow ----
def build(empty=False):
    rows_b = [] if empty else [
        {'b_k': 17, 'b_v': -2, 'b_s': 'a_v', 'b_f': 0.5},
    ]
    b = uf.source('b', rows=rows_b, fields=['b_k', 'b_v', 'b_s', 'b_f'])
    rows_a = [] if empty else [
        {'a_k': 1, 'a_v': 1, 'a_s': 'x', 'a_f': None},
    ]
    a = uf.source('a', rows=rows_a, fields=['a_k', 'a_v', 'a_s', 'a_f'])
    f1 = a.filter(f_mutating_cond__a)
    f2 = f1.map(m_pop_default__a)
    f3 = b.cross(f2, f=None)
    return f3
