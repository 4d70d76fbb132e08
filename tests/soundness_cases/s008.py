"""Repro 008, raise-mismatch (implicit:KeyError:alternative-raises): a copy of ../shared/soundness/008-raise-mismatch.py."""

import random

import udflow as uf

_STATE_RESETTERS = []


def reset():
    random.seed(20240601)
    for fn in _STATE_RESETTERS:
        fn()


# ---- the functions (from the fuzzer's pool) ----
def j_merge__ab(l, r):
    return {**l, **r, "x": (l["a_v"] or 0) + (r["b_v"] or 0)}


def m_explicit_same__a(r):
    return {**r, "a_k": r["a_k"]}


# ---- the flow ----
def build(empty=False):
    rows_b = [] if empty else [
        {'b_k': 0, 'b_v': -2, 'b_s': 'a_v', 'b_f': 0.5},
    ]
    b = uf.source('b', rows=rows_b, fields=['b_k', 'b_v', 'b_s', 'b_f'])
    rows_a = [] if empty else [
    ]
    a = uf.source('a', rows=rows_a, fields=['a_k', 'a_v', 'a_s', 'a_f'])
    f1 = a.map(m_explicit_same__a)
    f2 = f1.match(b, on=(['a_k'], ['b_k']), f=j_merge__ab)
    return f2
