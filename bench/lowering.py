"""The lowering's fixed cost: `to_spark()` of a chosen plan on a warm session (issue 29, item 7).

`to_spark()` builds the DataFrame of a plan: no Spark job, but every DataFrame
operation is a round trip to the JVM, where Spark analyses the plan built so
far (a few milliseconds each on a laptop, whatever the data's size). At small
scales that fixed cost is a visible share of a query. Measured, per query:

    to_spark    median ms of `best.to_spark()` of the chosen plan, after one warm-up
                (a fresh plan each round: the query's constants vary, so nothing of a
                previous round's plan can be reused; the sources' reads can)
    py4j        round trips to the JVM in one `to_spark()`
    spark.sql   median ms of `spark.sql(text)` of the same query written in SQL over
                temporary views registered beforehand: Spark's own analysis of the
                whole query, the floor of any lowering that ends in one DataFrame

Run:  python -m bench.lowering [--scale 0.1] [--runs 7] [--queries q7,q15]
"""

from __future__ import annotations

import argparse
import os
import statistics
import time
from datetime import date

import udflow
from bench import native_hand
from examples import tpch_q7, tpch_q15
from examples.tpch_data import generate_tpch
from udflow.spark_backend.session import get_session

NATIONS = ("FRANCE", "GERMANY", "CHINA", "JAPAN", "BRAZIL", "CANADA", "KENYA", "PERU")


def q7_flow(data: str, k: int):
    return tpch_q7.build_flow(data, NATIONS[k % 8], NATIONS[(k + 1) % 8])


def q15_flow(data: str, k: int):
    return tpch_q15.build_flow(data, start=date(1996, 1 + k % 9, 1))


QUERIES = {"q7": (q7_flow, native_hand.Q7_SQL), "q15": (q15_flow, native_hand.Q15_SQL)}


class RoundTrips:
    """Counts the py4j commands sent while active."""

    def __enter__(self):
        from py4j import clientserver

        self.count, self._cls = 0, clientserver.ClientServerConnection
        self._send = self._cls.send_command
        counter = self

        def counted(connection, command):
            counter.count += 1
            return counter._send(connection, command)

        self._cls.send_command = counted
        return self

    def __exit__(self, *exc):
        self._cls.send_command = self._send


def measure(spark, data: str, name: str, runs: int) -> dict:
    make, sql = QUERIES[name]
    plans = [udflow.optimize(make(data, k)).best for k in range(runs + 1)]
    plans[0].to_spark(spark)  # warm-up: the JVM's code paths, the sources' reads
    times, trips = [], []
    for plan in plans[1:]:
        with RoundTrips() as counted:
            started = time.perf_counter()
            plan.to_spark(spark)
            times.append(time.perf_counter() - started)
        trips.append(counted.count)
    native_hand.tpch_sql(spark, data, "SELECT 1")  # the views, registered once
    floor = []
    for _ in range(runs):
        started = time.perf_counter()
        spark.sql(sql)
        floor.append(time.perf_counter() - started)
    return {"query": name, "to_spark_ms": 1000 * statistics.median(times), "py4j": statistics.median(trips),
            "spark_sql_ms": 1000 * statistics.median(floor)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=0.1)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--queries", default="q7,q15")
    args = parser.parse_args()
    data = generate_tpch(os.path.join("data", f"tpch-sf{args.scale:g}"), args.scale)
    spark = get_session()
    print(f"{'query':6} {'to_spark':>10} {'py4j':>6} {'spark.sql':>10}   (medians of {args.runs}, TPC-H scale {args.scale:g})")
    for name in args.queries.split(","):
        out = measure(spark, data, name, args.runs)
        print(f"{name:6} {out['to_spark_ms']:8.0f} ms {out['py4j']:6.0f} {out['spark_sql_ms']:8.0f} ms"
              f"   target to_spark < 50 ms: {'met' if out['to_spark_ms'] < 50 else 'NOT met'}")


if __name__ == "__main__":
    main()
