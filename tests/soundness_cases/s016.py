"""Repro 016, engines-disagree: a copy of ../shared/soundness/016-engines-disagree.py."""

import random

import udflow as uf

_STATE_RESETTERS = []


def reset():
    random.seed(20240601)
    for fn in _STATE_RESETTERS:
        fn()


# ---- the functions (from the fuzzer's pool) ----
_LATE_m_late_binding = [lambda r: {**r, "x": i} for i in range(3)]
m_late_binding = _LATE_m_late_binding[0]


def m_dict_get_unbound__b(r):
    return {**r, "x": dict.get(r, "b_v")}


# ---- the flow ----
def build(empty=False):
    rows_b = [] if empty else [
        {'k': 0, 'v': 1, 's': None, 'f': 1.0},
        {'k': 0, 'v': 3, 's': 'x', 'f': float("nan")},
        {'k': 3, 'v': 2, 's': 'tag', 'f': 0.0},
        {'k': 2, 'v': 3, 's': None, 'f': float("nan")},
        {'k': 1, 'v': 2, 's': None, 'f': 0.0},
        {'k': 2, 'v': 3, 's': 'a_v', 'f': 0.5},
        {'k': 3, 'v': None, 's': 'x', 'f': 0.0},
        {'k': 1, 's': 'y', 'f': None},
        {'k': 0, 'v': 2, 's': 'x', 'f': 2.0},
        {'k': 1, 'v': 0, 's': '', 'f': -1.25},
        {'k': None, 'v': 2, 's': '', 'f': 0.5},
        {'k': None, 'v': 1, 's': 'x', 'f': 1.0},
        {'k': 0, 'v': 1, 's': 'x', 'f': -1.25},
        {'k': 0, 'v': -2, 's': 'x', 'f': float("nan")},
        {'k': 0, 'v': -1, 's': 'b_v', 'f': -1.25},
        {'k': 0, 'v': -1, 's': '', 'f': 0.0},
        {'k': 0, 'v': -1, 's': 'x', 'f': 2.0},
        {'k': 1, 'v': 3, 's': None, 'f': 0.0},
        {'k': 0, 'v': -1, 's': '', 'f': None},
        {'k': 3, 'v': 1, 's': 'x', 'f': 1.0},
    ]
    b = uf.source('b', rows=rows_b, fields=['k', 'v', 's', 'f'], prefix='b_')
    rows_a = [] if empty else [
        {'a_k': None, 'a_v': -1, 'a_s': None, 'a_f': -1.25},
        {'a_k': 0, 'a_v': 1, 'a_s': 'y', 'a_f': 0.5},
        {'a_k': 3, 'a_v': 0, 'a_s': 'tag', 'a_f': 0.0},
        {'a_k': 2, 'a_v': -2, 'a_s': 'y', 'a_f': float("nan")},
        {'a_k': 0, 'a_v': -1, 'a_s': '', 'a_f': float("nan")},
        {'a_k': 3, 'a_v': -1, 'a_s': 'y', 'a_f': 0.5},
        {'a_k': 3, 'a_v': None, 'a_s': 'tag', 'a_f': None},
        {'a_k': 0, 'a_v': 0, 'a_s': None, 'a_f': 1.0},
        {'a_k': 0, 'a_v': None, 'a_s': 'tag', 'a_f': 2.0},
        {'a_k': 1, 'a_v': None, 'a_s': None, 'a_f': float("nan")},
        {'a_k': 3, 'a_v': None, 'a_s': 'b_v', 'a_f': 0.0},
        {'a_k': None, 'a_v': -2, 'a_s': '', 'a_f': None},
        {'a_k': None, 'a_v': 1, 'a_s': 'y', 'a_f': float("nan")},
        {'a_k': 2, 'a_v': 1, 'a_s': 'y', 'a_f': None},
        {'a_k': 2, 'a_v': -2, 'a_s': 'b_v', 'a_f': -1.25},
        {'a_k': 0, 'a_v': 2, 'a_s': 'b_v', 'a_f': 0.0},
        {'a_k': 1, 'a_v': 3, 'a_s': 'b_v', 'a_f': float("nan")},
        {'a_k': 0, 'a_v': 3, 'a_s': 'a_v', 'a_f': 0.0},
        {'a_k': None, 'a_v': 2, 'a_s': 'x', 'a_f': 1.0},
        {'a_k': 2, 'a_v': -2, 'a_s': None, 'a_f': 1.0},
        {'a_k': None, 'a_v': 1, 'a_s': 'y', 'a_f': 1.0},
        {'a_k': 1, 'a_v': 2, 'a_s': 'y', 'a_f': None},
        {'a_k': 0, 'a_v': -1, 'a_s': 'x', 'a_f': float("nan")},
        {'a_k': 1, 'a_v': -2, 'a_s': 'b_v', 'a_f': 1.0},
        {'a_k': 3, 'a_v': 0, 'a_s': 'x', 'a_f': 2.0},
        {'a_k': 1, 'a_v': -1, 'a_s': 'y', 'a_f': float("nan")},
        {'a_k': 0, 'a_v': -1, 'a_s': 'b_v', 'a_f': -1.25},
        {'a_k': 0, 'a_v': 2, 'a_s': 'x', 'a_f': 2.0},
        {'a_k': 0, 'a_v': 2, 'a_s': 'b_v', 'a_f': 2.0},
    ]
    a = uf.source('a', rows=rows_a, fields=['a_k', 'a_v', 'a_s', 'a_f'])
    f1 = a.map(m_late_binding)
    f2 = b.map(m_dict_get_unbound__b)
    f3 = f1.match(f2, on=(['x'], ['b_v']), f=None)
    return f3
