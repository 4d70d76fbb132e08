"""The driver program of the cluster tests: runs flows on a standalone cluster and on the
reference interpreter, and writes what it found as JSON.

    python -m tests.cluster_driver --master spark://127.0.0.1:7077 --python /tmp/.../python \
        --tpch data/tpch-sf0.01 --scratch /tmp/... --out result.json

PySpark allows one SparkContext per process and the test suite shares a local one,
so the cluster is driven from this separate process (tests/test_cluster.py).
Each scenario is recorded as {"equal": ..., "spark_rows": n, "reference_rows": n}
or {"error": "..."}; the tests assert on them.
"""

from __future__ import annotations

import argparse
import importlib
import itertools
import json
import math
import os
import sys
import textwrap
import time
import traceback
from collections import Counter
from decimal import Decimal

import udflow as uf
from udflow import reference
from udflow.spark_backend.session import new_session


def canonical(rows: list[dict]) -> Counter:
    """A bag of records, floats rounded to 9 significant digits (summation order differs)."""

    def value(v):
        if isinstance(v, float) and math.isfinite(v) and v != 0:
            return float(f"{v:.9g}")
        if isinstance(v, Decimal):
            return v.normalize()
        return v

    return Counter(tuple(sorted((k, repr(value(v))) for k, v in r.items())) for r in rows)


def compare(flow: uf.Flow, spark, expected: list | None = None) -> dict:
    """`flow` on the cluster against `expected`, by default the reference interpreter's result."""
    got = flow.collect(spark=spark)
    expected = reference.run(flow.root) if expected is None else expected
    return {"equal": canonical(got) == canonical(expected), "spark_rows": len(got), "reference_rows": len(expected)}


def tpch_queries(spark, tpch: str) -> dict:
    from examples import tpch_q7, tpch_q15

    out = {}
    for name, module in (("q7", tpch_q7), ("q15", tpch_q15)):
        flow = module.build_flow(tpch)
        expected = reference.run(flow.root)  # a reordered plan must give the bag of the plan as written
        opt = uf.optimize(flow)
        # the chosen plan; where the plan as written is chosen (a tie keeps it), the cheapest
        # reordered one, so that a reordered plan runs on the cluster either way
        reordered = next((a.flow for a in opt.alternatives if str(a.flow) != str(flow)), opt.best)
        out[f"{name}_optimized"] = {**compare(reordered, spark, expected), "plan_differs": str(reordered) != str(flow)}
    return out


def dataframe_source(spark, tpch: str) -> dict:
    nation = spark.read.parquet(os.path.join(tpch, "nation.parquet"))
    region = spark.createDataFrame([(0, "AFRICA"), (1, "AMERICA"), (2, "ASIA"), (3, "EUROPE"), (4, "MIDDLE EAST")],
                                   "r_regionkey bigint, r_label string")

    def in_europe_or_asia(r):
        return r["r_label"] in ("EUROPE", "ASIA")

    def shout(r):
        return {**r, "loud": r["n_name"].upper() + "!"}

    flow = (
        uf.source("nation", dataframe=nation, key="n_nationkey")
        .match(uf.source("region", dataframe=region, key="r_regionkey").filter(in_europe_or_asia),
               on=("n_regionkey", "r_regionkey"))
        .map(shout)
    )
    return {"dataframe_source": compare(flow, spark)}


MODULE_SOURCE = '''
def tax(r):
    return {**r, "taxed": r["v"] * RATE}

def big(r):
    return r["taxed"] > LIMIT

RATE = 3
LIMIT = 10
'''


def module_not_installed(spark, scratch: str) -> dict:
    """A function in a module that exists only in a folder on the driver's sys.path."""
    folder = os.path.join(scratch, "loose_code")
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "udflow_loose_helpers.py"), "w") as fh:
        fh.write(textwrap.dedent(MODULE_SOURCE))
    sys.path.insert(0, folder)
    helpers = importlib.import_module("udflow_loose_helpers")
    flow = uf.source("nums", rows=[{"v": i} for i in range(20)]).map(helpers.tax).filter(helpers.big)
    return {"module_not_installed": compare(flow, spark)}


def closure(spark) -> dict:
    threshold, label = 7, "high"

    def tag(r):
        return {**r, "tag": label if r["v"] >= threshold else "low"}

    def per_tag(rows):
        rows = list(rows)
        yield {"tag": rows[0]["tag"], "n": len(rows), "total": sum(r["v"] for r in rows)}

    flow = uf.source("nums", rows=[{"v": i} for i in range(20)]).map(tag).reduce("tag", per_tag)
    return {"closure": compare(flow, spark)}


def raising(spark) -> dict:
    def parse_amount(r):
        return {**r, "amount": int(r["text"])}

    flow = uf.source("texts", rows=[{"text": "1"}, {"text": "2"}, {"text": "three"}]).map(parse_amount)
    try:
        flow.collect(spark=spark)
    except uf.UdfRuntimeError as exc:
        return {"raising": {"error_type": "UdfRuntimeError", "message": str(exc)}}
    except Exception as exc:  # noqa: BLE001 - recorded for the test to report
        return {"raising": {"error_type": type(exc).__name__, "message": str(exc)[:2000]}}
    return {"raising": {"error_type": None, "message": "no error"}}


def executors(spark) -> dict:
    """Where the executors' Python comes from, seen from inside a task."""

    def where(_):
        import importlib.util
        import sys as worker_sys

        spec = importlib.util.find_spec("udflow")
        yield (worker_sys.executable, spec.origin if spec else None)

    found = spark.sparkContext.parallelize(range(2), 2).mapPartitions(where).collect()
    return {"executors": {"pythons": sorted({p for p, _ in found}), "udflow_from": sorted({o for _, o in found})}}


def bad_pythons(scratch: str) -> dict:
    """After the cluster session: local sessions whose executors' Python cannot run udflow."""
    import subprocess

    no_arrow = os.path.join(scratch, "python-without-pyarrow")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", no_arrow], check=True)
    out = {}
    pythons = (("no_pyarrow", os.path.join(no_arrow, "bin", "python")), ("missing", "/nonexistent/python3"))
    # collect probes the executors with a Spark job; to_spark runs none and checks the interpreter itself
    actions = (("", lambda flow, spark: flow.collect(spark=spark)), ("_to_spark", lambda flow, spark: flow.to_spark(spark)))
    for (label, python), (suffix, action) in itertools.product(pythons, actions):
        spark = new_session("local[1]", {"spark.pyspark.python": python, "spark.ui.enabled": "false"})
        try:
            action(uf.source("n", rows=[{"v": 1}]).map(lambda r: {**r, "w": 2}), spark)
            out[label + suffix] = {"error_type": None, "message": "no error"}
        except Exception as exc:  # noqa: BLE001 - recorded for the test
            out[label + suffix] = {"error_type": type(exc).__name__, "message": str(exc)[:2000], "python": python}
        finally:
            spark.stop()
    return {"bad_pythons": out}



def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--master", required=True)
    parser.add_argument("--python", required=True)
    parser.add_argument("--tpch", required=True)
    parser.add_argument("--scratch", required=True)
    parser.add_argument("--out", required=True)
    args = parser.parse_args()
    from tests.standalone import Cluster

    conf = Cluster(args.master, args.python, args.scratch).session_conf()
    spark = new_session(args.master, conf, app_name="udflow cluster tests")
    results: dict = {"master": spark.sparkContext.master}
    steps = {
        "tpch": lambda: tpch_queries(spark, args.tpch),
        "dataframe": lambda: dataframe_source(spark, args.tpch),
        "module": lambda: module_not_installed(spark, args.scratch),
        "closure": lambda: closure(spark),
        "raising": lambda: raising(spark),
        "executors": lambda: executors(spark),
    }
    try:
        for name, step in steps.items():
            run_step(results, name, step)
        spark.stop()
        run_step(results, "bad_pythons", lambda: bad_pythons(args.scratch))
    finally:
        with open(args.out, "w") as fh:
            json.dump(results, fh, indent=1, default=str)


def run_step(results: dict, name: str, step) -> None:
    started = time.perf_counter()
    try:
        results.update(step())
    except Exception:  # noqa: BLE001 - one failing scenario must not hide the others
        results[f"{name}_failed"] = traceback.format_exc()[-4000:]
    results.setdefault("seconds", {})[name] = round(time.perf_counter() - started, 1)


if __name__ == "__main__":
    main()
