"""Repro 007, raise-mismatch (implicit:KeyError:alternative-raises): a copy of ../shared/soundness/007-raise-mismatch.py."""

import random

import udflow as uf

_STATE_RESETTERS = []


def reset():
    random.seed(20240601)
    for fn in _STATE_RESETTERS:
        fn()


# ---- the functions (from the fuzzer's pool) ----
def cg_fwd_left_mutate__ac(left, right):
    n = len(right)
    for l in left:
        l["cnt"] = n
        yield l


def j_merge__ab(l, r):
    return {**l, **r, "x": (l["a_v"] or 0) + (r["b_v"] or 0)}


def m_explicit_same__a(r):
    return {**r, "a_k": r["a_k"]}


# ---- the flow ----
def build(empty=False):
    rows_b = [] if empty else [
    ]
    b = uf.source('b', rows=rows_b, fields=['b_k', 'b_v', 'b_s', 'b_f'])
    rows_c = [] if empty else [
        {'c_k': None, 'c_v': 3, 'c_s': 'a_v', 'c_f': float("nan")},
    ]
    c = uf.source('c', rows=rows_c, fields=['c_k', 'c_v', 'c_s', 'c_f'])
    rows_a = [] if empty else [
    ]
    a = uf.source('a', rows=rows_a, fields=['a_k', 'a_v', 'a_s', 'a_f'])
    f1 = a.map(m_explicit_same__a)
    f2 = f1.match(b, on=(['a_k'], ['b_k']), f=j_merge__ab)
    f3 = f2.cogroup(c, on=(['b_k'], ['c_k']), f=cg_fwd_left_mutate__ac)
    return f3
