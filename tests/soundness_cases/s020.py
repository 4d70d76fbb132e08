"""Repro 020, soundness-diff: a copy of ../shared/soundness/020-soundness-diff.py."""

import random

import udflow as uf

_STATE_RESETTERS = []


def reset():
    random.seed(20240601)
    for fn in _STATE_RESETTERS:
        fn()


# ---- the functions (from the fuzzer's pool) ----
def cg_left_outer__ab(left, right):
    right = list(right)
    for l in left:
        if right:
            for r in right:
                yield {**l, **r}
        else:
            yield {**l, "b_k": None, "b_v": None}


def m_setdefault_new__a(r):
    r.setdefault("x", 0)
    return r


# ---- the flow ----
def build(empty=False):
    rows_a = [] if empty else [
        {'a_k': 1, 'a_v': None, 'a_s': 'x', 'a_f': 2.0},
    ]
    a = uf.source('a', rows=rows_a, fields=['a_k', 'a_v', 'a_s', 'a_f'])
    rows_b = [] if empty else [
    ]
    b = uf.source('b', rows=rows_b, fields=['b_k', 'b_v', 'b_s', 'b_f'])
    f1 = a.map(m_setdefault_new__a)
    f2 = f1.cogroup(b, on=(['a_k'], ['b_k']), f=cg_left_outer__ab)
    return f2
