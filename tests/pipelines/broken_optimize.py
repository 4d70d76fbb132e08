"""Broken on purpose: a function that fails on its input, which the optimizer runs when sampling."""

import udflow as uf
from tests.pipelines._data import orders


def price_per_missing_unit(r):
    return {**r, "unit": r["o_price"] / (r["o_qty"] - r["o_qty"])}  # always divides by zero


@uf.pipeline
def divides_by_zero():
    return orders().map(price_per_missing_unit).filter(lambda r: r["o_price"] > 10)
