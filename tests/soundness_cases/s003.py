"""Repro 003, order-diff: a copy of ../shared/soundness/003-order-diff.py."""

import random

import udflow as uf

_STATE_RESETTERS = []


def reset():
    random.seed(20240601)
    for fn in _STATE_RESETTERS:
        fn()


# ---- the functions (from the fuzzer's pool) ----
def m_get_created(r):
    return {**r, "y": r.get("x", -5)}


def cg_outer_first__bc(left, right):
    l = left[0] if left else {}
    r = right[0] if right else {}
    yield {**l, **r}


def j_raise__ba(l, r):
    if l["b_v"] == 3 and r["a_v"] == 3:
        raise ValueError("both three")
    return {**l, **r}


# ---- the flow ----
def build(empty=False):
    rows_a = [] if empty else [
    ]
    a = uf.source('a', rows=rows_a, fields=['a_k', 'a_v', 'a_s', 'a_f'])
    rows_c = [] if empty else [
        {'c_k': 1, 'c_v': None, 'c_s': 'b_v', 'c_f': None},
    ]
    c = uf.source('c', rows=rows_c, fields=['c_k', 'c_v', 'c_s', 'c_f'])
    rows_b = [] if empty else [
    ]
    b = uf.source('b', rows=rows_b, fields=['b_k', 'b_v', 'b_s', 'b_f'])
    f1 = b.match(a, on=(['b_k'], ['a_k']), f=j_raise__ba)
    f2 = f1.cogroup(c, on=(['b_k'], ['c_k']), f=cg_outer_first__bc)
    f3 = f2.map(m_get_created)
    return f3
