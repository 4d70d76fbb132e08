"""Backend overhead: TPC-H Q7 lowered by udflow vs. the same pipeline written by hand in PySpark.

Both sides run the flow of `examples/tpch_q7.py` *as written* (Figure 2(a),
nothing reordered) at TPC-H scale 0.1, on one SparkSession, alternately, and
each is timed end to end up to the same sink: `collect()` of the result rows
(four rows, so the sink itself costs nothing).

The hand-written side is what a PySpark user writes without udflow:

- `spark.read.parquet` per table, nation read twice and its columns renamed
  with the same prefixes (`cust_`, `supp_`);
- native `DataFrame.join`s on the same keys, in the same order;
- the *same Python functions* (taken from the flow's operators, so they are
  the very same objects) applied where the flow applies them: the two Maps
  with `DataFrame.mapInArrow`, the Reduce with `groupBy(...).applyInArrow`.

Why Arrow and not `rdd.flatMap` + `createDataFrame`: the functions take and
yield dicts, and `mapInArrow`/`applyInArrow` are PySpark's documented way to
run record-level Python over a DataFrame without leaving the DataFrame API
(Arrow batches, no per-row pickling, the plan stays one SQL plan). A user who
cares about speed writes that: `RecordBatch.to_pylist()` in, the function over
each dict, `from_pylist` out, with the output schema declared by hand. It is
the stronger of the two baselines, so the ratio is not flattered.

Printed: both medians (of 3 runs each, after one untimed warm-up run each)
and the ratio udflow / hand-written; target <= 1.10. The two results are
checked to be the same rows first.

Run:  python -m bench.backend_overhead [--scale 0.1] [--data data/tpch-sf0.1] [--runs 3]
"""

from __future__ import annotations

import argparse
import math
import os
import statistics
import sys
import time
from typing import Callable

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F
from pyspark.sql.pandas.types import to_arrow_schema
from pyspark.sql.types import DecimalType, LongType, StringType, StructField, StructType

from examples import tpch_q7
from udflow.plan import Map, Reduce
from udflow.spark_backend.session import new_session


# -- running a dict-in, dicts-out Python function over Arrow batches ------------


def _arrow_schema(schema: StructType) -> pa.Schema:
    return to_arrow_schema(schema, timezone="UTC")


def flat_map_in_arrow(f: Callable, out: StructType) -> Callable:
    """For `mapInArrow`: apply the generator `f` to every record of every batch."""
    target = _arrow_schema(out)

    def run(batches):
        for batch in batches:
            records = [o for r in batch.to_pylist() for o in f(r)]
            yield pa.RecordBatch.from_pylist(records, schema=target)

    return run


def reduce_in_arrow(f: Callable, out: StructType) -> Callable:
    """For `groupBy(...).applyInArrow`: call `f` once on the group's records."""
    target = _arrow_schema(out)

    def run(group: pa.Table) -> pa.Table:
        return pa.Table.from_pylist(list(f(iter(group.to_pylist()))), schema=target)

    return run


# -- the two sides -----------------------------------------------------------------


def user_functions(flow) -> dict[str, Callable]:
    """The flow's own functions by name, so both sides run the same objects."""
    return {n.fn.__name__: n.fn for n in flow.operators if isinstance(n, (Map, Reduce))}


def hand_written_q7(spark: SparkSession, data_dir: str, fns: dict[str, Callable]) -> DataFrame:
    """Q7 of Figure 2(a) as a PySpark user writes it without udflow."""

    def table(name: str, prefix: str = "") -> DataFrame:
        df = spark.read.parquet(os.path.join(data_dir, f"{name}.parquet"))
        return df.select([F.col(c).alias(prefix + c) for c in df.columns]) if prefix else df

    lineitem = table("lineitem")
    shipped = lineitem.mapInArrow(flat_map_in_arrow(fns["shipped_in_period"], lineitem.schema), lineitem.schema)
    supplier, orders, customer = table("supplier"), table("orders"), table("customer")
    cust_nation, supp_nation = table("nation", "cust_"), table("nation", "supp_")
    joined = (
        shipped.join(supplier, shipped.l_suppkey == supplier.s_suppkey)
        .join(orders, F.col("l_orderkey") == orders.o_orderkey)
        .join(customer, F.col("o_custkey") == customer.c_custkey)
        .join(cust_nation, F.col("c_nationkey") == cust_nation.cust_n_nationkey)
        .join(supp_nation, F.col("s_nationkey") == supp_nation.supp_n_nationkey)
    )
    with_volume = StructType(
        joined.schema.fields
        + [
            StructField("supp_nation", StringType()),
            StructField("cust_nation", StringType()),
            StructField("l_year", LongType()),
            StructField("volume", DecimalType(38, 4)),
        ]
    )
    between = joined.mapInArrow(flat_map_in_arrow(fns["volume_between_nations"], with_volume), with_volume)
    result = StructType(
        [
            StructField("supp_nation", StringType()),
            StructField("cust_nation", StringType()),
            StructField("l_year", LongType()),
            StructField("revenue", DecimalType(38, 4)),
        ]
    )
    return between.groupBy("supp_nation", "cust_nation", "l_year").applyInArrow(
        reduce_in_arrow(fns["revenue"], result), result
    )


def run_hand_written(spark, data_dir, fns) -> list[dict]:
    return [r.asDict() for r in hand_written_q7(spark, data_dir, fns).collect()]


def run_udflow(spark, flow) -> list[dict]:
    return flow.collect(spark=spark)


# -- measuring ---------------------------------------------------------------------


def timed(fn: Callable[[], list]) -> tuple[float, list]:
    start = time.perf_counter()
    rows = fn()
    return time.perf_counter() - start, rows


def same_rows(a: list[dict], b: list[dict]) -> bool:
    key = ("supp_nation", "cust_nation", "l_year")

    def index(rows):
        return {tuple(r[k] for k in key): r["revenue"] for r in rows}

    ia, ib = index(a), index(b)
    return (
        len(ia) == len(a) and len(ib) == len(b) and ia.keys() == ib.keys()
        and all(math.isclose(float(ia[k]), float(ib[k]), rel_tol=1e-9) for k in ia)
    )


def session() -> SparkSession:
    # PySpark starts its workers with $PYSPARK_PYTHON (default `python3` on PATH);
    # they need this interpreter, whose environment has pyarrow and udflow.
    os.environ.setdefault("PYSPARK_PYTHON", sys.executable)
    return new_session("local[*]", {
        "spark.ui.enabled": "false",
        "spark.ui.showConsoleProgress": "false",
        "spark.sql.session.timeZone": "UTC",
        "spark.driver.memory": "4g",
        "spark.python.worker.reuse": "true",
    }, app_name="udflow-bench-backend-overhead")


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=0.1)
    parser.add_argument("--data", default=None, help="default: data/tpch-sf<scale>")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    data_dir = args.data or f"data/tpch-sf{args.scale:g}"

    tpch_q7.generate_data(data_dir, args.scale)
    load_before = os.getloadavg()[0]
    spark = session()
    try:
        flow = tpch_q7.build_flow(data_dir)
        fns = user_functions(flow)
        sides = {
            "udflow": lambda: run_udflow(spark, flow),
            "hand-written": lambda: run_hand_written(spark, data_dir, fns),
        }
        # warm-up (JVM, Python workers, file listing), and the correctness check
        answers = {name: run() for name, run in sides.items()}
        if not same_rows(answers["udflow"], answers["hand-written"]):
            raise SystemExit(
                "the two sides disagree:\n"
                f"  udflow:       {sorted(answers['udflow'], key=str)}\n"
                f"  hand-written: {sorted(answers['hand-written'], key=str)}"
            )
        times: dict[str, list[float]] = {name: [] for name in sides}
        for i in range(args.runs):
            order = list(sides) if i % 2 == 0 else list(reversed(sides))  # alternate who goes first
            for name in order:
                seconds, _ = timed(sides[name])
                times[name].append(seconds)
                print(f"  run {i + 1}/{args.runs} {name}: {seconds:.3f} s", file=sys.stderr, flush=True)
    finally:
        spark.stop()

    median = {name: statistics.median(ts) for name, ts in times.items()}
    ratio = median["udflow"] / median["hand-written"]
    print(f"TPC-H Q7 (Figure 2(a), as written), scale {args.scale:g}, {len(answers['udflow'])} result rows, "
          f"same rows on both sides: yes")
    for name, ts in times.items():
        print(f"  {name:<13} median {median[name]:7.3f} s   runs: {', '.join(f'{t:.3f}' for t in ts)}")
    print(f"  ratio udflow / hand-written: {ratio:.3f}x  (target <= 1.10x: {'met' if ratio <= 1.10 else 'NOT met'})")
    print(f"  machine: {os.cpu_count()} cores, 1-minute load average {load_before:.1f} before, "
          f"{os.getloadavg()[0]:.1f} after (other work on the machine inflates both sides)")


if __name__ == "__main__":
    main()
