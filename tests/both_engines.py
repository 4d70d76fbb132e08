"""What a flow raises on the reference interpreter and on Spark, for tests that compare them."""

from __future__ import annotations

import pytest

from udflow.errors import UdfRuntimeError


def raised_on_both_engines(flow) -> list:
    """What the flow raised, after "raised ", on the reference interpreter and on Spark (the
    shared session): Python's words and line on both, where udflow keeps its promise."""
    said = []
    for engine in ("reference", "spark"):
        with pytest.raises(UdfRuntimeError) as err:
            flow.collect(engine=engine)
        said.append(str(err.value).splitlines()[0].split(" raised ", 1)[1])
    return said
