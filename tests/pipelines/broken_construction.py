"""Broken on purpose: the pipeline function builds an invalid Flow (a non-callable map function)."""

import udflow as uf
from tests.pipelines._data import orders


@uf.pipeline
def not_callable():
    return orders().map(42)
