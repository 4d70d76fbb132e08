"""Small deterministic in-memory tables for the generated pipelines (not a pipeline module).

Files whose name starts with `_` are skipped by `udflow optimize`'s discovery.
"""

from __future__ import annotations

import random

import udflow as uf

NATIONS = ("FRANCE", "GERMANY", "PERU", "JAPAN", "KENYA")


def customers(n: int = 40, prefix: str | None = None) -> uf.Flow:
    rng = random.Random(1)
    rows = [
        {"c_id": i, "c_name": f"cust{i}", "c_nation": rng.choice(NATIONS), "c_age": rng.randint(18, 90)}
        for i in range(n)
    ]
    return uf.source("customers", rows=rows, key=["c_id"], prefix=prefix)


def orders(n: int = 200, customers: int = 40) -> uf.Flow:
    rng = random.Random(2)
    rows = [
        {
            "o_id": i,
            "o_cust": rng.randrange(customers),
            "o_price": round(rng.uniform(1, 500), 2),
            "o_qty": rng.randint(1, 9),
            "o_status": rng.choice("FOP"),
            "o_note": None if i % 7 == 0 else f"note {i % 5}",
        }
        for i in range(n)
    ]
    return uf.source("orders", rows=rows, key=["o_id"], foreign_keys={("o_cust",): ("customers", ("c_id",))})


def clicks(n: int = 300) -> uf.Flow:
    rng = random.Random(3)
    rows = [
        {"k_session": rng.randrange(30), "k_url": rng.choice(["/home", "/item", "/cart", "/buy"]),
         "k_ms": rng.randint(10, 5000), "k_n": i}
        for i in range(n)
    ]
    return uf.source("clicks", rows=rows, key=["k_n"])


def words(n: int = 120) -> uf.Flow:
    rng = random.Random(4)
    vocabulary = ["gene", "drug", "cell", "binds", "inhibits", "protein", "dose", "the", "a"]
    rows = [{"w_doc": i, "w_text": " ".join(rng.choice(vocabulary) for _ in range(rng.randint(3, 12)))}
            for i in range(n)]
    return uf.source("docs", rows=rows, key=["w_doc"])
