"""Repro 017, soundness-diff: a copy of ../shared/soundness/017-soundness-diff.py."""

import random

import udflow as uf

_STATE_RESETTERS = []


def reset():
    random.seed(20240601)
    for fn in _STATE_RESETTERS:
        fn()


# ---- the functions (from the fuzzer's pool) ----
def m_chained_get__c(r):
    return {**r, "x": r.get("c_v", r.get("c_k"))}


def _pick_m_kwargs_helper__a(a_v=None, **rest):
    return a_v


def m_kwargs_helper__a(r):
    return {**r, "x": _pick_m_kwargs_helper__a(**r)}


# ---- the flow ----
def build(empty=False):
    rows_c = [] if empty else [
        {'c_k': 5, 'c_v': None, 'c_s': 'tag', 'c_f': None},
    ]
    c = uf.source('c', rows=rows_c, fields=['c_k', 'c_v', 'c_s', 'c_f'])
    rows_a = [] if empty else [
        {'a_k': 5, 'a_v': 2, 'a_s': '', 'a_f': 0.5},
    ]
    a = uf.source('a', rows=rows_a, fields=['a_k', 'a_v', 'a_s', 'a_f'])
    f1 = c.map(m_chained_get__c)
    f2 = a.map(m_kwargs_helper__a)
    f3 = f1.match(f2, on=(['c_k'], ['a_k']), f=None)
    return f3
