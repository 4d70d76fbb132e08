"""A newcomer's e-commerce pipeline (issue 31): revenue per region and category, written the
way someone new to udflow writes it, and its twin as the same person writes it in PySpark.

Two inputs, as a shop's export gives them:

    orders.csv        order_id, sku, qty, unit_price, ordered_at, status, coupon, country
                      (dirty: an empty qty, a timestamp that does not parse, ' Completed ' and
                      'COMPLETED' for one status, an empty coupon)
    products.parquet  p_sku, p_name, p_category

The flow:

    Reduce[segment](summary)            orders, revenue, biggest, mean order, log10 revenue
      Map(segment)                      f"{region}/{category}"
        Match(sku=p_sku)
          Map(priced)                   coupon discount (dict.get), round, region (dict.get)
            Map(completed_order)        strip().upper() status, timestamp through a helper
              Source(orders)            with try/except; keeps completed orders of 2025
          Source(products)

`twin_pyspark(spark, data_dir)` is the same job with `F.udf` for each function and
`groupBy().agg` for the summary, as a PySpark user writes it.

Run it:  python -m examples.shop --data data/shop --scale 0.25
"""

from __future__ import annotations

import argparse
import math
import os
import random
from datetime import datetime

import udflow
from examples.user_data import write_csv, write_parquet

CATEGORIES = ("books", "games", "garden", "kitchen", "toys", "music")
COUNTRIES = ("FR", "DE", "IT", "ES", "US", "CA", "BR", "JP", "NZ")
REGIONS = {"FR": "EU", "DE": "EU", "IT": "EU", "ES": "EU", "US": "NA", "CA": "NA", "JP": "APAC"}
COUPONS = {"WELCOME10": 0.10, "SPRING5": 0.05, "VIP20": 0.20}
N_PRODUCTS = 400
ORDERS_PER_SCALE = 200_000


# ---------------------------------------------------------------------------
# The flow, as a newcomer writes it
# ---------------------------------------------------------------------------


def _parse_ts(text):
    try:
        return datetime.strptime(text.strip(), "%Y-%m-%d %H:%M:%S")
    except (ValueError, AttributeError):
        return None


def completed_order(r):
    status = r["status"].strip().upper()
    placed = _parse_ts(r["ordered_at"])
    if status == "COMPLETED" and placed is not None and placed.year == 2025:
        yield {**r, "status": status, "qty": r["qty"] if r["qty"] is not None else 1, "month": placed.month}


def priced(r):
    discount = COUPONS.get(r["coupon"], 0.0)
    return {
        **r,
        "total": round(r["qty"] * r["unit_price"] * (1 - discount), 2),
        "region": REGIONS.get(r["country"], "other"),
    }


def segment(r):
    return {**r, "segment": f"{r['region']}/{r['p_category']}"}


def summary(rows):
    rows = list(rows)
    revenue = sum(r["total"] for r in rows)
    yield {
        "segment": rows[0]["segment"],
        "orders": len(rows),
        "revenue": revenue,
        "biggest": max(r["total"] for r in rows),
        "mean_order": revenue / len(rows),
        "log_revenue": math.log10(revenue),
    }


def build_flow(data_dir: str) -> udflow.Flow:
    orders = udflow.source(
        "orders", path=os.path.join(data_dir, "orders.csv"), key="order_id",
        schema={"ordered_at": "string", "status": "string", "coupon": "string", "country": "string"},
        foreign_keys={("sku",): ("products", ("p_sku",))},
    )
    products = udflow.source("products", path=os.path.join(data_dir, "products.parquet"), key="p_sku")
    return (
        orders.map(completed_order)
        .map(priced)
        .match(products, on=("sku", "p_sku"))
        .map(segment)
        .reduce(["segment"], summary)
    )


# ---------------------------------------------------------------------------
# Its twin in PySpark, as the same user writes it
# ---------------------------------------------------------------------------


def twin_pyspark(spark, data_dir: str):
    """The same job with F.udf for the row logic and groupBy().agg for the summary."""
    from pyspark.sql import functions as F
    from pyspark.sql import types as T

    orders = (spark.read.option("header", "true")
              .schema("order_id BIGINT, sku STRING, qty BIGINT, unit_price DOUBLE, ordered_at STRING, "
                      "status STRING, coupon STRING, country STRING")
              .csv(os.path.join(data_dir, "orders.csv")))
    products = spark.read.parquet(os.path.join(data_dir, "products.parquet"))

    clean_status = F.udf(lambda s: s.strip().upper(), T.StringType())
    order_month = F.udf(lambda s: _month_of_2025(s), T.LongType())
    total = F.udf(lambda qty, price, coupon: round(qty * price * (1 - COUPONS.get(coupon, 0.0)), 2), T.DoubleType())
    region = F.udf(lambda country: REGIONS.get(country, "other"), T.StringType())
    segment_of = F.udf(lambda reg, category: f"{reg}/{category}", T.StringType())

    completed = (orders.withColumn("status", clean_status("status"))
                 .withColumn("month", order_month("ordered_at"))
                 .where((F.col("status") == "COMPLETED") & F.col("month").isNotNull())
                 .withColumn("qty", F.coalesce("qty", F.lit(1))))
    with_totals = (completed.withColumn("total", total("qty", "unit_price", "coupon"))
                   .withColumn("region", region("country")))
    joined = with_totals.join(products, F.col("sku") == F.col("p_sku"))
    return (joined.withColumn("segment", segment_of("region", "p_category"))
            .groupBy("segment")
            .agg(F.count("*").alias("orders"), F.sum("total").alias("revenue"),
                 F.max("total").alias("biggest"), F.avg("total").alias("mean_order"))
            .withColumn("log_revenue", F.log10("revenue")))


def _month_of_2025(text):
    placed = _parse_ts(text)
    return placed.month if placed is not None and placed.year == 2025 else None


# ---------------------------------------------------------------------------
# Data
# ---------------------------------------------------------------------------


def generate_data(data_dir: str, scale: float = 0.25, seed: int = 0) -> str:
    """`orders.csv` (ORDERS_PER_SCALE orders at scale 1, with the dirty rows a shop's export
    has) and `products.parquet`."""
    import pyarrow as pa

    orders = max(1, round(ORDERS_PER_SCALE * scale))
    if _complete(data_dir, orders):
        return data_dir
    rng = random.Random(seed)
    skus = [f"SKU-{i:05d}" for i in range(N_PRODUCTS)]
    write_parquet(os.path.join(data_dir, "products.parquet"), {
        "p_sku": skus,
        "p_name": [f"product {i}" for i in range(N_PRODUCTS)],
        "p_category": [rng.choice(CATEGORIES) for _ in skus],
    }, pa.schema([("p_sku", pa.string()), ("p_name", pa.string()), ("p_category", pa.string())]))
    columns = {name: [] for name in ("order_id", "sku", "qty", "unit_price", "ordered_at", "status",
                                     "coupon", "country")}
    for i in range(orders):
        columns["order_id"].append(i)
        columns["sku"].append(rng.choice(skus))
        columns["qty"].append(None if rng.random() < 0.05 else rng.randint(1, 5))
        columns["unit_price"].append(round(rng.uniform(1, 120), 2))
        columns["ordered_at"].append(_timestamp(rng))
        columns["status"].append(rng.choice(["completed", "completed", " Completed ", "COMPLETED", "cancelled",
                                             "returned"]))
        columns["coupon"].append(rng.choice([None, None, None, "WELCOME10", "SPRING5", "VIP20", "EXPIRED"]))
        columns["country"].append(rng.choice(COUNTRIES))
    write_csv(os.path.join(data_dir, "orders.csv"), columns, pa.schema([
        ("order_id", pa.int64()), ("sku", pa.string()), ("qty", pa.int64()), ("unit_price", pa.float64()),
        ("ordered_at", pa.string()), ("status", pa.string()), ("coupon", pa.string()), ("country", pa.string()),
    ]))
    with open(os.path.join(data_dir, "ORDERS"), "w") as fh:
        fh.write(str(orders))
    return data_dir


def _timestamp(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.02:
        return "not recorded"
    if roll < 0.03:
        return ""
    year = 2025 if roll < 0.85 else 2024
    return f"{year}-{rng.randint(1, 12):02d}-{rng.randint(1, 28):02d} {rng.randint(0, 23):02d}:{rng.randint(0, 59):02d}:00"


def _complete(data_dir: str, orders: int) -> bool:
    marker = os.path.join(data_dir, "ORDERS")
    return os.path.exists(marker) and open(marker).read().strip() == str(orders)


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--data", default="data/shop")
    parser.add_argument("--scale", type=float, default=0.25, help=f"x {ORDERS_PER_SCALE:,} orders")
    args = parser.parse_args(argv)
    flow = build_flow(generate_data(args.data, args.scale))
    optimized = udflow.optimize(flow)
    print(optimized.explain())
    for row in sorted(optimized.best.collect(), key=lambda r: r["segment"]):
        print(row)


if __name__ == "__main__":
    main()
