"""The quickstart's pipeline (docs/quickstart.md): orders from a CSV, cleaned, joined with
products, revenue per category. Run it on data it writes itself:

    python -m examples.quickstart [folder]
"""

from __future__ import annotations

import csv
import os
import random
import sys

import udflow as uf


def write_data(folder: str, n: int = 2000, seed: int = 0) -> str:
    """`orders.csv` (some dirty rows) and `products.csv` in `folder`."""
    rng = random.Random(seed)
    os.makedirs(folder, exist_ok=True)
    with open(os.path.join(folder, "products.csv"), "w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["p_sku", "p_category", "p_price"])
        for i in range(50):
            out.writerow([f"SKU-{i:04d}", rng.choice(["books", "games", "garden"]), f"{rng.uniform(2, 90):.2f}"])
    with open(os.path.join(folder, "orders.csv"), "w", newline="") as fh:
        out = csv.writer(fh)
        out.writerow(["order_id", "sku", "qty", "status"])
        for i in range(n):
            status = rng.choice(["completed", "completed", "cancelled", " Completed "])
            out.writerow([i, f"SKU-{rng.randrange(50):04d}", rng.choice(["1", "2", "3", ""]), status])
    return folder


def completed(r):
    return r["status"].strip().lower() == "completed"


def with_quantity(r):
    return {**r, "qty": r["qty"] if r["qty"] is not None else 1}


def line_total(r):
    return {**r, "total": r["qty"] * r["p_price"]}


def per_category(rows):
    rows = list(rows)
    yield {"p_category": rows[0]["p_category"], "orders": len(rows), "revenue": sum(r["total"] for r in rows)}


def build_flow(folder: str) -> uf.Flow:
    orders = uf.source("orders", path=os.path.join(folder, "orders.csv"), schema={"status": "string"},
                       foreign_keys={("sku",): ("products", ("p_sku",))})
    products = uf.source("products", path=os.path.join(folder, "products.csv"), key="p_sku")
    return (orders.map(with_quantity)
                  .match(products, on=("sku", "p_sku"))
                  .map(line_total)
                  .filter(completed)
                  .reduce(["p_category"], per_category))


def main(folder: str, spark=None) -> list[dict]:
    flow = build_flow(write_data(folder))
    opt = uf.optimize(flow)
    print(opt.explain())
    rows = opt.best.collect(spark=spark)
    for r in sorted(rows, key=lambda r: r["p_category"]):
        print(r)
    return rows


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "data/quickstart")
