"""bench/lowering.py's CPU figures: what the JVM's threads spend, read from /proc."""

from __future__ import annotations

import os

import pytest

from bench.lowering import jvm_threads_cpu


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="the figure is read from Linux's /proc")
def test_the_thread_serving_py4j_is_charged_for_the_analysis_a_dataframe_call_makes(spark):
    before = jvm_threads_cpu(spark)
    for k in range(20):
        spark.range(10).selectExpr(f"id + {k} AS x", "id * 2 AS y").where("x > 3").schema
    after = jvm_threads_cpu(spark)
    assert set(before) <= set(after) <= {"jit", "py4j", "other"}
    assert after["py4j"] > before["py4j"]
    assert all(after[group] >= before.get(group, 0.0) for group in after)
