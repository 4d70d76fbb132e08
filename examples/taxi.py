"""Taxi trips: cleaning, derived measures, averages per pickup zone (a user pipeline, issue 12).

Two inputs, as a city's trip records are published (NYC TLC's layout, times as
epoch seconds):

    trips.parquet  trip_id, pickup_ts, dropoff_ts, passengers, distance, fare, tip,
                   pickup_zone, dropoff_zone, payment     (None where the meter did not record)
    zones.csv      zone_id, borough, zone, service_zone

The flow, as a data engineer writes it:

    Reduce[pickup_zone](zone_averages)
      Match(pickup_zone=zone_id)
        Map(plausible)               speed and fare per mile in a believable range
          Map(with_measures)         duration (min), speed (mph), fare per mile
            Map(complete_trip)       fare, distance, pickup zone present; dropoff after pickup
              Source(trips)
        Source(zones)

`trips.pickup_zone` is a foreign key to `zones.zone_id`, so the optimizer may
average per zone before the join (invariant grouping); the cleaning Maps have
models (docs/native.md) and may run as Spark Columns.

`hand_pyspark(spark, data_dir)` is the same query as a PySpark user writes it: all native.

Run it:  python -m examples.taxi --data data/taxi --scale 0.01
"""

from __future__ import annotations

import os
import random

import udflow
from examples.user_data import write_csv, write_parquet, zipf_picker

TRIPS_PER_SCALE = 2_000_000  # scale 1: 2M trips
N_ZONES = 263
BOROUGHS = ("Manhattan", "Brooklyn", "Queens", "Bronx", "Staten Island", "EWR")
MAX_MPH = 70.0


# ---------------------------------------------------------------------------
# The flow
# ---------------------------------------------------------------------------


def build_flow(data_dir: str) -> udflow.Flow:
    """Trips per pickup zone with their average duration, speed, fare per mile and tip share."""

    def complete_trip(r):
        if r["fare"] is None or r["distance"] is None or r["pickup_zone"] is None:
            return
        if r["fare"] > 0 and r["distance"] > 0 and r["dropoff_ts"] > r["pickup_ts"]:
            yield r

    def with_measures(r):
        minutes = (r["dropoff_ts"] - r["pickup_ts"]) / 60
        return {
            **r,
            "minutes": minutes,
            "mph": r["distance"] / (minutes / 60),
            "fare_per_mile": r["fare"] / r["distance"],
        }

    def plausible(r):
        if r["mph"] <= MAX_MPH and 2.5 <= r["fare_per_mile"] <= 50 and r["minutes"] <= 240:
            yield r

    def zone_averages(rows):
        rows = list(rows)
        first = rows[0]
        n = len(rows)
        tipped = [r for r in rows if r["tip"] is not None]
        yield {
            "zone_id": first["zone_id"],
            "borough": first["borough"],
            "zone": first["zone"],
            "trips": n,
            "avg_minutes": sum(r["minutes"] for r in rows) / n,
            "avg_mph": sum(r["mph"] for r in rows) / n,
            "avg_fare_per_mile": sum(r["fare_per_mile"] for r in rows) / n,
            "avg_tip": sum(r["tip"] for r in tipped) / len(tipped) if tipped else None,
        }

    trips = udflow.source("trips", path=os.path.join(data_dir, "trips.parquet"), key=["trip_id"],
                          foreign_keys={("pickup_zone",): ("zones", ("zone_id",))})
    zones = udflow.source("zones", path=os.path.join(data_dir, "zones.csv"), key=["zone_id"])
    return (
        trips.map(complete_trip)
        .map(with_measures)
        .map(plausible)
        .match(zones, on=("pickup_zone", "zone_id"))
        .reduce(["pickup_zone"], zone_averages)
    )


def hand_pyspark(spark, data_dir: str):
    """The same query as a PySpark user writes it: all native."""
    from pyspark.sql import functions as F

    trips = spark.read.parquet(os.path.join(data_dir, "trips.parquet"))
    zones = spark.read.option("header", "true").option("inferSchema", "true").csv(os.path.join(data_dir, "zones.csv"))
    clean = trips.where(
        F.col("fare").isNotNull() & F.col("distance").isNotNull() & F.col("pickup_zone").isNotNull()
        & (F.col("fare") > 0) & (F.col("distance") > 0) & (F.col("dropoff_ts") > F.col("pickup_ts"))
    )
    minutes = (F.col("dropoff_ts") - F.col("pickup_ts")) / 60
    measured = (clean.withColumn("minutes", minutes)
                .withColumn("mph", F.col("distance") / (F.col("minutes") / 60))
                .withColumn("fare_per_mile", F.col("fare") / F.col("distance"))
                .where((F.col("mph") <= MAX_MPH) & F.col("fare_per_mile").between(2.5, 50)
                       & (F.col("minutes") <= 240)))
    return (measured.join(zones, F.col("pickup_zone") == F.col("zone_id"))
            .groupBy("zone_id", "borough", "zone")
            .agg(F.count("*").alias("trips"), F.avg("minutes").alias("avg_minutes"),
                 F.avg("mph").alias("avg_mph"), F.avg("fare_per_mile").alias("avg_fare_per_mile"),
                 F.avg("tip").alias("avg_tip")))


# ---------------------------------------------------------------------------
# The same query as a PySpark user writes it with Python UDFs (issue 30)
# ---------------------------------------------------------------------------


ZONES_SCHEMA = "zone_id bigint, borough string, zone string, service_zone string"  # zones.csv


def is_complete(fare: float, distance: float, pickup_zone: int, pickup_ts: int, dropoff_ts: int) -> bool:
    """Fare, distance and pickup zone recorded, both positive, and the dropoff after the pickup."""
    if fare is None or distance is None or pickup_zone is None:
        return False
    return fare > 0 and distance > 0 and dropoff_ts > pickup_ts


def parse_minutes(pickup_ts: int, dropoff_ts: int) -> float:
    """The trip's duration in minutes (times are epoch seconds)."""
    return (dropoff_ts - pickup_ts) / 60


# The None and zero guards below are not dead code: Spark may run a UDF of a later step on a row
# an earlier UDF filter rejects (it merges the two filters and evaluates their UDFs together).
def speed_mph(distance: float, minutes: float) -> float:
    if distance is None or not minutes:
        return None
    return distance / (minutes / 60)


def fare_per_mile(fare: float, distance: float) -> float:
    if fare is None or not distance:
        return None
    return fare / distance


def is_plausible(mph: float, fare_per_mile: float, minutes: float) -> bool:
    """Speed and fare per mile in a believable range, at most four hours."""
    if mph is None or fare_per_mile is None:
        return False
    return mph <= MAX_MPH and 2.5 <= fare_per_mile <= 50 and minutes <= 240


def udf_pyspark(spark, data_dir: str, use_arrow=None):
    """`build_flow(data_dir)` as a PySpark user writes it with `F.udf` for the Python logic (for
    `udflow.from_spark`); `use_arrow=False` declares plain pickled UDFs (Spark's transpiler only
    reads those), None leaves it to the session."""
    from pyspark.sql import functions as F
    from pyspark.sql.types import BooleanType, DoubleType

    def udf(fn, kind):
        return F.udf(fn, kind, useArrow=use_arrow)

    complete, plausible = udf(is_complete, BooleanType()), udf(is_plausible, BooleanType())
    minutes, mph, per_mile = udf(parse_minutes, DoubleType()), udf(speed_mph, DoubleType()), udf(
        fare_per_mile, DoubleType())
    trips = spark.read.parquet(os.path.join(data_dir, "trips.parquet"))
    # the schema as written, not inferred: no pass over the file, and zone_id is a bigint like pickup_zone
    zones = spark.read.option("header", "true").schema(ZONES_SCHEMA).csv(os.path.join(data_dir, "zones.csv"))
    measured = (trips.filter(complete("fare", "distance", "pickup_zone", "pickup_ts", "dropoff_ts"))
                .withColumn("minutes", minutes("pickup_ts", "dropoff_ts"))
                .withColumn("mph", mph("distance", "minutes"))
                .withColumn("fare_per_mile", per_mile("fare", "distance"))
                .filter(plausible("mph", "fare_per_mile", "minutes")))
    return (measured.join(zones, F.col("pickup_zone") == F.col("zone_id"))
            .groupBy("zone_id", "borough", "zone")
            .agg(F.count("*").alias("trips"), F.avg("minutes").alias("avg_minutes"),
                 F.avg("mph").alias("avg_mph"), F.avg("fare_per_mile").alias("avg_fare_per_mile"),
                 F.avg("tip").alias("avg_tip")))


def duckdb_sql(data_dir: str) -> str:
    """The same query in DuckDB's SQL (an independent oracle for the tests)."""
    trips = os.path.join(data_dir, "trips.parquet")
    zones = os.path.join(data_dir, "zones.csv")
    return f"""
        WITH measured AS (
            SELECT *, (dropoff_ts - pickup_ts) / 60 AS minutes FROM read_parquet('{trips}')
            WHERE fare IS NOT NULL AND distance IS NOT NULL AND pickup_zone IS NOT NULL
              AND fare > 0 AND distance > 0 AND dropoff_ts > pickup_ts),
        plausible AS (
            SELECT *, distance / (minutes / 60) AS mph, fare / distance AS fare_per_mile FROM measured
            WHERE distance / (minutes / 60) <= {MAX_MPH} AND fare / distance BETWEEN 2.5 AND 50 AND minutes <= 240)
        SELECT z.zone_id, z.borough, z.zone, count(*)::BIGINT AS trips, avg(minutes)::DOUBLE AS avg_minutes,
               avg(mph)::DOUBLE AS avg_mph, avg(fare_per_mile)::DOUBLE AS avg_fare_per_mile,
               avg(tip)::DOUBLE AS avg_tip
        FROM plausible p JOIN read_csv('{zones}', header=true) z ON p.pickup_zone = z.zone_id
        GROUP BY z.zone_id, z.borough, z.zone"""


# ---------------------------------------------------------------------------
# The data generator
# ---------------------------------------------------------------------------


def generate_data(data_dir: str, scale: float, seed: int = 0) -> str:
    """Write `trips.parquet` and `zones.csv` into `data_dir` (deterministic for a seed).

    Pickup and dropoff zones are Zipf-skewed (a few Manhattan zones take most
    trips); 1% of the trips lack a fare, 0.5% a distance, 2% a pickup zone, 30%
    a tip (cash), 3% a passenger count; 1% end before they start (clock
    errors), 0.5% have a zero distance and 0.3% an absurd one.
    """
    import pyarrow as pa

    rng = random.Random(seed)
    n = max(50, round(TRIPS_PER_SCALE * scale))
    zones = {"zone_id": [], "borough": [], "zone": [], "service_zone": []}
    for z in range(1, N_ZONES + 1):
        borough = BOROUGHS[0] if z <= 69 else BOROUGHS[min(len(BOROUGHS) - 1, 1 + (z - 70) // 48)]
        zones["zone_id"].append(z)
        zones["borough"].append(borough)
        zones["zone"].append(f"{borough} zone {z}")
        zones["service_zone"].append("Yellow Zone" if borough == "Manhattan" else "Boro Zone")

    pick_zone = zipf_picker(rng, N_ZONES, 1.1)
    start = 1_672_531_200  # 2023-01-01 UTC
    trips = {name: [] for name in ("trip_id", "pickup_ts", "dropoff_ts", "passengers", "distance", "fare", "tip",
                                   "pickup_zone", "dropoff_zone", "payment")}
    for trip_id in range(n):
        pickup = start + rng.randrange(31 * 24 * 3600)
        distance = round(rng.lognormvariate(0.6, 0.8), 2)
        minutes = max(1.0, distance * rng.uniform(2.0, 6.0) + rng.uniform(0, 8))
        dropoff = pickup + int(minutes * 60)
        roll = rng.random()
        if roll < 0.01:
            dropoff = pickup - rng.randint(60, 3600)
        elif roll < 0.015:
            distance = 0.0
        elif roll < 0.018:
            distance = round(rng.uniform(500, 5000), 2)
        fare = round(3.0 + 2.5 * distance + 0.5 * minutes, 2)
        cash = rng.random() < 0.3
        trips["trip_id"].append(trip_id)
        trips["pickup_ts"].append(pickup)
        trips["dropoff_ts"].append(dropoff)
        trips["passengers"].append(None if rng.random() < 0.03 else rng.choice((1, 1, 1, 1, 2, 2, 3, 4, 5, 6)))
        trips["distance"].append(None if rng.random() < 0.005 else distance)
        trips["fare"].append(None if rng.random() < 0.01 else fare)
        trips["tip"].append(None if cash else round(fare * rng.choice((0.0, 0.1, 0.15, 0.2, 0.25)), 2))
        trips["pickup_zone"].append(None if rng.random() < 0.02 else pick_zone() + 1)
        trips["dropoff_zone"].append(pick_zone() + 1)
        trips["payment"].append("cash" if cash else "card")

    write_parquet(os.path.join(data_dir, "trips.parquet"), trips, pa.schema([
        ("trip_id", pa.int64()), ("pickup_ts", pa.int64()), ("dropoff_ts", pa.int64()),
        ("passengers", pa.int64()), ("distance", pa.float64()), ("fare", pa.float64()), ("tip", pa.float64()),
        ("pickup_zone", pa.int64()), ("dropoff_zone", pa.int64()), ("payment", pa.string())]))
    write_csv(os.path.join(data_dir, "zones.csv"), zones, pa.schema([
        ("zone_id", pa.int64()), ("borough", pa.string()), ("zone", pa.string()), ("service_zone", pa.string())]))
    return data_dir


def main(argv=None) -> None:
    import argparse
    import time

    parser = argparse.ArgumentParser(description="Taxi trips averaged per pickup zone via udflow")
    parser.add_argument("--data", default="data/taxi")
    parser.add_argument("--scale", type=float, default=0.01)
    args = parser.parse_args(argv)
    generate_data(args.data, args.scale)
    flow = build_flow(args.data)
    print(flow, "\n")
    t0 = time.perf_counter()
    rows = udflow.optimize(flow).chosen.collect()
    print(f"{len(rows)} zones ({time.perf_counter() - t0:.2f} s)")
    for r in sorted(rows, key=lambda r: -r["trips"])[:10]:
        print(" ", r)


if __name__ == "__main__":
    main()
