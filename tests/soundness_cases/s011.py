"""Repro 011, raise-mismatch (implicit:ZeroDivisionError:alternative-raises): a copy of ../shared/soundness/011-raise-mismatch.py."""

import random

import udflow as uf

_STATE_RESETTERS = []


def reset():
    random.seed(20240601)
    for fn in _STATE_RESETTERS:
        fn()


# ---- the functions (from the fuzzer's pool) ----
def m_implicit_div__c(r):
    return {**r, "x": 12 // r["c_v"]}


# ---- the flow ----
def build(empty=False):
    rows_b = [] if empty else [
    ]
    b = uf.source('b', rows=rows_b, fields=['b_k', 'b_v', 'b_s', 'b_f'])
    rows_c = [] if empty else [
        {'c_k': None, 'c_v': 0, 'c_s': 'tag', 'c_f': float("nan")},
    ]
    c = uf.source('c', rows=rows_c, fields=['c_k', 'c_v', 'c_s', 'c_f'])
    f1 = b.match(c, on=(['b_k'], ['c_k']), f=None)
    f2 = f1.map(m_implicit_div__c)
    return f2
