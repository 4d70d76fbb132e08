"""EXPLAIN ANALYZE on Spark: every operator's output rows and the time of its own step.

    measured = analyze(node, physical, spark)     label -> Measured(rows, seconds)

The plan is lowered once (`Lowering`, which memoizes each node's DataFrame) and
its operators are counted bottom-up. Each counted DataFrame is persisted first,
so that its consumers read it from the cache instead of computing it again: an
operator's time is then its own step (reading its cached inputs, running its
function or join, caching its output), and the rows are what it produced on the
real data, with the plan's own join strategies. The persisted frames are released
at the end. Caching costs time of its own, so the sum of the steps is close to,
not equal to, the time of the plan run in one job.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from typing import Any

from udflow.physical import PhysicalPlan
from udflow.plan import Node
from udflow.spark_backend import session_for
from udflow.spark_backend.lower import Lowering
from udflow.spark_backend.udf import translated


@dataclass(frozen=True)
class Measured:
    """One operator on Spark: the records it produced and the seconds its own step took."""

    label: str
    rows: int
    seconds: float


def analyze(node: Node, physical: PhysicalPlan, spark: Any = None) -> dict[str, Measured]:
    """Run `node` on Spark operator by operator, as its physical plan says; per label, its
    rows and its step's time."""
    lowering = Lowering(session_for(node, spark), physical)
    measured: dict[str, Measured] = {}
    try:
        for op in _bottom_up(node):
            cached = lowering._persist(lowering.lower(op).df)  # noqa: SLF001 - released with the lowering
            started = time.perf_counter()
            with translated():
                rows = cached.count()
            measured[op.label] = Measured(op.label, rows, time.perf_counter() - started)
    finally:
        lowering.release()
    return measured


def _bottom_up(node: Node) -> list[Node]:
    """Every node once, inputs before their consumers."""
    seen: set[int] = set()
    order: list[Node] = []

    def visit(n: Node) -> None:
        if id(n) in seen:
            return
        seen.add(id(n))
        for child in n.inputs:
            visit(child)
        order.append(n)

    visit(node)
    return order
