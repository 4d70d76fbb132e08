"""Repro 012, soundness-diff: a copy of ../shared/soundness/012-soundness-diff.py."""

import random

import udflow as uf

_STATE_RESETTERS = []


def reset():
    random.seed(20240601)
    for fn in _STATE_RESETTERS:
        fn()


# ---- the functions (from the fuzzer's pool) ----
def m_cond_empty_base__c(r):
    base = r if (r["c_v"] or 0) > 0 else {}
    return {**base, "x": 1}


# ---- the flow ----
def build(empty=False):
    rows_c = [] if empty else [
        {'c_k': 3, 'c_v': None, 'c_s': 'x', 'c_f': None},
    ]
    c = uf.source('c', rows=rows_c, fields=['c_k', 'c_v', 'c_s', 'c_f'])
    rows_a = [] if empty else [
        {'a_k': 3, 'a_v': None, 'a_s': None, 'a_f': 2.0},
    ]
    a = uf.source('a', rows=rows_a, fields=['a_k', 'a_v', 'a_s', 'a_f'])
    f1 = a.match(c, on=(['a_k'], ['c_k']), f=None)
    f2 = f1.map(m_cond_empty_base__c)
    return f2
