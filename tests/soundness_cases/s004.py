"""Repro 004, order-diff: a copy of ../shared/soundness/004-order-diff.py."""

import random

import udflow as uf

_STATE_RESETTERS = []


def reset():
    random.seed(20240601)
    for fn in _STATE_RESETTERS:
        fn()


# ---- the functions (from the fuzzer's pool) ----
def r_first_spread(rows):
    rows = list(rows)
    yield {**rows[0], "cnt": len(rows)}


def m_del__b(r):
    del r["b_s"]
    return r


def f_truthy_str__b(r):
    return r.get("b_s")


class _Adder_m_callable_object__b:
    def __init__(self, k):
        self.k = k

    def __call__(self, r):
        return {**r, "y": (r["b_v"] or 0) + self.k}


m_callable_object__b = _Adder_m_callable_object__b(2)


# ---- the flow ----
def build(empty=False):
    rows_b = [] if empty else [
        {'b_k': 0, 'b_v': None, 'b_s': 'y', 'b_f': 2.0},
    ]
    b = uf.source('b', rows=rows_b, fields=['b_k', 'b_v', 'b_s', 'b_f'])
    f1 = b.map(m_callable_object__b)
    f2 = f1.filter(f_truthy_str__b)
    f3 = f2.map(m_del__b)
    f4 = f3.reduce(['b_k', 'b_v'], r_first_spread)
    return f4
