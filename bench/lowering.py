"""The lowering's fixed cost: `to_spark()` of a chosen plan on a warm session (issue 29, item 7).

`to_spark()` builds the DataFrame of a plan: no Spark job, but every DataFrame
operation is a round trip to the JVM, where Spark analyses the plan built so
far (about a millisecond each once the JVM's compiler has warmed to it, several
before). At small scales that fixed cost is a visible share of a query. Measured,
per query, each time with a fresh plan (the query's constants vary, so nothing of a
previous round's plan can be reused; the sources' reads can):

    to_spark    median ms of `best.to_spark()` of the chosen plan, after one warm-up
    steady      the same after --warmups more lowerings: a session that has run the
                query's kind before, its JVM code compiled (JIT) rather than interpreted
    py4j        round trips to the JVM in one `to_spark()`
    cpu         CPU ms per steady `to_spark()`: this Python process's, the JVM thread that
                serves py4j (Spark's analysis of each step), and the JVM's JIT compiler
                threads (C1 and C2), which go on compiling Spark's analyzer long after the
                warm-ups and compete with both on a 2-core machine (Linux: /proc; else "-")
    spark.sql   median ms of `spark.sql(text)` of the same query written in SQL over
                temporary views registered beforehand: Spark's own analysis of the
                whole query, the floor of any lowering that ends in one DataFrame; its
                steady figure after as many warm-ups

Run:  python -m bench.lowering [--scale 0.1] [--runs 7] [--warmups 30] [--queries q7,q15]
"""

from __future__ import annotations

import argparse
import collections
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


def measure(spark, data: str, name: str, runs: int, warmups: int) -> dict:
    make, sql = QUERIES[name]
    plans = iter([udflow.optimize(make(data, k)).best for k in range(1 + 2 * runs + warmups)])
    next(plans).to_spark(spark)  # warm-up: the JVM's code paths, the sources' reads
    first, trips = _lowerings(spark, plans, runs)
    for _ in range(warmups):
        next(plans).to_spark(spark)
    before, python_before = jvm_threads_cpu(spark), time.process_time()
    steady, _ = _lowerings(spark, plans, runs)
    after, python_after = jvm_threads_cpu(spark), time.process_time()
    cpu = None
    if before is not None and after is not None:
        spent = {group: 1000 * (after[group] - before.get(group, 0.0)) / runs for group in after}
        cpu = {"python": 1000 * (python_after - python_before) / runs,
               "jvm_py4j": spent.get("py4j", 0.0), "jvm_jit": spent.get("jit", 0.0)}
    native_hand.tpch_sql(spark, data, "SELECT 1")  # the views, registered once
    floor = _timed(lambda: spark.sql(sql), runs)
    _timed(lambda: spark.sql(sql), warmups)
    return {"query": name, "to_spark_ms": first, "steady_ms": steady, "py4j": trips, "cpu_ms": cpu,
            "spark_sql_ms": floor, "spark_sql_steady_ms": _timed(lambda: spark.sql(sql), runs)}


def _lowerings(spark, plans, runs: int) -> tuple[float, float]:
    """Median ms of `to_spark()` over the next `runs` plans, and median py4j round trips."""
    times, trips = [], []
    for _ in range(runs):
        plan = next(plans)
        with RoundTrips() as counted:
            started = time.perf_counter()
            plan.to_spark(spark)
            times.append(time.perf_counter() - started)
        trips.append(counted.count)
    return 1000 * statistics.median(times), statistics.median(trips)


def jvm_threads_cpu(spark) -> dict | None:
    """CPU seconds the session's JVM has spent, by thread group: "jit" (the C1 and C2
    compiler threads), "py4j" (the threads serving py4j calls, named Thread-N), "other";
    None where /proc cannot tell (not Linux, or the JVM runs elsewhere)."""
    try:
        pid = spark._jvm.ProcessHandle.current().pid()
        tasks = os.listdir(f"/proc/{pid}/task")
    except Exception:  # noqa: BLE001 - no /proc, or a remote JVM: the figure is left out
        return None
    tick = os.sysconf("SC_CLK_TCK")
    spent: dict = collections.Counter()
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/stat") as f:
                stat = f.read()
        except OSError:  # the thread ended meanwhile
            continue
        name = stat[stat.index("(") + 1: stat.rindex(")")]
        user, system = stat[stat.rindex(")") + 2:].split()[11:13]
        group = "jit" if "CompilerThre" in name else "py4j" if name.startswith("Thread-") else "other"
        spent[group] += (int(user) + int(system)) / tick
    return spent


def _timed(run, times: int) -> float:
    """Median ms of `run()`, run `times` times."""
    spent = []
    for _ in range(times):
        started = time.perf_counter()
        run()
        spent.append(time.perf_counter() - started)
    return 1000 * statistics.median(spent) if spent else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--scale", type=float, default=0.1)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--warmups", type=int, default=30)
    parser.add_argument("--queries", default="q7,q15")
    args = parser.parse_args()
    data = generate_tpch(os.path.join("data", f"tpch-sf{args.scale:g}"), args.scale)
    spark = get_session()
    print(f"{'query':6} {'to_spark':>10} {'steady':>9} {'py4j':>6} {'spark.sql':>10} {'steady':>9}"
          f"   (medians of {args.runs}; steady after {args.warmups} more; TPC-H scale {args.scale:g})")
    cpu_lines = []
    for name in args.queries.split(","):
        out = measure(spark, data, name, args.runs, args.warmups)
        print(f"{name:6} {out['to_spark_ms']:7.0f} ms {out['steady_ms']:6.0f} ms {out['py4j']:6.0f} "
              f"{out['spark_sql_ms']:7.0f} ms {out['spark_sql_steady_ms']:6.0f} ms"
              f"   target < 50 ms: {'met' if out['steady_ms'] < 50 else 'NOT met'} steady, "
              f"{'met' if out['to_spark_ms'] < 50 else 'NOT met'} after one warm-up")
        cpu = out["cpu_ms"]
        cpu_lines.append(f"{name:6} CPU per steady to_spark: Python {cpu['python']:.0f} ms, JVM py4j thread "
                         f"{cpu['jvm_py4j']:.0f} ms, JVM JIT compilers {cpu['jvm_jit']:.0f} ms" if cpu else
                         f"{name:6} CPU per steady to_spark: -")
    print("\n".join(cpu_lines))


if __name__ == "__main__":
    main()
