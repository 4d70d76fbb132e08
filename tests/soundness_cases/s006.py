"""Repro 006, soundness-diff: a copy of ../shared/soundness/006-soundness-diff.py."""

import random

import udflow as uf

_STATE_RESETTERS = []


def reset():
    random.seed(20240601)
    for fn in _STATE_RESETTERS:
        fn()


# ---- the functions (from the fuzzer's pool) ----
def cg_fwd_left_if_right__bc(left, right):
    right = list(right)
    if right:
        for l in left:
            yield {**l, "cnt": len(right)}


def m_update_into_fresh(r):
    d = {}
    d.update(r)
    d["x"] = 1
    return d


# ---- the flow ----
def build(empty=False):
    rows_c = [] if empty else [
        {'c_k': 6, 'c_v': -2, 'c_s': 'tag'},
    ]
    c = uf.source('c', rows=rows_c, fields=['c_k', 'c_v', 'c_s', 'c_f'])
    rows_b = [] if empty else [
        {'b_k': 6, 'b_v': 3, 'b_s': None, 'b_f': 0.5},
    ]
    b = uf.source('b', rows=rows_b, fields=['b_k', 'b_v', 'b_s', 'b_f'])
    f1 = b.map(m_update_into_fresh)
    f2 = f1.cogroup(c, on=(['b_k'], ['c_k']), f=cg_fwd_left_if_right__bc)
    return f2
