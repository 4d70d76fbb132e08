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


def native_records_on_both_engines(flow, spark) -> tuple[list, list]:
    """The flow's records on Spark and on the reference interpreter, each sorted by "id",
    after checking that its last operator runs natively with no Python term inside."""
    step = flow.physical().root
    assert step.how == "native" and not step.python_terms, step
    return tuple(sorted(rows, key=lambda r: r["id"])
                 for rows in (flow.collect(spark=spark), flow.collect(engine="reference")))
