"""Repro 009, raise-mismatch (implicit:KeyError:alternative-raises): a copy of ../shared/soundness/009-raise-mismatch.py."""

import random
import time

import udflow as uf

_STATE_RESETTERS = []


def reset():
    random.seed(20240601)
    for fn in _STATE_RESETTERS:
        fn()


# ---- the functions (from the fuzzer's pool) ----
def m_del__b(r):
    del r["b_s"]
    return r


def f_time(r):
    return time.perf_counter_ns() % 3 != 0


# ---- the flow ----
def build(empty=False):
    rows_b = [] if empty else [
    ]
    b = uf.source('b', rows=rows_b, fields=['b_k', 'b_v', 'b_s', 'b_f'])
    rows_c = [] if empty else [
        {'c_k': 0, 'c_v': None, 'c_s': '', 'c_f': float("nan")},
    ]
    c = uf.source('c', rows=rows_c, fields=['c_k', 'c_v', 'c_s', 'c_f'])
    f1 = b.filter(f_time)
    f2 = f1.map(m_del__b)
    f3 = f2.match(c, on=(['b_k'], ['c_k']), f=None)
    return f3
