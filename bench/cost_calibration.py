"""Calibrate the cost model's constants on this machine (udflow/engine/physical.py).

    python -m bench.cost_calibration [--data data/tpch-sf0.1] [--runs 3]

Four micro-benchmarks on local Spark over the TPC-H lineitem and orders tables,
each timed as the median of `--runs` runs after a warm-up, each minus the
plain scan of the same input, each reported per unit the cost model counts
(bytes are Spark row bytes, `statistics.record_bytes`):

    python    lineitem through an identity Map (all 16 fields), and orders (9 fields):
              seconds per record and per field into Python (two widths -> two unknowns)
    shuffle   orders joined with lineitem by a sort-merge join, on all fields and on two
              fields each (same records, 1/7 of the bytes): seconds per record and per byte
    broadcast orders joined with a broadcast of lineitem, wide and narrow, likewise
    stage     a query of 2,000 records with one more broadcast join, or one more
              aggregation, of tiny inputs: the fixed cost of an exchange (STAGE)

These are NOT fitted to the plans bench/plan_quality.py runs; they are the
physical costs of each step alone.
"""

from __future__ import annotations

import argparse
import statistics
import time


def timed(action, runs: int) -> float:
    action()  # warm-up
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        action()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main(argv=None) -> None:
    from pyspark.sql import functions as F

    from examples.tpch_data import generate_tpch, tpch_source
    from udflow.engine.statistics import head, record_bytes
    from udflow.spark_backend.lower import Lowering
    from udflow.spark_backend.session import get_session

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data/tpch-sf0.1")
    parser.add_argument("--runs", type=int, default=3)
    args = parser.parse_args(argv)
    generate_tpch(args.data, 0.1)
    spark = get_session()

    def identity(r):
        yield r

    def noop(df):
        return lambda: df.write.format("noop").mode("overwrite").save()

    per = {}
    for table in ("lineitem", "orders"):
        flow = tpch_source(args.data, table)
        src = flow.root
        rows = spark.read.parquet(src.path).count()
        width = statistics.mean(record_bytes(r) for r in head(src, 2000))
        mapped_flow = flow.map(identity)
        scan = timed(noop(Lowering(spark, flow.physical()).lower(src).df), args.runs)
        mapped = timed(noop(Lowering(spark, mapped_flow.physical()).lower(mapped_flow.root).df), args.runs)
        per[table] = (rows, width, max(mapped - scan, 0.0), scan)
        fields = len(src.fields)
        print(
            f"{table}: {rows} rows, {fields} fields, {width:.0f} B/row, scan {scan:.2f} s, identity Map {mapped:.2f} s: "
            f"{per[table][2] / rows * 1e6:.2f} us per record, {per[table][2] / rows / fields * 1e6:.2f} us per field"
        )
    (r1, w1, t1, scan_l), (r2, w2, t2, _) = per["lineitem"], per["orders"]
    # t = rows * (PY_CALL + fields * PY_FIELD), for both tables: two equations, two unknowns
    f1, f2 = len(tpch_source(args.data, "lineitem").root.fields), len(tpch_source(args.data, "orders").root.fields)
    py_field = (t1 / r1 - t2 / r2) / (f1 - f2)
    py_call = t1 / r1 - f1 * py_field
    print(f"fit: PY_CALL = {py_call:.2e} s per call, PY_FIELD = {py_field:.2e} s per field")

    lineitem = spark.read.parquet(tpch_source(args.data, "lineitem").root.path)
    orders = spark.read.parquet(tpch_source(args.data, "orders").root.path)
    narrow_l, narrow_o = lineitem.select("l_orderkey", "l_quantity"), orders.select("o_orderkey", "o_custkey")
    # Spark row bytes of the narrow records: two 8-byte slots and the null word
    wide_bytes, narrow_bytes = r1 * w1 + r2 * w2, (r1 + r2) * 24.0

    def join(o, li, how):
        li = F.broadcast(li) if how == "broadcast" else li.hint("shuffle_merge")
        return noop(o.join(li, o.o_orderkey == li.l_orderkey))

    spark.conf.set("spark.sql.autoBroadcastJoinThreshold", str(1 << 30))
    try:
        found = {
            (how, width): timed(join(*(pair), how), args.runs)
            for how in ("shuffle", "broadcast")
            for width, pair in (("wide", (orders, lineitem)), ("narrow", (narrow_o, narrow_l)))
        }
    finally:
        spark.conf.unset("spark.sql.autoBroadcastJoinThreshold")
    for (how, width), t in found.items():
        print(f"join orders with lineitem, {how}, {width} records: {t:.2f} s")
    # shuffle: t = (r1 + r2) * SHUFFLE_ROW + bytes * SHUFFLE_BYTE (scans subtracted from the wide one)
    scans = scan_l + per["orders"][3]
    s_byte = (found["shuffle", "wide"] - scans - found["shuffle", "narrow"]) / (wide_bytes - narrow_bytes)
    s_row = (found["shuffle", "narrow"] - narrow_bytes * s_byte) / (r1 + r2)
    print(f"SHUFFLE_BYTE = {s_byte:.2e} s per byte, SHUFFLE_ROW = {s_row:.2e} s per record (both inputs)")
    b_byte = (found["broadcast", "wide"] - scans - found["broadcast", "narrow"]) / (r1 * (w1 - 24.0))
    b_row = (found["broadcast", "narrow"] - 24.0 * r1 * b_byte) / r1
    print(f"BROADCAST_BYTE = {b_byte:.2e} s per byte, BROADCAST_ROW = {b_row:.2e} s per broadcast record")

    stage_cost(spark, max(args.runs, 15))


def stage_cost(spark, runs: int) -> None:
    """What one more exchange costs when it moves almost nothing: scheduling a stage."""
    from pyspark.sql import functions as F

    def rows():
        return spark.range(2000)

    def base():
        rows().where("id % 7 = 0").collect()

    def broadcast():
        rows().join(F.broadcast(spark.range(50)), "id").collect()

    def aggregate():
        rows().groupBy((F.col("id") % 10).alias("k")).count().collect()

    def aggregate_twice():
        rows().groupBy((F.col("id") % 10).alias("k")).count().groupBy((F.col("k") % 3).alias("j")).count().collect()

    queries = (base, broadcast, aggregate, aggregate_twice)
    for _ in range(5):  # the JIT: the first queries of a session are slower whatever they do
        for f in queries:
            f()
    t = {f.__name__: timed(f, runs) for f in queries}
    print(f"STAGE: a broadcast {t['broadcast'] - t['base']:.3f} s, a shuffle {t['aggregate'] - t['base']:.3f} s, "
          f"a second shuffle {t['aggregate_twice'] - t['aggregate']:.3f} s")


if __name__ == "__main__":
    main()
