"""Repro 010, raise-mismatch (implicit:TypeError:alternative-raises): a copy of ../shared/soundness/010-raise-mismatch.py."""

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


def r_first_spread(rows):
    rows = list(rows)
    yield {**rows[0], "cnt": len(rows)}


# ---- the flow ----
def build(empty=False):
    rows_b = [] if empty else [
    ]
    b = uf.source('b', rows=rows_b, fields=['b_k', 'b_v', 'b_s', 'b_f'])
    rows_c = [] if empty else [
        {'c_k': 0, 'c_v': None, 'c_s': '', 'c_f': float("nan")},
    ]
    c = uf.source('c', rows=rows_c, fields=['c_k', 'c_v', 'c_s', 'c_f'])
    f1 = c.reduce(['c_s'], r_first_spread)
    f2 = b.match(f1, on=(['b_k'], ['c_k']), f=None)
    f3 = f2.map(m_implicit_div__c)
    return f3
