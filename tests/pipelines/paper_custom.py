"""The custom-operator example (examples/custom_operators.py): Distinct and Union, added through the
public registry, with the rules that let a filter move below each of them."""

import udflow as uf
from examples import custom_operators as example

example.install()  # registers the operator types and their rules, in every process that imports this


def positive(r):
    return r["v"] is not None and r["v"] > 0


ROWS = [{"k": i % 7, "v": (i % 5) - 2 if i % 11 else None} for i in range(60)]


@uf.pipeline
def distinct_then_filter():
    return uf.source("t", rows=ROWS).apply(example.DISTINCT).filter(positive)


@uf.pipeline
def union_then_filter():
    other = uf.source("u", rows=[{"k": 9, "v": v} for v in range(-3, 4)])
    return uf.source("t", rows=ROWS).apply(example.UNION, other).filter(positive)
