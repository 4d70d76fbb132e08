"""What a real cluster costs: TPC-H Q7 on a two-worker standalone cluster vs local[2].

The cluster is the test suite's (tests/standalone.py): a master and two workers
started from the installed pyspark on 127.0.0.1, one core each, whose Python
has pyarrow but not udflow (udflow ships itself). local[2] has the same two
cores in one JVM. Both sessions get the same settings (shuffle partitions,
parallelism, time zone, worker reuse, memory per executor); only the master
and the executors' interpreter differ.

For each master, Q7 as written and as optimized (`uf.optimize`, chosen once)
runs once untimed (warm-up: Python workers, udflow's shipped zip) and then
`--runs` times, collected on the driver; the results are checked equal first.

Printed: the median seconds of each of the four, and the ratios
cluster / local[2] (as written, optimized) and optimized / as written (per master).
The cluster adds process boundaries: executors in their own JVMs, shuffles over
the network stack, Python workers started per executor.

Run:  python -m bench.cluster [--scale 0.1] [--data data/tpch-sf0.1] [--runs 3]
"""

from __future__ import annotations

import argparse
import statistics
import tempfile
import time
from collections import Counter

import udflow as uf
from examples import tpch_q7
from examples.tpch_data import generate_tpch
from tests.standalone import standalone_cluster
from udflow.spark_backend.session import new_session

COMMON = {
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "4",
    "spark.sql.session.timeZone": "UTC",
    "spark.python.worker.reuse": "true",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.driver.memory": "2g",
    "spark.executor.memory": "1g",
}


def timed(flow: uf.Flow, spark, runs: int) -> tuple[float, list]:
    rows = flow.collect(spark=spark)  # warm-up
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        flow.collect(spark=spark)
        times.append(time.perf_counter() - start)
    return statistics.median(times), rows


def bag(rows: list) -> Counter:
    return Counter(tuple(sorted((k, repr(v)) for k, v in r.items())) for r in rows)


def measure(master: str, conf: dict, written: uf.Flow, optimized: uf.Flow, runs: int) -> dict:
    spark = new_session(master, {**COMMON, **conf}, app_name="udflow bench cluster")
    try:
        w, w_rows = timed(written, spark, runs)
        o, o_rows = timed(optimized, spark, runs)
    finally:
        spark.stop()
    if bag(w_rows) != bag(o_rows):
        raise SystemExit(f"{master}: the optimized plan returned other rows than the plan as written")
    return {"written": w, "optimized": o, "rows": w_rows}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=0.1)
    parser.add_argument("--data", default=None)
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    data = generate_tpch(args.data or f"data/tpch-sf{args.scale:g}", args.scale)
    written = tpch_q7.build_flow(data)
    optimized = uf.optimize(written).best
    local = measure("local[2]", {}, written, optimized, args.runs)
    with tempfile.TemporaryDirectory(prefix="udflow-bench-cluster-") as folder:
        with standalone_cluster(folder, workers=2, cores=1, memory="2g") as cluster:
            conf = {k: v for k, v in cluster.session_conf().items() if k not in COMMON}
            remote = measure(cluster.master_url, {**conf, "spark.executor.memory": "1g"}, written, optimized, args.runs)
    if bag(local["rows"]) != bag(remote["rows"]):
        raise SystemExit("the cluster returned other rows than local[2]")
    print(f"TPC-H Q7 at scale {args.scale:g}, median of {args.runs} runs after a warm-up, collected on the driver")
    print(f"{'':24}{'local[2]':>12}{'cluster (2x1 core)':>22}{'cluster / local':>18}")
    for plan in ("written", "optimized"):
        label = "as written" if plan == "written" else "optimized"
        print(f"{label:24}{local[plan]:>11.2f}s{remote[plan]:>21.2f}s{remote[plan] / local[plan]:>17.2f}x")
    print(f"{'optimized / as written':24}{local['optimized'] / local['written']:>11.2f}x"
          f"{remote['optimized'] / remote['written']:>21.2f}x")


if __name__ == "__main__":
    main()
