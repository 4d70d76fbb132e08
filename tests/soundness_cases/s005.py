"""Repro 005, raise-mismatch (implicit:KeyError:alternative-raises): a copy of ../shared/soundness/005-raise-mismatch.py."""

import random

import udflow as uf

_STATE_RESETTERS = []


def reset():
    random.seed(20240601)
    for fn in _STATE_RESETTERS:
        fn()


# ---- the functions (from the fuzzer's pool) ----
def cg_outer_copy__bd(left, right):
    base = left[0] if left else (right[0] if right else {})
    yield {**base, "cnt": len(left) + len(right)}


def m_key_from_field__b(r):
    name = "b_v" if r["b_k"] == 1 else "b_s"
    return {**r, "tag": r[name]}


# ---- the flow ----
def build(empty=False):
    rows_d = [] if empty else [
        {'a_k': 10, 'a_v': 0, 'd_s': 'a_v', 'd_f': 0.0},
    ]
    d = uf.source('d', rows=rows_d, fields=['a_k', 'a_v', 'd_s', 'd_f'])
    rows_b = [] if empty else [
    ]
    b = uf.source('b', rows=rows_b, fields=['b_k', 'b_v', 'b_s', 'b_f'])
    f1 = b.map(m_key_from_field__b)
    f2 = f1.cogroup(d, on=(['b_k'], ['a_k']), f=cg_outer_copy__bd)
    return f2
