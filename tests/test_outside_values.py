"""A value a function reads from outside its code, rebound after udflow analysed it.

Python reads module globals, closure cells and the helpers' globals when the function
runs; the analysis folds them into the model as constants. The analysis cache is keyed by
a snapshot of those values (`udflow.analysis.outside`), so a rebinding means a new
analysis: the native form then computes what Python computes now. Before, a filter
`r["x"] < LIMIT` built while LIMIT was 5 ran natively as `x < 5` after LIMIT became 7.
"""

import sys
import types

import pytest

import udflow as uf
from udflow.errors import StalePlanError
from udflow.analysis import analyze, outside
from udflow.spark_backend.lower import Lowering

LIMIT = 5
FIELD = "a"
CONFIG = types.ModuleType("config")
CONFIG.FIELD = "a"
ROWS = [{"x": 1, "a": 10, "b": 0}, {"x": 6, "a": 0, "b": 10}]


def under_limit(r):
    return r["x"] < LIMIT


def field_name():
    return FIELD


def reads_through_a_helper(r):
    return r[field_name()] > 1


def reads_through_a_module(r):
    return r[CONFIG.FIELD] > 1


def reads_field(r):
    return r[FIELD] > 1


def _native_and_python_agree(spark, flow, expected):
    lowering = Lowering(spark, flow.physical())
    lowering.lower(flow.root)
    assert flow.root.label in lowering.native_labels, lowering.python_reasons
    assert flow.collect(spark=spark) == flow.collect(engine="reference") == expected


def test_a_global_rebound_after_the_flow_was_built(spark, monkeypatch):
    flow = uf.source("t", rows=ROWS).filter(under_limit)
    assert flow.collect(spark=spark) == ROWS[:1]
    monkeypatch.setattr(sys.modules[__name__], "LIMIT", 7)  # rebound from outside, no `global` in sight
    _native_and_python_agree(spark, flow, ROWS)


def test_the_read_set_follows_a_rebound_field_name(monkeypatch):
    """The search's facts come from the same cache: a read set that a global, a helper's
    global or a module attribute decides follows it."""
    functions = (reads_field, reads_through_a_helper, reads_through_a_module)
    assert [analyze(fn, {"a", "b", "x"}, kind="filter").reads for fn in functions] == [{"a"}] * 3
    monkeypatch.setattr(sys.modules[__name__], "FIELD", "b")
    monkeypatch.setattr(CONFIG, "FIELD", "b")
    assert [analyze(fn, {"a", "b", "x"}, kind="filter").reads for fn in functions] == [{"b"}] * 3


def test_a_closure_cell_rebound_by_its_enclosing_function(spark):
    def build():
        limit = 5

        def under(r):
            return r["x"] < limit

        flow = uf.source("t", rows=ROWS).filter(under)
        before = flow.collect(spark=spark)
        limit = 7  # noqa: F841 - the cell `under` reads
        return flow, before

    flow, before = build()
    assert before == ROWS[:1]
    _native_and_python_agree(spark, flow, ROWS)


def test_constants_of_equal_value_and_other_types_are_other_snapshots(monkeypatch):
    keys = []
    for value in (1, 1.0, True, float("nan"), float("nan")):
        monkeypatch.setattr(sys.modules[__name__], "LIMIT", value)
        keys.append(outside.snapshot(under_limit))
    assert len(set(keys[:3])) == 3 and keys[3] == keys[4]


TOTAL_FIELD = "o_total"


def test_a_plan_optimised_before_a_rebinding_refuses_to_run(monkeypatch):
    """A reordering proven while `big` read `o_total` is not valid once it reads the joined
    `c_rank`: running the optimised plan says so instead of running it; optimising again
    works, and the plan as written runs whatever the values."""

    @uf.hint(cost=1e-3)
    def joined(o, c):
        return {**o, **c, "c_title": c["c_name"].center(30)}

    def big(r):
        return r[TOTAL_FIELD] > 45

    orders = uf.source("orders", rows=[{"o_id": i, "o_cust": i % 7, "o_total": i % 50} for i in range(200)],
                       key=["o_id"])
    cust = uf.source("cust", rows=[{"c_id": i, "c_name": f"C{i}", "c_rank": i * 10} for i in range(7)], key=["c_id"])
    flow = orders.match(cust, on=("o_cust", "c_id"), f=joined).filter(big)
    opt = uf.optimize(flow)
    assert opt.best.root.kind == "match"  # the filter moved below the join, onto orders
    assert len(opt.best.collect(engine="reference")) == len(flow.collect(engine="reference"))
    monkeypatch.setattr(sys.modules[__name__], "TOTAL_FIELD", "c_rank")
    with pytest.raises(StalePlanError, match="TOTAL_FIELD, rebound since this plan was optimised"):
        opt.best.collect(engine="reference")
    assert opt.original.collect(engine="reference") == flow.collect(engine="reference")
    again = uf.optimize(flow)
    assert sorted(map(repr, again.best.collect(engine="reference"))) == sorted(map(repr, flow.collect(engine="reference")))


def test_changed_names_each_value_once_a_default_and_a_helpers_global_included(monkeypatch):
    def scaled(r, low=1, high=5):
        return field_name() + str(low + high)

    before = outside.snapshot(scaled)
    monkeypatch.setattr(scaled, "__defaults__", (2, 5))  # the first default, not the last
    monkeypatch.setattr(sys.modules[__name__], "FIELD", "c")  # read by the helper field_name
    assert outside.changed(scaled, before) == ["()0", "field_name.FIELD"]
