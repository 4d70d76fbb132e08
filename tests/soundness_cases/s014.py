"""Repro 014, soundness-diff: a copy of ../shared/soundness/014-soundness-diff.py."""

import random

import udflow as uf

_STATE_RESETTERS = []


def reset():
    random.seed(20240601)
    for fn in _STATE_RESETTERS:
        fn()


# ---- the functions (from the fuzzer's pool) ----
def _h1_m_helper_deep__b(rec):
    return _h2_m_helper_deep__b(rec) + 1


def _h2_m_helper_deep__b(rec):
    return _h3_m_helper_deep__b(rec) + 1


def _h3_m_helper_deep__b(rec):
    return _h4_m_helper_deep__b(rec) + 1


def _h4_m_helper_deep__b(rec):
    return _h5_m_helper_deep__b(rec) + 1


def _h5_m_helper_deep__b(rec):
    return rec.get("b_v") or 0


def m_helper_deep__b(r):
    return {**r, "x": _h1_m_helper_deep__b(r)}


def m_get_created(r):
    return {**r, "y": r.get("x", -5)}


# ---- the flow ----
def build(empty=False):
    rows_c = [] if empty else [
        {'c_k': 0, 'c_v': 0, 'c_s': 'x', 'c_f': None},
    ]
    c = uf.source('c', rows=rows_c, fields=['c_k', 'c_v', 'c_s', 'c_f'])
    rows_b = [] if empty else [
        {'b_k': 0, 'b_v': 3, 'b_s': 'x', 'b_f': 2.0},
    ]
    b = uf.source('b', rows=rows_b, fields=['b_k', 'b_v', 'b_s', 'b_f'])
    f1 = b.map(m_helper_deep__b)
    f2 = c.map(m_get_created)
    f3 = f1.match(f2, on=(['b_k'], ['c_k']), f=None)
    return f3
