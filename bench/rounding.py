"""`round(x, 2)` and friends natively (session 32): a price-cleaning Map over generated rows,
against the same function as a PySpark user writes it (`F.udf`) and Spark's own `bround`
(an expert's native rewrite, which rounds the decimal text: 2.675 becomes 2.68, where
Python gives 2.67, so its rows are not the same).

    written/optimized  the flow, `collect()` of its rows through udflow (native, near-tie rows Python's)
    udf                the function as `F.udf` over the same DataFrame
    bround             F.bround / F.when natively (not Python's values on ties)

Each variant sums its output in Spark (`agg`), so the timing is the computation, not the
transfer. Medians of --runs after one warm-up, the order alternating.

Run:  python -m bench.rounding [--rows 2000000] [--runs 5]
"""

from __future__ import annotations

import argparse
import statistics
import time

import udflow as uf
from udflow.spark_backend.session import get_session


def cleaned(r):
    price = r["price"]
    return {"id": r["id"], "net": round(price / 1.2, 2), "cents": int(price * 100),
            "whole": round(price), "code_ok": r["code"].isdigit(), "code": r["code"].ljust(6, "0")}


def frame(spark, rows: int):
    return spark.range(rows).selectExpr(
        "id", "round(rand(7) * 1000, 3) AS price",
        "CASE WHEN id % 7 = 0 THEN concat('A', CAST(id % 1000 AS STRING)) ELSE CAST(id % 100000 AS STRING) END AS code")


def variants(spark, df):
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType, DoubleType, LongType, StringType, StructField, StructType

    out = StructType([StructField("net", DoubleType()), StructField("cents", LongType()),
                      StructField("whole", LongType()), StructField("code_ok", BooleanType()),
                      StructField("code", StringType())])
    udf = F.udf(lambda price, code: tuple(cleaned({"id": 0, "price": price, "code": code})[k]
                                          for k in ("net", "cents", "whole", "code_ok", "code")), out)
    totals = ["sum(net) AS net", "sum(cents) AS cents", "sum(whole) AS whole", "count_if(code_ok) AS ok",
              "max(code) AS code"]

    def udflow_run():
        return uf.optimize(uf.source("t", dataframe=df).map(cleaned)).best.to_spark(spark).selectExpr(*totals).collect()

    def udf_run():
        return df.select(udf("price", "code").alias("o")).select("o.*").selectExpr(*totals).collect()

    def bround_run():
        return df.select(F.bround(F.col("price") / 1.2, 2).alias("net"), (F.col("price") * 100).cast("bigint").alias("cents"),
                         F.bround("price", 0).cast("bigint").alias("whole"), F.col("code").rlike(r"^[0-9]+$").alias("code_ok"),
                         F.when(F.length("code") >= 6, F.col("code")).otherwise(F.rpad("code", 6, "0")).alias("code")
                         ).selectExpr(*totals).collect()

    return {"optimized": udflow_run, "udf": udf_run, "bround": bround_run}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=2_000_000)
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args(argv)
    spark = get_session()
    df = frame(spark, args.rows).cache()
    df.count()
    runs = variants(spark, df)
    answers = {name: run() for name, run in runs.items()}  # the warm-up
    assert answers["optimized"] == answers["udf"], (answers["optimized"], answers["udf"])
    times = {name: [] for name in runs}
    for k in range(args.runs):
        for name in (list(runs) if k % 2 == 0 else list(reversed(runs))):
            start = time.perf_counter()
            runs[name]()
            times[name].append(time.perf_counter() - start)
    median = {name: statistics.median(t) for name, t in times.items()}
    print(f"rounding, {args.rows} rows, medians of {args.runs}: " +
          ", ".join(f"{name} {t:.2f}s" for name, t in median.items()))
    print(f"optimized / udf {median['optimized'] / median['udf']:.2f}x, "
          f"optimized / bround {median['optimized'] / median['bround']:.2f}x "
          f"(bround's sums {'equal' if answers['bround'] == answers['udf'] else 'differ: it rounds the decimal text'})")


if __name__ == "__main__":
    main()
