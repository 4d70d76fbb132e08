"""Repro 018, order-diff: a copy of ../shared/soundness/018-order-diff.py."""

import random

import udflow as uf

_STATE_RESETTERS = []


def reset():
    random.seed(20240601)
    for fn in _STATE_RESETTERS:
        fn()


# ---- the functions (from the fuzzer's pool) ----
_PFX_m_fstring_read__b = "b"


def m_fstring_read__b(r):
    fld = f"{_PFX_m_fstring_read__b}_s"
    return {**r, "x": r[fld]}


def r_first_and_last__c(rows):
    rows = list(rows)
    yield {**rows[0], "x": rows[-1]["c_v"]}


# ---- the flow ----
def build(empty=False):
    rows_c = [] if empty else [
        {'c_k': 0, 'c_v': 1, 'c_s': 'x', 'c_f': float("nan")},
    ]
    c = uf.source('c', rows=rows_c, fields=['c_k', 'c_v', 'c_s', 'c_f'])
    rows_b = [] if empty else [
        {'b_k': 0, 'b_v': None, 'b_s': 'a_v', 'b_f': None},
    ]
    b = uf.source('b', rows=rows_b, fields=['b_k', 'b_v', 'b_s', 'b_f'])
    f1 = c.reduce(['c_k'], r_first_and_last__c)
    f2 = b.match(f1, on=(['b_k'], ['c_k']), f=None)
    f3 = f2.map(m_fstring_read__b)
    return f3
