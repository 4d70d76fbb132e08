"""Repro 015, soundness-diff: a copy of ../shared/soundness/015-soundness-diff.py."""

import random

import udflow as uf

_STATE_RESETTERS = []


def reset():
    random.seed(20240601)
    for fn in _STATE_RESETTERS:
        fn()


# ---- the functions (from the fuzzer's pool) ----
def m_get_default__c(r):
    return {**r, "x": r.get("c_v", 0) or 0}


def j_left_minus__dc(l, r):
    out = {**l, **r}
    del out["c_v"]
    return out


def f_any_none(r):
    return any(v is None for v in r.values())


# ---- the flow ----
def build(empty=False):
    rows_c = [] if empty else [
        {'c_k': 1, 'c_v': -1, 'c_f': float("nan")},
    ]
    c = uf.source('c', rows=rows_c, fields=['c_k', 'c_v', 'c_s', 'c_f'])
    rows_d = [] if empty else [
        {'a_k': 1, 'a_v': 1, 'd_s': '', 'd_f': 1.0},
    ]
    d = uf.source('d', rows=rows_d, fields=['a_k', 'a_v', 'd_s', 'd_f'])
    f1 = c.filter(f_any_none)
    f2 = d.match(f1, on=(['a_k'], ['c_k']), f=j_left_minus__dc)
    f3 = f2.map(m_get_default__c)
    return f3
