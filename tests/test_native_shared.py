"""A Map's term computed first and read again by its guard and fields, computed once as a
hidden column (`native_shared.shared_first`): the same records and errors as Python."""

from __future__ import annotations

import pytest

import udflow as uf
from udflow.spark_backend.lower import Lowering
from tests.both_engines import raised_on_both_engines

pytestmark = pytest.mark.spark

ROWS = [{"k": i, "status": s, "qty": q} for i, (s, q) in enumerate(
    [(" completed ", 2), ("COMPLETED", None), ("cancelled", 1), ("Completed\t", 5), ("straße", 3), ("", 0)])]


def completed(r):
    status = r["status"].strip().upper()
    if status == "COMPLETED" and r["qty"] is not None:
        yield {**r, "status": status, "qty2": r["qty"] * 2}


def first_raises(r):
    ratio = 10 // r["qty"]
    if ratio > 2:
        yield {**r, "ratio": ratio}


def _bag(rows):
    return sorted(repr(sorted(r.items())) for r in rows)


def _plan(spark, flow) -> tuple:
    lowering = Lowering(spark, flow.physical())
    rows = lowering.records(flow.root)
    assert flow.root.label in lowering.native_labels, lowering.python_reasons
    return rows, lowering.lower(flow.root).df._jdf.queryExecution().analyzed().toString()


def test_the_term_the_guard_and_a_field_read_is_computed_once(spark):
    flow = uf.source("t", rows=ROWS).map(completed)
    rows, plan = _plan(spark, flow)
    assert _bag(rows) == _bag(flow.collect(engine="reference")) and len(rows) == 2
    assert plan.count("upper(") == 1 and "__udflow_let" in plan, plan


def test_a_term_that_raises_first_raises_pythons_error_on_both_engines(spark):
    flow = uf.source("t", rows=[{"qty": 3}, {"qty": 0}, {"qty": 1}]).map(first_raises)
    said = raised_on_both_engines(flow)
    assert said[0] == said[1] and said[0].startswith("ZeroDivisionError"), said
    fine = uf.source("t", rows=[{"qty": 3}, {"qty": 1}, {"qty": 4}]).map(first_raises)
    rows, plan = _plan(spark, fine)
    assert _bag(rows) == _bag(fine.collect(engine="reference")) and "__udflow_let" in plan, plan


def test_a_none_receiver_raises_attribute_error_before_anything_else(spark):
    flow = uf.source("t", rows=[*ROWS, {"k": 9, "status": None, "qty": None}]).map(completed)
    said = raised_on_both_engines(flow)
    assert said[0] == said[1] and "'NoneType' object has no attribute 'strip'" in said[0], said


def titled_first(r):
    t = r["status"].strip().title()  # str.title: a Python call in the plan
    if t.startswith("C"):
        yield {**r, "t": t, "n": len(t)}


def titled_twice(r):
    return {**r, "t": r["status"].strip().title(), "u": r["status"].strip().title() + "!"}


@pytest.mark.parametrize("fn", [titled_first, titled_twice])
def test_a_hidden_column_given_up_leaves_the_python_calls_it_took_to_the_frame_built_after(spark, monkeypatch, fn):
    """Where Spark types a hidden column otherwise than the term's Python type, the column is
    given up and the terms are lowered whole: the Python calls its frame took are added again
    below them (and its limits not counted twice)."""
    from udflow.spark_backend import native_ops, native_shared
    from udflow.spark_backend.native_shared import LET

    real = native_shared.spark_type
    other = lambda low, column: ("another", None) if column.startswith(LET) else real(low, column)  # noqa: E731
    monkeypatch.setattr(native_shared, "spark_type", other)
    monkeypatch.setattr(native_ops, "spark_type", other)
    flow = uf.source("t", rows=[r for r in ROWS if r["status"] is not None]).map(fn)
    rows, plan = _plan(spark, flow)
    assert _bag(rows) == _bag(flow.collect(engine="reference")) and rows
    assert "__udflow_let" not in plan and "__udflow_term_" in plan, plan
