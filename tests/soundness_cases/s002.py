"""Repro 002, nondet-barrier (shared-state): a copy of ../shared/soundness/002-nondet-barrier.py."""

import random

import udflow as uf

_STATE_RESETTERS = []
_SHARED_TABLE = {}
_STATE_RESETTERS.append(_SHARED_TABLE.clear)


def reset():
    random.seed(20240601)
    for fn in _STATE_RESETTERS:
        fn()


# ---- the functions (from the fuzzer's pool) ----
def m_shared_reader__a(r):
    return {**r, "y": _SHARED_TABLE.get(r["a_k"])}


def m_shared_writer__b(r):
    _SHARED_TABLE[r["b_k"]] = r["b_v"]
    return r


# ---- the flow ----
def build(empty=False):
    rows_b = [] if empty else [
        {'b_k': 0, 'b_v': 1, 'b_s': '', 'b_f': -1.25},
    ]
    b = uf.source('b', rows=rows_b, fields=['b_k', 'b_v', 'b_s', 'b_f'])
    rows_a = [] if empty else [
        {'a_k': 0, 'a_v': 3, 'a_s': '', 'a_f': 2.0},
    ]
    a = uf.source('a', rows=rows_a, fields=['a_k', 'a_v', 'a_s', 'a_f'])
    f1 = b.map(m_shared_writer__b)
    f2 = a.match(f1, on=(['a_k'], ['b_k']), f=None)
    f3 = f2.map(m_shared_reader__a)
    return f3
