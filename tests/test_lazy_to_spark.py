"""`to_spark()` is lazy (issue 31, item 3): building the DataFrame runs no Spark job.

The types of what Python functions create come from the sample `uf.optimize` took on
the driver (`udflow.samples`), not from a Spark job at lowering; the DataFrame's first
action gives the same bag as `collect()`.
"""

from __future__ import annotations

import itertools
import os
import sys
from collections import Counter

import pytest

import udflow as uf
from examples import quickstart, shop
from udflow.samples import OutputSample, output_samples
from udflow.spark_backend.schema import output_types

_GROUPS = itertools.count()


def jobs_run_by(spark, build):
    """(what `build()` returned, the Spark jobs it ran)."""
    group = f"lazy-to-spark-{next(_GROUPS)}"
    sc = spark.sparkContext
    sc.setJobGroup(group, group)
    try:
        out = build()
    finally:
        sc.setLocalProperty("spark.jobGroup.id", None)
    return out, list(sc.statusTracker().getJobIdsForGroup(group))


def bag(rows):
    return Counter(tuple(sorted((k, round(v, 6) if isinstance(v, float) else v) for k, v in r.items()))
                   for r in rows)


@pytest.fixture(scope="module")
def shop_data(tmp_path_factory):
    return shop.generate_data(str(tmp_path_factory.mktemp("shop")), scale=0.015)


def many_words(r):
    for word in r["status"].split():
        yield {"order_id": r["order_id"], "word": word.title(), "length": len(word)}


def python_reduce(rows):
    rows = list(rows)
    yield {"sku": rows[0]["sku"], "statuses": ",".join(sorted({r["status"] for r in rows})), "n": len(rows)}


def flows(data: str):
    orders = uf.source("orders", path=os.path.join(data, "orders.csv"), key="order_id",
                       schema={"ordered_at": "string", "status": "string", "coupon": "string", "country": "string"})
    yield "shop", shop.build_flow(data)
    yield "many-record map", orders.map(many_words)
    yield "python reduce", orders.reduce(["sku"], python_reduce)


@pytest.mark.parametrize("name", ["shop", "many-record map", "python reduce"])
def test_to_spark_after_optimize_runs_no_job_and_its_action_gives_the_rows(spark, shop_data, name):
    flow = dict(flows(shop_data))[name]
    best = uf.optimize(flow).best
    df, jobs = jobs_run_by(spark, lambda: best.to_spark(spark))
    assert jobs == [], f"{name}: to_spark ran Spark jobs {jobs}"
    assert bag(r.asDict() for r in df.collect()) == bag(best.collect(spark=spark))


def test_to_spark_of_a_flow_never_optimized_runs_no_job_either(spark, shop_data):
    flow = dict(flows(shop_data))["python reduce"]
    df, jobs = jobs_run_by(spark, lambda: flow.to_spark(spark))
    assert jobs == []
    assert bag(r.asDict() for r in df.collect()) == bag(flow.collect(engine="reference"))


def test_the_quickstart_to_spark_runs_no_job(spark, tmp_path):
    best = uf.optimize(quickstart.build_flow(quickstart.write_data(str(tmp_path), n=300))).best
    _, jobs = jobs_run_by(spark, lambda: best.to_spark(spark))
    assert jobs == []


def test_optimize_keeps_what_each_operator_of_the_chosen_plan_emitted(shop_data):
    opt = uf.optimize(shop.build_flow(shop_data))
    samples = dict(opt.best.samples)
    assert set(samples) == {n.label for n in opt.chosen.node.walk()}  # sources too: the input of the operators above
    summary = samples["Reduce[segment](summary)"]
    assert summary.records and {"segment", "orders", "log_revenue"} <= set(summary.records[0])
    assert "optimize" not in repr(summary) and repr(summary).startswith("OutputSample(")


def _twice(x):
    try:  # a try statement: the helper has no value model, so the Map runs in Python
        return x * 2
    except TypeError:
        return None


def late(r):
    return {**r, "late_twice": _twice(r["late"])}


@output_types(late_twice="double")
def late_declared(r):
    return {**r, "late_twice": _twice(r["late"])}


def test_a_field_none_throughout_every_sample_needs_its_type_declared(spark):
    """The driver's sample is the first records; where a created field is None in all of them,
    the backend samples on Spark, and where that sample shows no value either, the user is
    asked to declare the type, which then types it with no job at all."""
    rows = [{"k": i, "late": None} for i in range(1500)] + [{"k": 5000, "late": 2.5}]
    flow = uf.source("late", rows=rows).map(late)
    only = dict(output_samples(flow.root))["Map(late)"]
    assert isinstance(only, OutputSample) and not only.complete
    assert all(r["late_twice"] is None for r in only.records)
    with pytest.raises(uf.UdflowError, match="late_twice.*output_types"):
        flow.to_spark(spark)
    declared = uf.source("late", rows=rows).map(late_declared)
    df, jobs = jobs_run_by(spark, lambda: declared.to_spark(spark))
    assert jobs == []
    assert [r["late_twice"] for r in df.collect() if r["late_twice"] is not None] == [5.0]


def test_the_shop_pipeline_gives_the_rows_of_its_f_udf_twin_and_of_the_reference(spark, shop_data):
    """The newcomer's pipeline (examples/shop.py) optimized, on Spark, against the same job as a
    PySpark user writes it with F.udf, and against the reference interpreter (floats within a
    relative 1e-9: sums add in another order)."""
    from examples.user_data import bag_mismatch, rows_of

    opt = uf.optimize(shop.build_flow(shop_data))
    ours = opt.best.collect(spark=spark)
    assert bag_mismatch(ours, rows_of(shop.twin_pyspark(spark, shop_data).collect())) is None
    assert bag_mismatch(ours, opt.original.collect(engine="reference")) is None
    assert len(ours) == 24


def test_the_plan_as_written_keeps_the_records_its_profiling_run_emitted(monkeypatch):
    """Where the optimizer keeps the plan as written, its samples are the records the functions
    emitted while they were profiled (one run on the sample, not two), the same records a
    run of its own gives."""
    optimize_module = sys.modules["udflow.engine.optimize"]
    flow = uf.source("t", rows=[{"k": i % 4, "x": i} for i in range(50)]).map(lambda r: {**r, "y": r["x"] * 2})
    runs = []
    monkeypatch.setattr(optimize_module, "output_samples", lambda node: runs.append(node) or ())
    opt = uf.optimize(flow)
    assert opt.chosen.node == flow.root and runs == []
    assert dict(opt.best.samples) == dict(output_samples(flow.root))
