"""`explain()` says how each operator runs on Spark, and why a Python one is Python (issue 12,
item 3), for functions that almost fit the model's whitelist; the lowering agrees."""

import inspect
import re

import pytest

import udflow as uf
from udflow.spark_backend.lower import Lowering

ROWS = [{"k": i % 3, "name": f"N{i}", "price": float(i), "qty": i} for i in range(12)]


def line_of(fn, text):
    lines, start = inspect.getsourcelines(fn)
    return start + next(i for i, ln in enumerate(lines) if text in ln)


def lowered_title(r):
    return {**r, "name": r["name"].center(9)}  # str.center: not whitelisted


def lowered_case(r):
    return {**r, "name": r["name"].title()}  # whitelisted, no exact native form: the call alone in Python


def lower_case(r):
    return {**r, "name": r["name"].lower()}  # native where the name is ASCII, the other rows in Python


def keyword_round(r):
    return {**r, "price": round(r["price"], ndigits=1)}  # a keyword argument: no term


def stripped_of_dashes(r):
    return {**r, "name": r["name"].strip("-")}  # str.strip with constant characters: native


def prefixed_after_one(r):
    return r["name"].startswith("1", 1)  # str.startswith, but from a position


def regex_filter(r):
    return re.match("N1", r["name"]) is not None


def summed_in_a_loop(rows):
    total = 0
    for r in rows:
        total += r["qty"]
    yield {"k": 0, "total": total}


def clean(r):
    if r["qty"] > 2:
        yield {**r, "value": r["price"] * r["qty"]}


CASES = [
    (lowered_title, "map", "Python (scalar UDF)", "line {}".format(line_of(lowered_title, ".center(9)"))),
    (lowered_case, "map", "native, with Python for", "str.title (line {})".format(line_of(lowered_case, ".title()"))),
    (lower_case, "map", "native", ""),
    (keyword_round, "map", "Python (scalar UDF)", "line {}".format(line_of(keyword_round, " round("))),
    (stripped_of_dashes, "map", "native", ""),
    (prefixed_after_one, "filter", "Python (scalar UDF)", "a form of str.startswith with no exact native form"),
    (regex_filter, "filter", "native, with Python for re.match", "line {}".format(line_of(regex_filter, "re.match"))),
    (summed_in_a_loop, "reduce", "Python (batches)", "a loop (line {})".format(line_of(summed_in_a_loop, "for r"))),
    (clean, "map", "native", ""),
]


def _flow(fn, kind):
    src = uf.source("t", rows=ROWS)
    if kind == "filter":
        return src.filter(fn)
    if kind == "reduce":
        return src.reduce(["k"], fn)
    return src.map(fn)


@pytest.mark.parametrize("fn,kind,how,why", CASES, ids=[c[0].__name__ for c in CASES])
def test_explain_says_how_each_operator_runs_and_why(fn, kind, how, why):
    flow = _flow(fn, kind)
    said = flow.physical().root.describe()
    assert said.startswith(how) and why in said, said
    explained = uf.optimize(flow).explain()
    assert f"{flow.root.label}" in explained.split("How the chosen plan runs on Spark")[1]


@pytest.mark.parametrize("fn,kind,how,why", CASES, ids=[c[0].__name__ for c in CASES])
def test_the_lowering_does_what_explain_says(spark, fn, kind, how, why):
    flow = _flow(fn, kind)
    lowering = Lowering(spark, flow.physical())
    lowering.typed(flow.root)
    assert (flow.root.label in lowering.native_labels) == how.startswith("native")


PYTHON_NODES = ("MapInArrow", "ArrowEvalPython", "FlatMapGroupsInArrow", "FlatMapCoGroupsInArrow",
                "BatchEvalPython", "PythonMapInArrow", "MapInPandas")


@pytest.mark.parametrize("query", ["tpch_q7", "tpch_q15"])
def test_q7_and_q15_as_written_run_without_a_python_node(spark, tpch_dir, query):
    import importlib

    module = importlib.import_module(f"examples.{query}")
    flow = module.build_flow(tpch_dir)
    df = flow.to_spark(spark)
    plan = df._jdf.queryExecution().executedPlan().toString()
    assert not [name for name in PYTHON_NODES if name in plan]
    scan = next(line for line in plan.splitlines() if "FileScan parquet" in line and "l_shipdate" in line)
    pushed = scan[scan.index("PushedFilters"):]
    assert "l_shipdate" in pushed.split("]")[0]  # the date filter reaches the parquet scan


def test_explain_shows_each_model(tpch_dir):
    from examples import tpch_q7

    explained = uf.optimize(tpch_q7.build_flow(tpch_dir)).explain(verbose=True)
    models = explained.split("What the modelled functions compute:")[1]
    assert "Reduce[supp_nation,cust_nation,l_year](revenue):" in models
    assert "sum([r['volume'] for r in rows])" in models
    assert "datetime.date(1995, 1, 1) <= r['l_shipdate']" in models
